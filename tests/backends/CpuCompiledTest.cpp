//===- CpuCompiledTest.cpp - The cpu backend's compiled schedules ---------===//
//
// Small models run on the cpu backend's compiled schedules against the
// reference backend: a residual block (convolution + residual sum + relu
// fused, blocked layouts kept, reorders counted, the residual summed in
// place), NaN and infinities through every fused activation and the max
// pool, weights updated in place between runs, the memory plan's reuse,
// a linear layer with bias and activation fused, and outputs written in
// place (runInto).
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/ir/Parser.h"

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

ir::AttrMap convAttrs(int64_t Pad) {
  ir::AttrMap A;
  A.set("pads", Ints{Pad, Pad, Pad, Pad});
  return A;
}

/// x[N,16,H,W] -> conv -> relu -> conv -> (+ y0) -> relu -> maxpool ->
/// global average pool -> flatten -> gemm: a resnet basic block between a
/// stem convolution and a classifier. Act is the block's activation.
std::unique_ptr<ir::Graph> residualBlock(ir::OpKind Act = ir::OpKind::Relu) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("block");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(16),
                                       ir::Dim(12), ir::Dim(12)}));
  auto W = [&](const std::string &N, Shape S, unsigned Seed) {
    return G->addInitializer(N, rnd(S, Seed, -0.3, 0.3));
  };
  ir::Value *Y0 = add(*G, ir::OpKind::Conv,
                      {X, W("w0", {32, 16, 3, 3}, 1), W("b0", {32}, 2)}, "y0",
                      convAttrs(1));
  ir::Value *Y1 = add(*G, ir::OpKind::Conv,
                      {Y0, W("w1", {32, 32, 3, 3}, 3), W("b1", {32}, 4)}, "y1",
                      convAttrs(1));
  ir::Value *A1 = add(*G, Act, {Y1}, "a1");
  ir::Value *Y2 = add(*G, ir::OpKind::Conv,
                      {A1, W("w2", {32, 32, 3, 3}, 5), W("b2", {32}, 6)}, "y2",
                      convAttrs(1));
  ir::Value *S = add(*G, ir::OpKind::Add, {Y2, Y0}, "s");
  ir::Value *A2 = add(*G, Act, {S}, "a2");
  ir::AttrMap P;
  P.set("kernel_shape", Ints{2, 2});
  P.set("strides", Ints{2, 2});
  ir::Value *M = add(*G, ir::OpKind::MaxPool, {A2}, "m", P);
  ir::Value *Gap = add(*G, ir::OpKind::GlobalAveragePool, {M}, "gap");
  ir::Value *F = add(*G, ir::OpKind::Flatten, {Gap}, "f");
  ir::AttrMap Gm;
  Gm.set("transB", int64_t(1));
  ir::Value *Out = add(*G, ir::OpKind::Gemm,
                       {F, W("fc.w", {10, 32}, 7), W("fc.b", {10}, 8)}, "out",
                       Gm);
  G->addOutput(Out);
  ir::inferTypes(*G);
  return G;
}

TEST(CpuCompiled, ResidualBlockMatchesReference) {
  std::unique_ptr<ir::Graph> G = residualBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  for (int64_t Batch : {1, 4}) {
    std::vector<Tensor> In{rnd({Batch, 16, 12, 12}, 40 + Batch)};
    Tensor Want = backends::runReference(*G, In).at(0);
    EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want)) << "batch " << Batch;
    auto St = backends::cpuExecutableStats(*Cpu);
    ASSERT_TRUE(St && St->Compiled);
    EXPECT_TRUE(St->Fallbacks.empty()) << St->Fallbacks.front();
    // The block's Add and both Relus fold into convolutions (Relu as the
    // NaN-keeping post-op chain: no own loop but the max pool's); Flatten
    // views.
    EXPECT_EQ(St->FusedNodes, 3);
    EXPECT_EQ(St->OwnKernels, 1);
    EXPECT_EQ(St->AliasNodes, 1);
    // At most: into the first convolution, and out of the pooled features.
    EXPECT_LE(St->Reorders, 2);
    EXPECT_GT(St->ArenaBytes, 0);
    EXPECT_LE(St->ArenaBytes, St->NaiveBytes);
  }
}

TEST(CpuCompiled, ChainedResidualSumsStayInPlace) {
  // Two residual blocks in a row: the second block's residual is the first
  // block's in-place sum, whose bytes it took over from the stem's result
  // (dead by then). Both sums are in place: no step copies a residual.
  auto G = std::make_unique<ir::Graph>();
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(16),
                                       ir::Dim(8), ir::Dim(8)}));
  unsigned Seed = 90;
  auto Conv = [&](ir::Value *In, const std::string &Name) {
    ir::Value *W = G->addInitializer(Name + ".w",
                                     rnd({16, 16, 3, 3}, Seed++, -0.2, 0.2));
    return add(*G, ir::OpKind::Conv, {In, W}, Name, convAttrs(1));
  };
  ir::Value *V = Conv(X, "stem");
  for (int B = 0; B < 2; ++B) {
    std::string P = "b" + std::to_string(B);
    ir::Value *H = add(*G, ir::OpKind::Relu, {Conv(V, P + ".c1")}, P + ".r1");
    ir::Value *S = add(*G, ir::OpKind::Add, {Conv(H, P + ".c2"), V}, P + ".s");
    V = add(*G, ir::OpKind::Relu, {S}, P + ".r2");
  }
  G->addOutput(V);
  ir::inferTypes(*G);
  auto Cpu = backends::getBackend("cpu").compile(*G);
  ASSERT_TRUE(backends::setCpuProfiling(*Cpu, true));
  std::vector<Tensor> In{rnd({2, 16, 8, 8}, 91)};
  EXPECT_TRUE(closeTo(Cpu->run(In).at(0), backends::runReference(*G, In).at(0)));
  auto St = backends::cpuExecutableStats(*Cpu);
  ASSERT_TRUE(St);
  for (const auto &T : St->StepTimes)
    EXPECT_NE(T.Desc.rfind("copy of", 0), 0u) << T.Desc;
}

TEST(CpuCompiled, OtherActivationsMatchReference) {
  for (ir::OpKind Act : {ir::OpKind::LeakyRelu, ir::OpKind::Tanh,
                         ir::OpKind::Elu, ir::OpKind::HardSwish}) {
    std::unique_ptr<ir::Graph> G = residualBlock(Act);
    std::vector<Tensor> In{rnd({2, 16, 12, 12}, 50)};
    Tensor Want = backends::runReference(*G, In).at(0);
    auto Cpu = backends::getBackend("cpu").compile(*G);
    EXPECT_TRUE(closeTo(Cpu->run(In).at(0), Want))
        << ir::getOpSchema(Act).Name;
    EXPECT_TRUE(backends::cpuExecutableStats(*Cpu)->Fallbacks.empty());
  }
}

/// Every element of Got is NaN exactly where Want's is, infinite with the
/// same sign where Want's is, and close elsewhere.
void expectSameSpecials(const Tensor &Got, const Tensor &Want) {
  ASSERT_EQ(Got.shape(), Want.shape());
  int64_t NaNs = 0;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    NaNs += std::isnan(W);
    ASSERT_EQ(std::isnan(G), std::isnan(W)) << "element " << I << ": cpu "
                                            << G << ", reference " << W;
    if (std::isinf(W))
      ASSERT_EQ(G, W) << "element " << I;
    if (std::isfinite(W))
      ASSERT_TRUE(std::isfinite(G)) << "element " << I << ": cpu " << G
                                    << ", reference " << W;
  }
  EXPECT_GT(NaNs, 0) << "the case should produce NaN";
}

TEST(CpuCompiled, NaNAndInfinityKeepOnnxSemantics) {
  // NaN, +inf and -inf in the input reach every fused activation (Relu's
  // elu + linear post-op chain, the residual sum) and the max pool, which
  // must keep NaN and map -inf to 0 as the reference does (oneDNN's relu
  // and max pooling would map NaN to 0).
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  for (ir::OpKind Act : {ir::OpKind::Relu, ir::OpKind::LeakyRelu,
                         ir::OpKind::Tanh}) {
    std::unique_ptr<ir::Graph> G = residualBlock(Act);
    // Output before the pooling too, so the specials are seen per element.
    G->addOutput(G->lookup("a2"));
    Tensor X = rnd({2, 16, 12, 12}, 60);
    float *P = X.data<float>();
    P[5] = NaN;
    P[300] = Inf;
    P[301] = -Inf;
    P[2000] = -Inf;
    P[3000] = NaN;
    std::vector<Tensor> In{X};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    auto Cpu = backends::getBackend("cpu").compile(*G);
    std::vector<Tensor> Got = Cpu->run(In);
    SCOPED_TRACE(ir::getOpSchema(Act).Name);
    expectSameSpecials(Got.at(1), Want.at(1));
    EXPECT_TRUE(closeTo(Got.at(0), Want.at(0)));
  }
}

TEST(CpuCompiled, MaxPoolPropagatesNaN) {
  Tensor X = rnd({1, 16, 4, 4}, 70);
  X.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  X.data<float>()[21] = std::numeric_limits<float>::quiet_NaN();
  check(mk(ir::OpKind::MaxPool, {X})
            .attr("kernel_shape", Ints{2, 2})
            .attr("strides", Ints{2, 2})
            .expect(Expect::Fast));
}

TEST(CpuCompiled, WeightsUpdatedInPlaceAreNotStale) {
  std::unique_ptr<ir::Graph> G = residualBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({2, 16, 12, 12}, 80)};
  Tensor Before = Cpu->run(In).at(0);
  // Training, or weights loaded again into the same tensors.
  Tensor W = G->lookup("w1")->data();
  float *P = W.data<float>();
  for (int64_t I = 0; I < W.numel(); ++I)
    P[I] *= -2.0f;
  Tensor Fc = G->lookup("fc.w")->data();
  Fc.data<float>()[3] += 1.0f;
  Tensor Want = backends::runReference(*G, In).at(0);
  Tensor After = Cpu->run(In).at(0);
  EXPECT_FALSE(closeTo(Before, Want)) << "the update should matter";
  EXPECT_TRUE(closeTo(After, Want));
  EXPECT_GE(backends::cpuExecutableStats(*Cpu)->WeightRefreshes, 2);
  // Nothing changed since: no repacking.
  int64_t Refreshes = backends::cpuExecutableStats(*Cpu)->WeightRefreshes;
  Cpu->run(In);
  EXPECT_EQ(backends::cpuExecutableStats(*Cpu)->WeightRefreshes, Refreshes);
}

TEST(CpuCompiled, LinearLayersFuseBiasAndActivation) {
  // [N, S, 64] x [64, 32] + b -> Gelu -> x [32, 16] + b -> Relu, then
  // softmax over the last axis and a product of two run-time values.
  ir::Graph G;
  G.setName("mlp");
  ir::Value *X = G.addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(8),
                                       ir::Dim(64)}));
  ir::Value *H = add(G, ir::OpKind::MatMul,
                     {X, G.addInitializer("w0", rnd({64, 32}, 90))}, "h");
  ir::Value *Hb =
      add(G, ir::OpKind::Add, {H, G.addInitializer("b0", rnd({32}, 91))}, "hb");
  ir::Value *Ha = add(G, ir::OpKind::Gelu, {Hb}, "ha");
  ir::Value *O = add(G, ir::OpKind::MatMul,
                     {Ha, G.addInitializer("w1", rnd({32, 16}, 92))}, "o");
  ir::Value *Ob =
      add(G, ir::OpKind::Add, {G.addInitializer("b1", rnd({16}, 93)), O}, "ob");
  ir::Value *Oa = add(G, ir::OpKind::Relu, {Ob}, "oa");
  ir::Value *Sm = add(G, ir::OpKind::Softmax, {Oa}, "sm");
  ir::AttrMap T;
  T.set("perm", Ints{0, 2, 1});
  ir::Value *St = add(G, ir::OpKind::Transpose, {Sm}, "smt", T);
  ir::Value *Att = add(G, ir::OpKind::MatMul, {Sm, St}, "att");
  G.addOutput(Att);
  ir::inferTypes(G);
  auto Cpu = backends::getBackend("cpu").compile(G);
  for (int64_t Batch : {1, 3}) {
    std::vector<Tensor> In{rnd({Batch, 8, 64}, 94 + Batch)};
    EXPECT_TRUE(closeTo(Cpu->run(In).at(0), backends::runReference(G, In).at(0)))
        << "batch " << Batch;
  }
  auto Stats = backends::cpuExecutableStats(*Cpu);
  // Both Adds and both activations fused into the two linear layers, and
  // the transpose read in place by the 8-row product after it.
  EXPECT_EQ(Stats->FusedNodes, 5);
}

TEST(CpuCompiled, GemmFusesTheReluAfterIt) {
  // A torch Linear + ReLU exports as Gemm(transB) -> Relu: one primitive
  // with the NaN-keeping Relu chain; NaN and -inf rows come through.
  ir::Graph G;
  G.setName("linear_relu");
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({3, 16})));
  ir::AttrMap Gm;
  Gm.set("transB", int64_t(1));
  ir::Value *Y = add(G, ir::OpKind::Gemm,
                     {X, G.addInitializer("w", rnd({8, 16}, 95)),
                      G.addInitializer("b", rnd({8}, 96))},
                     "y", Gm);
  G.addOutput(add(G, ir::OpKind::Relu, {Y}, "r"));
  ir::inferTypes(G);
  Tensor In = rnd({3, 16}, 97);
  In.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  In.data<float>()[20] = -std::numeric_limits<float>::infinity();
  std::vector<Tensor> Feeds{In};
  Tensor Want = backends::runReference(G, Feeds).at(0);
  auto Cpu = backends::getBackend("cpu").compile(G);
  Tensor Got = Cpu->run(Feeds).at(0);
  expectSameSpecials(Got, Want);
  EXPECT_TRUE(closeTo(Got, Want));
  auto St = backends::cpuExecutableStats(*Cpu);
  // The Gemm's bias and the Relu: a FusedMatMul counts its bias too.
  EXPECT_EQ(St->FusedNodes, 2);
  EXPECT_EQ(St->OwnKernels, 0);
  EXPECT_EQ(St->Steps, 1);
}

TEST(CpuCompiled, LinearLayerSumsItsResidual) {
  // A transformer's feed-forward output: x [N, S, 32] x [32, 32] + b + r
  // -> Relu, one primitive (bias, residual as a binary post-op, Relu).
  // NaN and infinities in the residual come through as the reference's.
  ir::Graph G;
  G.setName("residual");
  auto Dims = [](int64_t D) {
    return ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(4),
                                       ir::Dim(D)});
  };
  ir::Value *X = G.addInput("x", Dims(32));
  ir::Value *R = G.addInput("r", Dims(32));
  ir::Value *H = add(G, ir::OpKind::MatMul,
                     {X, G.addInitializer("w", rnd({32, 32}, 98))}, "h");
  ir::Value *Hb =
      add(G, ir::OpKind::Add, {G.addInitializer("b", rnd({32}, 99)), H}, "hb");
  ir::Value *S = add(G, ir::OpKind::Add, {R, Hb}, "s");
  G.addOutput(add(G, ir::OpKind::Relu, {S}, "y"));
  ir::inferTypes(G);
  auto Cpu = backends::getBackend("cpu").compile(G);
  Tensor Res = rnd({2, 4, 32}, 100);
  Res.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  Res.data<float>()[40] = std::numeric_limits<float>::infinity();
  Res.data<float>()[41] = -std::numeric_limits<float>::infinity();
  std::vector<Tensor> In{rnd({2, 4, 32}, 101), Res};
  Tensor Want = backends::runReference(G, In).at(0);
  Tensor Got = Cpu->run(In).at(0);
  expectSameSpecials(Got, Want);
  EXPECT_TRUE(closeTo(Got, Want));
  auto St = backends::cpuExecutableStats(*Cpu);
  EXPECT_EQ(St->FusedNodes, 3); // The bias Add, the residual Add, Relu.
  EXPECT_EQ(St->Steps, 1);
}

TEST(CpuCompiled, OutputsAreWrittenInPlace) {
  // The residual block's classifier writes the graph output directly: each
  // run returns a fresh tensor (the next run does not touch it), runInto
  // writes the caller's tensor (no copy), and a tensor of the wrong shape,
  // a strided one or one over an input is refused with a message.
  std::unique_ptr<ir::Graph> G = residualBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  std::vector<Tensor> In{rnd({2, 16, 12, 12}, 102)};
  Tensor Want = backends::runReference(*G, In).at(0);
  Tensor First = Cpu->run(In).at(0);
  Tensor Kept = First.clone();
  std::vector<Tensor> Other{rnd({2, 16, 12, 12}, 103)};
  Tensor Second = Cpu->run(Other).at(0);
  EXPECT_TRUE(First.equals(Kept)) << "a later run wrote an earlier output";
  EXPECT_NE(static_cast<const Tensor &>(First).rawData(),
            static_cast<const Tensor &>(Second).rawData());
  EXPECT_TRUE(closeTo(First, Want));

  std::vector<Tensor> Into{Tensor::empty(Want.shape(), DType::F32)};
  const void *Where = static_cast<const Tensor &>(Into[0]).rawData();
  Cpu->runInto(In, Into);
  EXPECT_EQ(static_cast<const Tensor &>(Into[0]).rawData(), Where);
  EXPECT_TRUE(Into[0].equals(First));
  std::vector<Tensor> Fresh(1); // Undefined: a new tensor.
  Cpu->runInto(In, Fresh);
  EXPECT_TRUE(Fresh.at(0).equals(First));

  auto Refused = [&](std::vector<Tensor> Outs, const std::string &Says) {
    try {
      Cpu->runInto(In, Outs);
      ADD_FAILURE() << "accepted; wanted: " << Says;
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find(Says), std::string::npos)
          << E.what();
    }
  };
  Refused({Tensor::empty(Shape({2, 9}), DType::F32)}, "this run produces f32");
  Refused({Tensor::empty(Shape({10, 2}), DType::F32).permute({1, 0})},
          "not contiguous");
  Refused({}, "has 1 outputs but 0 output tensors");
  std::vector<Tensor> Over{Tensor::empty(Shape({2, 16, 12, 12}), DType::F32)};
  Tensor View(Over[0].storage(), Want.shape(), contiguousStrides(Want.shape()),
              0, DType::F32);
  try {
    std::vector<Tensor> Outs{View};
    Cpu->runInto(Over, Outs);
    ADD_FAILURE() << "an output over an input was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("shares memory with input %x"),
              std::string::npos)
        << E.what();
  }
}

TEST(CpuCompiled, NewShapesReshapeOrSayWhyNot) {
  // The residual block's convolutions write blocked layouts: a new batch
  // is compiled, and --stats says why it was not reshaped.
  std::unique_ptr<ir::Graph> G = residualBlock();
  auto Cpu = backends::getBackend("cpu").compile(*G);
  for (int64_t N : {1, 2}) {
    std::vector<Tensor> In{rnd({N, 16, 12, 12}, 110 + N)};
    EXPECT_TRUE(closeTo(Cpu->run(In).at(0), backends::runReference(*G, In).at(0)));
  }
  auto St = backends::cpuExecutableStats(*Cpu);
  EXPECT_EQ(St->Specializations, 2);
  EXPECT_EQ(St->Reshapes, 0);
  EXPECT_NE(St->ReshapeRefusal.find("blocked layout"), std::string::npos)
      << St->ReshapeRefusal;

  // Softmax rows and a transpose whose size-1 axes make it a view: the
  // program is reshaped while the view holds (the leading dim stays 1),
  // and compiled when it does not.
  ir::Graph T;
  T.setName("rows");
  ir::Value *X = T.addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("B"),
                                       ir::Dim::symbol("S"), ir::Dim(4)}));
  ir::AttrMap Perm;
  Perm.set("perm", Ints{1, 0, 2});
  ir::Value *X2 = add(T, ir::OpKind::Add, {X, X}, "x2"); // In the arena.
  ir::Value *Y = add(T, ir::OpKind::Transpose, {X2}, "t", Perm);
  T.addOutput(add(T, ir::OpKind::Softmax, {Y}, "y"));
  ir::inferTypes(T);
  auto Exe = backends::getBackend("cpu").compile(T);
  for (auto [B, S] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 3}, {1, 5}, {1, 9}, {2, 9}}) {
    std::vector<Tensor> In{rnd({B, S, 4}, 120 + S)};
    EXPECT_TRUE(closeTo(Exe->run(In).at(0), backends::runReference(T, In).at(0)))
        << B << "x" << S;
  }
  St = backends::cpuExecutableStats(*Exe);
  EXPECT_EQ(St->Reshapes, 2);
  EXPECT_EQ(St->Specializations, 2);
  EXPECT_NE(St->ReshapeRefusal.find("no longer a view"), std::string::npos)
      << St->ReshapeRefusal;

  // A Slice whose end is computed from the input's shape: its lowering
  // used the end's value (the copy's geometry), so a new length compiles.
  std::unique_ptr<ir::Graph> L = ir::parseGraph(R"(graph "all_but_last" {
  input %x: f32[B,S,4]
  init %zero: i64[1] = [0]
  init %one: i64[1] = [1]
  %s = Shape(%x)
  %n = Gather(%s, %one) {axis = 0}
  %end = Sub(%n, %one)
  %x2 = Add(%x, %x)
  %y = Slice(%x2, %zero, %end, %one)
  output %y
})");
  auto Lx = backends::getBackend("cpu").compile(*L);
  for (int64_t S : {3, 6}) {
    std::vector<Tensor> In{rnd({1, S, 4}, 130 + S)};
    EXPECT_TRUE(closeTo(Lx->run(In).at(0), backends::runReference(*L, In).at(0)))
        << S;
  }
  St = backends::cpuExecutableStats(*Lx);
  EXPECT_EQ(St->Specializations, 2);
  EXPECT_NE(St->ReshapeRefusal.find("computed from the input shapes, was used "
                                    "by a lowering"),
            std::string::npos)
      << St->ReshapeRefusal;
}

TEST(CpuCompiled, DataDependentShapesRunNodeByNode) {
  // NonZero's output shape depends on the data: no static schedule.
  ir::Graph G;
  G.setName("nz");
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({6})));
  G.addOutput(add(G, ir::OpKind::NonZero, {X}, "nz"));
  ir::inferTypes(G);
  auto Cpu = backends::compileCpu(G, backends::CpuMode::Compiled);
  Tensor In = Tensor::fromVector<float>({0, 1, 0, 2, 3, 0}, Shape({6}));
  EXPECT_TRUE(Cpu->run({In}).at(0).equals(backends::runReference(G, {In}).at(0)));
  EXPECT_FALSE(backends::cpuExecutableStats(*Cpu)->Compiled);
}

TEST(CpuCompiled, ElidedWeightsAreAnError) {
  // A model printed as text without its weights: running it must say which
  // initializer has no data and what to do, on both backends.
  ir::Graph G;
  G.setName("elided");
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({2, 3})));
  ir::Value *W = G.addElidedInitializer(
      "w", ir::TensorType(DType::F32, Shape({3, 4})), "fnv1a64:0");
  G.addOutput(add(G, ir::OpKind::MatMul, {X, W}, "y"));
  ir::inferTypes(G);
  for (const char *Backend : {"reference", "cpu"}) {
    auto Exe = backends::getBackend(Backend).compile(G);
    try {
      Exe->run({rnd({2, 3}, 100)});
      ADD_FAILURE() << Backend << ": no error";
    } catch (const Error &E) {
      std::string Msg = E.what();
      EXPECT_NE(Msg.find("initializer %w has no data"), std::string::npos)
          << Backend << ": " << Msg;
      EXPECT_NE(Msg.find("load the weights"), std::string::npos) << Msg;
    }
  }
}

TEST(CpuCompiled, StatsOnlyForCpuExecutables) {
  std::unique_ptr<ir::Graph> G = residualBlock();
  auto Ref = backends::referenceBackend().compile(*G);
  EXPECT_FALSE(backends::cpuExecutableStats(*Ref).has_value());
  auto Cpu = backends::getBackend("cpu").compile(*G);
  // Before any run nothing is compiled yet.
  auto St = backends::cpuExecutableStats(*Cpu);
  ASSERT_TRUE(St.has_value());
  EXPECT_FALSE(St->Compiled);
  EXPECT_EQ(St->Specializations, 0);
}

#else

TEST(CpuCompiled, NeedsOneDnn) {
  GTEST_SKIP() << "SKIPPED: built without oneDNN (NNGRAPH_ENABLE_ONEDNN=OFF), "
                  "there is no cpu backend";
}

#endif

} // namespace
} // namespace nng
