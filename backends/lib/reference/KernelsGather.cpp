//===- KernelsGather.cpp - Indexing, constants, Range and Dropout --------===//
//
// Reference kernels of Gather and GatherElements (negative indices count
// from the end; an index out of range is an error naming it), the constant
// producers Constant, ConstantOfShape and Range, and Dropout (identity
// unless training_mode; then a mask drawn from a counter-based generator
// seeded by the 'seed' attribute, so runs are reproducible).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/runtime/SplitMix64.h"

#include <algorithm>
#include <cstring>

namespace nng::backends::reference {

namespace {

/// Fails unless the indices are i32 or i64.
void requireIndexType(const KernelContext &C, const Tensor &Idx) {
  if (Idx.dtype() != DType::I32 && Idx.dtype() != DType::I64)
    C.fail("indices must be i32 or i64, got ", dtypeName(Idx.dtype()));
}

/// Maps a possibly negative index into [0, N) or fails naming it.
int64_t checkedIndex(const KernelContext &C, int64_t V, int64_t N,
                     int64_t Axis) {
  if (V < -N || V >= N)
    C.fail("index ", V, " is out of range for axis ", Axis, " of extent ", N,
           " (valid: [", -N, ", ", N - 1, "])");
  return V < 0 ? V + N : V;
}

} // namespace

void kernelGather(KernelContext &C) {
  const Tensor &Data = C.in(0), &Idx = C.in(1);
  requireIndexType(C, Idx);
  int64_t R = static_cast<int64_t>(Data.rank());
  if (R == 0)
    C.fail("data must have rank >= 1");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  Shape Out(Data.shape().begin(), Data.shape().begin() + Axis);
  for (int64_t D : Idx.shape())
    Out.push_back(D);
  int64_t Outer = 1, Inner = 1, N = Data.size(Axis);
  for (int64_t D = 0; D < R; ++D) {
    if (D < Axis)
      Outer *= Data.size(D);
    if (D > Axis) {
      Inner *= Data.size(D);
      Out.push_back(Data.size(D));
    }
  }
  std::vector<int64_t> Ind = Idx.toIntVector();
  for (int64_t &V : Ind)
    V = checkedIndex(C, V, N, Axis);
  Tensor Src = Data.contiguous();
  Tensor &Y = C.allocOutput(0, Out, Data.dtype());
  size_t Row = static_cast<size_t>(Inner) * Data.elementSize();
  const char *PS = static_cast<const char *>(Src.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  int64_t K = static_cast<int64_t>(Ind.size());
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < K; ++J)
      if (Row)
        std::memcpy(PY + (O * K + J) * Row, PS + (O * N + Ind[J]) * Row, Row);
}

void kernelGatherElements(KernelContext &C) {
  const Tensor &Data = C.in(0), &Idx = C.in(1);
  requireIndexType(C, Idx);
  int64_t R = static_cast<int64_t>(Data.rank());
  if (R == 0 || static_cast<int64_t>(Idx.rank()) != R)
    C.fail("data ", Data.shape().toString(), " and indices ",
           Idx.shape().toString(), " must have the same rank >= 1");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  for (int64_t D = 0; D < R; ++D)
    if (D != Axis && Idx.size(D) > Data.size(D))
      C.fail("indices ", Idx.shape().toString(), " exceed data ",
             Data.shape().toString(), " on axis ", D);
  Tensor &Y = C.allocOutput(0, Idx.shape(), Data.dtype());
  std::vector<int64_t> Ind = Idx.toIntVector();
  size_t ES = Data.elementSize();
  const char *PS = static_cast<const char *>(Data.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  std::vector<int64_t> Pos(R);
  for (int64_t I = 0; I < Y.numel(); ++I) {
    unflatten(I, Idx.shape().dims(), Pos.data());
    Pos[Axis] = checkedIndex(C, Ind[I], Data.size(Axis), Axis);
    int64_t Off = 0;
    for (int64_t D = 0; D < R; ++D)
      Off += Pos[D] * Data.strides()[D];
    std::memcpy(PY + I * ES, PS + Off * ES, ES);
  }
}

void kernelConstantOfShape(KernelContext &C) {
  std::vector<int64_t> Dims = intsOf(C, C.in(0), "input");
  for (int64_t D : Dims)
    if (D < 0)
      C.fail("shape ", intsToString(Dims), " has a negative extent");
  Tensor Value = Tensor::scalar<float>(0.0f);
  if (const ir::Attribute *A = C.N.attrs().find("value")) {
    if (A->type() != ir::AttrType::Tensor || A->t().numel() != 1)
      C.fail("attribute 'value' must be a one-element tensor");
    Value = A->t().contiguous();
  }
  Tensor &Y = C.allocOutput(0, Shape(Dims), Value.dtype());
  // allocOutput's memory is zero-filled: a zero value needs no writes.
  size_t ES = Y.elementSize();
  const char *PV = static_cast<const char *>(Value.rawData());
  if (std::all_of(PV, PV + ES, [](char B) { return B == 0; }))
    return;
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t I = 0; I < Y.numel(); ++I)
    std::memcpy(PY + I * ES, PV, ES);
}

void kernelConstant(KernelContext &C) {
  const ir::AttrMap &A = C.N.attrs();
  if (A.size() != 1)
    C.fail("exactly one of value, value_float(s), value_int(s), "
           "value_string(s) must be set, got ",
           A.size(), " attributes");
  if (const ir::Attribute *V = A.find("value")) {
    C.Outputs[0] = V->t().clone();
  } else if (const ir::Attribute *V = A.find("value_float")) {
    C.Outputs[0] = Tensor::scalar<float>(V->f());
  } else if (const ir::Attribute *V = A.find("value_floats")) {
    const std::vector<float> &F = V->floats();
    C.Outputs[0] = Tensor::fromVector(F, Shape{static_cast<int64_t>(F.size())});
  } else if (const ir::Attribute *V = A.find("value_int")) {
    C.Outputs[0] = Tensor::scalar<int64_t>(V->i());
  } else if (const ir::Attribute *V = A.find("value_ints")) {
    const std::vector<int64_t> &I = V->ints();
    C.Outputs[0] = Tensor::fromVector(I, Shape{static_cast<int64_t>(I.size())});
  } else if (const ir::Attribute *V = A.find("value_string")) {
    C.Outputs[0] = Tensor::fromStrings({V->s()}, Shape{});
  } else if (const ir::Attribute *V = A.find("value_strings")) {
    const std::vector<std::string> &S = V->strings();
    C.Outputs[0] =
        Tensor::fromStrings(S, Shape{static_cast<int64_t>(S.size())});
  } else {
    C.fail("unknown attribute '", A.begin()->first, "'");
  }
}

void kernelRange(KernelContext &C) {
  const Tensor &Start = C.in(0), &Limit = C.in(1), &Delta = C.in(2);
  requireSameDType(C, Start, Limit, "start", "limit");
  requireSameDType(C, Start, Delta, "start", "delta");
  for (const Tensor *T : {&Start, &Limit, &Delta})
    if (T->numel() != 1)
      C.fail("start, limit and delta must be scalars, got ",
             T->shape().toString());
  if (isIntegral(Start.dtype())) {
    __int128 S = Start.getFlatInt(0), L = Limit.getFlatInt(0),
             D = Delta.getFlatInt(0);
    if (D == 0)
      C.fail("delta must be non-zero");
    __int128 Span = L - S;
    // ceil(Span / D), at least 0.
    __int128 N = Span / D + ((Span % D != 0) && ((Span < 0) == (D < 0)));
    if (N < 0)
      N = 0;
    Tensor &Y = C.allocOutput(0, Shape{static_cast<int64_t>(N)}, Start.dtype());
    visitDType(Start.dtype(), [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      if constexpr (IsIntElem<T>) {
        T *P = mutPtr<T>(Y);
        for (int64_t I = 0; I < static_cast<int64_t>(N); ++I)
          P[I] = static_cast<T>(S + I * D);
      }
    });
    return;
  }
  requireFloat(C, Start, "start");
  double S = Start.getFlat(0), L = Limit.getFlat(0), D = Delta.getFlat(0);
  if (D == 0 || !std::isfinite(S) || !std::isfinite(L) || !std::isfinite(D))
    C.fail("delta must be non-zero and start, limit, delta finite (got ", S,
           ", ", L, ", ", D, ")");
  int64_t N =
      std::max<int64_t>(0, static_cast<int64_t>(std::ceil((L - S) / D)));
  Tensor &Y = C.allocOutput(0, Shape{N}, Start.dtype());
  for (int64_t I = 0; I < N; ++I)
    Y.setFlat(I, S + static_cast<double>(I) * D);
}

void kernelDropout(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireFloat(C, X, "data");
  double Ratio = C.hasInput(1) ? C.in(1).getFlat(0) : 0.5;
  bool Training = C.hasInput(2) && C.in(2).getFlat(0) != 0;
  if (C.hasInput(1) && C.in(1).numel() != 1)
    C.fail("ratio must be a scalar, got ", C.in(1).shape().toString());
  if (!(Ratio >= 0 && Ratio < 1))
    C.fail("ratio must be in [0, 1), got ", Ratio);
  Tensor Mask = Tensor::empty(X.shape(), DType::Bool);
  bool *PM = mutPtr<bool>(Mask);
  if (!Training || Ratio == 0) {
    C.Outputs[0] = X.clone();
    for (int64_t I = 0; I < X.numel(); ++I)
      PM[I] = true;
  } else {
    uint64_t Seed = C.N.attrs().has("seed")
                        ? static_cast<uint64_t>(C.attrInt("seed"))
                        : 0x6e6e67726170ULL; // A fixed default: reproducible.
    double Scale = 1.0 / (1.0 - Ratio);
    Tensor X64 = toF64(X);
    Tensor Y = Tensor::empty(X.shape(), DType::F64);
    for (int64_t I = 0; I < X.numel(); ++I) {
      uint64_t H = splitMix64(Seed * 0x100000001b3ULL ^ splitMix64(I));
      double U = static_cast<double>(H >> 11) * 0x1.0p-53; // In [0, 1).
      PM[I] = U >= Ratio;
      mutPtr<double>(Y)[I] = PM[I] ? ptr<double>(X64)[I] * Scale : 0.0;
    }
    C.Outputs[0] = Y.to(X.dtype());
  }
  if (C.Outputs.size() > 1)
    C.Outputs[1] = Mask;
}

} // namespace nng::backends::reference
