//===- EagerFastPath.cpp - Inline f32 elementwise ops of eager mode -------===//
//
// The loops behind EagerFastPath.h. An op is served when its operands are
// contiguous f32 CPU tensors of one shape (or one operand is a single
// element of no greater rank); the output is one new contiguous tensor, the
// only allocation. Up to ParallelGrain elements the loop runs inline on the
// calling thread; larger tensors are split by parallelFor (runtime/
// Parallel.h, the OpenMP pool oneDNN uses). Every formula is the reference
// kernel's: f32 +, -, *, / and sqrt are correctly rounded, so they equal
// the reference's double result rounded to f32; Relu and Reciprocal are
// the formulas every executor shares (ElementwiseFormulas.h), so Relu
// keeps NaN and -0 as the reference does.
//
//===----------------------------------------------------------------------===//

#include "EagerFastPath.h"
#include "nngraph/ir/ElementwiseFormulas.h"
#include "nngraph/runtime/Parallel.h"

#include <cmath>

namespace nng::detail {

namespace {

using ir::OpKind;
namespace F = ir::formula;
/// The algebra of the formulas the reference and the backends share.
constexpr ir::ScalarMath<float> Flt;

/// Elements below which a loop never enters a parallel region (PyTorch's
/// internal GRAIN_SIZE is the same).
constexpr int64_t ParallelGrain = 1 << 15;

bool servable(const rt::Tensor &T) {
  return T.defined() && T.dtype() == DType::F32 && T.device().isCPU() &&
         T.isContiguous();
}

/// Runs Body(Begin, End) over [0, N): inline when small.
template <typename Fn> void forRange(int64_t N, Fn &&Body) {
  if (N <= ParallelGrain)
    Body(int64_t(0), N);
  else
    parallelFor(0, N, ParallelGrain, Body);
}

/// How the operands line up.
enum class Layout { Same, ScalarA, ScalarB };

template <typename Fn>
void binaryLoop(const float *A, const float *B, float *Y, int64_t N, Layout L,
                Fn F) {
  forRange(N, [&](int64_t Begin, int64_t End) {
    float *__restrict Out = Y;
    switch (L) {
    case Layout::Same:
      for (int64_t I = Begin; I < End; ++I)
        Out[I] = F(A[I], B[I]);
      break;
    case Layout::ScalarA: {
      const float S = A[0];
      for (int64_t I = Begin; I < End; ++I)
        Out[I] = F(S, B[I]);
      break;
    }
    case Layout::ScalarB: {
      const float S = B[0];
      for (int64_t I = Begin; I < End; ++I)
        Out[I] = F(A[I], S);
      break;
    }
    }
  });
}

template <typename Fn>
void unaryLoop(const float *X, float *Y, int64_t N, Fn F) {
  forRange(N, [&](int64_t Begin, int64_t End) {
    float *__restrict Out = Y;
    for (int64_t I = Begin; I < End; ++I)
      Out[I] = F(X[I]);
  });
}

} // namespace

bool fastBinary(OpKind Op, const rt::Tensor &A, const rt::Tensor &B,
                rt::Tensor &Out) {
  if (Op != OpKind::Add && Op != OpKind::Sub && Op != OpKind::Mul &&
      Op != OpKind::Div)
    return false;
  if (!servable(A) || !servable(B))
    return false;
  Layout L;
  const rt::Tensor *Big;
  if (A.shape() == B.shape()) {
    L = Layout::Same;
    Big = &A;
  } else if (B.numel() == 1 && B.rank() <= A.rank()) {
    L = Layout::ScalarB;
    Big = &A;
  } else if (A.numel() == 1 && A.rank() <= B.rank()) {
    L = Layout::ScalarA;
    Big = &B;
  } else {
    return false;
  }
  rt::Tensor Y = rt::Tensor::empty(Big->shape(), DType::F32);
  const float *PA = static_cast<const float *>(A.rawData());
  const float *PB = static_cast<const float *>(B.rawData());
  float *PY = static_cast<float *>(Y.rawData());
  int64_t N = Y.numel();
  switch (Op) {
  case OpKind::Add:
    binaryLoop(PA, PB, PY, N, L,
               [](float X, float Z) { return Flt.add(X, Z); });
    break;
  case OpKind::Sub:
    binaryLoop(PA, PB, PY, N, L,
               [](float X, float Z) { return Flt.sub(X, Z); });
    break;
  case OpKind::Mul:
    binaryLoop(PA, PB, PY, N, L,
               [](float X, float Z) { return Flt.mul(X, Z); });
    break;
  default:
    binaryLoop(PA, PB, PY, N, L,
               [](float X, float Z) { return Flt.div(X, Z); });
    break;
  }
  Out = std::move(Y);
  return true;
}

bool fastUnary(OpKind Op, const rt::Tensor &A, rt::Tensor &Out) {
  if (Op != OpKind::Neg && Op != OpKind::Relu && Op != OpKind::Abs &&
      Op != OpKind::Sqrt && Op != OpKind::Reciprocal)
    return false;
  if (!servable(A))
    return false;
  rt::Tensor Y = rt::Tensor::empty(A.shape(), DType::F32);
  const float *PX = static_cast<const float *>(A.rawData());
  float *PY = static_cast<float *>(Y.rawData());
  int64_t N = Y.numel();
  switch (Op) {
  case OpKind::Neg:
    unaryLoop(PX, PY, N, [](float X) { return -X; });
    break;
  case OpKind::Relu:
    unaryLoop(PX, PY, N, [](float X) { return F::relu(Flt, X); });
    break;
  case OpKind::Abs:
    unaryLoop(PX, PY, N, [](float X) { return std::fabs(X); });
    break;
  case OpKind::Sqrt:
    unaryLoop(PX, PY, N, [](float X) { return std::sqrt(X); });
    break;
  default:
    unaryLoop(PX, PY, N, [](float X) { return F::reciprocal(Flt, X); });
    break;
  }
  Out = std::move(Y);
  return true;
}

} // namespace nng::detail
