//===- CpuInt8ResidualTest.cpp - QDQ residual joins fused into QLinearConv ===//
//
// The QDQ residual join of a quantized ResNet block (QLinearConv ->
// DequantizeLinear, DequantizeLinear of the residual, Add, Relu,
// QuantizeLinear) fused into the convolution's oneDNN int8 primitive
// (LowerQLinearResidual.cpp), against the reference backend: random shapes,
// u8 and s8, zero points 0 and nonzero, with and without Relu, both Add
// operand orders, the residual's DequantizeLinear before the convolution
// (deferred) or after it, the residual summed in place or copied first, and
// what declines. The fused sum is one fused multiply-add where the reference
// rounds the residual's product first: o_q may differ by one step where the
// exact result is a tie (k + 1/2) within float rounding. Every difference is
// checked to be one such step, and counted: with random (calibration-like)
// scales they are rare (1 element in 1.7 million here), decimal scales make
// exact ties common (up to 1.4 in 10^3), power-of-two residual scales make
// the sum exact (the chained blocks expect the reference's bytes).
//
//===----------------------------------------------------------------------===//

#include "CpuInt8TestUtils.h"

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

using namespace int8test;

/// Where the residual r_q comes from.
enum class Residual {
  Conv,      ///< A 1x1 QLinearConv read by the join alone: summed in place.
  Input,     ///< A graph input: copied.
  Kept,      ///< A QLinearConv also returned: copied (it must survive).
  Quantized, ///< QuantizeLinear of a float input (plain layout): copied.
};

const char *residualName(Residual R) {
  switch (R) {
  case Residual::Conv:
    return "conv";
  case Residual::Input:
    return "input";
  case Residual::Kept:
    return "kept";
  case Residual::Quantized:
    return "quantized";
  }
  return "?";
}

/// A random residual join.
struct JoinCase {
  int64_t N = 1, C = 8, H = 9, W = 9, M = 16, K = 3, Stride = 1;
  DType T = DType::U8; ///< Every int8 tensor's dtype.
  bool Relu = true;
  bool ZeroPoints = true; ///< Nonzero zero points (else all 0).
  bool Swap = false;      ///< Add(b, a) instead of Add(a, b).
  Residual R = Residual::Conv;
  bool DqRFirst = true; ///< The residual's DequantizeLinear comes first.
  bool Decimal = false; ///< Scales 0.03, 0.021, 0.04: many exact ties.
  /// Also return the Add's result (the join then declines), or y_q and r_q
  /// (for the tie analysis: run on the reference only).
  bool ExtraReader = false, ExposeYR = false;

  int64_t outH() const { return (H - 1) / Stride + 1; }
  int64_t outW() const { return (W - 1) / Stride + 1; }
  Shape outShape() const { return Shape{N, M, outH(), outW()}; }
  bool fuses() const { return !ExtraReader && !ExposeYR; }
  std::string describe() const {
    std::ostringstream OS;
    OS << "N" << N << " C" << C << " " << H << "x" << W << " M" << M << " k"
       << K << " s" << Stride << " " << dtypeName(T) << (Relu ? " relu" : "")
       << (ZeroPoints ? " zp" : " zp0") << (Swap ? " Add(b,a)" : " Add(a,b)")
       << " residual " << residualName(R)
       << (DqRFirst ? " dq-first" : " dq-after") << (Decimal ? " decimal" : "")
       << (ExtraReader ? " extra-reader" : "");
    return OS.str();
  }
};

/// The graph of J and its inputs. Scales of y, r and o, and zero points,
/// are what DequantizeLinear and QuantizeLinear use (the convolutions'
/// y_scale and y_zero_point are the same values, as the quantizer writes).
struct JoinGraph {
  std::unique_ptr<ir::Graph> G;
  std::vector<Tensor> In;
  float SY = 0, SR = 0, SO = 0;
  int32_t ZY = 0, ZR = 0, ZO = 0;
};

JoinGraph joinGraph(const JoinCase &J, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> U(0.6f, 1.6f);
  JoinGraph R;
  R.G = std::make_unique<ir::Graph>();
  ir::Graph &G = *R.G;
  G.setName("join");
  auto Zp = [&] {
    return J.ZeroPoints ? zeroPoint(J.T, Gen) : Tensor::empty(Shape{}, J.T);
  };
  auto Scalar = [&](const std::string &Name, float V) {
    return G.addInitializer(Name, Tensor::scalar(V));
  };
  // Scales: y keeps most convolution results inside its range (as
  // CpuInt8Test.cpp's), o most sums. Decimal: y, r and o at 0.03, 0.021
  // and 0.04, x's scale to fit.
  float Base = 0.3f * std::sqrt(float(J.C * J.K * J.K)) / 0.05f;
  R.SY = J.Decimal ? 0.03f : 0.03f * Base * U(Gen);
  R.SR = J.Decimal ? 0.021f : R.SY * U(Gen);
  R.SO = J.Decimal ? 0.04f : (R.SY + R.SR) * U(Gen);
  float SX = R.SY / Base;
  // x -> QuantizeLinear -> x_q.
  Shape XS{J.N, J.C, J.H, J.W};
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, XS));
  R.In.push_back(rnd(XS, Gen(), -150 * SX, 150 * SX));
  Tensor ZX = Zp();
  ir::Value *XQ = add(G, ir::OpKind::QuantizeLinear,
                      {X, Scalar("sx", SX), G.addInitializer("zx", ZX)}, "x_q");
  Tensor ZY = Zp(), ZR = Zp(), ZO = Zp();
  R.ZY = static_cast<int32_t>(ZY.getFlatInt(0));
  R.ZR = static_cast<int32_t>(ZR.getFlatInt(0));
  R.ZO = static_cast<int32_t>(ZO.getFlatInt(0));

  ConvCase Main;
  Main.N = J.N;
  Main.C = J.C;
  Main.H = J.H;
  Main.W = J.W;
  Main.M = J.M;
  Main.K = J.K;
  Main.Pad = J.K / 2;
  Main.Stride = J.Stride;
  Main.X = Main.Y = J.T;
  ConvCase Side = Main;
  Side.K = 1;
  Side.Pad = 0;

  // The residual, and (DqRFirst) its DequantizeLinear, before the
  // convolution.
  Shape YS = J.outShape();
  ir::Value *RQ = nullptr;
  switch (J.R) {
  case Residual::Conv:
  case Residual::Kept:
    RQ = addQConv(G, XQ, Side, SX, ZX, Gen, "r_q", R.SR, ZR);
    break;
  case Residual::Input: {
    RQ = G.addInput("r_q", ir::TensorType(J.T, YS));
    auto [Lo, Hi] = rangeOf(J.T);
    R.In.push_back(ints(YS, J.T, Lo, Hi, Gen));
    break;
  }
  case Residual::Quantized: {
    ir::Value *RF = G.addInput("r", ir::TensorType(DType::F32, YS));
    R.In.push_back(rnd(YS, Gen(), -200 * R.SR, 200 * R.SR));
    RQ = add(G, ir::OpKind::QuantizeLinear,
             {RF, Scalar("rqs", R.SR), G.addInitializer("rqz", ZR)}, "r_q");
    break;
  }
  }
  auto DqR = [&] {
    return add(G, ir::OpKind::DequantizeLinear,
               {RQ, Scalar("sr", R.SR), G.addInitializer("zr", ZR)}, "b");
  };
  ir::Value *B = J.DqRFirst ? DqR() : nullptr;
  ir::Value *YQ = addQConv(G, XQ, Main, SX, ZX, Gen, "y_q", R.SY, ZY);
  ir::Value *A = add(G, ir::OpKind::DequantizeLinear,
                     {YQ, Scalar("sy", R.SY), G.addInitializer("zy", ZY)}, "a");
  if (!B)
    B = DqR();
  ir::Value *S = add(G, ir::OpKind::Add, {J.Swap ? B : A, J.Swap ? A : B}, "s");
  ir::Value *T = J.Relu ? add(G, ir::OpKind::Relu, {S}, "t") : S;
  ir::Value *OQ =
      add(G, ir::OpKind::QuantizeLinear,
          {T, Scalar("so", R.SO), G.addInitializer("zo", ZO)}, "o_q");
  G.addOutput(OQ);
  if (J.R == Residual::Kept)
    G.addOutput(RQ);
  if (J.ExtraReader)
    G.addOutput(S);
  if (J.ExposeYR) {
    G.addOutput(YQ);
    if (J.R != Residual::Input)
      G.addOutput(RQ);
  }
  ir::inferTypes(G);
  return R;
}

/// The elements of Got (o_q of the join J with this seed, compiled) that
/// differ from the reference's Want: each must be one step, where the exact
/// result ((y_q - z_y) s_y + (r_q - z_r) s_r) / s_o is a tie (k + 1/2)
/// within the float rounding of the two sums (the reference rounds the
/// residual's product before adding, the fused sum does not). Returns how
/// many differ.
int64_t tieDifferences(const JoinCase &J, unsigned Seed, const Tensor &Got,
                       const Tensor &Want) {
  JoinCase Exposed = J;
  Exposed.ExposeYR = true;
  Exposed.ExtraReader = false;
  JoinGraph JE = joinGraph(Exposed, Seed);
  std::vector<Tensor> W = backends::runReference(*JE.G, JE.In);
  bool Input = J.R == Residual::Input;
  const Tensor &Y = Input ? W.back() : W[W.size() - 2];
  const Tensor &R = Input ? JE.In.at(1) : W.back();
  int64_t Diff = 0;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    int64_t G = Got.getFlatInt(I), Wv = Want.getFlatInt(I);
    if (G == Wv)
      continue;
    ++Diff;
    EXPECT_EQ(std::abs(G - Wv), 1) << "element " << I;
    double A = (Y.getFlatInt(I) - JE.ZY) * double(JE.SY);
    double B = (R.getFlatInt(I) - JE.ZR) * double(JE.SR);
    double V = (A + B) / double(JE.SO);
    // A few float ulps of the operands and of the quotient.
    double Tol = 1e-6 * ((std::fabs(A) + std::fabs(B)) / JE.SO + std::fabs(V));
    EXPECT_LE(std::fabs(V - std::floor(V) - 0.5), Tol)
        << "element " << I << " is no tie: " << V;
  }
  return Diff;
}

/// Runs the join J compiled and on the reference: other outputs equal, o_q
/// equal but for one-step differences at ties, counted into TieDiffs.
/// Returns the compiled program's stats.
backends::CpuExecutableStats checkJoin(const JoinCase &J, unsigned Seed,
                                       int64_t &TieDiffs) {
  JoinGraph JG = joinGraph(J, Seed);
  std::vector<Tensor> Want = backends::runReference(*JG.G, JG.In);
  auto Cpu = backends::getBackend("cpu").compile(*JG.G);
  std::vector<Tensor> Got = Cpu->run(JG.In);
  EXPECT_EQ(Got.size(), Want.size());
  for (size_t I = 1; I < Want.size() && I < Got.size(); ++I)
    EXPECT_TRUE(sameBytes(Got[I], Want[I])) << "output " << I;
  if (!sameBytes(Got[0], Want[0]))
    TieDiffs += tieDifferences(J, Seed, Got[0], Want[0]);
  std::vector<Tensor> Again = Cpu->run(JG.In);
  for (size_t I = 0; I < Got.size() && I < Again.size(); ++I)
    EXPECT_TRUE(sameBytes(Again[I], Got[I])) << "second run, output " << I;
  backends::CpuExecutableStats St = *backends::cpuExecutableStats(*Cpu);
  EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  return St;
}

/// The step descriptions of J's compiled program (profiling one run).
std::vector<std::string> stepsOf(const JoinCase &J, unsigned Seed) {
  JoinGraph JG = joinGraph(J, Seed);
  auto Cpu = backends::getBackend("cpu").compile(*JG.G);
  EXPECT_TRUE(backends::setCpuProfiling(*Cpu, true));
  Cpu->run(JG.In);
  std::vector<std::string> R;
  backends::CpuExecutableStats St = *backends::cpuExecutableStats(*Cpu);
  for (const auto &T : St.StepTimes)
    R.push_back(T.Desc);
  return R;
}

bool anyStepHas(const std::vector<std::string> &Steps, const std::string &S) {
  return std::any_of(Steps.begin(), Steps.end(), [&](const std::string &D) {
    return D.find(S) != std::string::npos;
  });
}

TEST(CpuInt8Residual, RandomJoinsEqualTheReference) {
  std::mt19937 Gen(21);
  auto Pick = [&](std::vector<int64_t> V) {
    return V[std::uniform_int_distribution<size_t>(0, V.size() - 1)(Gen)];
  };
  const Residual Kinds[] = {Residual::Conv, Residual::Input, Residual::Kept,
                            Residual::Quantized};
  int Fused = 0;
  int64_t Ties = 0, Elements = 0;
  for (int Trial = 0; Trial < 48; ++Trial) {
    JoinCase J;
    J.N = Pick({1, 2});
    J.C = Pick({3, 8, 16, 32});
    J.M = Pick({8, 16, 24, 64});
    J.H = Pick({5, 9, 14});
    J.W = Pick({6, 9, 13});
    J.K = Pick({1, 3});
    J.Stride = Pick({1, 1, 2});
    J.T = Trial % 5 == 4 ? DType::I8 : DType::U8;
    J.Relu = Trial % 3 != 2;
    J.ZeroPoints = Trial % 4 != 1;
    J.Swap = Trial % 2 == 1;
    J.R = Kinds[(Trial / 2) % 4];
    J.DqRFirst = Trial % 7 < 4;
    SCOPED_TRACE(J.describe());
    unsigned Seed = static_cast<unsigned>(Gen());
    backends::CpuExecutableStats St = checkJoin(J, Seed, Ties);
    Elements += J.outShape().numel();
    // Every node of the join in the convolution's step.
    EXPECT_EQ(St.FusedNodes, J.Relu ? 5 : 4);
    Fused += St.FusedNodes > 0;
    // Fewer steps than the same join unfused (its sum also returned).
    JoinCase Unfused = J;
    Unfused.ExtraReader = true;
    int64_t None = 0;
    backends::CpuExecutableStats Un = checkJoin(Unfused, Seed, None);
    EXPECT_EQ(None, 0) << "the unfused join is the reference's";
    EXPECT_EQ(Un.FusedNodes, 0);
    EXPECT_LT(St.Steps, Un.Steps);
    EXPECT_LT(St.OwnKernels, Un.OwnKernels);
  }
  EXPECT_EQ(Fused, 48);
  std::cout << "[ ties     ] " << Ties << " of " << Elements
            << " elements one step off, at ties\n";
  EXPECT_LE(Ties * 10000, Elements); // Measured: 1 of 124,880.
}

TEST(CpuInt8Residual, InPlaceWhenTheResidualDiesElseCopied) {
  unsigned Seed = 5;
  for (Residual R :
       {Residual::Conv, Residual::Input, Residual::Kept, Residual::Quantized})
    for (bool First : {true, false}) {
      JoinCase J;
      J.R = R;
      J.DqRFirst = First;
      SCOPED_TRACE(J.describe());
      int64_t Ties = 0;
      checkJoin(J, Seed, Ties);
      EXPECT_EQ(Ties, 0);
      std::vector<std::string> Steps = stepsOf(J, Seed);
      EXPECT_TRUE(anyStepHas(Steps, "residual join with %r_q")) << Steps.size();
      EXPECT_EQ(anyStepHas(Steps, "copy of %r_q"), R != Residual::Conv);
      EXPECT_FALSE(anyStepHas(Steps, "DequantizeLinear"));
      EXPECT_FALSE(anyStepHas(Steps, "Add"));
    }
}

/// A ResNet-like chain: each block's join fused, its result the next
/// block's residual (in place), its DequantizeLinear made where the result
/// is (before the next block's convolutions), as exported models have it.
/// The blocks' scales are powers of two, which makes the residual's product
/// exact and so the fused sum the reference's: the result must be the
/// reference's bytes (a one-step difference at a tie would grow through the
/// blocks).
TEST(CpuInt8Residual, ChainedBlocksSumInPlace) {
  std::mt19937 Gen(33);
  auto G = std::make_unique<ir::Graph>();
  G->setName("blocks");
  Shape S{1, 32, 14, 14};
  ir::Value *X = G->addInput("x", ir::TensorType(DType::F32, S));
  float Scale = 0.0625f;
  Tensor Zp = u8({0}, {});
  ir::Value *H = add(*G, ir::OpKind::QuantizeLinear,
                     {X, G->addInitializer("xs", Tensor::scalar(Scale)),
                      G->addInitializer("xz", Zp)},
                     "h0");
  for (int B = 1; B <= 3; ++B) {
    std::string P = "b" + std::to_string(B) + ".";
    // The block input's DequantizeLinear first, then two convolutions.
    ir::Value *Res = add(*G, ir::OpKind::DequantizeLinear,
                         {H, G->addInitializer(P + "rs", Tensor::scalar(Scale)),
                          G->addInitializer(P + "rz", Zp)},
                         P + "res");
    ConvCase CC;
    CC.C = CC.M = 32;
    CC.H = CC.W = 14;
    Tensor Z1 = u8({0}, {}), Z2 = u8({static_cast<uint8_t>(100 + B)}, {});
    ir::Value *C1 = addQConv(*G, H, CC, Scale, Zp, Gen, P + "c1", 0.2f, Z1);
    ir::Value *C2 = addQConv(*G, C1, CC, 0.2f, Z1, Gen, P + "c2", 0.3f, Z2);
    ir::Value *A = add(*G, ir::OpKind::DequantizeLinear,
                       {C2, G->addInitializer(P + "ys", Tensor::scalar(0.3f)),
                        G->addInitializer(P + "yz", Z2)},
                       P + "a");
    ir::Value *Sum = add(*G, ir::OpKind::Add, {Res, A}, P + "s");
    ir::Value *T = add(*G, ir::OpKind::Relu, {Sum}, P + "t");
    Scale = B == 2 ? 0.125f : 0.0625f;
    H = add(*G, ir::OpKind::QuantizeLinear,
            {T, G->addInitializer(P + "os", Tensor::scalar(Scale)),
             G->addInitializer(P + "oz", Zp)},
            P + "h");
  }
  G->addOutput(add(*G, ir::OpKind::DequantizeLinear,
                   {H, G->addInitializer("ys", Tensor::scalar(Scale)),
                    G->addInitializer("yz", Zp)},
                   "y"));
  ir::inferTypes(*G);
  std::vector<Tensor> In{rnd(S, 77, -1, 4)};
  backends::CpuExecutableStats St = expectExact(*G, In);
  EXPECT_TRUE(St.Fallbacks.empty()) << fallbacksOf(St);
  EXPECT_EQ(St.FusedNodes, 15);
  // The input's and the output's (de)quantization only.
  EXPECT_EQ(St.OwnKernels, 2);
  // Block 1's residual is the plain quantized input: copied into the
  // convolution's (nhwc) layout. Blocks 2 and 3 sum over the previous
  // block's result in place.
  auto Cpu = backends::getBackend("cpu").compile(*G);
  ASSERT_TRUE(backends::setCpuProfiling(*Cpu, true));
  Cpu->run(In);
  int Copies = 0;
  St = *backends::cpuExecutableStats(*Cpu);
  for (const auto &T : St.StepTimes) {
    Copies += T.Desc.find("copy of %h0") == 0;
    EXPECT_TRUE(T.Desc.find("copy of %b") == std::string::npos) << T.Desc;
    if (T.Desc.find("residual join") != std::string::npos)
      std::cout << "[ impl     ] " << T.Desc << "\n";
  }
  EXPECT_EQ(Copies, 1);
}

TEST(CpuInt8Residual, UnfitJoinsDeclineAndStayExact) {
  std::mt19937 Gen(41);
  struct Edit {
    const char *What;
    std::function<void(ir::Graph &)> Apply;
  };
  auto NodeOf = [](ir::Graph &G, const char *Out) {
    return G.lookup(Out)->producer();
  };
  std::vector<Edit> Edits = {
      {"per-axis residual scale",
       [&](ir::Graph &G) {
         NodeOf(G, "b")->setInput(
             1, G.addInitializer("sr_axis", rnd({16}, 3, 0.01, 0.03)));
         NodeOf(G, "b")->setInput(
             2, G.addInitializer("zr_axis", ints({16}, DType::U8, 0, 9, Gen)));
       }},
      {"run-time output scale",
       [&](ir::Graph &G) {
         NodeOf(G, "o_q")->setInput(
             1, G.addInput("so_in", ir::TensorType(DType::F32, Shape{})));
       }},
      {"y's DequantizeLinear with another zero point",
       [&](ir::Graph &G) {
         NodeOf(G, "a")->setInput(2, G.addInitializer("zy2", u8({200}, {})));
       }},
      {"an s8 residual with a u8 result",
       [&](ir::Graph &G) {
         ir::Value *R8 =
             G.addInput("r_s8", ir::TensorType(DType::I8, Shape{1, 16, 9, 9}));
         NodeOf(G, "b")->setInput(0, R8);
         NodeOf(G, "b")->setInput(2, G.addInitializer("zr8", i8({3}, {})));
       }},
      {"a broadcast residual",
       [&](ir::Graph &G) {
         ir::Value *R1 =
             G.addInput("r_bc", ir::TensorType(DType::U8, Shape{1, 16, 1, 1}));
         NodeOf(G, "b")->setInput(0, R1);
         G.lookup("b")->setType(ir::TensorType(DType::F32, Shape{1, 16, 1, 1}));
       }},
      {"the Relu's result also returned",
       [&](ir::Graph &G) { G.addOutput(G.lookup("t")); }},
  };
  for (const Edit &E : Edits) {
    SCOPED_TRACE(E.What);
    JoinCase J;
    J.R = Residual::Input;
    JoinGraph JG = joinGraph(J, 9);
    E.Apply(*JG.G);
    ir::inferTypes(*JG.G);
    // Feed the inputs the edits added.
    for (size_t I = JG.In.size(); I < JG.G->inputs().size(); ++I) {
      const ir::Value *V = JG.G->inputs()[I];
      Shape S = *V->type().staticShape();
      DType T = V->type().dtype();
      JG.In.push_back(T == DType::F32 ? Tensor::scalar(0.05f)
                                      : ints(S, T, rangeOf(T).first,
                                             rangeOf(T).second, Gen));
    }
    backends::CpuExecutableStats St = expectExact(*JG.G, JG.In);
    EXPECT_EQ(St.FusedNodes, 0);
    bool RunTime = std::string(E.What).find("run-time") == 0;
    EXPECT_EQ(St.Fallbacks.size(), RunTime ? 1u : 0u) << fallbacksOf(St);
  }
}

TEST(CpuInt8Residual, DifferencesOnlyAtTies) {
  // Random (calibration-like) scales: ties are rare; decimal scales make
  // exact ties common.
  for (bool Decimal : {false, true})
    for (bool Relu : {true, false}) {
      JoinCase J;
      J.C = 32;
      J.M = 64;
      J.H = J.W = 28;
      J.K = 1;
      J.Relu = Relu;
      J.R = Residual::Input;
      J.Decimal = Decimal;
      SCOPED_TRACE(J.describe());
      int64_t Ties = 0, Total = 0;
      int Seeds = Decimal ? 4 : 16;
      for (int Seed = 0; Seed < Seeds; ++Seed) {
        backends::CpuExecutableStats St = checkJoin(J, Seed, Ties);
        EXPECT_EQ(St.FusedNodes, Relu ? 5 : 4);
        Total += J.outShape().numel();
      }
      std::cout << "[ ties     ] " << (Decimal ? "decimal" : "random")
                << " scales" << (Relu ? ", relu" : "") << ": " << Ties << " of "
                << Total << " elements one step off, at ties\n";
      // Measured: random 0 of 802,816 (with Relu and without); decimal 59
      // (Relu) and 275 of 200,704 (negative sums are more often ties).
      EXPECT_LE(Ties * (Decimal ? 200 : 100000), Total);
    }
}

#else

TEST(CpuInt8Residual, NeedsOneDnn) { REQUIRE_ONEDNN(); }

#endif

} // namespace
} // namespace nng
