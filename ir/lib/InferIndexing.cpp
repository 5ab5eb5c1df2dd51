//===- InferIndexing.cpp - Inference for joining, splitting, indexing ----===//
//
// Shape and type inference for Concat, Split, Slice (negative, clamped and
// reversed starts/ends/steps), Gather and GatherElements. Split sizes and
// Slice bounds come from input values: exact when known, unknown dims
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/ViewGeometry.h"

#include <algorithm>
#include <climits>

namespace nng::ir {

using namespace infer;

/// Concat(inputs..., axis): equal ranks and dtypes; extents agree except
/// along axis, where they add up.
void inferConcat(InferContext &C) {
  int64_t First = -1;
  for (size_t I = 0; I < C.numInputs(); ++I) {
    checkSameDType(C, 0, I);
    if (First < 0 && C.inputType(I).hasRank())
      First = static_cast<int64_t>(I);
  }
  DType T = C.inputType(0).dtype();
  if (First < 0) {
    C.setOutputType(0, TensorType(T));
    return;
  }
  const TensorType &Ref = C.inputType(First);
  int64_t R = Ref.rank();
  if (R == 0)
    C.fail("cannot concatenate scalars (", operandName(C, First), " is ",
           Ref.toString(), "); Unsqueeze them first");
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), R);
  std::vector<Dim> Out = Ref.dims();
  int64_t StaticSum = 0, NonStatic = 0;
  Dim NonStaticDim;
  bool AllRanked = true;
  for (size_t I = 0; I < C.numInputs(); ++I) {
    const TensorType &X = C.inputType(I);
    if (!X.hasRank()) {
      AllRanked = false;
      continue;
    }
    if (X.rank() != R)
      C.fail("all inputs must have the same rank: ", operandName(C, First),
             " is ", Ref.toString(), " but ", operandName(C, I), " is ",
             X.toString());
    for (int64_t D = 0; D < R; ++D) {
      if (D == Axis)
        continue;
      if (!dimsCompatible(Out[D], X.dim(D)))
        C.fail("inputs differ on axis ", D, " (only axis ", Axis,
               " may differ): ", operandName(C, First), " is ", Ref.toString(),
               " and ", operandName(C, I), " is ", X.toString());
      if (X.dim(D).isStatic() || (Out[D].isUnknown() && X.dim(D).isSymbolic()))
        Out[D] = X.dim(D);
    }
    if (X.dim(Axis).isStatic()) {
      StaticSum += X.dim(Axis).value();
    } else {
      ++NonStatic;
      NonStaticDim = X.dim(Axis);
    }
  }
  if (!AllRanked || NonStatic > 1)
    Out[Axis] = Dim::unknown();
  else if (NonStatic == 1)
    Out[Axis] = StaticSum == 0 ? NonStaticDim : Dim::unknown();
  else
    Out[Axis] = Dim(StaticSum);
  C.setOutputType(0, TensorType(T, std::move(Out)));
}

/// Split(input, split?, axis): one output per entry of split, or equal
/// parts (one per output) when split is absent.
void inferSplit(InferContext &C) {
  const TensorType &X = C.inputType(0);
  size_t N = C.numOutputs();
  if (C.hasInput(1))
    checkDType(C, 1, DType::I64, "(the split sizes)");
  if (!X.hasRank()) {
    for (size_t I = 0; I < N; ++I)
      C.setOutputType(I, TensorType(X.dtype()));
    return;
  }
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
  const Dim &D = X.dim(Axis);
  std::vector<Dim> Parts(N, Dim::unknown());
  if (auto Sizes = inputInts(C, 1)) {
    if (Sizes->size() != N)
      C.fail("split ", intsToString(*Sizes), " has ", Sizes->size(),
             " sizes but the node has ", N, " outputs");
    int64_t Sum = 0;
    for (size_t I = 0; I < N; ++I) {
      if ((*Sizes)[I] < 0)
        C.fail("split ", intsToString(*Sizes), " has a negative size");
      Sum += (*Sizes)[I];
      Parts[I] = Dim((*Sizes)[I]);
    }
    if (D.isStatic() && Sum != D.value())
      C.fail("split ", intsToString(*Sizes), " adds up to ", Sum, " but axis ",
             Axis, " of ", X.toString(), " has extent ", D.value());
  } else if (!C.hasInput(1)) {
    if (D.isStatic()) {
      if (D.value() % static_cast<int64_t>(N) != 0)
        C.fail("axis ", Axis, " of ", X.toString(), " (extent ", D.value(),
               ") does not split into ", N,
               " equal parts; give the split sizes");
      Parts.assign(N, Dim(D.value() / static_cast<int64_t>(N)));
    } else if (N == 1) {
      Parts[0] = D;
    }
  }
  for (size_t I = 0; I < N; ++I) {
    std::vector<Dim> Out = X.dims();
    Out[Axis] = Parts[I];
    C.setOutputType(I, TensorType(X.dtype(), std::move(Out)));
  }
}

/// Slice(data, starts, ends, axes?, steps?): numpy-style slicing with
/// negative indices counted from the end and out-of-range bounds clamped.
void inferSlice(InferContext &C) {
  const TensorType &X = C.inputType(0);
  for (size_t I = 1; I < 5; ++I)
    if (C.hasInput(I)) {
      checkIndexDType(C, I);
      requireRank(C, I, 1);
    }
  checkSameDType(C, 1, 2);
  if (!X.hasRank()) {
    C.setOutputType(0, X);
    return;
  }
  int64_t R = X.rank();
  auto Starts = inputInts(C, 1), Ends = inputInts(C, 2);
  auto Axes = inputInts(C, 3), Steps = inputInts(C, 4);
  std::vector<int64_t> AxisList;
  if (Axes)
    AxisList = normalizeAxes(C, *Axes, R);
  std::vector<Dim> Out = X.dims();
  if (!Starts || !Ends || (C.hasInput(3) && !Axes) ||
      (C.hasInput(4) && !Steps)) {
    // Bounds unknown: the sliced axes get unknown extents.
    for (int64_t I = 0; I < R; ++I)
      if (!Axes || std::count(AxisList.begin(), AxisList.end(), I))
        Out[I] = Dim::unknown();
    C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
    return;
  }
  size_t K = Starts->size();
  if (Ends->size() != K)
    C.fail("starts ", intsToString(*Starts), " and ends ", intsToString(*Ends),
           " differ in length");
  if (!Axes)
    for (size_t I = 0; I < K; ++I)
      AxisList.push_back(normalizeAxis(C, static_cast<int64_t>(I), R));
  if (AxisList.size() != K)
    C.fail("axes ", intsToString(*Axes), " and starts ", intsToString(*Starts),
           " differ in length");
  std::vector<int64_t> StepList = Steps ? *Steps : std::vector<int64_t>(K, 1);
  if (StepList.size() != K)
    C.fail("steps ", intsToString(StepList), " and starts ",
           intsToString(*Starts), " differ in length");
  for (size_t I = 0; I < K; ++I) {
    int64_t A = AxisList[I], S = (*Starts)[I], E = (*Ends)[I], St = StepList[I];
    if (St == 0)
      C.fail("steps ", intsToString(StepList), " has a zero step");
    const Dim &D = X.dim(A);
    if (D.isStatic())
      Out[A] = Dim(sliceAxis(D.value(), S, E, St).Length);
    else if (S == 0 && St == 1 && E >= INT_MAX)
      Out[A] = D; // The whole axis.
    else
      Out[A] = Dim::unknown();
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// Gather(data, indices, axis): data[:axis] + indices.shape +
/// data[axis+1:]. Known (small) index tensors are range-checked.
void inferGather(InferContext &C) {
  const TensorType &X = C.inputType(0), &Idx = C.inputType(1);
  checkIndexDType(C, 1);
  requireMinRank(C, 0, 1);
  if (!X.hasRank() || !Idx.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
  const Dim &D = X.dim(Axis);
  // Range-check known indices (small ones only: at run time every input is
  // known and the kernel checks large index tensors itself).
  const Tensor *V = C.inputValue(1);
  if (V && D.isStatic() && V->numel() <= 4096)
    for (int64_t I = 0; I < V->numel(); ++I) {
      int64_t J = V->getFlatInt(I);
      if (J < -D.value() || J >= D.value())
        C.fail("index ", J, " is out of range for axis ", Axis, " of data ",
               X.toString(), " (valid: [", -D.value(), ", ", D.value() - 1,
               "])");
    }
  std::vector<Dim> Out(X.dims().begin(), X.dims().begin() + Axis);
  Out.insert(Out.end(), Idx.dims().begin(), Idx.dims().end());
  Out.insert(Out.end(), X.dims().begin() + Axis + 1, X.dims().end());
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// GatherElements(data, indices, axis): indices' shape, data's dtype; the
/// ranks must agree.
void inferGatherElements(InferContext &C) {
  const TensorType &X = C.inputType(0), &Idx = C.inputType(1);
  checkIndexDType(C, 1);
  requireMinRank(C, 0, 1);
  if (X.hasRank() && Idx.hasRank() && X.rank() != Idx.rank())
    C.fail("data ", X.toString(), " and indices ", Idx.toString(),
           " must have the same rank");
  if (X.hasRank())
    normalizeAxis(C, C.attrInt("axis"), X.rank());
  TensorType Out = Idx;
  Out.setDType(X.dtype());
  C.setOutputType(0, Out);
}

} // namespace nng::ir
