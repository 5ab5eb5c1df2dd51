//===- InferControlFlow.cpp - Inference for If, Loop and Scan ------------===//
//
// If: the branches are instantiated with the node's input types (their
// captures are implicit inputs; inferTypes has typed them in place just
// before, and then they are read as they are: TypedRegions.h); with a known
// condition the taken branch's types, else each output joins both
// branches' types (dims that differ become unknown). Loop: the body is
// instantiated with the loop-carried types until they are stable (each round
// joins the body's results into them, so a dim that changes between iterations
// becomes unknown); the final values have those types and each scan output the
// body's type with a leading dim, the iteration count: M when it is known and
// there is no cond input (the body's condition is then ignored), else unknown.
// Scan: the same for its states; each scan input gives the body a slice without
// its scan axis, and each scan output gets the scan length (static when a scan
// input's is) at its output axis.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "TypedRegions.h"
#include "nngraph/ir/Regions.h"

#include <algorithm>

namespace nng::ir {

using namespace infer;

namespace {

/// The region of graph attribute Name.
const Graph &regionAttr(const InferContext &C, AnyAttrName Name) {
  const Attribute &A = C.attr(Name);
  if (A.type() != AttrType::Graph || !A.graphPtr())
    C.fail("attribute '", Name.str(), "' must be a graph");
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

/// Instantiates Body with Args until the Count carried values Args[First..]
/// are stable: each round joins what the body gives for them (its outputs
/// OutFirst..) into them, so a dim that changes becomes unknown (every
/// round only loses information: this ends; the bound is a safeguard).
std::unique_ptr<Graph> instantiateCarried(const InferContext &C,
                                          const Graph &Body,
                                          std::vector<TensorType> &Args,
                                          size_t First, size_t Count,
                                          size_t OutFirst, const char *Op) {
  auto Types = allInputTypes(C);
  for (int Round = 0;; ++Round) {
    std::unique_ptr<Graph> R = instantiateRegion(Body, Types, &Args, Op);
    bool Stable = true;
    for (size_t J = 0; J < Count; ++J) {
      TensorType &A = Args[First + J];
      const TensorType &Out = R->outputs()[OutFirst + J]->type();
      if (Out.dtype() != A.dtype())
        C.fail("loop-carried value ", J, " starts as ", A.toString(),
               " but the body gives ", Out.toString());
      TensorType Joined = Round >= 8 ? TensorType(Out.dtype())
                                     : joinTypes(A, Out);
      if (!(Joined == A)) {
        A = Joined;
        Stable = false;
      }
    }
    if (Stable)
      return R;
  }
}

/// T with D inserted at Axis (T's rank + 1 axes).
TensorType withDim(const InferContext &C, const TensorType &T, Dim D,
                   int64_t Axis) {
  if (!T.hasRank())
    return TensorType(T.dtype());
  std::vector<Dim> Dims = T.dims();
  Axis = normalizeAxis(C, Axis, T.rank() + 1, "scan_output_axes");
  Dims.insert(Dims.begin() + Axis, std::move(D));
  return TensorType(T.dtype(), std::move(Dims));
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
  // The branches as typed for the node's input types: in place when
  // inferTypes just did that (TypedRegions.h), else typed copies.
  std::unique_ptr<Graph> Copies[2];
  auto Typed = [&](const Graph &B, int K) -> const Graph & {
    if (TypedRegionsScope::typed(B))
      return B;
    Copies[K] = instantiateRegion(B, Types, nullptr, Where);
    return *Copies[K];
  };
  if (const Tensor *Cond = C.inputValue(0); Cond && Cond->numel() == 1) {
    const Graph &Taken = Typed(Cond->getFlat(0) != 0 ? Then : Else, 0);
    for (size_t I = 0; I < C.numOutputs(); ++I)
      C.setOutputType(I, Taken.outputs()[I]->type());
    return;
  }
  const Graph &T = Typed(Then, 0), &E = Typed(Else, 1);
  for (size_t I = 0; I < C.numOutputs(); ++I) {
    const TensorType &A = T.outputs()[I]->type(), &B = E.outputs()[I]->type();
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
  std::unique_ptr<Graph> R =
      instantiateCarried(C, Body, Args, 2, NumCarried, 1, "Loop");
  const TensorType &Cond = R->outputs()[0]->type();
  if (Cond.dtype() != DType::Bool)
    C.fail("the body's first output (the condition) must be bool, got ",
           Cond.toString());
  for (size_t J = 0; J < NumCarried; ++J)
    C.setOutputType(J, Args[2 + J]);
  // Without a cond input a known M is the iteration count.
  Dim Iterations;
  if (!C.hasInput(1))
    if (const Tensor *M = C.inputValue(0); M && M->numel() == 1)
      Iterations = Dim(std::max<int64_t>(0, M->getFlatInt(0)));
  for (size_t K = 0; K < NumScan; ++K)
    C.setOutputType(NumCarried + K,
                    withDim(C, R->outputs()[1 + NumCarried + K]->type(),
                            Iterations, 0));
}

void inferScan(InferContext &C) {
  const Graph &Body = regionAttr(C, "body");
  size_t NumArgs = Body.inputs().size();
  int64_t Scanned = C.attrInt("num_scan_inputs");
  if (Scanned < 1 || static_cast<size_t>(Scanned) > NumArgs)
    C.fail("num_scan_inputs is ", Scanned, " but the body takes ", NumArgs,
           " inputs (states, then one slice per scan input)");
  size_t M = static_cast<size_t>(Scanned), N = NumArgs - M;
  size_t NumOut = Body.outputs().size();
  if (NumOut < N)
    C.fail("the body gives ", NumOut, " outputs; it must give the ", N,
           " states first");
  size_t K = NumOut - N;
  if (C.numOutputs() != N + K)
    C.fail("the node has ", C.numOutputs(), " outputs but its body makes ", N,
           " states and ", K, " scan outputs");
  auto Axes = [&](IntsAttrName Name, size_t Count) {
    std::vector<int64_t> A = C.attrInts(Name);
    if (A.empty())
      A.assign(Count, 0);
    if (A.size() != Count)
      C.fail(Name.str(), " has ", A.size(), " entries for ", Count,
             " operands");
    return A;
  };
  std::vector<int64_t> InAxes = Axes("scan_input_axes", M);
  std::vector<int64_t> OutAxes = Axes("scan_output_axes", K);
  Axes("scan_input_directions", M);
  Axes("scan_output_directions", K);
  std::vector<TensorType> Args;
  for (size_t J = 0; J < N; ++J)
    Args.push_back(C.inputType(J));
  Dim Length; // The scan length: static when a scan input's is.
  for (size_t I = 0; I < M; ++I) {
    const TensorType &T = C.inputType(N + I);
    if (!T.hasRank()) {
      Args.push_back(TensorType(T.dtype()));
      continue;
    }
    int64_t Axis = normalizeAxis(C, InAxes[I], T.rank(), "scan_input_axes");
    std::vector<Dim> Dims = T.dims();
    const Dim &L = Dims[Axis];
    if (L.isStatic() && Length.isStatic() && L.value() != Length.value())
      C.fail("scan input ", I, " has ", L.value(), " steps along axis ", Axis,
             " but another has ", Length.value());
    if (L.isStatic() || (Length.isUnknown() && L.isSymbolic()))
      Length = L;
    Dims.erase(Dims.begin() + Axis);
    Args.push_back(TensorType(T.dtype(), std::move(Dims)));
  }
  std::unique_ptr<Graph> R = instantiateCarried(C, Body, Args, 0, N, 0, "Scan");
  for (size_t J = 0; J < N; ++J)
    C.setOutputType(J, Args[J]);
  for (size_t O = 0; O < K; ++O)
    C.setOutputType(N + O,
                    withDim(C, R->outputs()[N + O]->type(), Length, OutAxes[O]));
}

} // namespace nng::ir
