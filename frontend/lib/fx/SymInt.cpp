//===- SymInt.cpp - Symbolic sizes: arithmetic and shape operands ---------===//
//
// The out-of-line half of SymInt.h. Arithmetic on a symbolic SymInt
// records an Add/Sub/Mul/Div node on 0-d i64 values through the dispatcher
// (so the trace mode records it like any op); a shape list with symbolic
// entries becomes Unsqueeze + Concat of its pieces (runs of concrete
// entries as one constant). Converting a symbolic SymInt to int64_t throws
// fx::TraceError.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"
#include "../eager/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/SymInt.h"

#include <ostream>

namespace nng {

std::ostream &operator<<(std::ostream &OS, const SymInt &S) {
  if (S.isSymbolic())
    return OS << "sym(" << S.example() << ")";
  return OS << S.example();
}

namespace detail {

namespace {
fx::detail::TraceState &traceFor(const char *What) {
  fx::detail::TraceState *S = fx::detail::activeTrace();
  if (!S)
    throw fx::TraceError(std::string(What) +
                         " on a symbolic size outside the trace that made "
                         "it: symbolic sizes are valid only during their "
                         "trace");
  return *S;
}
} // namespace

SymInt symArith(char Op, const SymInt &A, const SymInt &B) {
  fx::detail::TraceState &S = traceFor("arithmetic");
  ir::OpKind K = Op == '+'   ? ir::OpKind::Add
                 : Op == '-' ? ir::OpKind::Sub
                 : Op == '*' ? ir::OpKind::Mul
                             : ir::OpKind::Div;
  // ONNX Div truncates; sizes are non-negative, where that is floor.
  Tensor R = dispatch::call1(K, {S.symProxy(A), S.symProxy(B)});
  return SymInt::symbolic(R.data().getFlatInt(0), R.impl()->TraceValue);
}

void failSymbolicToInt(const SymInt &Sym) {
  fx::detail::TraceState *S = fx::detail::anyTrace();
  std::string What = "a symbolic size (a dynamic dim";
  if (S && S->ownsValue(Sym.node())) {
    auto *V = static_cast<const ir::Value *>(Sym.node());
    What += ", traced value '" + V->name() + "'";
  }
  What += ", example extent " + std::to_string(Sym.example()) +
          ") was converted to a C++ integer";
  fx::detail::failTrace(
      What + ": the graph would hard-code the example extent. Keep it a "
             "SymInt (auto or nng::SymInt) and pass it to view/reshape/"
             "expand, use flatten or -1, make the dim static in the "
             "InputSpec, or mark the module as a leaf");
}

Tensor symShapeTensor(const SymIntList &Sizes) {
  if (!Sizes.isSymbolic())
    return i64Tensor(Sizes.examples());
  fx::detail::TraceState &S = traceFor("view/reshape/expand");
  std::vector<Tensor> Pieces;
  std::vector<int64_t> Run;
  auto Flush = [&] {
    if (!Run.empty())
      Pieces.push_back(i64Tensor(Run));
    Run.clear();
  };
  for (const SymInt &X : Sizes.values()) {
    if (!X.isSymbolic()) {
      Run.push_back(X.example());
      continue;
    }
    Flush();
    Pieces.push_back(dispatch::call1(ir::OpKind::Unsqueeze,
                                     {S.symProxy(X), i64Tensor({0})}));
  }
  Flush();
  if (Pieces.size() == 1)
    return Pieces[0];
  return dispatch::call1(ir::OpKind::Concat, Pieces,
                         dispatch::attrs({{"axis", int64_t(0)}}));
}

} // namespace detail
} // namespace nng
