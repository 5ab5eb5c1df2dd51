//===- TraceHooks.cpp - The tracer's answers to eager tensors -------------===//
//
// Eager code reaches the tracer only through detail::TraceHooks
// (detail/EagerHooks.h), installed when a trace starts. size(i) of a proxy
// asks the trace; arithmetic on a symbolic SymInt records an Add/Sub/Mul/
// Div node on 0-d i64 values through the dispatcher (so the trace mode
// records it like any op); a shape list with symbolic entries becomes
// Unsqueeze + Concat of its pieces (runs of concrete entries as one
// constant). Converting a symbolic SymInt to int64_t, and reading a
// proxy's data, throw fx::TraceError saying what to do instead.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"
#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/SymInt.h"

namespace nng::fx::detail {

namespace {

TraceState &traceFor(const char *What) {
  TraceState *S = activeTrace();
  if (!S)
    throw TraceError(std::string(What) +
                     " on a symbolic size outside the trace that made "
                     "it: symbolic sizes are valid only during their "
                     "trace");
  return *S;
}

class FxTraceHooks final : public nng::detail::TraceHooks {
public:
  SymInt size(const Tensor &T, int64_t D) override {
    TraceState *S = activeTrace();
    if (!S || !S->ownsValue(T.impl()->TraceValue))
      return SymInt(T.data().size(D));
    return S->size(T, D);
  }

  SymInt arith(char Op, const SymInt &A, const SymInt &B) override {
    TraceState &S = traceFor("arithmetic");
    ir::OpKind K = Op == '+'   ? ir::OpKind::Add
                   : Op == '-' ? ir::OpKind::Sub
                   : Op == '*' ? ir::OpKind::Mul
                               : ir::OpKind::Div;
    // ONNX Div truncates; sizes are non-negative, where that is floor.
    Tensor R = dispatch::call1(K, {S.symProxy(A), S.symProxy(B)});
    return SymInt::symbolic(R.data().getFlatInt(0), R.impl()->TraceValue);
  }

  Tensor shapeTensor(const SymIntList &Sizes) override {
    TraceState &S = traceFor("view/reshape/expand");
    std::vector<Tensor> Pieces;
    std::vector<int64_t> Run;
    auto Flush = [&] {
      if (!Run.empty())
        Pieces.push_back(nng::detail::i64Tensor(Run));
      Run.clear();
    };
    for (const SymInt &X : Sizes.values()) {
      if (!X.isSymbolic()) {
        Run.push_back(X.example());
        continue;
      }
      Flush();
      Pieces.push_back(dispatch::call1(
          ir::OpKind::Unsqueeze, {S.symProxy(X), nng::detail::i64Tensor({0})}));
    }
    Flush();
    if (Pieces.size() == 1)
      return Pieces[0];
    return dispatch::call1(ir::OpKind::Concat, Pieces,
                           dispatch::attrs({{"axis", int64_t(0)}}));
  }

  void failSymbolicToInt(const SymInt &Sym) override {
    TraceState *S = anyTrace();
    std::string What = "a symbolic size (a dynamic dim";
    if (S && S->ownsValue(Sym.node())) {
      auto *V = static_cast<const ir::Value *>(Sym.node());
      What += ", traced value '" + V->name() + "'";
    }
    What += ", example extent " + std::to_string(Sym.example()) +
            ") was converted to a C++ integer";
    failTrace(What + ": the graph would hard-code the example extent. Keep "
                     "it a SymInt (auto or nng::SymInt) and pass it to view/"
                     "reshape/expand, use flatten or -1, make the dim static "
                     "in the InputSpec, or mark the module as a leaf");
  }

  void failProxyData(const Tensor &T, const char *What) override {
    TraceState *S = anyTrace();
    std::string Where = S ? S->where() : std::string("<no trace running>");
    if (!T.is_proxy())
      throw TraceError(
          std::string(What) + " changes a tensor that is not traced (a "
          "parameter, buffer or captured constant) in place while tracing "
          "module " + Where + ": the graph cannot record it. Compute a new "
          "tensor instead, skip the side effect when fx::isTracing(), or "
          "mark the module as a leaf (override Tracer::is_leaf_module)");
    std::string Val = "a traced tensor";
    void *V = T.impl()->TraceValue;
    if (S && S->ownsValue(V)) {
      auto *IV = static_cast<ir::Value *>(V);
      Val = "traced value '" + IV->name() + "' (" + IV->type().toString() +
            ")";
      if (ir::Node *P = IV->producer())
        Val += ", made by op " + std::string(P->schema().Name) +
               (P->scope().Path.empty() ? "" : " in " + P->scope().Path);
    }
    throw TraceError(
        std::string(What) + " reads the data of " + Val + " while tracing "
        "module " + Where + ": a trace has shapes but no values, so C++ "
        "that depends on tensor data (item(), to_vector(), data_ptr(), bool "
        "conversion, printing) cannot be recorded. Mark the module as a leaf "
        "(subclass fx::Tracer and override is_leaf_module for its path) or "
        "express the computation with tensor ops (e.g. nng::where)");
  }
};

} // namespace

void installTraceHooks() {
  static FxTraceHooks Hooks;
  nng::detail::installTraceHooks(Hooks);
}

} // namespace nng::fx::detail
