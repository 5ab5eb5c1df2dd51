//===- DynamicQuantOrtTest.cpp - ORT's dynamic QOperator form vs ORT ------===//
//
// A small conv net in the form onnxruntime.quantization.quantize_dynamic
// writes (DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(x_scale *
// w_scale) -> Add(Reshape(bias)) -> Relu, twice, with s8 symmetric and u8
// asymmetric weights; then GlobalAveragePool, Flatten and a linear layer
// through MatMulInteger with per-column scales as nngraph's quantize pass
// writes it) is saved as ONNX and run in ONNX Runtime (onnxruntime-node),
// on the cpu backend and on the reference backend. Every layer's output is
// a graph output and is compared: the cpu backend must equal the reference
// bit for bit with no node falling back (the convolutions; the linear
// layer after a pool within 0.01), and ORT must agree within 1% of
// each layer's largest magnitude (a tie quantized the other way moves a
// result by one weight's product). Skips with the reason when node or
// onnxruntime-node is missing.
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/BuildConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace nng;

namespace {

ir::Value *add(ir::Graph &G, ir::OpKind K, std::vector<ir::Value *> In,
               const std::string &Out, ir::AttrMap A = {}) {
  return G.addNode(K, std::move(In), {Out}, std::move(A))->output();
}

/// Integers uniform in [Lo, Hi] of dtype T.
rt::Tensor ints(const Shape &S, DType T, int Lo, int Hi, std::mt19937 &Gen) {
  std::uniform_int_distribution<int> U(Lo, Hi);
  rt::Tensor R = rt::Tensor::empty(S, T);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I, U(Gen));
  return R;
}

/// One dynamically quantized 3x3 convolution (+ bias, + Relu) of X with
/// Cin -> Cout channels, as quantize_dynamic writes it.
ir::Value *dynamicConv(ir::Graph &G, ir::Value *X, int64_t Cin, int64_t Cout,
                       DType WT, const std::string &P, std::mt19937 &Gen) {
  ir::Node *Q = G.addNode(ir::OpKind::DynamicQuantizeLinear, {X},
                          {P + "_x_quantized", P + "_x_scale",
                           P + "_x_zero_point"});
  Shape WS{Cout, Cin, 3, 3};
  // s8: symmetric; u8: asymmetric around 128 (w - zp fits s8).
  rt::Tensor W = WT == DType::I8 ? ints(WS, WT, -127, 127, Gen)
                                 : ints(WS, WT, 30, 250, Gen);
  rt::Tensor WZp = WT == DType::I8 ? ints(Shape{}, WT, 0, 0, Gen)
                                   : ints(Shape{}, WT, 128, 128, Gen);
  float WScale = 1.0f / (127.0f * std::sqrt(static_cast<float>(Cin * 9)));
  ir::AttrMap A;
  A.set("kernel_shape", std::vector<int64_t>{3, 3});
  A.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Value *Acc =
      add(G, ir::OpKind::ConvInteger,
          {Q->output(0), G.addInitializer(P + ".w_quantized", W),
           Q->output(2), G.addInitializer(P + ".w_zero_point", WZp)},
          P + "_output_quantized", A);
  ir::AttrMap To;
  To.set("to", ir::Attribute(int64_t(1)));
  ir::Value *F = add(G, ir::OpKind::Cast, {Acc}, P + "_cast_output", To);
  ir::Value *S = add(G, ir::OpKind::Mul,
                     {Q->output(1), G.addInitializer(P + ".w_scale",
                                                     rt::Tensor::scalar(WScale))},
                     P + "_scales_mul");
  ir::Value *Y = add(G, ir::OpKind::Mul, {F, S}, P + "_scaled");
  rt::Tensor B = test::seededTensor(Shape{Cout}, 7);
  ir::Value *BR = add(
      G, ir::OpKind::Reshape,
      {G.addInitializer(P + ".b", B),
       G.addInitializer(P + ".b_shape", rt::Tensor::fromVector<int64_t>(
                                            {1, -1, 1, 1}, Shape{4}))},
      P + "_bias_reshape_output");
  Y = add(G, ir::OpKind::Add, {Y, BR}, P + "_biased");
  return add(G, ir::OpKind::Relu, {Y}, P + "_out");
}

/// The net: two convolutions (s8, u8 weights) and a linear layer.
std::unique_ptr<ir::Graph> dynamicNet() {
  std::mt19937 Gen(5);
  auto G = std::make_unique<ir::Graph>();
  G->setName("dynquant_net");
  ir::Value *X =
      G->addInput("x", ir::TensorType(DType::F32, Shape{2, 3, 24, 24}));
  ir::Value *C0 = dynamicConv(*G, X, 3, 16, DType::I8, "conv0", Gen);
  ir::Value *C1 = dynamicConv(*G, C0, 16, 16, DType::U8, "conv1", Gen);
  ir::Value *Pool = add(*G, ir::OpKind::GlobalAveragePool, {C1}, "pooled");
  ir::Value *Flat = add(*G, ir::OpKind::Flatten, {Pool}, "flat");
  ir::Node *Q = G->addNode(ir::OpKind::DynamicQuantizeLinear, {Flat},
                           {"flat_quantized", "flat_scale", "flat_zero_point"});
  ir::Value *Acc = add(
      *G, ir::OpKind::MatMulInteger,
      {Q->output(0), G->addInitializer("fc.w_quantized",
                                       ints({16, 10}, DType::I8, -127, 127, Gen)),
       Q->output(2),
       G->addInitializer("fc.w_zero_point", ints({10}, DType::I8, 0, 0, Gen))},
      "fc_output_quantized");
  ir::AttrMap To;
  To.set("to", ir::Attribute(int64_t(1)));
  ir::Value *F = add(*G, ir::OpKind::Cast, {Acc}, "fc_cast_output", To);
  rt::Tensor WS = test::seededTensor(Shape{10}, 9);
  for (int64_t I = 0; I < 10; ++I)
    WS.data<float>()[I] = 0.002f + 0.001f * std::fabs(WS.data<float>()[I]);
  ir::Value *S = add(*G, ir::OpKind::Mul,
                     {Q->output(1), G->addInitializer("fc.w_scale", WS)},
                     "fc_scales_mul");
  ir::Value *Y = add(*G, ir::OpKind::Mul, {F, S}, "fc_scaled");
  Y = add(*G, ir::OpKind::Add,
          {Y, G->addInitializer("fc.b", test::seededTensor(Shape{10}, 11))},
          "logits");
  for (ir::Value *V : {C0, C1, Y})
    G->addOutput(V);
  ir::inferTypes(*G);
  return G;
}

TEST(DynamicQuantOrt, ConvNetAgreesWithOrtLayerByLayer) {
  if (!NNGRAPH_HAVE_ONEDNN)
    GTEST_SKIP() << "SKIPPED: built without oneDNN, there is no cpu backend";
  std::unique_ptr<ir::Graph> Net = dynamicNet();
  std::string Dir = test::freshTestDir("dynquant");
  std::string Path = Dir + "/dynquant_net.onnx";
  frontend::saveModel(*Net, Path);
  std::unique_ptr<ir::Graph> G = frontend::loadModel(Path);
  std::vector<rt::Tensor> In = {test::seededTensor(Shape{2, 3, 24, 24}, 3)};

  // The cpu backend: every node compiled, results the reference's.
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<rt::Tensor> Ours = Cpu->run(In);
  std::vector<rt::Tensor> Ref = backends::runReference(*G, In);
  backends::CpuExecutableStats St = *backends::cpuExecutableStats(*Cpu);
  EXPECT_TRUE(St.Fallbacks.empty()) << St.Fallbacks.front();
  ASSERT_EQ(Ours.size(), 3u);
  // The convolutions' outputs bit for bit; the linear layer's input comes
  // from a GlobalAveragePool, whose oneDNN sums run in another order than
  // the reference's (a last-bit difference that DynamicQuantizeLinear may
  // turn into a quantization step).
  for (size_t I = 0; I < 2; ++I) {
    rt::Tensor A = Ours[I].contiguous(), B = Ref[I].contiguous();
    EXPECT_EQ(std::memcmp(A.rawData(), B.rawData(), A.numel() * 4), 0)
        << "output " << I << ": cpu and reference differ by "
        << test::maxAbsDiff(A, B);
  }
  EXPECT_LE(test::maxAbsDiff(Ours[2], Ref[2]), 0.01);

  test::ExternalRun Ort = test::runOrt(Path, In);
  if (Ort.skipped())
    GTEST_SKIP() << Ort.SkipReason;
  ASSERT_EQ(Ort.Outputs.size(), 3u);
  const char *Names[] = {"conv0", "conv1", "linear"};
  for (size_t I = 0; I < 3; ++I) {
    double Mag = 0;
    for (int64_t K = 0; K < Ours[I].numel(); ++K)
      Mag = std::max(Mag, std::fabs(Ours[I].getFlat(K)));
    EXPECT_GT(Mag, 0.1) << Names[I] << ": the outputs hardly vary";
    double Diff = test::maxAbsDiff(Ours[I], Ort.Outputs[I].T);
    EXPECT_LE(Diff, 0.01 * Mag) << Names[I];
    std::cout << Names[I] << ": " << Ort.Version << ", max |x| " << Mag
              << ", max difference to ORT " << Diff << "\n";
  }
}

} // namespace
