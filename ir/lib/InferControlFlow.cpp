//===- InferControlFlow.cpp - Inference for If and Loop ------------------===//
//
// If: the branches are instantiated with the node's input types (their
// captures are implicit inputs); with a known condition the taken branch's
// types, else each output joins both branches' types (dims that differ
// become unknown). Loop: the body is instantiated with the loop-carried
// types until they are stable (each round joins the body's results into
// them, so a dim that changes between iterations becomes unknown); the
// final values have those types and each scan output the body's type with a
// leading unknown dim (the iteration count).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/Regions.h"

namespace nng::ir {

using namespace infer;

namespace {

/// The region of graph attribute Name.
const Graph &regionAttr(const InferContext &C, std::string_view Name) {
  const Attribute &A = C.attr(Name);
  if (A.type() != AttrType::Graph || !A.graphPtr())
    C.fail("attribute '", Name, "' must be a graph");
  return A.g();
}

std::vector<const TensorType *> allInputTypes(const InferContext &C) {
  std::vector<const TensorType *> T;
  for (size_t I = 0; I < C.numInputs(); ++I)
    T.push_back(C.hasInput(I) ? &C.inputType(I) : nullptr);
  return T;
}

/// Fails unless input I (when present) is a bool scalar or one-element
/// tensor.
void checkCondition(const InferContext &C, size_t I, const char *What) {
  if (!C.hasInput(I))
    return;
  const TensorType &T = C.inputType(I);
  if (T.dtype() != DType::Bool)
    C.fail(What, " must be bool, got ", T.toString());
  if (T.hasRank() && T.staticNumel() && *T.staticNumel() != 1)
    C.fail(What, " must hold one element, got ", T.toString());
}

} // namespace

void inferIf(InferContext &C) {
  checkCondition(C, 0, "the condition 'cond'");
  std::string Where = "If";
  auto Types = allInputTypes(C);
  const Graph &Then = regionAttr(C, "then_branch");
  const Graph &Else = regionAttr(C, "else_branch");
  for (const Graph *B : {&Then, &Else}) {
    if (!B->inputs().empty())
      C.fail("a branch takes no inputs, but '", B->name(), "' has ",
             B->inputs().size());
    if (B->outputs().size() != C.numOutputs())
      C.fail("the node has ", C.numOutputs(), " outputs but branch '",
             B->name(), "' gives ", B->outputs().size());
  }
  if (const Tensor *Cond = C.inputValue(0); Cond && Cond->numel() == 1) {
    const Graph &Taken = Cond->getFlat(0) != 0 ? Then : Else;
    auto R = instantiateRegion(Taken, Types, nullptr, Where);
    for (size_t I = 0; I < C.numOutputs(); ++I)
      C.setOutputType(I, R->outputs()[I]->type());
    return;
  }
  auto T = instantiateRegion(Then, Types, nullptr, Where);
  auto E = instantiateRegion(Else, Types, nullptr, Where);
  for (size_t I = 0; I < C.numOutputs(); ++I) {
    const TensorType &A = T->outputs()[I]->type(), &B = E->outputs()[I]->type();
    if (A.dtype() != B.dtype())
      C.fail("output ", I, " is ", A.toString(), " in then_branch but ",
             B.toString(), " in else_branch; the dtypes must agree");
    C.setOutputType(I, joinTypes(A, B));
  }
}

void inferLoop(InferContext &C) {
  const Graph &Body = regionAttr(C, "body");
  size_t NumArgs = Body.inputs().size();
  if (NumArgs < 2)
    C.fail("the body must take at least 2 inputs (iter_num, cond), got ",
           NumArgs);
  size_t NumCarried = NumArgs - 2;
  size_t NumOut = Body.outputs().size();
  if (NumOut < 1 + NumCarried)
    C.fail("the body gives ", NumOut, " outputs; it must give the condition "
           "and the ", NumCarried, " loop-carried values first");
  size_t NumScan = NumOut - 1 - NumCarried;
  if (C.numOutputs() != NumCarried + NumScan)
    C.fail("the node has ", C.numOutputs(), " outputs but its body makes ",
           NumCarried, " loop-carried values and ", NumScan, " scan outputs");
  if (C.hasInput(0)) {
    const TensorType &M = C.inputType(0);
    if (M.dtype() != DType::I64 || (M.staticNumel() && *M.staticNumel() != 1))
      C.fail("the trip count 'M' must be an i64 scalar, got ", M.toString());
  }
  checkCondition(C, 1, "the condition 'cond'");
  std::vector<TensorType> Args{TensorType(DType::I64, std::vector<Dim>{}),
                               TensorType(DType::Bool, std::vector<Dim>{})};
  for (size_t J = 0; J < NumCarried; ++J) {
    if (!C.hasInput(2 + J))
      C.fail("loop-carried value ", J, " has no initial value");
    Args.push_back(C.inputType(2 + J));
  }
  auto Types = allInputTypes(C);
  std::unique_ptr<Graph> R;
  // Each round only loses information (a dim or a rank becomes unknown), so
  // this ends; the bound is a safeguard.
  for (int Round = 0;; ++Round) {
    R = instantiateRegion(Body, Types, &Args, "Loop");
    const TensorType &Cond = R->outputs()[0]->type();
    if (Cond.dtype() != DType::Bool)
      C.fail("the body's first output (the condition) must be bool, got ",
             Cond.toString());
    bool Stable = true;
    for (size_t J = 0; J < NumCarried; ++J) {
      const TensorType &Out = R->outputs()[1 + J]->type();
      if (Out.dtype() != Args[2 + J].dtype())
        C.fail("loop-carried value ", J, " starts as ",
               Args[2 + J].toString(), " but the body gives ", Out.toString());
      TensorType Joined = joinTypes(Args[2 + J], Out);
      if (Round >= 8)
        Joined = TensorType(Out.dtype());
      if (!(Joined == Args[2 + J])) {
        Args[2 + J] = Joined;
        Stable = false;
      }
    }
    if (Stable)
      break;
  }
  for (size_t J = 0; J < NumCarried; ++J)
    C.setOutputType(J, Args[2 + J]);
  for (size_t K = 0; K < NumScan; ++K) {
    const TensorType &T = R->outputs()[1 + NumCarried + K]->type();
    if (!T.hasRank()) {
      C.setOutputType(NumCarried + K, TensorType(T.dtype()));
      continue;
    }
    std::vector<Dim> Dims{Dim::unknown()};
    Dims.insert(Dims.end(), T.dims().begin(), T.dims().end());
    C.setOutputType(NumCarried + K, TensorType(T.dtype(), std::move(Dims)));
  }
}

} // namespace nng::ir
