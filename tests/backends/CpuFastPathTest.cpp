//===- CpuFastPathTest.cpp - The cpu backend's f32 loops ---------------===//
//
// The f32 loops of the cpu backend (ReduceSum/ReduceMean over any axes,
// Expand and Transpose as strided copies, 2-D MaxPool/MaxPoolGrad without
// padding) against the reference kernels: the Fashion-MNIST training
// shapes, every axis subset, odd shapes, rank 0/1, zero-size, NaN and
// infinities, ties; the call counters say the loops served each case and
// what falls back.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

namespace {

TEST(CpuBackend, FastReduce) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  // The training shapes: batch-norm statistics and bias gradients.
  Tensor Big = rnd({64, 32, 28, 28}, 280, -2, 3);
  for (int Keep : {0, 1}) {
    check(mk(OpKind::ReduceSum, {Big, i64({0, 2, 3})})
              .attr("keepdims", Keep)
              .expect(Expect::Fast));
    check(mk(OpKind::ReduceSum, {Big, i64({0})})
              .attr("keepdims", Keep)
              .expect(Expect::Fast));
    check(mk(OpKind::ReduceMean, {Big})
              .attr("axes", Ints{0, 2, 3})
              .attr("keepdims", Keep)
              .expect(Expect::Fast));
    check(mk(OpKind::ReduceMean, {Big})
              .attr("axes", Ints{0})
              .attr("keepdims", Keep)
              .expect(Expect::Fast));
  }
  // Odd shapes, size-1 axes, every axis pattern of a rank-4 tensor (from
  // 4096 elements; smaller ones stay on oneDNN).
  Tensor Odd = rnd({9, 1, 25, 31}, 281);
  for (int Mask = 0; Mask < 16; ++Mask) {
    Ints Axes;
    for (int64_t D = 0; D < 4; ++D)
      if (Mask & (1 << D))
        Axes.push_back(D);
    for (int Keep : {0, 1}) {
      check(mk(OpKind::ReduceSum, {Odd, i64(Axes)})
                .attr("keepdims", Keep)
                .expect(Expect::Fast));
      check(mk(OpKind::ReduceMean, {Odd})
                .attr("axes", Axes)
                .attr("keepdims", Keep)
                .expect(Expect::Fast));
    }
  }
  // Rank 1, all-ones extents, a long run, NaN and infinities propagate.
  check(
      mk(OpKind::ReduceSum, {rnd({5000}, 282), i64({0})}).expect(Expect::Fast));
  check(mk(OpKind::ReduceMean, {rnd({1, 4096}, 283)})
            .attr("axes", Ints{0})
            .expect(Expect::Fast));
  check(mk(OpKind::ReduceMean, {rnd({1, 1}, 283)}).expect(Expect::Fallback));
  Tensor N = rnd({64, 70}, 284);
  N.setFlat(7, std::nan(""));
  N.setFlat(13, INFINITY);
  N.setFlat(20, -INFINITY);
  for (int64_t A : {0, 1})
    check(mk(OpKind::ReduceSum, {N, i64({A})}).expect(Expect::Fast));
  check(mk(OpKind::ReduceMean, {N}).expect(Expect::Fast));
  // Rank 0 and zero-size inputs: not served by the loops.
  check(mk(OpKind::ReduceSum, {Tensor::scalar(2.5f)}).expect(Expect::Fallback));
  check(mk(OpKind::ReduceSum, {rnd({0, 3}, 285), i64({1})})
            .expect(Expect::Fallback));
}

TEST(CpuBackend, FastCopies) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  Shape Big{64, 32, 28, 28};
  Ints BigI = Big.dims();
  check(mk(OpKind::Expand, {rnd({1, 32, 1, 1}, 290), i64(BigI)})
            .expect(Expect::Fast));
  check(mk(OpKind::Expand, {rnd({64, 32, 1, 1}, 291), i64(BigI)})
            .expect(Expect::Fast));
  check(mk(OpKind::Expand, {rnd({3, 1, 5}, 292), i64({2, 1, 4, 1})})
            .expect(Expect::Fast));
  check(mk(OpKind::Expand, {rnd({5}, 293), i64({3, 1})}).expect(Expect::Fast));
  check(
      mk(OpKind::Expand, {rnd({2, 3}, 294), i64({2, 3})}).expect(Expect::Fast));
  check(mk(OpKind::Expand, {Tensor::scalar(1.5f), i64({4, 3})})
            .expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd({64, 3136}, 295)}).expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd(Big, 296)})
            .attr("perm", Ints{0, 2, 3, 1})
            .expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd({3, 5, 7, 2}, 297)})
            .attr("perm", Ints{3, 1, 0, 2})
            .expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd({3, 5, 7}, 298)})
            .attr("perm", Ints{0, 2, 1})
            .expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd({17, 33}, 299)}).expect(Expect::Fast));
  check(mk(OpKind::Transpose, {rnd({7}, 300)}).expect(Expect::Fast));
  check(mk(OpKind::Transpose, {Tensor::scalar(3.f)}).expect(Expect::Fast));
  Tensor N = rnd({4, 6}, 301);
  N.setFlat(5, std::nan(""));
  check(mk(OpKind::Transpose, {N}).expect(Expect::Fast));
  // f64 and zero-size tensors: the reference kernel.
  check(mk(OpKind::Transpose, {rnd({3, 4}, 302, -1, 1, DType::F64)})
            .expect(Expect::Reference));
  check(mk(OpKind::Expand, {rnd({0, 1}, 303), i64({0, 4})})
            .expect(Expect::Reference));
}

TEST(CpuBackend, FastMaxPool) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  // The training shape, random and tied values, NaN and -inf inputs.
  for (bool Tied : {false, true}) {
    Tensor X = Tied ? ties({64, 32, 28, 28}, 310) : rnd({64, 32, 28, 28}, 311);
    if (!Tied) {
      X.setFlat(100, std::nan(""));
      X.setFlat(101, std::nan(""));
      X.setFlat(5000, -INFINITY);
    }
    check(mk(OpKind::MaxPool, {X})
              .attr("kernel_shape", Ints{2, 2})
              .attr("strides", Ints{2, 2})
              .expect(Expect::Fast));
    check(mk(OpKind::MaxPoolGrad, {X, rnd({64, 32, 14, 14}, 312)})
              .attr("kernel_shape", Ints{2, 2})
              .attr("strides", Ints{2, 2})
              .expect(Expect::Fast));
  }
  // Odd extents (the last row and column unused), strides above the kernel,
  // overlapping windows (MaxPool only; the gradient uses oneDNN).
  Tensor Odd = ties({2, 3, 7, 9}, 313);
  check(mk(OpKind::MaxPool, {Odd})
            .attr("kernel_shape", Ints{2, 3})
            .attr("strides", Ints{2, 3})
            .expect(Expect::Fast));
  check(mk(OpKind::MaxPoolGrad, {Odd, rnd({2, 3, 3, 3}, 314)})
            .attr("kernel_shape", Ints{2, 3})
            .attr("strides", Ints{2, 3})
            .expect(Expect::Fast));
  check(mk(OpKind::MaxPoolGrad, {Odd, rnd({2, 3, 2, 2}, 315)})
            .attr("kernel_shape", Ints{2, 2})
            .attr("strides", Ints{3, 4})
            .expect(Expect::Fast));
  check(mk(OpKind::MaxPool, {Odd})
            .attr("kernel_shape", Ints{3, 3})
            .expect(Expect::Fast));
  check(mk(OpKind::MaxPoolGrad, {Odd, rnd({2, 3, 5, 7}, 316)})
            .attr("kernel_shape", Ints{3, 3})
            .expect(Expect::Dnnl));
  check(mk(OpKind::MaxPool, {rnd({1, 1, 1, 1}, 317)})
            .attr("kernel_shape", Ints{1, 1})
            .expect(Expect::Fast));
}


} // namespace
