//===- KernelsCompare.cpp - f32 comparisons as plain loops ----------------===//
//
// A detector's score filter (the sigmoid of its class logits compared with
// the score threshold: RetinaNet's [1, 327600] and smaller) ran its
// comparison on the reference kernel's strided walker, about 12 ns an
// element. These loops take Equal, Less, LessOrEqual, Greater and
// GreaterOrEqual of dense f32 tensors of one shape, or of a dense f32
// tensor and a one-element one, into bool; exact (an f32 compares as its
// double widening does). Other dtypes, broadcasts and views go to the
// fallback kernel.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "nngraph/runtime/Parallel.h"

namespace nng::backends::cpu {

namespace {

/// Elements per parallel chunk.
constexpr int64_t Grain = 1 << 15;

bool denseF32(const Tensor &T) {
  return T.dtype() == DType::F32 && T.isContiguous();
}

/// Y[i] = Pred(A[i or 0], B[i or 0]) into a bool tensor of the larger
/// operand's shape; false unless the operands are dense f32 of one shape,
/// or one of them has one element and no more axes than the other.
template <typename Pred> bool compareF32(reference::KernelContext &C, Pred P) {
  if (C.Inputs.size() != 2 || !C.hasInput(0) || !C.hasInput(1))
    return false;
  const Tensor &A = C.in(0), &B = C.in(1);
  if (!denseF32(A) || !denseF32(B))
    return false;
  bool ScalarA = false, ScalarB = false;
  if (A.shape() != B.shape()) {
    ScalarB = B.numel() == 1 && B.rank() <= A.rank();
    ScalarA = !ScalarB && A.numel() == 1 && A.rank() <= B.rank();
    if (!ScalarA && !ScalarB)
      return false;
  }
  const Tensor &Big = ScalarA ? B : A;
  Tensor &Y = allocDenseOutput(C, 0, Big.shape(), DType::Bool);
  const float *PA = static_cast<const float *>(A.rawData());
  const float *PB = static_cast<const float *>(B.rawData());
  bool *PY = static_cast<bool *>(Y.rawData());
  parallelFor(0, Big.numel(), Grain, [&](int64_t Begin, int64_t End) {
    if (ScalarB) {
      float V = PB[0];
      for (int64_t I = Begin; I < End; ++I)
        PY[I] = P(PA[I], V);
    } else if (ScalarA) {
      float V = PA[0];
      for (int64_t I = Begin; I < End; ++I)
        PY[I] = P(V, PB[I]);
    } else {
      for (int64_t I = Begin; I < End; ++I)
        PY[I] = P(PA[I], PB[I]);
    }
  });
  return true;
}

} // namespace

bool runEqual(reference::KernelContext &C) {
  return compareF32(C, [](float A, float B) { return A == B; });
}
bool runLess(reference::KernelContext &C) {
  return compareF32(C, [](float A, float B) { return A < B; });
}
bool runLessOrEqual(reference::KernelContext &C) {
  return compareF32(C, [](float A, float B) { return A <= B; });
}
bool runGreater(reference::KernelContext &C) {
  return compareF32(C, [](float A, float B) { return A > B; });
}
bool runGreaterOrEqual(reference::KernelContext &C) {
  return compareF32(C, [](float A, float B) { return A >= B; });
}

} // namespace nng::backends::cpu
