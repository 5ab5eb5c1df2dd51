//===- NormPoolKernelsTest.cpp - Reference kernels: norms and pooling ----===//
//
// BatchNormalization (inference, training with running statistics, 2-D
// input), LayerNormalization (Mean/InvStdDev outputs, axis), Instance-
// Normalization, and the pools with the ONNX spec examples: pads, strides,
// auto_pad, ceil_mode, dilations, Indices in both storage orders, u8,
// count_include_pad, LpPool and the global pools.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cmath>

using namespace nng;
using namespace nng::reftest;

namespace {

using Ints = std::vector<int64_t>;

TEST(RefNorm, BatchNormInference) {
  // ch0: (x - 0) / 1; ch1: (x - 3) / sqrt(1.5) * 1.5 + 1.
  double R = 1.5 / std::sqrt(1.5);
  EXPECT_TENSOR(OpTest(OpKind::BatchNormalization)
                    .in(f64({-1, 0, 1, 2, 3, 4}, {1, 2, 1, 3}))
                    .in(f64({1, 1.5}))
                    .in(f64({0, 1}))
                    .in(f64({0, 3}))
                    .in(f64({1, 1.5}))
                    .attr("epsilon", 0.0f)
                    .run1(),
                f64({-1, 0, 1, 1 - R, 1, 1 + R}, {1, 2, 1, 3}));
  // (N, C) input; epsilon default 1e-5.
  double S = 1 / std::sqrt(1 + 1e-5), T = 10 / std::sqrt(100 + 1e-5);
  EXPECT_TENSOR(OpTest(OpKind::BatchNormalization)
                    .in(f32({1, 10, 2, 20, 3, 30}, {3, 2}))
                    .in(f32({1, 1}))
                    .in(f32({0, 0}))
                    .in(f32({2, 20}))
                    .in(f32({1, 100}))
                    .run1(),
                f32({float(-S), float(-T), 0, 0, float(S), float(T)}, {3, 2}));
}

TEST(RefNorm, BatchNormTraining) {
  // One channel, values 1, 3, 5, 7: mean 4, biased variance 5.
  auto Outs = OpTest(OpKind::BatchNormalization)
                  .in(f32({1, 3, 5, 7}, {2, 1, 2}))
                  .in(f32({1}))
                  .in(f32({0}))
                  .in(f32({0}))
                  .in(f32({1}))
                  .attr("epsilon", 0.0f)
                  .attr("training_mode", 1)
                  .outputs(3)
                  .run();
  float Q = 1 / std::sqrt(5.0f);
  EXPECT_TENSOR(Outs[0], f32({-3 * Q, -Q, Q, 3 * Q}, {2, 1, 2}));
  // running = input * momentum + batch * (1 - momentum), momentum 0.9.
  EXPECT_TENSOR(Outs[1], f32({0.4f}));
  EXPECT_TENSOR(Outs[2], f32({1.4f}));
}

TEST(RefNorm, LayerNorm) {
  // Rows [1, 2, 3] and [2, 4, 6]: both normalize to [-k, 0, k], k =
  // sqrt(3/2); then Scale [1, 1, 2] and B [0, 1, 0].
  double K = std::sqrt(1.5);
  auto Outs = OpTest(OpKind::LayerNormalization)
                  .in(f64({1, 2, 3, 2, 4, 6}, {2, 3}))
                  .in(f64({1, 1, 2}))
                  .in(f64({0, 1, 0}))
                  .attr("epsilon", 0.0f)
                  .outputs(3)
                  .run();
  EXPECT_TENSOR(Outs[0], f64({-K, 1, 2 * K, -K, 1, 2 * K}, {2, 3}));
  // Mean and InvStdDev have shape [2, 1] and the stash type (f32).
  EXPECT_TENSOR(Outs[1], f32({2, 4}, {2, 1}));
  EXPECT_TENSOR(
      Outs[2], f32({float(std::sqrt(1.5)), float(std::sqrt(3.0 / 8))}, {2, 1}));
  // axis 0 normalizes everything: mean 3, variance 8/3; no B.
  double Inv = std::sqrt(3.0 / 8);
  EXPECT_TENSOR(OpTest(OpKind::LayerNormalization)
                    .in(f64({1, 2, 3, 2, 4, 6}, {2, 3}))
                    .in(f64({1, 1, 1}))
                    .attr("axis", 0)
                    .attr("epsilon", 0.0f)
                    .run1(),
                f64({-2 * Inv, -Inv, 0, -Inv, Inv, 3 * Inv}, {2, 3}));
}

TEST(RefNorm, InstanceNorm) {
  // The ONNX example, with epsilon 0: both channels have variance 2/3.
  double K = std::sqrt(1.5);
  EXPECT_TENSOR(OpTest(OpKind::InstanceNormalization)
                    .in(f64({-1, 0, 1, 2, 3, 4}, {1, 2, 1, 3}))
                    .in(f64({1, 1.5}))
                    .in(f64({0, 1}))
                    .attr("epsilon", 0.0f)
                    .run1(),
                f64({-K, 0, K, 1 - 1.5 * K, 1, 1 + 1.5 * K}, {1, 2, 1, 3}));
}

// --- Pooling ----------------------------------------------------------------

/// 1, 2, ..., H*W as a [1, 1, H, W] tensor.
Tensor plane(int64_t H, int64_t W, DType T = DType::F32) {
  return iota(Shape{1, 1, H, W}, T, 1);
}

TEST(RefPool, MaxPoolSpec) {
  auto Pool = [](Tensor X) { return OpTest(OpKind::MaxPool).in(std::move(X)); };
  // kernel 5, pads 2, with Indices.
  Tensor Padded = f32({13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                       25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25},
                      {1, 1, 5, 5});
  auto Outs = Pool(plane(5, 5))
                  .attr("kernel_shape", Ints{5, 5})
                  .attr("pads", Ints{2, 2, 2, 2})
                  .outputs(2)
                  .run();
  EXPECT_TENSOR(Outs[0], Padded);
  EXPECT_TENSOR(Outs[1],
                i64({12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                     24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24},
                    {1, 1, 5, 5}));
  // Strides 2 with column-major Indices.
  Outs = Pool(plane(5, 5))
             .attr("kernel_shape", Ints{2, 2})
             .attr("strides", Ints{2, 2})
             .attr("storage_order", 1)
             .outputs(2)
             .run();
  EXPECT_TENSOR(Outs[0], f32({7, 9, 17, 19}, {1, 1, 2, 2}));
  EXPECT_TENSOR(Outs[1], i64({6, 16, 8, 18}, {1, 1, 2, 2}));
  EXPECT_TENSOR(Pool(plane(5, 5))
                    .attr("kernel_shape", Ints{3, 3})
                    .attr("strides", Ints{2, 2})
                    .attr("auto_pad", "SAME_UPPER")
                    .run1(),
                f32({7, 9, 10, 17, 19, 20, 22, 24, 25}, {1, 1, 3, 3}));
  EXPECT_TENSOR(Pool(plane(4, 4))
                    .attr("kernel_shape", Ints{3, 3})
                    .attr("strides", Ints{2, 2})
                    .attr("ceil_mode", 1)
                    .run1(),
                f32({11, 12, 15, 16}, {1, 1, 2, 2}));
  EXPECT_TENSOR(Pool(plane(4, 4))
                    .attr("kernel_shape", Ints{2, 2})
                    .attr("dilations", Ints{2, 2})
                    .run1(),
                f32({11, 12, 15, 16}, {1, 1, 2, 2}));
  EXPECT_TENSOR(Pool(plane(5, 5, DType::U8))
                    .attr("kernel_shape", Ints{5, 5})
                    .attr("pads", Ints{2, 2, 2, 2})
                    .run1(),
                Padded.to(DType::U8));
}

TEST(RefPool, MaxPoolEdges) {
  // Batch and channels: Indices count from the start of X.
  auto Outs = OpTest(OpKind::MaxPool)
                  .in(f32({1, 3, 2, 5, 4, 0, -1, -2}, {2, 2, 2}))
                  .attr("kernel_shape", Ints{2})
                  .outputs(2)
                  .run();
  EXPECT_TENSOR(Outs[0], f32({3, 5, 4, -1}, {2, 2, 1}));
  EXPECT_TENSOR(Outs[1], i64({1, 3, 4, 6}, {2, 2, 1}));
  // ceil_mode keeps a last window that starts inside the input ...
  EXPECT_TENSOR(OpTest(OpKind::MaxPool)
                    .in(f32({1, 2, 3, 4, 5}, {1, 1, 5}))
                    .attr("kernel_shape", Ints{2})
                    .attr("strides", Ints{2})
                    .attr("ceil_mode", 1)
                    .run1(),
                f32({2, 4, 5}, {1, 1, 3}));
  // ... but drops one that would start in the end padding.
  EXPECT_TENSOR(OpTest(OpKind::MaxPool)
                    .in(f32({1, 2, 3, 4}, {1, 1, 4}))
                    .attr("kernel_shape", Ints{2})
                    .attr("strides", Ints{2})
                    .attr("pads", Ints{0, 1})
                    .attr("ceil_mode", 1)
                    .run1(),
                f32({2, 4}, {1, 1, 2}));
  // 3-D pooling.
  EXPECT_TENSOR(OpTest(OpKind::MaxPool)
                    .in(iota(Shape{1, 1, 2, 2, 2}))
                    .attr("kernel_shape", Ints{2, 2, 2})
                    .run1(),
                f32({7}, {1, 1, 1, 1, 1}));
}

TEST(RefPool, AveragePoolSpec) {
  auto Pool = [](Tensor X) {
    return OpTest(OpKind::AveragePool).in(std::move(X));
  };
  EXPECT_TENSOR(Pool(plane(5, 5))
                    .attr("kernel_shape", Ints{5, 5})
                    .attr("pads", Ints{2, 2, 2, 2})
                    .run1(),
                f32({7,  7.5f,  8,  8.5f,  9,  9.5f,  10, 10.5f, 11, 11.5f,
                     12, 12.5f, 13, 13.5f, 14, 14.5f, 15, 15.5f, 16, 16.5f,
                     17, 17.5f, 18, 18.5f, 19},
                    {1, 1, 5, 5}));
  EXPECT_TENSOR(
      Pool(plane(5, 5))
          .attr("kernel_shape", Ints{5, 5})
          .attr("pads", Ints{2, 2, 2, 2})
          .attr("count_include_pad", 1)
          .run1(),
      f32({2.52f,  3.6f,  4.8f,  4.08f, 3.24f, 4.56f, 6.4f,  8.4f, 7.04f,
           5.52f,  7.2f,  10,    13,    10.8f, 8.4f,  6.96f, 9.6f, 12.4f,
           10.24f, 7.92f, 6.12f, 8.4f,  10.8f, 8.88f, 6.84f},
          {1, 1, 5, 5}));
  EXPECT_TENSOR(
      Pool(plane(5, 5))
          .attr("kernel_shape", Ints{3, 3})
          .attr("strides", Ints{2, 2})
          .attr("auto_pad", "SAME_UPPER")
          .run1(),
      f32({4, 5.5f, 7, 11.5f, 13, 14.5f, 19, 20.5f, 22}, {1, 1, 3, 3}));
  EXPECT_TENSOR(Pool(plane(4, 4))
                    .attr("kernel_shape", Ints{3, 3})
                    .attr("strides", Ints{2, 2})
                    .attr("ceil_mode", 1)
                    .run1(),
                f32({6, 7.5f, 12, 13.5f}, {1, 1, 2, 2}));
  EXPECT_TENSOR(
      Pool(f32({1, 2, 3, 4}, {1, 1, 4})).attr("kernel_shape", Ints{2}).run1(),
      f32({1.5f, 2.5f, 3.5f}, {1, 1, 3}));
}

TEST(RefPool, LpPool) {
  Tensor X = f64({1, 2, 3, 4}, {1, 1, 4});
  EXPECT_TENSOR(
      OpTest(OpKind::LpPool).in(X).attr("kernel_shape", Ints{2}).run1(),
      f64({std::sqrt(5.0), std::sqrt(13.0), 5}, {1, 1, 3}));
  EXPECT_TENSOR(OpTest(OpKind::LpPool)
                    .in(X)
                    .attr("kernel_shape", Ints{2})
                    .attr("p", 1)
                    .run1(),
                f64({3, 5, 7}, {1, 1, 3}));
  EXPECT_TENSOR(OpTest(OpKind::LpPool)
                    .in(f32({3, -4, 0, 0}, {1, 1, 2, 2}))
                    .attr("kernel_shape", Ints{2, 2})
                    .run1(),
                f32({5}, {1, 1, 1, 1}));
}

TEST(RefPool, GlobalPools) {
  Tensor X = iota(Shape{1, 2, 2, 2}, DType::F32, 1);
  EXPECT_TENSOR(OpTest(OpKind::GlobalAveragePool).in(X).run1(),
                f32({2.5f, 6.5f}, {1, 2, 1, 1}));
  EXPECT_TENSOR(OpTest(OpKind::GlobalMaxPool).in(X).run1(),
                f32({4, 8}, {1, 2, 1, 1}));
  Tensor Y = f32({1, 5, 2}, {1, 1, 3});
  EXPECT_TENSOR(OpTest(OpKind::GlobalAveragePool).in(Y).run1(),
                f32({8.0f / 3}, {1, 1, 1}));
  EXPECT_TENSOR(OpTest(OpKind::GlobalMaxPool).in(Y).run1(),
                f32({5}, {1, 1, 1}));
}

} // namespace
