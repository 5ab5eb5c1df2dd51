//===- KernelsReduceCopy.cpp - Typed f32 loops for reductions and copies --===//
//
// f32 fast paths of ops whose oneDNN primitive (the reduction's reference
// implementation for most layouts) or reference kernel (a double-typed
// strided walker) is slow: ReduceSum / ReduceMean over any axes of an f32
// tensor, and Expand / Transpose, which the reference kernel computes as a
// view copied element by element. Reductions merge adjacent axes of the same
// kind, then either sum contiguous runs (innermost axis reduced) or
// accumulate rows (innermost axis kept), always in double like the reference
// kernel, so results differ from it only by the order of double additions
// (tensors under 4096 elements stay on oneDNN).
// Copies merge axes and move innermost runs with memcpy, a fill, or a
// strided loop. Anything else (other dtypes, empty tensors, rank 0, bad
// attributes) goes to the fallback kernel, which reports errors.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "DnnlKernel.h"
#include "nngraph/ir/ViewGeometry.h"
#include "nngraph/runtime/Allocator.h"

#include <cstring>

namespace nng::backends::cpu {

namespace {


/// Minimum elements per parallel chunk.
constexpr int64_t CopyGrain = 1 << 15;

/// Shape and strides with size-1 axes dropped and mergeable neighbours
/// merged (at least one axis).
struct Merged {
  std::vector<int64_t> Sizes, Strides;
};

Merged mergeAxes(const Shape &S, const Strides &St) {
  Merged M;
  for (size_t D = 0; D < S.rank(); ++D) {
    if (S[D] == 1)
      continue;
    if (!M.Sizes.empty() && M.Strides.back() == St[D] * S[D]) {
      M.Sizes.back() *= S[D];
      M.Strides.back() = St[D];
      continue;
    }
    M.Sizes.push_back(S[D]);
    M.Strides.push_back(St[D]);
  }
  if (M.Sizes.empty()) {
    M.Sizes.push_back(1);
    M.Strides.push_back(1);
  }
  return M;
}

/// Out[A * NB + B] = In[A + B * SB] for A < NA, B < NB, in tiles.
void transposeTile(const float *In, float *Out, int64_t NA, int64_t NB,
                   int64_t SB) {
  constexpr int64_t T = 16;
  for (int64_t A0 = 0; A0 < NA; A0 += T)
    for (int64_t B0 = 0; B0 < NB; B0 += T) {
      int64_t AE = std::min(NA, A0 + T), BE = std::min(NB, B0 + T);
      for (int64_t A = A0; A < AE; ++A)
        for (int64_t B = B0; B < BE; ++B)
          Out[A * NB + B] = In[A + B * SB];
    }
}

/// Copies the f32 view Src (any strides, broadcast included) into the
/// contiguous Dst of the same shape.
void copyStridedF32(const Tensor &Src, Tensor &Dst) {
  Merged M = mergeAxes(Src.shape(), Src.strides());
  const float *In = static_cast<const float *>(Src.rawData());
  float *Out = static_cast<float *>(Dst.rawData());
  int64_t R = static_cast<int64_t>(M.Sizes.size());
  if (R >= 2 && M.Strides[R - 2] == 1 && M.Strides[R - 1] > 1) {
    // A batch of 2-D transposes: copy tile by tile.
    int64_t NA = M.Sizes[R - 2], NB = M.Sizes[R - 1], SB = M.Strides[R - 1];
    int64_t Batches = 1;
    for (int64_t D = 0; D + 2 < R; ++D)
      Batches *= M.Sizes[D];
    int64_t Grain = std::max<int64_t>(1, CopyGrain / (NA * NB));
    parallelFor(0, Batches, Grain, [&](int64_t B, int64_t E) {
      for (int64_t Bt = B; Bt < E; ++Bt) {
        int64_t Off = 0, Rem = Bt;
        for (int64_t D = R - 3; D >= 0; --D) {
          Off += (Rem % M.Sizes[D]) * M.Strides[D];
          Rem /= M.Sizes[D];
        }
        transposeTile(In + Off, Out + Bt * NA * NB, NA, NB, SB);
      }
    });
    return;
  }
  int64_t Inner = M.Sizes[R - 1], InnerStride = M.Strides[R - 1];
  int64_t Rows = 1;
  for (int64_t D = 0; D + 1 < R; ++D)
    Rows *= M.Sizes[D];
  int64_t Grain = std::max<int64_t>(1, CopyGrain / std::max<int64_t>(Inner, 1));
  parallelFor(0, Rows, Grain, [&](int64_t B, int64_t E) {
    // The source offset of row B, then advanced like an odometer.
    std::vector<int64_t> Idx(std::max<int64_t>(R - 1, 0));
    int64_t Off = 0, Rem = B;
    for (int64_t D = R - 2; D >= 0; --D) {
      Idx[D] = Rem % M.Sizes[D];
      Rem /= M.Sizes[D];
      Off += Idx[D] * M.Strides[D];
    }
    for (int64_t Row = B; Row < E; ++Row) {
      const float *S = In + Off;
      float *O = Out + Row * Inner;
      if (InnerStride == 1)
        std::memcpy(O, S, sizeof(float) * Inner);
      else if (InnerStride == 0)
        std::fill(O, O + Inner, *S);
      else
        for (int64_t I = 0; I < Inner; ++I)
          O[I] = S[I * InnerStride];
      for (int64_t D = R - 2; D >= 0; --D) {
        Off += M.Strides[D];
        if (++Idx[D] < M.Sizes[D])
          break;
        Off -= Idx[D] * M.Strides[D];
        Idx[D] = 0;
      }
    }
  });
}

/// Sum of N contiguous floats in double (eight independent accumulators).
double sumRun(const float *P, int64_t N) {
  double A[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t I = 0;
  for (; I + 8 <= N; I += 8)
    for (int J = 0; J < 8; ++J)
      A[J] += static_cast<double>(P[I + J]);
  double S = ((A[0] + A[1]) + (A[2] + A[3])) + ((A[4] + A[5]) + (A[6] + A[7]));
  for (; I < N; ++I)
    S += static_cast<double>(P[I]);
  return S;
}

} // namespace

void reduceF32(const Tensor &X, const std::vector<bool> &Reduced, Tensor &Y,
               bool Mean) {
  // Merge adjacent axes of the same kind, dropping size-1 axes.
  std::vector<int64_t> Sizes;
  std::vector<bool> Kinds;
  int64_t Count = 1;
  for (size_t D = 0; D < X.rank(); ++D) {
    int64_t E = X.shape()[D];
    if (Reduced[D])
      Count *= E;
    if (E == 1)
      continue;
    if (!Sizes.empty() && Kinds.back() == Reduced[D]) {
      Sizes.back() *= E;
      continue;
    }
    Sizes.push_back(E);
    Kinds.push_back(Reduced[D]);
  }
  const float *In = static_cast<const float *>(X.rawData());
  float *Out = static_cast<float *>(Y.rawData());
  int64_t NumOut = Y.numel();
  double Div = Mean ? static_cast<double>(Count) : 1.0;
  if (Sizes.empty()) { // Every extent is 1.
    Out[0] = static_cast<float>(static_cast<double>(In[0]) / Div);
    return;
  }
  int64_t R = static_cast<int64_t>(Sizes.size());
  int64_t Inner = Sizes[R - 1];
  bool InnerReduced = Kinds[R - 1];
  // Output strides of the merged axes (0 for reduced ones).
  std::vector<int64_t> OutStride(R, 0);
  int64_t Acc = InnerReduced ? 1 : Inner;
  for (int64_t D = R - 2; D >= 0; --D)
    if (!Kinds[D]) {
      OutStride[D] = Acc;
      Acc *= Sizes[D];
    }
  // Parallel over the outermost axis when it is kept (disjoint outputs).
  int64_t Outer = Sizes[0], RowsPerOuter = 1;
  for (int64_t D = 1; D + 1 < R; ++D)
    RowsPerOuter *= Sizes[D];
  bool ParOuter = R >= 2 && !Kinds[0];
  std::vector<double> Accum(static_cast<size_t>(NumOut), 0.0);
  auto Body = [&](int64_t RowBegin, int64_t RowEnd) {
    std::vector<int64_t> Idx(std::max<int64_t>(R - 1, 0));
    int64_t Off = 0, Rem = RowBegin;
    for (int64_t D = R - 2; D >= 0; --D) {
      Idx[D] = Rem % Sizes[D];
      Rem /= Sizes[D];
      Off += Idx[D] * OutStride[D];
    }
    for (int64_t Row = RowBegin; Row < RowEnd; ++Row) {
      const float *P = In + Row * Inner;
      if (InnerReduced) {
        Accum[Off] += sumRun(P, Inner);
      } else {
        double *A = Accum.data() + Off;
        for (int64_t I = 0; I < Inner; ++I)
          A[I] += static_cast<double>(P[I]);
      }
      for (int64_t D = R - 2; D >= 0; --D) {
        Off += OutStride[D];
        if (++Idx[D] < Sizes[D])
          break;
        Off -= Idx[D] * OutStride[D];
        Idx[D] = 0;
      }
    }
  };
  if (R == 1) {
    Body(0, 1);
  } else if (ParOuter) {
    int64_t Grain = std::max<int64_t>(1, CopyGrain / (RowsPerOuter * Inner));
    parallelFor(0, Outer, Grain, [&](int64_t B, int64_t E) {
      Body(B * RowsPerOuter, E * RowsPerOuter);
    });
  } else {
    Body(0, Outer * RowsPerOuter);
  }
  parallelFor(0, NumOut, CopyGrain, [&](int64_t B, int64_t E) {
    for (int64_t I = B; I < E; ++I)
      Out[I] = static_cast<float>(Accum[I] / Div);
  });
}

/// Smaller reductions stay on oneDNN, which is fast enough there and rounds
/// as before (its f32 sums differ from these double ones by float rounding,
/// which some torch-oracle tests of small normalizations are sensitive to).
constexpr int64_t MinReduceElems = 4096;

/// ReduceSum / ReduceMean; false to fall back.
static bool runReduce(KernelContext &C, bool Mean) {
  const Tensor &X = C.in(0);
  if (!isF32(X) || X.rank() == 0 || X.numel() < MinReduceElems)
    return false;
  std::vector<int64_t> Axes;
  if (!Mean) {
    if (C.hasInput(1)) {
      const Tensor &A = C.in(1);
      if (A.dtype() != DType::I64 || A.rank() > 1)
        return false;
      Axes = A.toIntVector();
    }
    if (Axes.empty() && C.attrInt("noop_with_empty_axes") != 0)
      return false;
  } else {
    Axes = C.attrInts("axes");
  }
  int64_t R = static_cast<int64_t>(X.rank());
  std::vector<bool> Reduced(R, Axes.empty());
  for (int64_t A : Axes) {
    if (A < -R || A >= R)
      return false;
    int64_t D = A < 0 ? A + R : A;
    if (Reduced[D])
      return false;
    Reduced[D] = true;
  }
  bool KeepDims = C.attrInt("keepdims") != 0;
  Shape OutShape;
  for (int64_t D = 0; D < R; ++D) {
    if (!Reduced[D])
      OutShape.push_back(X.shape()[D]);
    else if (KeepDims)
      OutShape.push_back(1);
  }
  Tensor Xd = dense(X);
  Tensor &Y = C.allocOutput(0, OutShape, DType::F32);
  reduceF32(Xd, Reduced, Y, Mean);
  return true;
}

/// Expand; false to fall back.
bool runExpand(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (!isF32(X) || !C.hasInput(1) || C.in(1).dtype() != DType::I64 ||
      C.in(1).rank() != 1)
    return false;
  std::vector<int64_t> Req = C.in(1).toIntVector();
  for (int64_t D : Req)
    if (D < 0)
      return false;
  Shape Out;
  try {
    Out = broadcastShapes(X.shape(), Shape(Req));
  } catch (...) {
    return false; // The reference kernel reports it.
  }
  if (Out.numel() == 0 || X.numel() == 0)
    return false;
  Tensor V = X.broadcastTo(Out);
  Tensor &Y = C.allocOutput(0, Out, DType::F32);
  copyStridedF32(V, Y);
  return true;
}

/// Transpose; false to fall back.
bool runTranspose(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (!isF32(X) || X.numel() == 0)
    return false;
  std::optional<std::vector<int64_t>> Perm = ir::transposePerm(
      C.attrInts("perm"), static_cast<int64_t>(X.rank()));
  if (!Perm)
    return false;
  Tensor V = X.permute(*Perm);
  Tensor &Y = C.allocOutput(0, V.shape(), DType::F32);
  copyStridedF32(V, Y);
  return true;
}

Tensor &allocDenseOutput(KernelContext &C, size_t I, const Shape &S, DType T) {
  if (C.Outputs.size() <= I)
    C.Outputs.resize(I + 1);
  if (I < C.Preset.size() && C.Preset[I].defined() &&
      C.Preset[I].dtype() == T && C.Preset[I].shape() == S &&
      C.Preset[I].isContiguous()) {
    C.Outputs[I] = C.Preset[I];
    return C.Outputs[I];
  }
  S.validate();
  size_t Bytes =
      std::max<size_t>(static_cast<size_t>(S.numel()) * dtypeSize(T), 1);
  Allocator &A = cpuAllocator();
  std::shared_ptr<Storage> St =
      Storage::wrap(A.allocate(Bytes), Bytes,
                    [&A, Bytes](void *P) { A.deallocate(P, Bytes); });
  C.Outputs[I] = Tensor(std::move(St), S, contiguousStrides(S), 0, T);
  return C.Outputs[I];
}

bool runReduceSum(KernelContext &C) { return runReduce(C, false); }
bool runReduceMean(KernelContext &C) { return runReduce(C, true); }

} // namespace nng::backends::cpu
