//===- CpuBackendTest.cpp - The cpu backend against the reference --------===//
//
// Every op the cpu backend serves with oneDNN, on random inputs over several
// shapes and attribute combinations, compared with the reference backend
// (|cpu - ref| <= 1e-4 * max(1, max |ref|)); each case also says whether
// oneDNN must serve it or the reference kernel must (fallbacks: other
// dtypes, attributes and shapes oneDNN cannot express exactly, NaN inputs to
// max ops), checked with the backend's call counters (CpuTestUtils.h; the
// f32 loops are in CpuFastPathTest.cpp). Plus the bundled small
// CNN on both backends, and repeated runs of one executable over changing
// shapes (the plan cache). Without oneDNN every test says SKIPPED.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/Parser.h"

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

// --- convolutions ------------------------------------------------------------

TEST(CpuBackend, Conv) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  check(mk(OpKind::Conv,
           {rnd({2, 3, 9, 8}, 1), rnd({4, 3, 3, 3}, 2), rnd({4}, 3)})
            .attr("pads", Ints{1, 1, 1, 1}));
  check(mk(OpKind::Conv, {rnd({1, 3, 11, 10}, 4), rnd({5, 3, 3, 2}, 5)})
            .attr("strides", Ints{2, 1})
            .attr("dilations", Ints{2, 2})
            .attr("pads", Ints{0, 1, 1, 2}));
  check(mk(OpKind::Conv,
           {rnd({1, 4, 7, 7}, 6), rnd({6, 2, 3, 3}, 7), rnd({6}, 8)})
            .attr("group", 2));
  check(mk(OpKind::Conv, {rnd({2, 4, 6, 6}, 9), rnd({4, 1, 3, 3}, 10)})
            .attr("group", 4)
            .attr("auto_pad", "SAME_UPPER")
            .attr("strides", Ints{2, 2}));
  check(mk(OpKind::Conv, {rnd({1, 2, 7, 6}, 11), rnd({3, 2, 2, 3}, 12)})
            .attr("auto_pad", "SAME_LOWER"));
  check(
      mk(OpKind::Conv, {rnd({2, 3, 10}, 13), rnd({5, 3, 3}, 14), rnd({5}, 15)})
          .attr("pads", Ints{2, 1})
          .attr("strides", Ints{3}));
  check(mk(OpKind::Conv, {rnd({1, 2, 5, 6, 5}, 16), rnd({3, 2, 3, 3, 2}, 17)})
            .attr("pads", Ints{1, 0, 1, 1, 0, 0}));
  check(mk(OpKind::Conv, {rnd({1, 3, 8, 8}, 18), rnd({4, 3, 3, 3}, 19)})
            .attr("kernel_shape", Ints{3, 3})
            .attr("auto_pad", "VALID"));
  // Fallbacks: f64; a 4-d convolution.
  check(mk(OpKind::Conv, {rnd({1, 2, 5, 5}, 20, -1, 1, DType::F64),
                          rnd({2, 2, 3, 3}, 21, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
  check(mk(OpKind::Conv,
           {rnd({1, 1, 3, 3, 3, 3}, 22), rnd({1, 1, 2, 2, 2, 2}, 23)})
            .expect(Expect::Fallback));
}

TEST(CpuBackend, FusedConv) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  struct Act {
    const char *Name;
    Floats Params;
    Expect Who;
  };
  std::vector<Act> Acts = {{"Relu", {}, Expect::Dnnl},
                           {"LeakyRelu", {0.2f}, Expect::Dnnl},
                           {"Sigmoid", {}, Expect::Dnnl},
                           {"Tanh", {}, Expect::Dnnl},
                           {"Clip", {-0.5f, 0.7f}, Expect::Dnnl},
                           {"Clip", {0.5f, -0.5f}, Expect::Reference},
                           {"HardSwish", {}, Expect::Dnnl},
                           {"Elu", {0.7f}, Expect::Dnnl},
                           {"Gelu", {}, Expect::Dnnl},
                           {"GeluTanh", {}, Expect::Dnnl},
                           {"HardSigmoid", {0.3f, 0.4f}, Expect::Reference}};
  unsigned Seed = 30;
  for (const Act &A : Acts) {
    if (!ir::lookupFusedActivation(A.Name))
      continue; // Not in this build's activation table.
    Case C =
        mk(OpKind::FusedConv, {rnd({1, 3, 6, 6}, Seed++, -2, 2),
                               rnd({4, 3, 3, 3}, Seed++), rnd({4}, Seed++)})
            .attr("activation", A.Name)
            .attr("pads", Ints{1, 1, 1, 1})
            .expect(A.Who);
    if (!A.Params.empty())
      C.attr("activation_params", A.Params);
    check(C);
  }
  // inf * 0 makes NaN, which oneDNN's relu post-op would turn into 0.
  Tensor X = rnd({1, 2, 4, 4}, 39);
  X.setFlat(5, INFINITY);
  check(mk(OpKind::FusedConv, {X, f32({0, 1, 1, 1, 0, 0, 0, 0}, {1, 2, 2, 2})})
            .attr("activation", "Relu")
            .expect(Expect::Fallback));
}

TEST(CpuBackend, ConvTranspose) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  check(mk(OpKind::ConvTranspose,
           {rnd({1, 3, 5, 5}, 40), rnd({3, 2, 3, 3}, 41), rnd({2}, 42)}));
  check(
      mk(OpKind::ConvTranspose, {rnd({2, 3, 4, 5}, 43), rnd({3, 4, 3, 3}, 44)})
          .attr("strides", Ints{2, 2})
          .attr("pads", Ints{1, 1, 1, 1})
          .attr("output_padding", Ints{1, 1}));
  check(mk(OpKind::ConvTranspose,
           {rnd({1, 4, 4, 4}, 45), rnd({4, 1, 3, 3}, 46), rnd({4}, 47)})
            .attr("group", 4)
            .attr("strides", Ints{2, 2}));
  check(
      mk(OpKind::ConvTranspose, {rnd({1, 4, 3, 3}, 48), rnd({4, 3, 2, 2}, 49)})
          .attr("group", 2)
          .attr("dilations", Ints{2, 1}));
  check(
      mk(OpKind::ConvTranspose, {rnd({1, 2, 4, 4}, 50), rnd({2, 3, 3, 3}, 51)})
          .attr("strides", Ints{2, 2})
          .attr("output_shape", Ints{9, 8}));
  check(mk(OpKind::ConvTranspose, {rnd({1, 2, 5}, 52), rnd({2, 3, 4}, 53)})
            .attr("strides", Ints{2})
            .attr("auto_pad", "SAME_UPPER"));
  // output_padding beyond the pads needs negative end padding: fallback.
  check(
      mk(OpKind::ConvTranspose, {rnd({1, 2, 4, 4}, 54), rnd({2, 2, 3, 3}, 55)})
          .attr("strides", Ints{3, 3})
          .attr("output_padding", Ints{2, 2})
          .expect(Expect::Fallback));
}

TEST(CpuBackend, ConvGradWeight) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  auto Grad = [](Shape X, Shape DY, Ints K, unsigned Seed) {
    return mk(OpKind::ConvGradWeight, {rnd(X, Seed), rnd(DY, Seed + 1)})
        .attr("kernel_shape", K);
  };
  check(Grad({2, 3, 9, 8}, {2, 4, 9, 8}, {3, 3}, 60)
            .attr("pads", Ints{1, 1, 1, 1}));
  check(Grad({1, 4, 11, 10}, {1, 6, 5, 4}, {3, 2}, 62)
            .attr("group", 2)
            .attr("strides", Ints{2, 2})
            .attr("dilations", Ints{1, 2})
            .attr("pads", Ints{0, 0, 0, 0}));
  check(Grad({2, 4, 6, 6}, {2, 4, 3, 3}, {3, 3}, 64)
            .attr("group", 4)
            .attr("strides", Ints{2, 2})
            .attr("auto_pad", "SAME_UPPER"));
  check(Grad({2, 3, 10}, {2, 5, 4}, {3}, 66)
            .attr("strides", Ints{3})
            .attr("pads", Ints{2, 1}));
  check(Grad({1, 2, 5, 6, 5}, {1, 3, 4, 4, 4}, {2, 3, 2}, 68)
            .attr("pads", Ints{0, 0, 0, 0, 0, 0}));
  check(mk(OpKind::ConvGradWeight, {rnd({1, 2, 5}, 70, -1, 1, DType::F64),
                                    rnd({1, 2, 3}, 71, -1, 1, DType::F64)})
            .attr("kernel_shape", Ints{3})
            .expect(Expect::Fallback));
}

// --- matrix products ---------------------------------------------------------

TEST(CpuBackend, MatMul) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  std::vector<std::pair<Shape, Shape>> Shapes = {{{3, 4}, {4, 5}},
                                                 {{2, 3, 4}, {4, 5}},
                                                 {{2, 1, 3, 4}, {3, 4, 6}},
                                                 {{4}, {4, 5}},
                                                 {{3, 4}, {4}},
                                                 {{7}, {7}},
                                                 {{5, 1, 3, 4}, {1, 2, 4, 2}},
                                                 {{1, 17, 33}, {2, 33, 9}}};
  unsigned Seed = 80;
  for (auto &[A, B] : Shapes) {
    check(mk(OpKind::MatMul, {rnd(A, Seed), rnd(B, Seed + 1)}));
    Seed += 2;
  }
  check(mk(OpKind::MatMul, {rnd({3, 4}, 90, -1, 1, DType::F64),
                            rnd({4, 2}, 91, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
  Tensor IA = Tensor::empty({2, 3}, DType::I32),
         IB = Tensor::empty({3, 2}, DType::I32);
  for (int64_t I = 0; I < 6; ++I) {
    IA.setFlat(I, I - 2);
    IB.setFlat(I, 3 - I);
  }
  check(mk(OpKind::MatMul, {IA, IB}).expect(Expect::Fallback));
}

TEST(CpuBackend, Gemm) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  check(mk(OpKind::Gemm, {rnd({3, 4}, 100), rnd({4, 5}, 101), rnd({5}, 102)}));
  check(mk(OpKind::Gemm, {rnd({4, 3}, 103), rnd({5, 4}, 104), rnd({3, 5}, 105)})
            .attr("transA", 1)
            .attr("transB", 1));
  check(mk(OpKind::Gemm, {rnd({3, 4}, 106), rnd({4, 5}, 107)})
            .attr("alpha", 2.5f));
  check(mk(OpKind::Gemm, {rnd({3, 4}, 108), rnd({4, 5}, 109), rnd({3, 1}, 110)})
            .attr("alpha", 0.5f)
            .attr("beta", 2.0f));
  check(mk(OpKind::Gemm,
           {rnd({3, 4}, 111), rnd({5, 4}, 112), Tensor::scalar<float>(0.25f)})
            .attr("transB", 1)
            .attr("beta", -1.0f));
  check(
      mk(OpKind::Gemm, {rnd({2, 4}, 113), rnd({4, 3}, 114), rnd({1, 3}, 115)}));
  // beta = 0 with C: the reference's 0 * C (NaN for inf) is kept.
  check(mk(OpKind::Gemm, {rnd({2, 4}, 116), rnd({4, 3}, 117), rnd({3}, 118)})
            .attr("beta", 0.0f)
            .expect(Expect::Fallback));
  check(
      mk(OpKind::FusedGemm, {rnd({3, 4}, 119), rnd({5, 4}, 120), rnd({5}, 121)})
          .attr("transB", 1)
          .attr("activation", "Relu"));
  check(mk(OpKind::FusedGemm,
           {rnd({3, 4}, 122), rnd({4, 5}, 123), rnd({3, 5}, 124)})
            .attr("alpha", 2.0f)
            .attr("beta", 0.5f)
            .attr("activation", "Tanh"));
}

// FusedMatMul's node kernel (a graph cut at a data-dependent shape runs it):
// transB through strides, the bias vector, a Sum of the result's shape and
// the activation on oneDNN; f64 on the reference kernel.
TEST(CpuBackend, FusedMatMulNodeKernel) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  check(mk(OpKind::FusedMatMul, {rnd({6, 8}, 125), rnd({8, 5}, 126)}));
  check(mk(OpKind::FusedMatMul, {rnd({6, 8}, 127), rnd({5, 8}, 128),
                                 rnd({5}, 129)})
            .attr("transB", 1)
            .attr("activation", "Relu"));
  check(mk(OpKind::FusedMatMul, {rnd({2, 3, 8}, 130), rnd({2, 5, 8}, 131),
                                 Tensor(), rnd({2, 3, 5}, 132)})
            .attr("transB", 1)
            .attr("activation", "Tanh"));
  check(mk(OpKind::FusedMatMul, {rnd({4, 8}, 133), rnd({8, 5}, 134),
                                 rnd({5}, 135), rnd({4, 5}, 136)})
            .attr("activation", "Sigmoid"));
  check(mk(OpKind::FusedMatMul, {rnd({4, 8}, 137, -1, 1, DType::F64),
                                 rnd({8, 5}, 138, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
}

// --- pools -------------------------------------------------------------------

TEST(CpuBackend, MaxPool) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  auto Pool = [](Shape X, Ints K, unsigned Seed) {
    return mk(OpKind::MaxPool, {rnd(X, Seed)}).attr("kernel_shape", K);
  };
  check(Pool({2, 3, 9, 9}, {3, 3}, 130)
            .attr("strides", Ints{2, 2})
            .attr("pads", Ints{1, 1, 1, 1}));
  check(Pool({1, 2, 10, 9}, {3, 2}, 131)
            .attr("strides", Ints{2, 2})
            .attr("ceil_mode", 1));
  check(Pool({1, 2, 10, 9}, {3, 3}, 132)
            .attr("strides", Ints{3, 2})
            .attr("pads", Ints{1, 0, 1, 1})
            .attr("ceil_mode", 1));
  check(Pool({1, 2, 9, 9}, {2, 2}, 133).attr("dilations", Ints{2, 2}));
  check(Pool({2, 3, 11}, {3}, 134)
            .attr("strides", Ints{2})
            .attr("auto_pad", "SAME_UPPER"));
  check(Pool({1, 2, 5, 6, 7}, {2, 2, 3}, 135).attr("strides", Ints{2, 2, 2}));
  // Fallbacks: dilated windows next to padding; Indices. A NaN input with
  // windows inside the input: the f32 loops (KernelsMaxPool.cpp).
  check(Pool({1, 2, 9, 9}, {2, 2}, 136)
            .attr("dilations", Ints{2, 2})
            .attr("pads", Ints{1, 1, 1, 1})
            .expect(Expect::Fallback));
  Tensor X = rnd({1, 1, 4, 4}, 137);
  X.setFlat(5, std::nan(""));
  check(mk(OpKind::MaxPool, {X})
            .attr("kernel_shape", Ints{2, 2})
            .expect(Expect::Fast));
  Case WithIdx = Pool({1, 2, 4, 4}, {2, 2}, 138).expect(Expect::Reference);
  WithIdx.NumOutputs = 2;
  check(WithIdx);
}

TEST(CpuBackend, AveragePool) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  for (int Inc : {0, 1}) {
    auto Pool = [Inc](Shape X, Ints K, unsigned Seed) {
      return mk(OpKind::AveragePool, {rnd(X, Seed)})
          .attr("kernel_shape", K)
          .attr("count_include_pad", Inc);
    };
    check(Pool({2, 3, 9, 9}, {3, 3}, 140)
              .attr("strides", Ints{2, 2})
              .attr("pads", Ints{1, 1, 1, 1}));
    check(Pool({1, 2, 10, 9}, {3, 2}, 141)
              .attr("strides", Ints{2, 2})
              .attr("pads", Ints{1, 0, 0, 1})
              .attr("ceil_mode", 1));
    check(Pool({2, 3, 11}, {4}, 142)
              .attr("strides", Ints{3})
              .attr("pads", Ints{2, 2}));
    check(Pool({1, 2, 5, 6, 7}, {2, 2, 3}, 143).attr("auto_pad", "SAME_LOWER"));
  }
  // count_include_pad with a ceil-mode window past the padded end: the
  // reference divides by fewer positions than oneDNN would.
  check(mk(OpKind::AveragePool, {rnd({1, 1, 5}, 144)})
            .attr("kernel_shape", Ints{3})
            .attr("strides", Ints{2})
            .attr("pads", Ints{0, 1})
            .attr("ceil_mode", 1)
            .attr("count_include_pad", 1)
            .expect(Expect::Fallback));
  check(mk(OpKind::GlobalAveragePool, {rnd({2, 3, 5, 5}, 145)}));
  check(mk(OpKind::GlobalAveragePool, {rnd({2, 3, 7}, 146)}));
  check(mk(OpKind::GlobalAveragePool, {rnd({1, 2, 3, 4, 5}, 147)}));
}

TEST(CpuBackend, PoolGrads) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  struct Geo {
    Shape X, Y;
    std::vector<std::pair<std::string, ir::Attribute>> A;
  };
  std::vector<Geo> Geos = {
      {{2, 3, 9, 9},
       {2, 3, 5, 5},
       {{"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}},
        {"pads", Ints{1, 1, 1, 1}}}},
      {{1, 2, 10, 9},
       {1, 2, 5, 5},
       {{"kernel_shape", Ints{3, 2}},
        {"strides", Ints{2, 2}},
        {"ceil_mode", 1}}},
      {{2, 2, 8, 8},
       {2, 2, 4, 4},
       {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},
      {{2, 3, 11},
       {2, 3, 6},
       {{"kernel_shape", Ints{3}},
        {"strides", Ints{2}},
        {"auto_pad", "SAME_UPPER"}}},
      {{1, 2, 5, 6, 7}, {1, 2, 4, 5, 6}, {{"kernel_shape", Ints{2, 2, 2}}}},
  };
  unsigned Seed = 150;
  for (const Geo &G : Geos) {
    for (bool Tied : {false, true}) {
      Tensor X = Tied ? ties(G.X, Seed) : rnd(G.X, Seed);
      Case M = mk(OpKind::MaxPoolGrad, {X, rnd(G.Y, Seed + 1)});
      M.Attrs = G.A;
      // Non-overlapping 2-D windows inside the input: the f32 loops.
      check(M.expect(G.X.rank() == 4 && G.X[3] == 8 ? Expect::Fast
                                                    : Expect::Dnnl));
      ++Seed;
    }
    for (int Inc : {0, 1}) {
      Case A =
          mk(OpKind::AveragePoolGrad, {rnd(G.X, Seed), rnd(G.Y, Seed + 1)});
      A.Attrs = G.A;
      A.attr("count_include_pad", Inc);
      // The ceil-mode geometry's last windows overhang the input: with
      // count_include_pad the reference divisor is not oneDNN's.
      bool Ceil = false;
      for (const auto &[K, V] : G.A)
        Ceil = Ceil || K == "ceil_mode";
      check(A.expect(Inc && Ceil ? Expect::Fallback : Expect::Dnnl));
      ++Seed;
    }
  }
  // Dilated max pool (no pads) and its NaN fallback.
  check(
      mk(OpKind::MaxPoolGrad, {rnd({1, 2, 9, 9}, 170), rnd({1, 2, 7, 7}, 171)})
          .attr("kernel_shape", Ints{2, 2})
          .attr("dilations", Ints{2, 2}));
  Tensor X = rnd({1, 1, 4, 4}, 172);
  X.setFlat(3, std::nan(""));
  check(mk(OpKind::MaxPoolGrad, {X, rnd({1, 1, 2, 2}, 173)})
            .attr("kernel_shape", Ints{2, 2})
            .attr("strides", Ints{2, 2})
            .expect(Expect::Fast));
}

// --- elementwise, reductions, softmax, batch norm ----------------------------

TEST(CpuBackend, Binary) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  unsigned Seed = 200;
  for (OpKind K : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div}) {
    check(mk(K, {rnd({2, 3, 4}, Seed), rnd({2, 3, 4}, Seed + 1, 0.5, 2)}));
    check(mk(K, {rnd({2, 3, 4}, Seed + 2), rnd({4}, Seed + 3, 0.5, 2)}));
    check(mk(K, {rnd({2, 3, 4}, Seed + 4), rnd({3, 1}, Seed + 5, 0.5, 2)}));
    check(mk(K, {rnd({5, 7}, Seed + 6), Tensor::scalar<float>(1.5f)}));
    bool Commutes = K == OpKind::Add || K == OpKind::Mul;
    check(
        mk(K, {rnd({1, 4}, Seed + 7, 0.5, 2), rnd({3, 2, 4}, Seed + 8, 0.5, 2)})
            .expect(Commutes ? Expect::Dnnl : Expect::Fallback));
    // Both operands broadcast: the reference kernel.
    check(mk(K, {rnd({3, 1}, Seed + 9), rnd({1, 4}, Seed + 10, 0.5, 2)})
              .expect(Expect::Fallback));
    Seed += 11;
  }
  check(mk(OpKind::Add,
           {rnd({4}, 230, -1, 1, DType::F64), rnd({4}, 231, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
  // Division by zero and infinities.
  check(mk(OpKind::Div, {f32({1, -1, 0, 2}), f32({0, 0, 0, INFINITY})}));
}

TEST(CpuBackend, Unary) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  Tensor Special =
      f32({0.f, -0.f, 1e-30f, -2.f, 100.f, -100.f, INFINITY, -INFINITY});
  Tensor WithNaN = f32({1.f, std::nanf(""), -1.f});
  unsigned Seed = 240;
  // Log is the reference kernel's: oneDNN's log(1) is -1.4e-6, not 0 (the
  // ONNX conformance test_log_example on --backend cpu caught it).
  check(mk(OpKind::Log, {f32({1.f, 10.f})}).expect(Expect::Reference));
  for (OpKind K : {OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp,
                   OpKind::Sqrt, OpKind::Abs}) {
    bool Positive = K == OpKind::Log || K == OpKind::Sqrt;
    check(mk(K, {rnd({3, 5, 7}, Seed++, Positive ? 0.01 : -5, 5)}));
    check(mk(K, {rnd({1000}, Seed++, Positive ? 0.01 : -5, 5)}));
    check(mk(K, {Special}));
    // oneDNN's relu and exp turn NaN into numbers: those fall back.
    bool NaNUnsafe = K == OpKind::Relu || K == OpKind::Exp;
    check(mk(K, {WithNaN}).expect(NaNUnsafe ? Expect::Fallback : Expect::Dnnl));
  }
  check(mk(OpKind::Exp, {rnd({3}, 250, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
}

TEST(CpuBackend, Softmax) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  unsigned Seed = 260;
  for (OpKind K : {OpKind::Softmax, OpKind::LogSoftmax}) {
    for (int64_t Axis : {-1, 0, 1, 2})
      check(mk(K, {rnd({2, 3, 4}, Seed++, -5, 5)}).attr("axis", Axis));
    check(mk(K, {rnd({4, 100}, Seed++, -20, 20)}));
    check(mk(K, {rnd({7}, Seed++)}));
    Tensor WithNaN = rnd({3, 4}, Seed++);
    WithNaN.setFlat(5, std::nan(""));
    check(mk(K, {WithNaN}).attr("axis", 1).expect(Expect::Fallback));
  }
}

TEST(CpuBackend, Reduce) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  Tensor X = rnd({2, 3, 4, 5}, 270);
  for (int Keep : {0, 1}) {
    // Small tensors: oneDNN (larger f32 ones: FastReduce below).
    check(mk(OpKind::ReduceSum, {X, i64({1})}).attr("keepdims", Keep));
    check(mk(OpKind::ReduceSum, {X, i64({0, -1})}).attr("keepdims", Keep));
    check(mk(OpKind::ReduceSum, {X}).attr("keepdims", Keep));
    for (OpKind K : {OpKind::ReduceMean, OpKind::ReduceMax}) {
      check(mk(K, {X}).attr("axes", Ints{2}).attr("keepdims", Keep));
      check(mk(K, {X}).attr("axes", Ints{0, 3}).attr("keepdims", Keep));
      check(mk(K, {X}).attr("keepdims", Keep));
    }
  }
  // The axes input's values select the plan: one executable called with
  // other axes must not reuse it.
  {
    Case C = mk(OpKind::ReduceSum, {X, i64({2})});
    std::vector<Tensor> Feeds;
    auto G = C.graph(Feeds);
    auto Cpu = backends::getBackend("cpu").compile(*G);
    auto Ref = backends::referenceBackend().compile(*G);
    for (int64_t Axis : {2, 1, 3, -4, 2}) {
      Feeds[1] = i64({Axis});
      EXPECT_TRUE(closeTo(Cpu->run(Feeds).at(0), Ref->run(Feeds).at(0)))
          << "axis " << Axis;
    }
  }
  // noop_with_empty_axes, NaN into a max, f64: the reference kernel.
  check(mk(OpKind::ReduceSum, {X})
            .attr("noop_with_empty_axes", 1)
            .expect(Expect::Fallback));
  Tensor N = rnd({3, 4}, 271);
  N.setFlat(6, std::nan(""));
  check(mk(OpKind::ReduceMax, {N})
            .attr("axes", Ints{1})
            .expect(Expect::Fallback));
  check(mk(OpKind::ReduceMean, {rnd({3, 4}, 272, -1, 1, DType::F64)})
            .expect(Expect::Fallback));
}

TEST(CpuBackend, ReduceIsAnOwnLoopInTheSchedule) {
  REQUIRE_ONEDNN();
  // Silero VAD's mean over the frequencies of its spectrogram, and a sum
  // over two axes: own loops of the schedule (no fallback step), at two
  // lengths of the symbolic axis.
  auto G = std::make_unique<ir::Graph>();
  G->setName("reduce");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32,
                          {ir::Dim(1), ir::Dim(129), ir::Dim::symbol("T")}));
  ir::AttrMap Mean;
  Mean.set("axes", Ints{1});
  G->addOutput(add(*G, ir::OpKind::ReduceMean, {X}, "mean", Mean));
  ir::AttrMap Sum;
  Sum.set("keepdims", int64_t(0));
  G->addOutput(add(*G, ir::OpKind::ReduceSum,
                   {X, G->addInitializer("axes", i64({0, -1}))}, "sum", Sum));
  ir::inferTypes(*G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  for (int64_t T : {8, 3, 8}) {
    std::vector<Tensor> In = {rnd({1, 129, T}, static_cast<unsigned>(T))};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 2u);
    for (size_t I = 0; I < 2; ++I)
      EXPECT_TRUE(closeTo(Got[I], Want[I])) << "T " << T << ", output " << I;
    backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
    EXPECT_TRUE(S.Fallbacks.empty()) << S.Fallbacks.front();
    EXPECT_EQ(S.OwnKernels, 2) << "T " << T;
  }
}

TEST(CpuBackend, BatchNormalization) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  auto BN = [](Shape X, int64_t C, unsigned Seed) {
    return mk(OpKind::BatchNormalization,
              {rnd(X, Seed), rnd({C}, Seed + 1, 0.5, 2), rnd({C}, Seed + 2),
               rnd({C}, Seed + 3), rnd({C}, Seed + 4, 0.1, 2)});
  };
  check(BN({2, 3, 4, 4}, 3, 280));
  check(BN({4, 5}, 5, 285).attr("epsilon", 1e-3f));
  check(BN({2, 3, 7}, 3, 290));
  check(BN({1, 2, 3, 4, 5}, 2, 295));
  Case Train = BN({2, 3, 4, 4}, 3, 300)
                   .attr("training_mode", 1)
                   .expect(Expect::Reference);
  Train.NumOutputs = 3;
  check(Train);
}

// --- whole graphs and the plan cache -----------------------------------------

TEST(CpuBackend, SmallCnnMatchesReference) {
  REQUIRE_ONEDNN();
#if NNGRAPH_HAVE_ONEDNN
  std::unique_ptr<ir::Graph> G = ir::parseGraphFile(
      std::string(NNGRAPH_SOURCE_DIR) + "/examples/models/small_cnn.nng");
  auto Ref = backends::referenceBackend().compile(*G);
  auto Compiled = backends::getBackend("cpu").compile(*G);
  auto Cpu = backends::compileCpu(*G, backends::CpuMode::NodeByNode);
  // The batch is symbolic: run several sizes through one executable.
  for (int64_t Batch : {2, 5, 2, 1}) {
    std::vector<Tensor> In{rnd({Batch, 1, 28, 28}, 310 + Batch, 0, 1)};
    std::vector<Tensor> Want = Ref->run(In);
    // The compiled schedule: every node lowered (none falls back), the
    // layouts kept between oneDNN nodes.
    EXPECT_TRUE(closeTo(Compiled->run(In).at(0), Want.at(0)))
        << "compiled, batch " << Batch;
    std::optional<backends::CpuExecutableStats> St =
        backends::cpuExecutableStats(*Compiled);
    ASSERT_TRUE(St && St->Compiled);
    EXPECT_TRUE(St->Fallbacks.empty()) << St->Fallbacks.front();
    EXPECT_LE(St->Reorders, 2);
    // Node by node on the node kernels, as graphs with data-dependent
    // shapes run.
    backends::CpuCallCounts Before = backends::cpuCallCounts();
    std::vector<Tensor> Got = Cpu->run(In);
    backends::CpuCallCounts After = backends::cpuCallCounts();
    EXPECT_TRUE(closeTo(Got.at(0), Want.at(0))) << "batch " << Batch;
    // Conv x2, BatchNormalization x2, Relu x2, GlobalAveragePool, Gemm: all
    // oneDNN; MaxPool the f32 loops; Flatten is the reference kernel.
    EXPECT_EQ(After.Dnnl - Before.Dnnl, 8) << "batch " << Batch;
    EXPECT_EQ(After.Fast - Before.Fast, 1) << "batch " << Batch;
    EXPECT_EQ(After.Fallback - Before.Fallback, 0);
  }
#endif
}

TEST(CpuBackend, CacheFollowsShapes) {
  REQUIRE_ONEDNN();
#if NNGRAPH_HAVE_ONEDNN
  // One executable with a symbolic batch, called with alternating shapes
  // (more shapes than the cache holds), must keep matching the reference.
  ir::Graph G;
  G.setName("conv_sym");
  ir::Value *X = G.addInput(
      "x",
      ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(3),
                                  ir::Dim::symbol("H"), ir::Dim::symbol("W")}));
  ir::Value *W = G.addInitializer("w", rnd({4, 3, 3, 3}, 320));
  ir::AttrMap A;
  A.set("pads", Ints{1, 1, 1, 1});
  ir::Node *N = G.addNode(ir::OpKind::Conv, {X, W, nullptr}, {"y"}, A);
  G.addOutput(N->output());
  ir::inferTypes(G);
  auto Cpu = backends::getBackend("cpu").compile(G);
  auto Ref = backends::referenceBackend().compile(G);
  for (int Round = 0; Round < 2; ++Round)
    for (int64_t S = 3; S < 20; ++S) { // 17 shapes: more than a cache holds.
      std::vector<Tensor> In{rnd({1 + S % 2, 3, S, 22 - S}, 321 + S)};
      EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Ref->run(In).at(0)))
          << "size " << S;
    }
#endif
}

TEST(CpuBackend, Registered) {
  std::vector<std::string> Names = backends::backendNames();
  bool HasCpu = std::find(Names.begin(), Names.end(), "cpu") != Names.end();
  EXPECT_EQ(HasCpu, NNGRAPH_HAVE_ONEDNN != 0);
  if (!NNGRAPH_HAVE_ONEDNN)
    GTEST_SKIP() << "SKIPPED: built without oneDNN, no cpu backend to find";
  EXPECT_EQ(backends::getBackend("cpu").name(), "cpu");
}

TEST(CpuBackend, CompiledSpecialisesPerShape) {
  REQUIRE_ONEDNN();
#if NNGRAPH_HAVE_ONEDNN
  std::unique_ptr<ir::Graph> G = ir::parseGraphFile(
      std::string(NNGRAPH_SOURCE_DIR) + "/examples/models/small_cnn.nng");
  auto Cpu = backends::getBackend("cpu").compile(*G);
  for (int64_t Batch : {1, 3, 1, 3})
    Cpu->run({rnd({Batch, 1, 28, 28}, 330 + Batch, 0, 1)});
  EXPECT_EQ(backends::cpuExecutableStats(*Cpu)->Specializations, 2);
#endif
}
