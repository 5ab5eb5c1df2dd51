//===- KernelsSequence.cpp - Packed-sequence ops --------------------------===//
//
// Reference kernels of nng.SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceErase, SequenceAt, SequenceLength, SplitToSequence and
// ConcatFromSequence. A sequence is the pair (data, shapes) of
// ir/SequenceLayout.h: the kernels decode 'shapes' (checked against the
// length of 'data'), work on the elements as tensors and pack the result
// again. Positions follow ONNX (negative ones count from the back); one out
// of range is an error naming the node, the position and the length.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/ir/SequenceLayout.h"

#include <cstring>

namespace nng::backends::reference {

namespace {

/// A sequence as its element tensors (contiguous views of 'data').
struct Elements {
  DType T = DType::F32;
  std::vector<Tensor> Items;
};

/// Decodes the pair at inputs I (data) and I + 1 (shapes).
Elements elementsOf(const KernelContext &C, size_t I) {
  const Tensor &D = C.in(I), &S = C.in(I + 1);
  if (D.rank() != 1)
    C.fail("the sequence's 'data' must be 1-D, got ", D.shape().toString());
  if (S.dtype() != DType::I64 || S.rank() != 1)
    C.fail("the sequence's 'shapes' must be a 1-D i64 tensor, got ",
           dtypeName(S.dtype()), S.shape().toString());
  std::string Why;
  auto L = ir::decodeSequenceShapes(S.toIntVector(), D.numel(), Why);
  if (!L)
    C.fail("malformed sequence: ", Why);
  Elements E;
  E.T = D.dtype();
  Tensor Flat = D.contiguous();
  for (size_t K = 0; K < L->size(); ++K)
    E.Items.push_back(
        Flat.slice(0, L->Offsets[K], L->Offsets[K + 1]).reshape(L->Shapes[K]));
  return E;
}

/// The position input I (an integer scalar) resolved against Length, or
/// Default when the input is absent.
int64_t positionOf(const KernelContext &C, size_t I, int64_t Length,
                   bool AllowEnd, int64_t Default) {
  int64_t Pos = Default;
  if (C.hasInput(I)) {
    std::vector<int64_t> V = intsOf(C, C.in(I), "position");
    if (V.size() != 1)
      C.fail("position must be a scalar, got ", C.in(I).shape().toString());
    Pos = V[0];
  }
  auto R = ir::resolveSequencePosition(Pos, Length, AllowEnd);
  if (!R)
    C.fail(ir::sequencePositionError(Pos, Length, AllowEnd));
  return *R;
}

/// Packs E into outputs 0 (data) and 1 (shapes).
void writePair(KernelContext &C, const Elements &E) {
  ir::SequenceLayout L;
  for (const Tensor &X : E.Items) {
    if (X.dtype() != E.T)
      C.fail("every element must be ", dtypeName(E.T), ", got ",
             dtypeName(X.dtype()));
    L.push(X.shape());
  }
  Tensor &D = C.allocOutput(0, Shape{L.dataLength()}, E.T);
  char *Dst = static_cast<char *>(D.rawData());
  size_t ES = dtypeSize(E.T);
  for (size_t K = 0; K < E.Items.size(); ++K) {
    Tensor X = E.Items[K].contiguous();
    if (X.numel() > 0)
      std::memcpy(Dst + static_cast<size_t>(L.Offsets[K]) * ES, X.rawData(),
                  X.nbytes());
  }
  std::vector<int64_t> Enc = L.encode();
  Tensor &S =
      C.allocOutput(1, Shape{static_cast<int64_t>(Enc.size())}, DType::I64);
  if (!Enc.empty())
    std::memcpy(S.rawData(), Enc.data(), Enc.size() * sizeof(int64_t));
}

} // namespace

void kernelSequenceEmpty(KernelContext &C) {
  Elements E;
  E.T = C.OutTypes.at(0).dtype();
  writePair(C, E);
}

void kernelSequenceConstruct(KernelContext &C) {
  Elements E;
  E.T = C.in(0).dtype();
  for (size_t I = 0; I < C.Inputs.size(); ++I)
    E.Items.push_back(C.in(I));
  writePair(C, E);
}

void kernelSequenceInsert(KernelContext &C) {
  Elements E = elementsOf(C, 0);
  if (C.in(2).dtype() != E.T)
    C.fail("cannot insert a ", dtypeName(C.in(2).dtype()),
           " tensor into a sequence of ", dtypeName(E.T));
  int64_t N = static_cast<int64_t>(E.Items.size());
  int64_t At = positionOf(C, 3, N, /*AllowEnd=*/true, N);
  E.Items.insert(E.Items.begin() + At, C.in(2));
  writePair(C, E);
}

void kernelSequenceErase(KernelContext &C) {
  Elements E = elementsOf(C, 0);
  int64_t N = static_cast<int64_t>(E.Items.size());
  int64_t At = positionOf(C, 2, N, /*AllowEnd=*/false, -1);
  E.Items.erase(E.Items.begin() + At);
  writePair(C, E);
}

void kernelSequenceAt(KernelContext &C) {
  Elements E = elementsOf(C, 0);
  int64_t N = static_cast<int64_t>(E.Items.size());
  int64_t At = positionOf(C, 2, N, /*AllowEnd=*/false, 0);
  C.Outputs.resize(1);
  C.Outputs[0] = E.Items[At].clone();
}

void kernelSequenceLength(KernelContext &C) {
  Elements E = elementsOf(C, 0);
  C.allocOutput(0, Shape{}, DType::I64).data<int64_t>()[0] =
      static_cast<int64_t>(E.Items.size());
}

void kernelSplitToSequence(KernelContext &C) {
  const Tensor &X = C.in(0);
  int64_t R = static_cast<int64_t>(X.rank());
  if (R == 0)
    C.fail("cannot split a scalar");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R), D = X.size(Axis);
  bool Squeeze = !C.hasInput(1) && C.attrInt("keepdims") == 0;
  std::vector<int64_t> Split;
  if (C.hasInput(1))
    Split = intsOf(C, C.in(1), "split");
  std::string Why;
  auto Sizes =
      ir::sequenceSplitSizes(D, C.hasInput(1) ? &Split : nullptr,
                             C.hasInput(1) && C.in(1).rank() == 0, Why);
  if (!Sizes)
    C.fail(Why, " (axis ", Axis, ")");
  Elements E;
  E.T = X.dtype();
  int64_t Off = 0;
  for (int64_t Len : *Sizes) {
    Tensor Part = X.slice(Axis, Off, Off + Len);
    Off += Len;
    if (Squeeze) {
      Shape S = Part.shape();
      S.dims().erase(S.dims().begin() + Axis);
      Part = Part.contiguous().reshape(S);
    }
    E.Items.push_back(Part);
  }
  writePair(C, E);
}

void kernelConcatFromSequence(KernelContext &C) {
  Elements E = elementsOf(C, 0);
  if (E.Items.empty())
    C.fail("cannot concatenate an empty sequence");
  bool NewAxis = C.attrInt("new_axis") != 0;
  const Shape First = E.Items[0].shape(); // A copy: the items get reshaped.
  int64_t R = static_cast<int64_t>(First.rank());
  if (!NewAxis && R == 0)
    C.fail("cannot concatenate scalars; set new_axis = 1 to stack them");
  int64_t Axis = normAxis(C, C.attrInt("axis"), NewAxis ? R + 1 : R);
  Shape Out = First;
  if (NewAxis)
    Out.dims().insert(Out.dims().begin() + Axis, 0);
  else
    Out[Axis] = 0;
  for (size_t I = 0; I < E.Items.size(); ++I) {
    const Shape &S = E.Items[I].shape();
    bool Fits = static_cast<int64_t>(S.rank()) == R;
    for (int64_t A = 0; Fits && A < R; ++A)
      Fits = (!NewAxis && A == Axis) || S[A] == First[A];
    if (!Fits)
      C.fail("element ", I, " ", S.toString(), " does not fit element 0 ",
             First.toString());
    if (NewAxis) {
      Shape U = S;
      U.dims().insert(U.dims().begin() + Axis, 1);
      E.Items[I] = E.Items[I].reshape(U);
    }
    Out[Axis] += E.Items[I].size(Axis);
  }
  Tensor &Y = C.allocOutput(0, Out, E.T);
  int64_t Off = 0;
  for (const Tensor &T : E.Items) {
    int64_t Len = T.size(Axis);
    if (Len > 0 && T.numel() > 0)
      Y.slice(Axis, Off, Off + Len).copyFrom(T);
    Off += Len;
  }
}

} // namespace nng::backends::reference
