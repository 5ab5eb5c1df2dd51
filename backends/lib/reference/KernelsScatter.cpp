//===- KernelsScatter.cpp - Gather/scatter, masks and selections ----------===//
//
// Reference kernels of GatherND (batch_dims), ScatterElements and ScatterND
// (reduction none/add/mul; duplicate indices apply in order), Compress,
// NonZero, OneHot, EyeLike, Trilu and ReverseSequence. Negative indices
// count from the end; an index out of range is an error naming it. Data
// moves as raw elements, so every dtype works.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cstring>

namespace nng::backends::reference {

namespace {

/// Maps a possibly negative index into [0, N) or fails naming it.
int64_t wrapIndex(const KernelContext &C, int64_t V, int64_t N,
                  const char *What, int64_t Axis) {
  if (V < -N || V >= N)
    C.fail(What, " ", V, " is out of range for axis ", Axis, " of extent ", N,
           " (valid: [", -N, ", ", N - 1, "])");
  return V < 0 ? V + N : V;
}

/// Row-major element strides of a shape.
std::vector<int64_t> rowStrides(const Shape &S) {
  std::vector<int64_t> St(S.rank(), 1);
  for (size_t D = S.rank(); D-- > 1;)
    St[D - 1] = St[D] * S[D];
  return St;
}

enum class Reduction { None, Add, Mul };

Reduction scatterReduction(const KernelContext &C) {
  const std::string &R = C.attrString("reduction");
  if (R == "none")
    return Reduction::None;
  if (R == "add")
    return Reduction::Add;
  if (R == "mul")
    return Reduction::Mul;
  C.fail("attribute reduction = '", R, "' must be 'none', 'add' or 'mul'");
}

/// Out[OutAt] = Out[OutAt] (op) Upd[UpdAt] for elements of dtype T.
void combineAt(DType T, Reduction R, void *Out, int64_t OutAt, const void *Upd,
               int64_t UpdAt) {
  visitDType(T, [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    E &Dst = static_cast<E *>(Out)[OutAt];
    E Src = static_cast<const E *>(Upd)[UpdAt];
    if (R == Reduction::None) {
      Dst = Src;
    } else if constexpr (std::is_same_v<E, bool>) {
      Dst = R == Reduction::Add ? (Dst || Src) : (Dst && Src);
    } else if constexpr (IsIntElem<E>) {
      Dst =
          R == Reduction::Add ? Wrap<E>::add(Dst, Src) : Wrap<E>::mul(Dst, Src);
    } else {
      Dst = fromCalc<E>(R == Reduction::Add ? toCalc(Dst) + toCalc(Src)
                                            : toCalc(Dst) * toCalc(Src));
    }
  });
}

/// Fails unless Idx holds integers.
void requireIndices(const KernelContext &C, const Tensor &Idx,
                    const char *What) {
  if (!isIntegral(Idx.dtype()))
    C.fail(What, " must be i32 or i64, got ", dtypeName(Idx.dtype()));
}

} // namespace

void kernelGatherND(KernelContext &C) {
  Tensor Data = C.in(0).contiguous();
  const Tensor &Idx = C.in(1);
  requireIndices(C, Idx, "indices");
  int64_t R = static_cast<int64_t>(Data.rank()),
          Q = static_cast<int64_t>(Idx.rank());
  int64_t B = C.attrInt("batch_dims");
  if (R < 1 || Q < 1 || B < 0 || B >= std::min(R, Q))
    C.fail("data ", Data.shape().toString(), " and indices ",
           Idx.shape().toString(), " must have rank > batch_dims = ", B);
  int64_t K = Idx.size(Q - 1);
  if (K < 1 || K > R - B)
    C.fail("the last axis of indices ", Idx.shape().toString(),
           " must be in [1, ", R - B, "]");
  for (int64_t D = 0; D < B; ++D)
    if (Data.size(D) != Idx.size(D))
      C.fail("batch axis ", D, " differs: data ", Data.shape().toString(),
             ", indices ", Idx.shape().toString());
  int64_t Batches = 1, PerBatch = 1, Slice = 1, DataPerBatch = 1;
  Shape Out;
  for (int64_t D = 0; D < B; ++D) {
    Batches *= Data.size(D);
    Out.push_back(Data.size(D));
  }
  for (int64_t D = B; D < Q - 1; ++D) {
    PerBatch *= Idx.size(D);
    Out.push_back(Idx.size(D));
  }
  for (int64_t D = B + K; D < R; ++D) {
    Slice *= Data.size(D);
    Out.push_back(Data.size(D));
  }
  for (int64_t D = B; D < R; ++D)
    DataPerBatch *= Data.size(D);
  std::vector<int64_t> St = rowStrides(Data.shape());
  std::vector<int64_t> Ind = Idx.toIntVector();
  Tensor &Y = C.allocOutput(0, Out, Data.dtype());
  size_t ES = Data.elementSize();
  const char *PD = static_cast<const char *>(Data.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t Bt = 0; Bt < Batches; ++Bt)
    for (int64_t M = 0; M < PerBatch; ++M) {
      int64_t Off = Bt * DataPerBatch;
      const int64_t *Tuple = Ind.data() + (Bt * PerBatch + M) * K;
      for (int64_t J = 0; J < K; ++J)
        Off += wrapIndex(C, Tuple[J], Data.size(B + J), "index", B + J) *
               St[B + J];
      std::memcpy(PY + (Bt * PerBatch + M) * Slice * ES, PD + Off * ES,
                  Slice * ES);
    }
}

void kernelScatterElements(KernelContext &C) {
  const Tensor &Idx = C.in(1);
  Tensor Upd = C.in(2).contiguous();
  requireIndices(C, Idx, "indices");
  requireSameDType(C, C.in(0), Upd, "data", "updates");
  int64_t R = static_cast<int64_t>(C.in(0).rank());
  if (R == 0 || static_cast<int64_t>(Idx.rank()) != R ||
      Idx.shape() != Upd.shape())
    C.fail("data ", C.in(0).shape().toString(), ", indices ",
           Idx.shape().toString(), " and updates ", Upd.shape().toString(),
           " must have one rank >= 1, and indices the shape of updates");
  int64_t Axis = normAxis(C, C.attrInt("axis"), R);
  for (int64_t D = 0; D < R; ++D)
    if (D != Axis && Idx.size(D) > C.in(0).size(D))
      C.fail("indices ", Idx.shape().toString(), " exceed data ",
             C.in(0).shape().toString(), " on axis ", D);
  Reduction Red = scatterReduction(C);
  C.Outputs[0] = C.in(0).clone();
  Tensor &Y = C.Outputs[0];
  std::vector<int64_t> St = rowStrides(Y.shape()), Pos(R);
  std::vector<int64_t> Ind = Idx.toIntVector();
  for (int64_t I = 0; I < Idx.numel(); ++I) {
    unflatten(I, Idx.shape().dims(), Pos.data());
    Pos[Axis] = wrapIndex(C, Ind[I], Y.size(Axis), "index", Axis);
    int64_t Off = 0;
    for (int64_t D = 0; D < R; ++D)
      Off += Pos[D] * St[D];
    combineAt(Y.dtype(), Red, Y.rawData(), Off, Upd.rawData(), I);
  }
}

void kernelScatterND(KernelContext &C) {
  const Tensor &Idx = C.in(1);
  Tensor Upd = C.in(2).contiguous();
  requireIndices(C, Idx, "indices");
  requireSameDType(C, C.in(0), Upd, "data", "updates");
  const Shape &DS = C.in(0).shape();
  int64_t R = static_cast<int64_t>(DS.rank()),
          Q = static_cast<int64_t>(Idx.rank());
  if (R < 1 || Q < 1)
    C.fail("data ", DS.toString(), " and indices ", Idx.shape().toString(),
           " must have rank >= 1");
  int64_t K = Idx.size(Q - 1);
  if (K < 1 || K > R)
    C.fail("the last axis of indices ", Idx.shape().toString(),
           " must be in [1, ", R, "]");
  Shape Want(Idx.shape().begin(), Idx.shape().end() - 1);
  int64_t Slice = 1;
  for (int64_t D = K; D < R; ++D) {
    Want.push_back(DS[D]);
    Slice *= DS[D];
  }
  if (Upd.shape() != Want)
    C.fail("updates ", Upd.shape().toString(), " must have shape ",
           Want.toString(), " for data ", DS.toString(), " and indices ",
           Idx.shape().toString());
  Reduction Red = scatterReduction(C);
  C.Outputs[0] = C.in(0).clone();
  Tensor &Y = C.Outputs[0];
  std::vector<int64_t> St = rowStrides(DS);
  std::vector<int64_t> Ind = Idx.toIntVector();
  int64_t Tuples = Idx.numel() / K;
  for (int64_t M = 0; M < Tuples; ++M) {
    int64_t Off = 0;
    for (int64_t J = 0; J < K; ++J)
      Off += wrapIndex(C, Ind[M * K + J], DS[J], "index", J) * St[J];
    for (int64_t S = 0; S < Slice; ++S)
      combineAt(Y.dtype(), Red, Y.rawData(), Off + S, Upd.rawData(),
                M * Slice + S);
  }
}

void kernelCompress(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  const Tensor &Cond = C.in(1);
  if (Cond.dtype() != DType::Bool || Cond.rank() != 1)
    C.fail("condition must be a 1-D bool tensor, got ", dtypeName(Cond.dtype()),
           Cond.shape().toString());
  bool HasAxis = C.N.attrs().has("axis");
  int64_t Axis = 0, Outer = 1, Inner = 1, N = X.numel();
  if (HasAxis) {
    Axis = normAxis(C, C.attrInt("axis"), static_cast<int64_t>(X.rank()));
    N = X.size(Axis);
    for (int64_t D = 0; D < static_cast<int64_t>(X.rank()); ++D) {
      if (D < Axis)
        Outer *= X.size(D);
      if (D > Axis)
        Inner *= X.size(D);
    }
  }
  std::vector<int64_t> Kept;
  for (int64_t I = 0; I < Cond.numel(); ++I)
    if (Cond.getFlat(I) != 0) {
      if (I >= N)
        C.fail("condition entry ", I, " is true but the input has only ", N,
               HasAxis ? " slices along the axis" : " elements");
      Kept.push_back(I);
    }
  Shape Out{static_cast<int64_t>(Kept.size())};
  if (HasAxis) {
    Out = X.shape();
    Out[Axis] = static_cast<int64_t>(Kept.size());
  }
  Tensor &Y = C.allocOutput(0, Out, X.dtype());
  size_t Row = Inner * X.elementSize();
  const char *PX = static_cast<const char *>(X.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  int64_t KN = static_cast<int64_t>(Kept.size());
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < KN; ++J)
      std::memcpy(PY + (O * KN + J) * Row, PX + (O * N + Kept[J]) * Row, Row);
}

void kernelNonZero(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  Shape S = X.rank() == 0 ? Shape{1} : X.shape();
  int64_t R = static_cast<int64_t>(S.rank());
  int64_t Numel = X.numel();
  // Compared in the element's own type (NaN is not zero). Two passes, a
  // count and the coordinates, each along the rows of the last axis with
  // the outer coordinates kept as a counter: a detector's score mask has
  // 1.3M elements.
  visitDType(X.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *P = ptr<T>(X);
    auto Hit = [](T V) {
      if constexpr (IsFloatElem<T>)
        return toDouble(V) != 0.0;
      else
        return V != T(0);
    };
    int64_t N = 0;
    for (int64_t I = 0; I < Numel; ++I)
      N += Hit(P[I]) ? 1 : 0;
    Tensor &Y = C.allocOutput(0, Shape{R, N}, DType::I64);
    int64_t *PY = mutPtr<int64_t>(Y);
    int64_t Row = S[R - 1], J = 0;
    std::vector<int64_t> Pos(R, 0); // The outer coordinates of a row.
    for (int64_t Start = 0; Start < Numel && Row > 0; Start += Row) {
      for (int64_t K = 0; K < Row; ++K) {
        if (!Hit(P[Start + K]))
          continue;
        for (int64_t D = 0; D + 1 < R; ++D)
          PY[D * N + J] = Pos[D];
        PY[(R - 1) * N + J] = K;
        ++J;
      }
      for (int64_t D = R - 2; D >= 0; --D) {
        if (++Pos[D] < S[D])
          break;
        Pos[D] = 0;
      }
    }
  });
}

void kernelOneHot(KernelContext &C) {
  const Tensor &Idx = C.in(0), &Depth = C.in(1);
  Tensor Values = C.in(2).contiguous();
  if (Depth.numel() != 1)
    C.fail("depth must have one element, got ", Depth.shape().toString());
  if (Values.numel() != 2)
    C.fail("values must be [off_value, on_value], got ",
           Values.shape().toString());
  double DV = Depth.getFlat(0);
  if (!(DV >= 1) || !std::isfinite(DV))
    C.fail("depth ", DV, " must be at least 1");
  int64_t D = static_cast<int64_t>(DV);
  int64_t R = static_cast<int64_t>(Idx.rank());
  int64_t Axis = normAxis(C, C.attrInt("axis"), R + 1);
  Shape Out = Idx.shape();
  Out.dims().insert(Out.dims().begin() + Axis, D);
  int64_t Outer = 1, Inner = 1;
  for (int64_t A = 0; A < R; ++A)
    (A < Axis ? Outer : Inner) *= Idx.size(A);
  Tensor &Y = C.allocOutput(0, Out, Values.dtype());
  size_t ES = Values.elementSize();
  const char *Off = static_cast<const char *>(Values.rawData());
  const char *On = Off + ES;
  char *PY = static_cast<char *>(Y.rawData());
  std::vector<double> Ind = Idx.toDoubleVector();
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I = 0; I < Inner; ++I) {
      double V = Ind[O * Inner + I];
      int64_t Hot = -1; // Out-of-range indices select no entry.
      if (std::isfinite(V) && std::fabs(V) < 0x1p62) {
        Hot = static_cast<int64_t>(V);
        if (Hot < 0)
          Hot += D;
      }
      for (int64_t J = 0; J < D; ++J)
        std::memcpy(PY + ((O * D + J) * Inner + I) * ES, J == Hot ? On : Off,
                    ES);
    }
}

void kernelEyeLike(KernelContext &C) {
  const Tensor &X = C.in(0);
  requireRank(C, X, 2, "input");
  Tensor &Y = C.allocOutput(0);
  std::memset(Y.rawData(), 0, Y.nbytes());
  int64_t K = C.attrInt("k");
  for (int64_t I = 0; I < X.size(0); ++I)
    if (I + K >= 0 && I + K < X.size(1))
      Y.setFlat(I * X.size(1) + I + K, 1.0);
}

void kernelTrilu(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  if (X.rank() < 2)
    C.fail("input must have rank >= 2, got ", X.shape().toString());
  int64_t K = 0;
  if (C.hasInput(1)) {
    if (C.in(1).numel() != 1 || !isIntegral(C.in(1).dtype()))
      C.fail("k must be an integer scalar, got ", C.in(1).shape().toString());
    K = C.in(1).getFlatInt(0);
  }
  bool Upper = C.attrInt("upper") != 0;
  int64_t Rows = X.size(X.rank() - 2), Cols = X.size(X.rank() - 1);
  // Diagonals past the corners keep everything or nothing; clamping K to
  // them keeps J - Row - K from overflowing.
  K = std::clamp(K, -Rows, Cols);
  C.Outputs[0] = X.clone();
  Tensor &Y = C.Outputs[0];
  size_t ES = Y.elementSize();
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t I = 0; I < Y.numel(); ++I) {
    int64_t J = I % Cols, Row = (I / Cols) % Rows;
    bool Keep = Upper ? J - Row >= K : J - Row <= K;
    if (!Keep)
      std::memset(PY + I * ES, 0, ES);
  }
}

void kernelReverseSequence(KernelContext &C) {
  Tensor X = C.in(0).contiguous();
  const Tensor &Lens = C.in(1);
  if (X.rank() < 2)
    C.fail("input must have rank >= 2, got ", X.shape().toString());
  int64_t BA = C.attrInt("batch_axis"), TA = C.attrInt("time_axis");
  if ((BA != 0 && BA != 1) || (TA != 0 && TA != 1) || BA == TA)
    C.fail("batch_axis = ", BA, " and time_axis = ", TA,
           " must be 0 and 1 or 1 and 0");
  std::vector<int64_t> L = intsOf(C, Lens, "sequence_lens");
  if (static_cast<int64_t>(L.size()) != X.size(BA))
    C.fail("sequence_lens has ", L.size(), " entries but the batch axis ", BA,
           " of input ", X.shape().toString(), " has ", X.size(BA));
  for (int64_t V : L)
    if (V < 0 || V > X.size(TA))
      C.fail("sequence length ", V, " is out of range [0, ", X.size(TA),
             "] (the time axis ", TA, ")");
  std::vector<int64_t> St = rowStrides(X.shape()), Pos(X.rank());
  C.Outputs[0] = X.clone();
  Tensor &Y = C.Outputs[0];
  size_t ES = X.elementSize();
  const char *PX = static_cast<const char *>(X.rawData());
  char *PY = static_cast<char *>(Y.rawData());
  for (int64_t I = 0; I < X.numel(); ++I) {
    unflatten(I, X.shape().dims(), Pos.data());
    int64_t Len = L[Pos[BA]], T = Pos[TA];
    if (T >= Len)
      continue;
    int64_t Src = I + (Len - 1 - 2 * T) * St[TA];
    std::memcpy(PY + I * ES, PX + Src * ES, ES);
  }
}

} // namespace nng::backends::reference
