//===- InferSequence.cpp - Inference for the packed-sequence ops ---------===//
//
// Shape and type inference for nng.SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// SplitToSequence and ConcatFromSequence. A sequence is the pair (data,
// shapes) of SequenceLayout.h. When the 'shapes' value (and positions) are
// known, which is always the case at run time, the outputs are exact and
// positions are checked against the length; otherwise the lengths of the
// pair are static where they follow from static input types, and element
// shapes are unknown (unknown rank), as for NonZero's counts.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/SequenceLayout.h"

#include <algorithm>

namespace nng::ir {

using namespace infer;

namespace {

/// Checks the pair at inputs I (data) and I + 1 (shapes); returns the
/// element dtype.
DType checkPair(const InferContext &C, size_t I) {
  const TensorType &D = C.inputType(I), &S = C.inputType(I + 1);
  if (D.hasRank() && D.rank() != 1)
    C.fail("the sequence's 'data' must be 1-D, got ", D.toString());
  if (S.dtype() != DType::I64 || (S.hasRank() && S.rank() != 1))
    C.fail("the sequence's 'shapes' must be a 1-D i64 tensor, got ",
           S.toString());
  return D.dtype();
}

/// The static length of the 1-D input I, or nullopt.
std::optional<int64_t> staticLen(const InferContext &C, size_t I) {
  const TensorType &T = C.inputType(I);
  if (T.hasRank() && T.rank() == 1 && T.dim(0).isStatic())
    return T.dim(0).value();
  return std::nullopt;
}

/// The elements of the pair at input I when its 'shapes' value is known
/// (checked against 'data''s length when that is static); else nullopt.
std::optional<SequenceLayout> knownLayout(const InferContext &C, size_t I) {
  auto Enc = inputInts(C, I + 1);
  if (!Enc)
    return std::nullopt;
  std::string Why;
  auto L = decodeSequenceShapes(*Enc, staticLen(C, I).value_or(-1), Why);
  if (!L)
    C.fail("malformed sequence: ", Why);
  return L;
}

/// The value of the position input I (an integer scalar), or nullopt when
/// absent or unknown.
std::optional<int64_t> knownPosition(const InferContext &C, size_t I) {
  if (!C.hasInput(I))
    return std::nullopt;
  checkIndexDType(C, I);
  const TensorType &T = C.inputType(I);
  std::optional<int64_t> N = T.hasRank() ? T.staticNumel() : std::nullopt;
  if (N && *N != 1)
    C.fail("position must be a scalar, got ", T.toString());
  auto V = inputInts(C, I);
  if (!V)
    return std::nullopt;
  if (V->size() != 1)
    C.fail("position must be a scalar, got ", V->size(), " values");
  return V->front();
}

/// Resolves Pos against L or fails naming the position and the length.
int64_t resolve(const InferContext &C, int64_t Pos, const SequenceLayout &L,
                bool AllowEnd) {
  int64_t N = static_cast<int64_t>(L.size());
  auto R = resolveSequencePosition(Pos, N, AllowEnd);
  if (!R)
    C.fail(sequencePositionError(Pos, N, AllowEnd));
  return *R;
}

/// Sets outputs Out, Out + 1 to the pair of L's exact lengths.
void setPair(InferContext &C, size_t Out, DType T, const SequenceLayout &L) {
  C.setOutputType(Out, TensorType(T, Shape{L.dataLength()}));
  C.setOutputType(
      Out + 1,
      TensorType(DType::I64, Shape{static_cast<int64_t>(L.encode().size())}));
}

/// Sets outputs Out, Out + 1 to a pair with the given lengths.
void setPairDims(InferContext &C, size_t Out, DType T, Dim DataLen,
                 Dim ShapesLen) {
  C.setOutputType(Out, TensorType(T, std::vector<Dim>{DataLen}));
  C.setOutputType(Out + 1, TensorType(DType::I64, std::vector<Dim>{ShapesLen}));
}

/// The static numel of T, or nullopt.
std::optional<int64_t> numelOf(const TensorType &T) {
  return T.hasRank() ? T.staticNumel() : std::nullopt;
}

/// The type of one element: its exact shape, or the common rank (dims
/// static where all elements agree) when the position is not known.
TensorType elementType(DType T, const SequenceLayout &L) {
  if (L.size() == 0)
    return TensorType(T);
  size_t R = L.Shapes[0].rank();
  for (const Shape &S : L.Shapes)
    if (S.rank() != R)
      return TensorType(T);
  std::vector<Dim> Dims;
  for (size_t D = 0; D < R; ++D) {
    Dim Common(L.Shapes[0][D]);
    for (const Shape &S : L.Shapes)
      if (S[D] != L.Shapes[0][D])
        Common = Dim::unknown();
    Dims.push_back(Common);
  }
  return TensorType(T, std::move(Dims));
}

} // namespace

/// SequenceEmpty: data dtype[0], shapes i64[0].
void inferSequenceEmpty(InferContext &C) {
  int64_t Code = C.attrInt("dtype");
  auto T = dtypeFromOnnx(static_cast<int>(Code));
  if (!T)
    C.fail("attribute dtype = ", Code,
           " is not a supported ONNX element type number (e.g. 1 = f32, 7 = "
           "i64)");
  setPair(C, 0, *T, SequenceLayout());
}

/// SequenceConstruct(inputs...): one dtype; lengths static when every
/// input shape is.
void inferSequenceConstruct(InferContext &C) {
  SequenceLayout L;
  bool Static = true;
  for (size_t I = 0; I < C.numInputs(); ++I) {
    checkSameDType(C, 0, I);
    auto S =
        C.inputType(I).hasRank() ? C.inputType(I).staticShape() : std::nullopt;
    if (S)
      L.push(*S);
    else
      Static = false;
  }
  DType T = C.inputType(0).dtype();
  if (Static) {
    setPair(C, 0, T, L);
    return;
  }
  // The ranks alone fix the length of 'shapes'.
  int64_t ShapesLen = 0;
  for (size_t I = 0; I < C.numInputs() && ShapesLen >= 0; ++I)
    ShapesLen =
        C.inputType(I).hasRank() ? ShapesLen + 1 + C.inputType(I).rank() : -1;
  setPairDims(C, 0, T, Dim::unknown(),
              ShapesLen >= 0 ? Dim(ShapesLen) : Dim::unknown());
}

/// SequenceInsert(data, shapes, tensor, position?).
void inferSequenceInsert(InferContext &C) {
  DType T = checkPair(C, 0);
  if (C.inputType(2).dtype() != T)
    C.fail("cannot insert a ", C.inputType(2).toString(),
           " tensor into a sequence of ", dtypeName(T));
  auto Pos = knownPosition(C, 3);
  const TensorType &X = C.inputType(2);
  if (auto L = knownLayout(C, 0)) {
    if (Pos)
      resolve(C, *Pos, *L, /*AllowEnd=*/true);
    if (auto S = X.hasRank() ? X.staticShape() : std::nullopt) {
      L->push(*S);
      setPair(C, 0, T, *L);
      return;
    }
  }
  auto DataLen = staticLen(C, 0), ShapesLen = staticLen(C, 1);
  auto N = numelOf(X);
  setPairDims(C, 0, T, DataLen && N ? Dim(*DataLen + *N) : Dim::unknown(),
              ShapesLen && X.hasRank() ? Dim(*ShapesLen + 1 + X.rank())
                                       : Dim::unknown());
}

/// SequenceErase(data, shapes, position?).
void inferSequenceErase(InferContext &C) {
  DType T = checkPair(C, 0);
  auto Pos = knownPosition(C, 2);
  auto L = knownLayout(C, 0);
  if (!L || (C.hasInput(2) && !Pos)) {
    setPairDims(C, 0, T, Dim::unknown(), Dim::unknown());
    return;
  }
  int64_t At = resolve(C, Pos.value_or(-1), *L, /*AllowEnd=*/false);
  SequenceLayout Out;
  for (size_t I = 0; I < L->size(); ++I)
    if (static_cast<int64_t>(I) != At)
      Out.push(L->Shapes[I]);
  setPair(C, 0, T, Out);
}

/// SequenceAt(data, shapes, position): the element's exact shape when
/// known.
void inferSequenceAt(InferContext &C) {
  DType T = checkPair(C, 0);
  auto Pos = knownPosition(C, 2);
  auto L = knownLayout(C, 0);
  if (!L) {
    C.setOutputType(0, TensorType(T));
    return;
  }
  if (!Pos) {
    C.setOutputType(0, elementType(T, *L));
    return;
  }
  C.setOutputType(0, TensorType(T, L->Shapes[resolve(C, *Pos, *L, false)]));
}

/// SequenceLength(data, shapes): i64 scalar.
void inferSequenceLength(InferContext &C) {
  checkPair(C, 0);
  knownLayout(C, 0); // Checks a known 'shapes'.
  C.setOutputType(0, TensorType(DType::I64, Shape{}));
}

/// SplitToSequence(input, split?): exact when the input shape is static and
/// 'split' is absent or known.
void inferSplitToSequence(InferContext &C) {
  const TensorType &X = C.inputType(0);
  DType T = X.dtype();
  if (C.hasInput(1))
    checkIndexDType(C, 1);
  if (!X.hasRank()) {
    setPairDims(C, 0, T, Dim::unknown(), Dim::unknown());
    return;
  }
  if (X.rank() == 0)
    C.fail("cannot split a scalar (", X.toString(), ")");
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
  auto N = numelOf(X);
  Dim DataLen = N ? Dim(*N) : Dim::unknown();
  auto S = X.staticShape();
  auto Split = inputInts(C, 1);
  if (!S || (C.hasInput(1) && !Split)) {
    setPairDims(C, 0, T, DataLen, Dim::unknown());
    return;
  }
  bool Squeeze = !C.hasInput(1) && C.attrInt("keepdims") == 0;
  std::string Why;
  auto Sizes = sequenceSplitSizes((*S)[Axis], Split ? &*Split : nullptr,
                                  C.hasInput(1) && C.inputType(1).hasRank() &&
                                      C.inputType(1).rank() == 0,
                                  Why);
  if (!Sizes)
    C.fail(Why, " (axis ", Axis, " of ", X.toString(), ")");
  SequenceLayout L;
  for (int64_t Len : *Sizes) {
    Shape E = *S;
    E[Axis] = Len;
    if (Squeeze)
      E.dims().erase(E.dims().begin() + Axis);
    L.push(E);
  }
  setPair(C, 0, T, L);
}

/// ConcatFromSequence(data, shapes): exact when the elements are known.
void inferConcatFromSequence(InferContext &C) {
  DType T = checkPair(C, 0);
  bool NewAxis = C.attrInt("new_axis") != 0;
  auto L = knownLayout(C, 0);
  if (!L) {
    C.setOutputType(0, TensorType(T));
    return;
  }
  if (L->size() == 0)
    C.fail("cannot concatenate an empty sequence");
  const Shape &First = L->Shapes[0];
  int64_t R = static_cast<int64_t>(First.rank());
  if (!NewAxis && R == 0)
    C.fail("cannot concatenate scalars (element 0 is a scalar); set "
           "new_axis = 1 to stack them");
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), NewAxis ? R + 1 : R);
  Shape Out = First;
  if (NewAxis)
    Out.dims().insert(Out.dims().begin() + Axis, 0);
  else
    Out[Axis] = 0;
  for (size_t I = 0; I < L->size(); ++I) {
    const Shape &E = L->Shapes[I];
    bool Fits = static_cast<int64_t>(E.rank()) == R;
    for (int64_t A = 0; Fits && A < R; ++A)
      Fits = (!NewAxis && A == Axis) || E[A] == First[A];
    if (!Fits)
      C.fail("element ", I, " ", E.toString(), " does not fit element 0 ",
             First.toString(),
             NewAxis ? " (stacking needs equal shapes)"
                     : " (only axis " + std::to_string(Axis) + " may differ)");
    Out[Axis] += NewAxis ? 1 : E[Axis];
  }
  C.setOutputType(0, TensorType(T, Out));
}

} // namespace nng::ir
