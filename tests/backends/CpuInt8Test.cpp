//===- CpuInt8Test.cpp - int8 on the cpu backend against the reference ----===//
//
// QLinearConv and QLinearMatMul compiled as oneDNN int8 primitives, and
// QuantizeLinear / DequantizeLinear as the backend's own loops, on random
// shapes against the reference backend: grouped and depthwise
// convolutions, strides, pads, dilations, per-channel and per-tensor
// weight scales, u8 and s8 activations and outputs, with and without bias,
// nonzero zero points; per-tensor and per-axis (de)quantization with NaN,
// infinities and ties. Results must be the reference's exactly: the int8
// primitives round with an eltwise_round post-op (half to even) before
// oneDNN adds the destination zero point, which is what the reference's
// round(v) + zero_point computes (without that post-op oneDNN's
// round(v + zero_point) differs by one on ties when the zero point is odd),
// and the (de)quantization loops do the reference's float operations. The
// inputs keep the int32 accumulators below 2^24, where their conversion
// to float is exact in both. Also: layouts kept between consecutive int8
// convolutions, in-place weight updates, and what falls back.
//
//===----------------------------------------------------------------------===//

#include "CpuInt8TestUtils.h"

#include <cstring>
#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

using namespace int8test;

// --- QuantizeLinear / DequantizeLinear
// -----------------------------------------

/// Floats around the quantization grid of Scale: exact ties (k + 0.5) *
/// Scale, values just off them, large magnitudes, NaN and infinities.
Tensor gridFloats(Shape S, float Scale, std::mt19937 &Gen) {
  std::uniform_int_distribution<int> K(-300, 300), Kind(0, 9);
  Tensor R = Tensor::empty(S, DType::F32);
  float *P = R.data<float>();
  for (int64_t I = 0; I < R.numel(); ++I) {
    float Base = (static_cast<float>(K(Gen)) + 0.5f) * Scale;
    switch (Kind(Gen)) {
    case 0:
      P[I] = std::numeric_limits<float>::quiet_NaN();
      break;
    case 1:
      P[I] = (I & 1 ? -1 : 1) * std::numeric_limits<float>::infinity();
      break;
    case 2:
      P[I] = std::nextafter(Base, 1e30f);
      break;
    case 3:
      P[I] = Base * 1e6f;
      break;
    default:
      P[I] = Base;
      break;
    }
  }
  return R;
}

/// x -> QuantizeLinear(scale, zp) -> q, q -> DequantizeLinear(scale, zp)
/// -> y, with Scale and ZeroPoint constants (or, with RunTime, inputs).
std::unique_ptr<ir::Graph> quantGraph(const Shape &S, const Tensor &Scale,
                                      const Tensor &Zp, int64_t Axis,
                                      bool RunTime = false) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("quant");
  ir::Value *X = G->addInput("x", ir::TensorType(DType::F32, S));
  ir::Value *Sc, *Z = nullptr;
  if (RunTime) {
    Sc = G->addInput("scale", ir::TensorType(DType::F32, Scale.shape()));
    if (Zp.defined())
      Z = G->addInput("zp", ir::TensorType(Zp.dtype(), Zp.shape()));
  } else {
    Sc = G->addInitializer("scale", Scale);
    if (Zp.defined())
      Z = G->addInitializer("zp", Zp);
  }
  ir::AttrMap A;
  A.set("axis", Axis);
  ir::Value *Q = add(*G, ir::OpKind::QuantizeLinear, {X, Sc, Z}, "q", A);
  ir::Value *Y = add(*G, ir::OpKind::DequantizeLinear, {Q, Sc, Z}, "y", A);
  G->addOutput(Q);
  G->addOutput(Y);
  ir::inferTypes(*G);
  return G;
}

TEST(CpuInt8, QuantizeDequantizeEqualTheReference) {
  std::mt19937 Gen(7);
  struct Shape_ {
    Shape S;
    int64_t Axis;
  };
  // Per tensor, per axis with long and short inner runs, negative axis.
  int Cases = 0;
  std::vector<Shape_> Shapes = {
      {{1000}, 0},  {{2, 3, 50, 50}, 1}, {{2, 40, 3, 3}, 1},
      {{5, 7}, -1}, {{4, 33, 70}, 0},    {{2, 6, 5, 4}, -3},
      {{}, 0}};
  for (const Shape_ &SA : Shapes)
    for (DType T : {DType::U8, DType::I8})
      for (bool PerAxis : {false, true})
        for (bool WithZp : {true, false}) {
          if ((PerAxis && SA.S.rank() == 0) || (!WithZp && T != DType::U8))
            continue;
          int64_t R = static_cast<int64_t>(SA.S.rank());
          int64_t Ch = PerAxis ? SA.S[SA.Axis < 0 ? SA.Axis + R : SA.Axis] : 1;
          SCOPED_TRACE(SA.S.toString() + " " + std::string(dtypeName(T)) +
                       (PerAxis ? " per axis" : " per tensor") +
                       (WithZp ? "" : " no zp"));
          Tensor Scale =
              PerAxis ? rnd({Ch}, Gen(), 0.01, 0.5) : Tensor::scalar(0.037f);
          auto [Lo, Hi] = rangeOf(T);
          Tensor Zp; // Absent: u8 with zero point 0.
          if (WithZp)
            Zp = PerAxis ? ints({Ch}, T, Lo, Hi, Gen)
                         : ints(Shape{}, T, Lo, Hi, Gen);
          std::unique_ptr<ir::Graph> G = quantGraph(SA.S, Scale, Zp, SA.Axis);
          std::vector<Tensor> In{gridFloats(SA.S, 0.037f, Gen)};
          backends::CpuExecutableStats St = expectExact(*G, In);
          EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
          EXPECT_EQ(St.OwnKernels, 2);
          ++Cases;
        }
  EXPECT_EQ(Cases, 39);
}

TEST(CpuInt8, RunTimeParametersUseTheNodeKernelLoops) {
  std::mt19937 Gen(8);
  Shape S{3, 4, 20};
  Tensor Scale = rnd({4}, 1, 0.05, 0.2),
         Zp = ints({4}, DType::I8, -20, 20, Gen);
  std::unique_ptr<ir::Graph> G = quantGraph(S, Scale, Zp, 1, /*RunTime=*/true);
  std::vector<Tensor> In{gridFloats(S, 0.1f, Gen), Scale, Zp};
  backends::CpuExecutableStats St = expectExact(*G, In);
  EXPECT_EQ(St.Fallbacks.size(), 2u); // Parameters known only at run time.
  // Node by node: both nodes on the own loops.
  auto Exe = backends::compileCpu(*G, backends::CpuMode::NodeByNode);
  backends::CpuCallCounts Before = backends::cpuCallCounts();
  std::vector<Tensor> Got = Exe->run(In);
  EXPECT_EQ(backends::cpuCallCounts().Fast - Before.Fast, 2);
  std::vector<Tensor> Want = backends::runReference(*G, In);
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(sameBytes(Got[I], Want[I]));
  // A zero scale: the reference kernel reports it.
  Tensor Bad = Scale.clone();
  Bad.data<float>()[2] = 0;
  EXPECT_THROW(Exe->run({In[0], Bad, Zp}), Error);
}

// --- QLinearConv -------------------------------------------------------------

TEST(CpuInt8, QLinearConvRandomShapesEqualTheReference) {
  std::mt19937 Gen(11);
  auto Pick = [&](std::vector<int64_t> V) {
    return V[std::uniform_int_distribution<size_t>(0, V.size() - 1)(Gen)];
  };
  for (int Trial = 0; Trial < 48; ++Trial) {
    ConvCase CC;
    CC.N = Pick({1, 2});
    int64_t Kind = Trial % 4; // Dense, grouped, depthwise, pointwise.
    CC.Group = Kind == 1 ? Pick({2, 4}) : 1;
    CC.C = CC.Group * Pick({3, 8, 16});
    CC.M = CC.Group * Pick({4, 8, 17});
    if (Kind == 2) {
      CC.C = Pick({8, 16, 24});
      CC.Group = CC.C;
      CC.M = CC.C * Pick({1, 2});
    }
    CC.K = Kind == 3 ? 1 : Pick({1, 3, 5});
    CC.H = Pick({5, 9, 14});
    CC.W = Pick({6, 9, 13});
    CC.Stride = Pick({1, 2});
    CC.Pad = CC.K == 1 ? Pick({0, 0, 1}) : Pick({0, 1, 2});
    CC.Dil = CC.K == 3 && Trial % 5 == 0 ? 2 : 1;
    if ((CC.K - 1) * CC.Dil + 1 > CC.H + 2 * CC.Pad)
      CC.Dil = 1;
    CC.X = Trial % 3 == 0 ? DType::I8 : DType::U8;
    CC.Y = Trial % 2 == 0 ? DType::I8 : DType::U8;
    CC.PerChannel = Trial % 5 != 1;
    CC.Bias = Trial % 3 != 2;
    SCOPED_TRACE(CC.describe());
    auto G = std::make_unique<ir::Graph>();
    G->setName("qconv");
    ir::Value *X =
        G->addInput("x", ir::TensorType(CC.X, Shape{CC.N, CC.C, CC.H, CC.W}));
    // Zero points of 0 now and then (no rounding post-op, no source zero
    // point); y_scale keeps most outputs inside the range.
    Tensor XZp =
        Trial % 7 == 3 ? Tensor::empty(Shape{}, CC.X) : zeroPoint(CC.X, Gen);
    Tensor YZp =
        Trial % 4 == 3 ? Tensor::empty(Shape{}, CC.Y) : zeroPoint(CC.Y, Gen);
    ir::Value *Y =
        addQConv(*G, X, CC, 0.05f, XZp, Gen, "y",
                 0.3f * std::sqrt(float(CC.C / CC.Group * CC.K * CC.K)), YZp);
    G->addOutput(Y);
    ir::inferTypes(*G);
    auto [Lo, Hi] = rangeOf(CC.X);
    std::vector<Tensor> In{ints({CC.N, CC.C, CC.H, CC.W}, CC.X, Lo, Hi, Gen)};
    backends::CpuExecutableStats St = expectExact(*G, In);
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  }
}

/// f32 x -> QuantizeLinear -> 3x3 conv -> 3x3 depthwise conv (stride 2) ->
/// 1x1 conv -> DequantizeLinear: an int8 chain between float edges.
std::unique_ptr<ir::Graph> int8Chain(std::mt19937 &Gen, int64_t H) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("int8_chain");
  ir::Value *X =
      G->addInput("x", ir::TensorType(DType::F32, Shape{1, 16, H, H}));
  Tensor Zp0 = u8({128}, {}), Zp1 = u8({3}, {}), Zp2 = u8({77}, {}),
         Zp3 = u8({130}, {});
  ir::Value *S0 = G->addInitializer("s0", Tensor::scalar(0.02f));
  ir::Value *Z0 = G->addInitializer("z0", Zp0);
  ir::Value *Q = add(*G, ir::OpKind::QuantizeLinear, {X, S0, Z0}, "q");
  ConvCase A;
  A.C = 16;
  A.M = 32;
  ir::Value *Y1 = addQConv(*G, Q, A, 0.02f, Zp0, Gen, "c1", 0.4f, Zp1);
  ConvCase Dw;
  Dw.C = Dw.M = Dw.Group = 32;
  Dw.Stride = 2;
  Dw.PerChannel = false;
  ir::Value *Y2 = addQConv(*G, Y1, Dw, 0.4f, Zp1, Gen, "c2", 0.8f, Zp2);
  ConvCase P;
  P.C = 32;
  P.M = 24;
  P.K = 1;
  P.Pad = 0;
  ir::Value *Y3 = addQConv(*G, Y2, P, 0.8f, Zp2, Gen, "c3", 0.5f, Zp3);
  ir::Value *S3 = G->addInitializer("s3", Tensor::scalar(0.5f));
  ir::Value *Z3 = G->addInitializer("z3", Zp3);
  G->addOutput(add(*G, ir::OpKind::DequantizeLinear, {Y3, S3, Z3}, "y"));
  ir::inferTypes(*G);
  return G;
}

TEST(CpuInt8, ConsecutiveConvolutionsKeepTheirLayout) {
  std::mt19937 Gen(12);
  for (int64_t H : {14, 56}) {
    SCOPED_TRACE("size " + std::to_string(H));
    std::unique_ptr<ir::Graph> G = int8Chain(Gen, H);
    std::vector<Tensor> In{rnd({1, 16, H, H}, 40, -2.5, 2.5)};
    backends::CpuExecutableStats St = expectExact(*G, In);
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
    // At most the quantized input into the convolutions' layout and the
    // result back to the plain one: none between the convolutions.
    EXPECT_LE(St.Reorders, 2);
    EXPECT_EQ(St.OwnKernels, 2); // Quantize and dequantize.
  }
}

/// Integer-valued floats in [Lo, Hi]: sums of their products are exact in
/// any order, so f32 convolutions agree with the reference bit for bit.
Tensor intFloats(Shape S, int Lo, int Hi, std::mt19937 &Gen) {
  return ints(std::move(S), DType::F32, Lo, Hi, Gen);
}

TEST(CpuInt8, FloatAndInt8ConvolutionsPassLayoutsOn) {
  // f32 conv (blocked result) -> QuantizeLinear in that layout -> int8
  // conv (nhwc) -> DequantizeLinear in nhwc -> f32 1x1 conv. Scales are
  // powers of two and the f32 values integers or halves: every step is
  // exact, ties included, so the result must be the reference's bytes.
  std::mt19937 Gen(18);
  auto G = std::make_unique<ir::Graph>();
  G->setName("mixed");
  ir::Value *X =
      G->addInput("x", ir::TensorType(DType::F32, Shape{1, 16, 14, 14}));
  ir::AttrMap Pad;
  Pad.set("pads", Ints{1, 1, 1, 1});
  ir::Value *Y0 =
      add(*G, ir::OpKind::Conv,
          {X, G->addInitializer("w0", intFloats({32, 16, 3, 3}, -2, 2, Gen))},
          "y0", Pad);
  Tensor Zq = u8({128}, {}), Zy = u8({90}, {});
  ir::Value *Q = add(*G, ir::OpKind::QuantizeLinear,
                     {Y0, G->addInitializer("qs", Tensor::scalar(4.0f)),
                      G->addInitializer("qz", Zq)},
                     "q");
  ConvCase CC;
  CC.C = CC.M = 32;
  ir::Value *Y1 = addQConv(*G, Q, CC, 4.0f, Zq, Gen, "y1", 64.0f, Zy);
  ir::Value *D = add(*G, ir::OpKind::DequantizeLinear,
                     {Y1, G->addInitializer("ds", Tensor::scalar(0.5f)),
                      G->addInitializer("dz", Zy)},
                     "d");
  G->addOutput(
      add(*G, ir::OpKind::Conv,
          {D, G->addInitializer("w2", intFloats({8, 32, 1, 1}, -3, 3, Gen))},
          "y2"));
  ir::inferTypes(*G);
  backends::CpuExecutableStats St =
      expectExact(*G, {intFloats({1, 16, 14, 14}, -3, 3, Gen)});
  EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  EXPECT_EQ(St.OwnKernels, 2);
  // The input into the first convolution's layout and the result back to
  // plain; between them at most the quantized values into the int8
  // convolution's layout (none where the f32 convolution chose nhwc).
  EXPECT_LE(St.Reorders, 3);
}

TEST(CpuInt8, ProfileNamesTheInt8Implementation) {
  std::mt19937 Gen(13);
  std::unique_ptr<ir::Graph> G = int8Chain(Gen, 28);
  auto Cpu = backends::getBackend("cpu").compile(*G);
  ASSERT_TRUE(backends::setCpuProfiling(*Cpu, true));
  Cpu->run({rnd({1, 16, 28, 28}, 41)});
  int Named = 0;
  backends::CpuExecutableStats St = *backends::cpuExecutableStats(*Cpu);
  for (const auto &T : St.StepTimes)
    if (T.Desc.find("QLinearConv") != std::string::npos) {
      EXPECT_NE(T.Desc.find("[oneDNN "), std::string::npos) << T.Desc;
      std::cout << "[ impl     ] " << T.Desc << "\n";
      ++Named;
    }
  EXPECT_EQ(Named, 3);
}

TEST(CpuInt8, WeightsUpdatedInPlaceAreNotStale) {
  std::mt19937 Gen(14);
  std::unique_ptr<ir::Graph> G = int8Chain(Gen, 14);
  std::vector<Tensor> In{rnd({1, 16, 14, 14}, 42, -2.5, 2.5)};
  auto Cpu = backends::getBackend("cpu").compile(*G);
  Tensor Before = Cpu->run(In).at(0);
  Tensor W = G->lookup("c1.w")->data();
  int8_t *P = W.data<int8_t>();
  for (int64_t I = 0; I < W.numel(); ++I)
    P[I] = static_cast<int8_t>(-std::max<int>(P[I], -127));
  Tensor Want = backends::runReference(*G, In).at(0);
  Tensor After = Cpu->run(In).at(0);
  EXPECT_FALSE(sameBytes(Before, Want)) << "the update should matter";
  EXPECT_TRUE(sameBytes(After, Want));
  EXPECT_GE(backends::cpuExecutableStats(*Cpu)->WeightRefreshes, 1);
}

// --- QLinearMatMul -----------------------------------------------------------

TEST(CpuInt8, QLinearMatMulEqualsTheReference) {
  std::mt19937 Gen(15);
  struct MM {
    Shape A, B;
  };
  std::vector<MM> Cases = {{{7, 33}, {33, 19}},
                           {{64, 256}, {256, 96}},
                           {{2, 5, 40}, {40, 8}},
                           {{3, 6, 17}, {3, 17, 9}},
                           {{2, 3, 4, 12}, {1, 12, 5}},
                           {{6, 17}, {3, 17, 9}},
                           {{1, 1}, {1, 1}}};
  int Trial = 0;
  for (const MM &C : Cases)
    for (DType AT : {DType::U8, DType::I8})
      for (bool PerColumn : {true, false}) {
        ++Trial;
        DType YT = Trial % 2 ? DType::U8 : DType::I8;
        int64_t K = C.A[C.A.rank() - 1], NOut = C.B[C.B.rank() - 1];
        SCOPED_TRACE(C.A.toString() + " x " + C.B.toString() + " " +
                     std::string(dtypeName(AT)) + "->" +
                     std::string(dtypeName(YT)) +
                     (PerColumn ? " per column" : " per tensor"));
        auto G = std::make_unique<ir::Graph>();
        G->setName("qmatmul");
        ir::Value *A = G->addInput("a", ir::TensorType(AT, C.A));
        std::vector<ir::Value *> In = {
            A,
            G->addInitializer("as", Tensor::scalar(0.04f)),
            G->addInitializer("az", zeroPoint(AT, Gen)),
            G->addInitializer("b", ints(C.B, DType::I8, -128, 127, Gen)),
            G->addInitializer("bs", PerColumn ? rnd({NOut}, Gen(), 0.002, 0.02)
                                              : Tensor::scalar(0.01f)),
            G->addInitializer("bz", i8({0}, {})),
            G->addInitializer("ys",
                              Tensor::scalar(0.25f * std::sqrt(float(K)))),
            G->addInitializer("yz", zeroPoint(YT, Gen))};
        G->addOutput(add(*G, ir::OpKind::QLinearMatMul, In, "y"));
        ir::inferTypes(*G);
        auto [Lo, Hi] = rangeOf(AT);
        backends::CpuExecutableStats St =
            expectExact(*G, {ints(C.A, AT, Lo, Hi, Gen)});
        EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
      }
}

// --- What falls back ---------------------------------------------------------

TEST(CpuInt8, UnservedNodesFallBackToTheReference) {
  std::mt19937 Gen(16);
  ConvCase CC;
  auto Build = [&](auto Edit) {
    auto G = std::make_unique<ir::Graph>();
    G->setName("declined");
    ir::Value *X =
        G->addInput("x", ir::TensorType(DType::U8, Shape{1, 8, 9, 9}));
    ir::Value *Y =
        addQConv(*G, X, CC, 0.05f, u8({7}, {}), Gen, "y", 2.0f, u8({100}, {}));
    Edit(*G, *Y->producer());
    G->addOutput(Y);
    ir::inferTypes(*G);
    return G;
  };
  std::vector<Tensor> In{ints({1, 8, 9, 9}, DType::U8, 0, 255, Gen)};
  // A nonzero weight zero point.
  auto G1 = Build([&](ir::Graph &G, ir::Node &N) {
    N.setInput(5, G.addInitializer("wz1", i8(std::vector<int8_t>(16, 3))));
  });
  EXPECT_EQ(expectExact(*G1, In).Fallbacks.size(), 1u);
  // Weights known only at run time.
  auto G2 = Build([&](ir::Graph &G, ir::Node &N) {
    N.setInput(3,
               G.addInput("w", ir::TensorType(DType::I8, Shape{16, 8, 3, 3})));
  });
  std::vector<Tensor> In2{In[0],
                          ints({16, 8, 3, 3}, DType::I8, -128, 127, Gen)};
  EXPECT_EQ(expectExact(*G2, In2).Fallbacks.size(), 1u);
  // u8 weights.
  auto G3 = Build([&](ir::Graph &G, ir::Node &N) {
    N.setInput(3, G.addInitializer(
                      "wu8", ints({16, 8, 3, 3}, DType::U8, 0, 255, Gen)));
    N.setInput(5, G.addInitializer("wzu8", u8({0}, {})));
  });
  EXPECT_EQ(expectExact(*G3, In).Fallbacks.size(), 1u);
}

TEST(CpuInt8, OneDimensionalConvolutionFallsBack) {
  std::mt19937 Gen(17);
  auto G = std::make_unique<ir::Graph>();
  G->setName("conv1d");
  ir::Value *X = G->addInput("x", ir::TensorType(DType::U8, Shape{2, 4, 20}));
  std::vector<ir::Value *> In = {
      X,
      G->addInitializer("xs", Tensor::scalar(0.05f)),
      G->addInitializer("xz", u8({9}, {})),
      G->addInitializer("w", ints({6, 4, 3}, DType::I8, -128, 127, Gen)),
      G->addInitializer("ws", Tensor::scalar(0.01f)),
      G->addInitializer("wz", i8({0}, {})),
      G->addInitializer("ys", Tensor::scalar(0.5f)),
      G->addInitializer("yz", u8({120}, {}))};
  G->addOutput(add(*G, ir::OpKind::QLinearConv, In, "y"));
  ir::inferTypes(*G);
  backends::CpuExecutableStats St =
      expectExact(*G, {ints({2, 4, 20}, DType::U8, 0, 255, Gen)});
  EXPECT_EQ(St.Fallbacks.size(), 1u);
}

TEST(CpuInt8, MaxPoolOfInt8DataIsOneDnnAndExact) {
  std::mt19937 Gen(31);
  for (nng::DType T : {nng::DType::U8, nng::DType::I8}) {
    for (bool Padded : {false, true}) {
      SCOPED_TRACE(std::string(nng::dtypeName(T)) + (Padded ? " padded" : ""));
      auto G = std::make_unique<ir::Graph>();
      G->setName("int8_pool");
      ir::Value *X = G->addInput(
          "x", ir::TensorType(nng::DType::F32, nng::Shape{2, 16, 9, 9}));
      ir::Value *S = G->addInitializer("s", Tensor::scalar(0.05f));
      ir::Value *Z = G->addInitializer("z", T == nng::DType::U8
                                                ? u8({120}, {})
                                                : Tensor::scalar<int8_t>(-3));
      ir::Value *Q = add(*G, ir::OpKind::QuantizeLinear, {X, S, Z}, "q");
      ConvCase A;
      A.C = 16;
      A.M = 16;
      Tensor Zx =
          T == nng::DType::U8 ? u8({120}, {}) : Tensor::scalar<int8_t>(-3);
      ir::Value *Y = addQConv(*G, Q, A, 0.05f, Zx, Gen, "c", 0.1f, Zx);
      ir::AttrMap PA;
      PA.set("kernel_shape", ir::Attribute(std::vector<int64_t>{3, 3}));
      PA.set("strides", ir::Attribute(std::vector<int64_t>{2, 2}));
      if (Padded)
        PA.set("pads", ir::Attribute(std::vector<int64_t>{1, 1, 1, 1}));
      ir::Value *P =
          G->addNode(ir::OpKind::MaxPool, {Y}, {"p"}, std::move(PA))->output(0);
      ir::Value *S2 = G->addInitializer("s2", Tensor::scalar(0.1f));
      ir::Value *Z2 = G->addInitializer("z2", Zx);
      G->addOutput(add(*G, ir::OpKind::DequantizeLinear, {P, S2, Z2}, "y"));
      ir::inferTypes(*G);
      backends::CpuExecutableStats St =
          expectExact(*G, {rnd({2, 16, 9, 9}, 41, -3, 3)});
      EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
    }
  }
}

TEST(CpuInt8, MaxPoolOfAPlainInt8Input) {
  // A graph input has no layout description of its own (plain): the pool
  // reads it row-major (ONNX's test_maxpool_2d_uint8).
  std::mt19937 Gen(32);
  for (DType T : {DType::U8, DType::I8}) {
    SCOPED_TRACE(dtypeName(T));
    auto G = std::make_unique<ir::Graph>();
    G->setName("int8_pool_input");
    Shape S{1, 3, 11, 11};
    ir::Value *X = G->addInput("x", ir::TensorType(T, S));
    ir::AttrMap PA;
    PA.set("kernel_shape", ir::Attribute(std::vector<int64_t>{3, 3}));
    PA.set("pads", ir::Attribute(std::vector<int64_t>{1, 1, 1, 1}));
    G->addOutput(
        G->addNode(ir::OpKind::MaxPool, {X}, {"y"}, std::move(PA))->output(0));
    ir::inferTypes(*G);
    auto [Lo, Hi] = rangeOf(T);
    backends::CpuExecutableStats St =
        expectExact(*G, {ints(S, T, Lo, Hi, Gen)});
    EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  }
}

#else

TEST(CpuInt8, NeedsOneDnn) { REQUIRE_ONEDNN(); }

#endif

} // namespace
} // namespace nng
