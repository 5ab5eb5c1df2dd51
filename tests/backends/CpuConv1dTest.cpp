//===- CpuConv1dTest.cpp - 1-d convolutions on the cpu backend ------------===//
//
// Convolutions over time (an audio model's: Conv-TasNet's strided encoder,
// 1x1 and dilated depthwise layers, its transposed-convolution decoder) are
// oneDNN primitives in the compiled schedule, not node kernels (depthwise
// ones the backend's own loop, which oneDNN serves only with gemm): checked
// against the reference backend with odd sizes, groups, strides,
// dilations, padding, the fused residual sum and activation, NaN and
// infinities in the input, and a signal length that changes between runs.
// ConvTranspose's lowering serves 2-d ones too: checked the same way.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"

#include <gtest/gtest.h>

#include <limits>

using namespace nng;
using namespace nng::cputest;

namespace {

/// x: f32[N, C, L] with N and L symbolic.
ir::Value *signalInput(ir::Graph &G, const std::string &Name, int64_t C) {
  return G.addInput(
      Name, ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(C),
                                        ir::Dim::symbol("L")}));
}

/// Runs G on the cpu backend (Exe) and the reference with Feeds; the
/// outputs must agree (closeTo: 1e-4 of the magnitude, NaN for NaN) and
/// no node may have run on a node kernel.
void expectMatches(const ir::Graph &G, backends::Executable &Exe,
                   const std::vector<Tensor> &Feeds) {
  std::vector<Tensor> Want = backends::runReference(G, Feeds);
  std::vector<Tensor> Got = Exe.run(Feeds);
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(closeTo(Got[I], Want[I])) << G.name() << " output " << I;
  std::optional<backends::CpuExecutableStats> S =
      backends::cpuExecutableStats(Exe);
  ASSERT_TRUE(S && S->Compiled) << G.name();
  EXPECT_TRUE(S->Fallbacks.empty())
      << G.name() << ": " << S->Fallbacks.front() << " ran on a node kernel";
}

ir::AttrMap convAttrs(Ints Pads, Ints Strides = {1}, Ints Dilations = {1},
                      int64_t Group = 1) {
  ir::AttrMap A;
  A.set("pads", std::move(Pads));
  A.set("strides", std::move(Strides));
  A.set("dilations", std::move(Dilations));
  A.set("group", Group);
  return A;
}

/// Conv-TasNet's layers in small: a strided encoder (kernel 16, stride 8,
/// one input channel), a 1x1 convolution with a residual Add and a Relu
/// after it (fused), a dilated depthwise convolution (odd channel count),
/// a grouped one without bias, a transposed-convolution decoder, and a
/// strided depthwise one.
std::unique_ptr<ir::Graph> convStack() {
  auto G = std::make_unique<ir::Graph>();
  G->setName("conv1d-stack");
  ir::Value *X = signalInput(*G, "x", 1);
  unsigned Seed = 1;
  auto W = [&](const std::string &N, Shape S) {
    return G->addInitializer(N, rnd(S, Seed++, -0.5, 0.5));
  };
  ir::Value *E = add(*G, ir::OpKind::Conv, {X, W("enc", {21, 1, 16})}, "e",
                     convAttrs({8, 8}, {8}));
  ir::Value *P =
      add(*G, ir::OpKind::Conv, {E, W("pw", {21, 21, 1}), W("pb", {21})}, "p",
          convAttrs({0, 0}));
  ir::Value *S = add(*G, ir::OpKind::Add, {P, E}, "s");
  ir::Value *R = add(*G, ir::OpKind::Relu, {S}, "r");
  ir::Value *D =
      add(*G, ir::OpKind::Conv, {R, W("dw", {21, 1, 3}), W("db", {21})}, "d",
          convAttrs({4, 4}, {1}, {4}, 21));
  ir::Value *Gr = add(*G, ir::OpKind::Conv, {D, W("gw", {14, 3, 5})}, "g",
                      convAttrs({2, 1}, {2}, {1}, 7));
  ir::AttrMap T = convAttrs({8, 8}, {8});
  T.set("output_padding", Ints{3});
  ir::Value *Y = add(*G, ir::OpKind::ConvTranspose,
                     {Gr, W("dec", {14, 1, 16}), W("decb", {1})}, "y", T);
  // A strided depthwise one without bias, padded at the start only.
  ir::Value *Dw2 = add(*G, ir::OpKind::Conv, {Gr, W("dw2", {14, 1, 4})}, "d2",
                       convAttrs({3, 0}, {2}, {1}, 14));
  G->addOutput(Y);
  G->addOutput(Gr);
  G->addOutput(Dw2);
  ir::inferTypes(*G);
  return G;
}

TEST(CpuConv1d, ConvTasNetLayersAreOneDnnPrimitives) {
  REQUIRE_ONEDNN();
  std::unique_ptr<ir::Graph> G = convStack();
  auto Exe = backends::getBackend("cpu").compile(*G);
  unsigned Seed = 100;
  // Lengths change between runs (a new program each, for oneDNN's fixed
  // dims); odd ones leave partial windows at the end.
  for (int64_t L : {1600, 997, 64, 1600}) {
    SCOPED_TRACE("L=" + std::to_string(L));
    expectMatches(*G, *Exe, {rnd({2, 1, L}, Seed++)});
  }
  std::optional<backends::CpuExecutableStats> S =
      backends::cpuExecutableStats(*Exe);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->FusedNodes, 2) << "the residual Add and the Relu";
  EXPECT_GE(S->DnnlSteps - S->Reorders, 4) << "four primitives";
  EXPECT_GE(S->OwnKernels, 2) << "the depthwise convolutions' own loops";
}

TEST(CpuConv1d, LongDepthwiseSplitsAcrossThreads) {
  REQUIRE_ONEDNN();
  // Enough rows and length for the depthwise loop to split its rows
  // between threads: each chunk must use its own channels' weights.
  auto G = std::make_unique<ir::Graph>();
  G->setName("long-depthwise");
  ir::Value *X = signalInput(*G, "x", 40);
  G->addOutput(add(*G, ir::OpKind::Conv,
                   {X, G->addInitializer("w", rnd({40, 1, 3}, 1)),
                    G->addInitializer("b", rnd({40}, 2))},
                   "y", convAttrs({16, 16}, {1}, {16}, 40)));
  ir::inferTypes(*G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  expectMatches(*G, *Exe, {rnd({3, 40, 6000}, 3)});
}

TEST(CpuConv1d, NaNAndInfinitiesPropagateAsInTheReference) {
  REQUIRE_ONEDNN();
  std::unique_ptr<ir::Graph> G = convStack();
  auto Exe = backends::getBackend("cpu").compile(*G);
  Tensor X = rnd({1, 1, 400}, 7);
  X.setFlat(17, std::numeric_limits<double>::quiet_NaN());
  X.setFlat(150, std::numeric_limits<double>::infinity());
  X.setFlat(301, -std::numeric_limits<double>::infinity());
  expectMatches(*G, *Exe, {X});
}

/// y = act(conv1d(x) + r) for a Conv with the residual and activation
/// fused, or a FusedConv carrying the activation.
TEST(CpuConv1d, FusedConvAndLeakyTailMatch) {
  REQUIRE_ONEDNN();
  auto G = std::make_unique<ir::Graph>();
  G->setName("fused-conv1d");
  ir::Value *X = signalInput(*G, "x", 6);
  ir::AttrMap A = convAttrs({1, 1});
  A.set("activation", std::string("LeakyRelu"));
  A.set("activation_params", Floats{0.1f});
  ir::Value *Y = add(*G, ir::OpKind::FusedConv,
                     {X, G->addInitializer("w", rnd({6, 6, 3}, 1)),
                      G->addInitializer("b", rnd({6}, 2))},
                     "y", A);
  ir::Value *Z =
      add(*G, ir::OpKind::Conv, {Y, G->addInitializer("w2", rnd({6, 6, 1}, 3))},
          "z", convAttrs({0, 0}));
  ir::Value *S = add(*G, ir::OpKind::Add, {X, Z}, "s");
  ir::AttrMap L;
  L.set("alpha", ir::Attribute(0.2f));
  G->addOutput(add(*G, ir::OpKind::LeakyRelu, {S}, "out", L));
  ir::inferTypes(*G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  Tensor In = rnd({3, 6, 33}, 4, -2, 2);
  In.setFlat(40, std::numeric_limits<double>::quiet_NaN());
  expectMatches(*G, *Exe, {In});
  expectMatches(*G, *Exe, {rnd({1, 6, 5}, 5)});
  // The residual Add and the LeakyRelu, and the FusedConv's own
  // activation: a FusedConv's Sum and activation count as fused nodes.
  EXPECT_EQ(backends::cpuExecutableStats(*Exe)->FusedNodes, 3);
}

TEST(CpuConv1d, ConvTransposeGroupsAndPadding) {
  REQUIRE_ONEDNN();
  struct Form {
    int64_t C, MPerG, K, Stride, Group;
    Ints Pads;
    int64_t OutPad;
    bool Bias;
  };
  for (const Form &F : {Form{6, 1, 16, 8, 1, {8, 8}, 0, true},
                        Form{4, 3, 3, 2, 2, {1, 2}, 1, false},
                        Form{5, 2, 4, 1, 5, {0, 0}, 0, true},
                        Form{3, 7, 5, 3, 1, {2, 2}, 2, true}}) {
    auto G = std::make_unique<ir::Graph>();
    G->setName("conv-transpose-1d C=" + std::to_string(F.C) +
               " group=" + std::to_string(F.Group));
    ir::Value *X = signalInput(*G, "x", F.C);
    std::vector<ir::Value *> In = {
        X, G->addInitializer("w", rnd({F.C, F.MPerG, F.K}, 1))};
    if (F.Bias)
      In.push_back(G->addInitializer("b", rnd({F.MPerG * F.Group}, 2)));
    ir::AttrMap A = convAttrs(F.Pads, {F.Stride}, {1}, F.Group);
    A.set("output_padding", Ints{F.OutPad});
    G->addOutput(add(*G, ir::OpKind::ConvTranspose, In, "y", A));
    ir::inferTypes(*G);
    auto Exe = backends::getBackend("cpu").compile(*G);
    expectMatches(*G, *Exe, {rnd({2, F.C, 23}, 3)});
    expectMatches(*G, *Exe, {rnd({1, F.C, 4}, 4)});
  }
}

TEST(CpuConv1d, TwoDimensionalConvTransposeToo) {
  REQUIRE_ONEDNN();
  struct Form {
    int64_t C, MPerG, Group;
    Ints Kernel, Strides, Pads, Dilations, OutPad, OutShape;
  };
  for (const Form &F :
       {Form{3, 2, 1, {3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}, {}},
        Form{4, 3, 2, {3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 2}, {1, 1}, {}},
        Form{6, 1, 6, {4, 4}, {2, 2}, {1, 1, 1, 1}, {1, 1}, {0, 0}, {}},
        Form{2, 3, 1, {3, 3}, {2, 2}, {}, {1, 1}, {}, {9, 8}}}) {
    auto G = std::make_unique<ir::Graph>();
    G->setName("conv-transpose-2d C=" + std::to_string(F.C) +
               " group=" + std::to_string(F.Group));
    ir::Value *X = G->addInput(
        "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(F.C),
                                         ir::Dim(4), ir::Dim(5)}));
    Shape WS({F.C, F.MPerG, F.Kernel[0], F.Kernel[1]});
    ir::AttrMap A;
    A.set("group", F.Group);
    A.set("strides", F.Strides);
    A.set("dilations", F.Dilations);
    if (!F.Pads.empty())
      A.set("pads", F.Pads);
    if (!F.OutPad.empty())
      A.set("output_padding", F.OutPad);
    if (!F.OutShape.empty())
      A.set("output_shape", F.OutShape);
    G->addOutput(add(*G, ir::OpKind::ConvTranspose,
                     {X, G->addInitializer("w", rnd(WS, 1)),
                      G->addInitializer("b", rnd({F.MPerG * F.Group}, 2))},
                     "y", A));
    ir::inferTypes(*G);
    auto Exe = backends::getBackend("cpu").compile(*G);
    expectMatches(*G, *Exe, {rnd({2, F.C, 4, 5}, 3)});
  }
}

} // namespace
