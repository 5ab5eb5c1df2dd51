//===- CpuDynamicQuantTest.cpp - Dynamic quantization on the cpu backend -===//
//
// ONNX Runtime's dynamically quantized convolutions and products
// (DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul(x_scale
// * w_scale) [-> Add(bias)] [-> Relu]) compiled by the cpu backend
// (LowerDynamicQuant.cpp, LowerInteger.cpp) against the reference backend:
// DynamicQuantizeLinear bit for bit (ties, infinities, an all-zero input,
// NaN reported); ConvInteger and MatMulInteger with their i32 results bit
// for bit on random shapes (groups, strides, pads, dilations, batch > 1,
// u8 and s8 activations and weights, activation zero points 0, 255 and
// run-time ones, weight zero points per tensor and per channel); the whole
// pattern fused into one oneDNN primitive with its f32 result bit for bit
// the reference's (f32(acc) * scale + bias in ONNX's order); what falls
// back (weights whose w - zp does not fit s8, i32 results that could pass
// 2^24) and weights changed in place.
//
//===----------------------------------------------------------------------===//

#include "CpuInt8TestUtils.h"

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

using namespace int8test;

/// The three outputs of a DynamicQuantizeLinear of X in G.
ir::Node *addDynamicQuantize(ir::Graph &G, ir::Value *X,
                             const std::string &Name) {
  return G.addNode(ir::OpKind::DynamicQuantizeLinear, {X},
                   {Name + "_q", Name + "_s", Name + "_zp"});
}

// --- DynamicQuantizeLinear ----------------------------------------------------

TEST(CpuDynamicQuant, DynamicQuantizeLinearEqualsTheReference) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(3);
  struct In {
    Shape S;
    double Lo, Hi;
  };
  // Mixed signs, all positive, all negative, a range of one value (zero),
  // long and short.
  std::vector<In> Cases = {{{2, 3, 17, 19}, -1.5, 2.5}, {{1000}, 0.5, 3},
                           {{5, 7}, -4, -0.25},         {{3, 1}, 0, 0},
                           {{70001}, -3, 1},            {{}, -2, 2}};
  for (const In &C : Cases) {
    SCOPED_TRACE(C.S.toString());
    auto G = std::make_unique<ir::Graph>();
    G->setName("dql");
    ir::Value *X = G->addInput("x", ir::TensorType(DType::F32, C.S));
    ir::Node *Q = addDynamicQuantize(*G, X, "x");
    for (ir::Value *V : Q->outputs())
      G->addOutput(V);
    ir::inferTypes(*G);
    Tensor XT = rnd(C.S, Gen(), C.Lo, C.Hi);
    // Ties of the resulting grid: multiples of scale / 2.
    float *P = XT.data<float>();
    float Scale = static_cast<float>((std::max(C.Hi, 0.0) -
                                      std::min(C.Lo, 0.0)) / 255.0);
    for (int64_t I = 0; I < XT.numel() && Scale > 0; I += 3)
      P[I] = std::clamp(std::round(P[I] / Scale * 2) * 0.5f * Scale,
                        static_cast<float>(C.Lo), static_cast<float>(C.Hi));
    backends::CpuExecutableStats St = expectExact(*G, {XT});
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  }
  // Infinities take the reference's scalar formulas; NaN is an error.
  auto G = std::make_unique<ir::Graph>();
  ir::Value *X = G->addInput("x", ir::TensorType(DType::F32, Shape{40}));
  ir::Node *Q = addDynamicQuantize(*G, X, "x");
  for (ir::Value *V : Q->outputs())
    G->addOutput(V);
  ir::inferTypes(*G);
  Tensor XT = rnd({40}, 5, -1, 1);
  XT.data<float>()[7] = std::numeric_limits<float>::infinity();
  expectExact(*G, {XT});
  XT.data<float>()[9] = std::numeric_limits<float>::quiet_NaN();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  EXPECT_THROW(Cpu->run({XT}), Error);
}

// --- ConvInteger ---------------------------------------------------------------

/// A random ConvInteger configuration.
struct IntConv {
  int64_t N = 1, C = 8, H = 9, W = 9, M = 16, Group = 1, K = 3;
  int64_t Stride = 1, Pad = 1, Dil = 1;
  DType X = DType::U8, Wt = DType::I8;
  int XZp = 0;           ///< -1: a run-time input.
  bool PerChannelWZp = false;
  std::string describe() const {
    std::ostringstream OS;
    OS << "N" << N << " C" << C << " " << H << "x" << W << " M" << M << " g"
       << Group << " k" << K << " s" << Stride << " p" << Pad << " d" << Dil
       << " x " << dtypeName(X) << " w " << dtypeName(Wt) << " x_zp " << XZp
       << (PerChannelWZp ? " per-channel w_zp" : "");
    return OS.str();
  }
};

/// Weights of dtype T whose w - zp fits s8 (zp per tensor or per channel of
/// axis 0 / of the last axis for products): returns {w, zp}.
std::pair<Tensor, Tensor> fittingWeights(Shape S, DType T, bool PerChannel,
                                         int64_t Axis, std::mt19937 &Gen) {
  int64_t Ch = PerChannel ? S[Axis] : 1;
  Tensor Zp = T == DType::U8 ? ints(PerChannel ? Shape{Ch} : Shape{}, T, 100,
                                    155, Gen)
                             : ints(PerChannel ? Shape{Ch} : Shape{}, T, -30,
                                    30, Gen);
  Tensor W = Tensor::empty(S, T);
  std::uniform_int_distribution<int> D(-128, 127);
  int64_t Inner = 1;
  for (size_t I = Axis + 1; I < S.rank(); ++I)
    Inner *= S[I];
  for (int64_t I = 0; I < W.numel(); ++I) {
    int64_t Z = Zp.getFlatInt(PerChannel ? (I / Inner) % Ch : 0);
    auto [Lo, Hi] = rangeOf(T);
    W.setFlat(I, std::clamp<int64_t>(D(Gen) + Z, Lo, Hi));
  }
  return {W, Zp};
}

/// The activation x of dtype T as an input, and its zero point: absent
/// (Zp 0 and Absent), a constant, or (Zp -1) a run-time input fed Feed.
struct XIn {
  ir::Value *X, *Zp;
};
XIn addActivation(ir::Graph &G, DType T, const Shape &S, int Zp, bool Absent,
                  std::vector<Tensor> &Feeds, std::mt19937 &Gen) {
  auto [Lo, Hi] = rangeOf(T);
  XIn R;
  R.X = G.addInput("x", ir::TensorType(T, S));
  Feeds.push_back(ints(S, T, Lo, Hi, Gen));
  if (Zp == -1) {
    R.Zp = G.addInput("x_zp", ir::TensorType(T, Shape{}));
    Feeds.push_back(ints(Shape{}, T, Lo, Hi, Gen));
  } else {
    R.Zp = Absent ? nullptr : G.addInitializer("x_zp", ints(Shape{}, T, Zp, Zp, Gen));
  }
  return R;
}

ir::AttrMap convAttrs(const IntConv &CC) {
  ir::AttrMap A;
  A.set("group", CC.Group);
  A.set("strides", Ints{CC.Stride, CC.Stride});
  A.set("pads", Ints{CC.Pad, CC.Pad, CC.Pad, CC.Pad});
  A.set("dilations", Ints{CC.Dil, CC.Dil});
  return A;
}

TEST(CpuDynamicQuant, ConvIntegerRandomShapesEqualTheReference) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(21);
  auto Pick = [&](std::vector<int64_t> V) {
    return V[std::uniform_int_distribution<size_t>(0, V.size() - 1)(Gen)];
  };
  for (int Trial = 0; Trial < 32; ++Trial) {
    IntConv CC;
    CC.N = Pick({1, 2, 3});
    int64_t Kind = Trial % 4; // Dense, grouped, depthwise, pointwise.
    CC.Group = Kind == 1 ? Pick({2, 4}) : 1;
    CC.C = CC.Group * Pick({3, 8, 16});
    CC.M = CC.Group * Pick({4, 8, 17});
    if (Kind == 2) {
      CC.C = Pick({8, 16});
      CC.Group = CC.C;
      CC.M = CC.C;
    }
    CC.K = Kind == 3 ? 1 : Pick({1, 3, 5});
    CC.H = Pick({5, 9, 14});
    CC.W = Pick({6, 9, 13});
    CC.Stride = Pick({1, 2});
    CC.Pad = CC.K == 1 ? Pick({0, 0, 1}) : Pick({0, 1, 2});
    CC.Dil = CC.K == 3 && Trial % 5 == 0 ? 2 : 1;
    CC.X = Trial % 3 == 0 ? DType::I8 : DType::U8;
    CC.Wt = Trial % 2 == 0 ? DType::I8 : DType::U8;
    CC.XZp = Trial % 4 == 0 ? -1
             : CC.X == DType::U8 ? static_cast<int>(Pick({0, 255, 131}))
                                 : static_cast<int>(Pick({0, -128, 37}));
    CC.PerChannelWZp = Trial % 3 == 1;
    SCOPED_TRACE(CC.describe());
    auto G = std::make_unique<ir::Graph>();
    G->setName("convint");
    std::vector<Tensor> Feeds;
    XIn X = addActivation(*G, CC.X, Shape{CC.N, CC.C, CC.H, CC.W}, CC.XZp,
                          Trial % 8 == 2, Feeds, Gen);
    auto [W, WZp] = fittingWeights(Shape{CC.M, CC.C / CC.Group, CC.K, CC.K},
                                   CC.Wt, CC.PerChannelWZp, 0, Gen);
    ir::Value *Y = add(*G, ir::OpKind::ConvInteger,
                       {X.X, G->addInitializer("w", W),
                        X.Zp ? X.Zp : nullptr,
                        Trial % 8 == 5 && CC.Wt == DType::I8
                            ? nullptr
                            : G->addInitializer("w_zp", WZp)},
                       "y", convAttrs(CC));
    G->addOutput(Y);
    ir::inferTypes(*G);
    backends::CpuExecutableStats St = expectExact(*G, Feeds);
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  }
}

/// x (f32 input) -> DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul by
/// Mul(x_scale, w_scale) [-> Add bias [1, M, 1, 1]] [-> Relu], as
/// quantize_dynamic writes a Conv.
std::unique_ptr<ir::Graph> dynamicConvGraph(const IntConv &CC, bool Bias,
                                            bool Relu, std::mt19937 &Gen) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("dynconv");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, Shape{CC.N, CC.C, CC.H, CC.W}));
  ir::Node *Q = addDynamicQuantize(*G, X, "x");
  auto [W, WZp] = fittingWeights(Shape{CC.M, CC.C / CC.Group, CC.K, CC.K},
                                 CC.Wt, CC.PerChannelWZp, 0, Gen);
  ir::Value *Acc =
      add(*G, ir::OpKind::ConvInteger,
          {Q->output(0), G->addInitializer("w", W), Q->output(2),
           G->addInitializer("w_zp", WZp)},
          "acc", convAttrs(CC));
  ir::AttrMap To;
  To.set("to", ir::Attribute(int64_t(1)));
  ir::Value *F = add(*G, ir::OpKind::Cast, {Acc}, "accf", To);
  ir::Value *S = add(*G, ir::OpKind::Mul,
                     {Q->output(1), G->addInitializer(
                                        "w_scale", Tensor::scalar(0.0123f))},
                     "scale");
  ir::Value *Y = add(*G, ir::OpKind::Mul, {F, S}, "scaled");
  if (Bias)
    Y = add(*G, ir::OpKind::Add,
            {Y, G->addInitializer("b", rnd({1, CC.M, 1, 1}, Gen(), -2, 2))},
            "biased");
  if (Relu)
    Y = add(*G, ir::OpKind::Relu, {Y}, "y");
  G->addOutput(Y);
  ir::inferTypes(*G);
  return G;
}

TEST(CpuDynamicQuant, FusedConvPatternEqualsTheReference) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(31);
  int Trial = 0;
  for (int64_t Group : {1, 2, 16})
    for (DType Wt : {DType::I8, DType::U8})
      for (bool Bias : {true, false}) {
        IntConv CC;
        CC.N = Trial % 2 ? 2 : 1;
        CC.C = 16;
        CC.M = 16;
        CC.Group = Group;
        CC.H = 11;
        CC.W = 13;
        CC.Stride = Trial % 3 == 2 ? 2 : 1;
        CC.Pad = Trial % 4 == 3 ? 0 : 1;
        CC.Dil = Trial % 5 == 4 ? 2 : 1;
        CC.Wt = Wt;
        CC.PerChannelWZp = Trial % 2 == 1;
        ++Trial;
        SCOPED_TRACE(CC.describe() + (Bias ? " bias" : ""));
        auto G = dynamicConvGraph(CC, Bias, /*Relu=*/Trial % 2 == 0, Gen);
        Tensor X = rnd({CC.N, CC.C, CC.H, CC.W}, Gen(), -1.5, 3);
        backends::CpuExecutableStats St = expectExact(*G, {X});
        EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
        // One convolution primitive with the Cast, both Muls, the Add and
        // the Relu in it.
        EXPECT_EQ(St.FusedNodes, 3 + (Bias ? 1 : 0) + (Trial % 2 == 0 ? 1 : 0));
      }
}

// --- MatMulInteger -------------------------------------------------------------

TEST(CpuDynamicQuant, MatMulIntegerEqualsTheReference) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(41);
  int Trial = 0;
  for (Shape AS : {Shape{5, 24}, Shape{2, 7, 33}, Shape{1, 64}})
    for (DType AT : {DType::U8, DType::I8})
      for (DType BT : {DType::I8, DType::U8}) {
        int64_t K = AS[AS.rank() - 1], NOut = Trial % 2 ? 19 : 32;
        int XZp = Trial % 3 == 0 ? -1 : (AT == DType::U8 ? 255 : -128);
        if (Trial % 5 == 4)
          XZp = 0;
        SCOPED_TRACE(AS.toString() + " a " + std::string(dtypeName(AT)) + " b " +
                     std::string(dtypeName(BT)) + " a_zp " + std::to_string(XZp));
        auto G = std::make_unique<ir::Graph>();
        std::vector<Tensor> Feeds;
        XIn A = addActivation(*G, AT, AS, XZp, false, Feeds, Gen);
        auto [B, BZp] =
            fittingWeights(Shape{K, NOut}, BT, Trial % 2 == 1, 1, Gen);
        ir::Value *Y = add(*G, ir::OpKind::MatMulInteger,
                           {A.X, G->addInitializer("b", B), A.Zp,
                            G->addInitializer("b_zp", BZp)},
                           "y");
        G->addOutput(Y);
        ir::inferTypes(*G);
        backends::CpuExecutableStats St = expectExact(*G, Feeds);
        EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
        ++Trial;
      }
}

TEST(CpuDynamicQuant, FusedLinearPatternEqualsTheReference) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(51);
  // Per-column (nngraph's quantize pass) and per-tensor scales, with a
  // bias, batched activations.
  for (bool PerColumn : {true, false})
    for (Shape AS : {Shape{4, 48}, Shape{2, 5, 48}}) {
      SCOPED_TRACE(AS.toString() + (PerColumn ? " per column" : ""));
      int64_t K = 48, NOut = 24;
      auto G = std::make_unique<ir::Graph>();
      ir::Value *X = G->addInput("x", ir::TensorType(DType::F32, AS));
      ir::Node *Q = addDynamicQuantize(*G, X, "x");
      auto [B, BZp] = fittingWeights(Shape{K, NOut}, DType::I8, false, 1, Gen);
      ir::Value *Acc = add(*G, ir::OpKind::MatMulInteger,
                           {Q->output(0), G->addInitializer("b", B),
                            Q->output(2), G->addInitializer("b_zp", BZp)},
                           "acc");
      ir::AttrMap To;
      To.set("to", ir::Attribute(int64_t(1)));
      ir::Value *F = add(*G, ir::OpKind::Cast, {Acc}, "accf", To);
      Tensor BS = PerColumn ? rnd({NOut}, Gen(), 0.001, 0.02)
                            : Tensor::scalar(0.007f);
      ir::Value *S =
          add(*G, ir::OpKind::Mul,
              {Q->output(1), G->addInitializer("b_scale", BS)}, "scale");
      ir::Value *Y = add(*G, ir::OpKind::Mul, {F, S}, "scaled");
      Y = add(*G, ir::OpKind::Add,
              {Y, G->addInitializer("bias", rnd({NOut}, Gen(), -1, 1))}, "y");
      G->addOutput(Y);
      ir::inferTypes(*G);
      Tensor XT = rnd(AS, Gen(), -2, 1);
      backends::CpuExecutableStats St = expectExact(*G, {XT});
      EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
      EXPECT_EQ(St.FusedNodes, 4); // Cast, both Muls, Add.
    }
}

// --- Fallbacks, large sums, weights changed ------------------------------------

TEST(CpuDynamicQuant, WhatDoesNotFitFallsBackExactly) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(61);
  IntConv CC;
  CC.C = 64;
  CC.M = 8;
  auto Build = [&](const Tensor &W, const Tensor &WZp) {
    auto G = std::make_unique<ir::Graph>();
    std::vector<Tensor> Feeds;
    XIn X = addActivation(*G, DType::U8, Shape{1, CC.C, 6, 6}, -1, false,
                          Feeds, Gen);
    ir::Value *Y = add(*G, ir::OpKind::ConvInteger,
                       {X.X, G->addInitializer("w", W), X.Zp,
                        G->addInitializer("w_zp", WZp)},
                       "y", convAttrs(CC));
    G->addOutput(Y);
    ir::inferTypes(*G);
    return std::pair{std::move(G), Feeds};
  };
  // u8 weights spanning 0..255 with a zero point of 20: w - zp does not
  // fit s8.
  Shape WS{CC.M, CC.C, 3, 3};
  Tensor W = ints(WS, DType::U8, 0, 255, Gen);
  {
    auto [G, Feeds] = Build(W, ints(Shape{}, DType::U8, 20, 20, Gen));
    backends::CpuExecutableStats St = expectExact(*G, Feeds);
    EXPECT_EQ(St.Fallbacks.size(), 1u);
  }
  // Extreme s8 weights over 576 inputs: |result| passes 2^24 (and is no
  // float there), so the i32 form falls back; fused into an f32 result, the
  // Cast's rounding, it is exact.
  Tensor Big = ints(WS, DType::I8, -128, -120, Gen);
  {
    auto [G, Feeds] = Build(Big, ints(Shape{}, DType::I8, 0, 0, Gen));
    Feeds[0] = ints(Shape{1, CC.C, 6, 6}, DType::U8, 240, 255, Gen);
    Feeds[1] = ints(Shape{}, DType::U8, 0, 0, Gen);
    backends::CpuExecutableStats St = expectExact(*G, Feeds);
    EXPECT_EQ(St.Fallbacks.size(), 1u);
  }
  {
    CC.Wt = DType::I8;
    auto G = dynamicConvGraph(CC, true, false, Gen);
    const_cast<Tensor &>(G->lookup("w")->data()).copyFrom(Big);
    const_cast<Tensor &>(G->lookup("w_zp")->data())
        .copyFrom(ints(Shape{}, DType::I8, 0, 0, Gen));
    // x in [0.94, 1]: quantized to 240 ... 255, sums reach -18M (past
    // 2^24, where the Cast rounds).
    Tensor X = rnd({1, CC.C, CC.H, CC.W}, 3, 0.94, 1);
    backends::CpuExecutableStats St = expectExact(*G, {X});
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  }
}

TEST(CpuDynamicQuant, FarWeightsRunAsTwoExactParts) {
  // u8 weights spanning 0..255 around a zero point (as quantize_dynamic
  // writes a convolution's): w - zp does not fit s8, so the convolution runs
  // as two primitives over two s8 parts of it. With 16 input channels every
  // float accumulator stays below 2^24; with 128 a channel's sum may pass
  // it, and the input channels split into groups whose sums do not, added
  // exactly by the backend's loop. Both equal the reference.
  REQUIRE_ONEDNN();
  std::mt19937 Gen(71);
  int Trial = 0;
  for (int64_t C : {16, 128})
    for (bool PerChannel : {false, true}) {
      IntConv CC;
      CC.C = C;
      CC.M = 24;
      CC.H = 10;
      CC.W = 11;
      CC.Wt = DType::U8;
      CC.Stride = Trial % 2 ? 2 : 1;
      ++Trial;
      bool Relu = Trial % 2 == 0;
      SCOPED_TRACE(CC.describe() + (PerChannel ? " per-channel" : "") +
                   (Relu ? " relu" : ""));
      auto G = dynamicConvGraph(CC, true, Relu, Gen);
      Shape WS{CC.M, CC.C, 3, 3};
      Tensor W = ints(WS, DType::U8, 0, 255, Gen);
      Tensor Zp = ints(PerChannel ? Shape{CC.M} : Shape{}, DType::U8, 60, 190,
                       Gen);
      G->lookup("w")->setData(W);
      G->lookup("w_zp")->setData(Zp);
      ir::inferTypes(*G);
      Tensor X = rnd({CC.N, CC.C, CC.H, CC.W}, Gen(), -1.5, 3);
      backends::CpuExecutableStats St = expectExact(*G, {X});
      EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
      // The high part's convolution and the low part's with the sum.
      EXPECT_GE(St.DnnlSteps, 2);
      int64_t Taps = CC.C * 9;
      double Bound = 0;
      for (int64_t M = 0; M < CC.M; ++M) {
        double Sum = 0;
        for (int64_t I = 0; I < Taps; ++I)
          Sum += std::abs(W.getFlatInt(M * Taps + I) -
                          Zp.getFlatInt(PerChannel ? M : 0));
        Bound = std::max(Bound, 255 * Sum);
      }
      // Each form was taken: one sum below 2^24, the other above.
      if (C == 16)
        EXPECT_LE(Bound, 16777216.0);
      else
        EXPECT_GT(Bound, 16777216.0);
    }
}

TEST(CpuDynamicQuant, WeightsChangedInPlaceAreUsed) {
  REQUIRE_ONEDNN();
  std::mt19937 Gen(71);
  IntConv CC;
  CC.Wt = DType::U8;
  auto G = dynamicConvGraph(CC, true, true, Gen);
  Tensor X = rnd({CC.N, CC.C, CC.H, CC.W}, 9, -1, 1);
  auto Cpu = backends::getBackend("cpu").compile(*G);
  EXPECT_TRUE(sameBytes(Cpu->run({X})[0], backends::runReference(*G, {X})[0]));
  // Runs read the weights without marking them written (a written version
  // would make every run convert and pack them again).
  const Tensor &Wc = G->lookup("w")->data();
  uint64_t Version = Wc.storage()->version();
  Cpu->run({X});
  Cpu->run({X});
  EXPECT_EQ(Wc.storage()->version(), Version);
  // New weights that still fit: the s8 copy and its pack follow.
  Tensor &W = const_cast<Tensor &>(G->lookup("w")->data());
  int64_t Zp = G->lookup("w_zp")->data().getFlatInt(0);
  int Z = static_cast<int>(Zp);
  W.copyFrom(ints(W.shape(), DType::U8, std::max(0, Z - 128),
                  std::min(255, Z + 127), Gen));
  W.storage()->bumpVersion();
  EXPECT_TRUE(sameBytes(Cpu->run({X})[0], backends::runReference(*G, {X})[0]));
}

#endif

} // namespace
} // namespace nng
