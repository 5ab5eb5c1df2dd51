//===- CpuDynamicShapesTest.cpp - One cpu executable, many input shapes ---===//
//
// An attention block with a KV cache (symbolic batch N, sequence S and
// cache length P), optimized with -O2 (so it holds fused regions) and
// compiled once on the cpu backend, then run at random shapes (every
// symbolic dim drawn from 1..300, 1 included) against the reference
// backend. What a new shape may cost is counted: no fused-region kernel is
// compiled again by the JIT after the first shape, no weight is packed
// again after the second (which moves products whose rows vary to one
// primitive for any row count), no program is compiled after that (new
// shapes reshape it), whatever the shapes; the arena is one block for all
// of them. Callers on several threads run the executable at once.
// Lives beside the passes' tests because it needs the -O2 pipeline.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/CpuCount.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

using namespace nng;

namespace {

using rt::Tensor;

constexpr int64_t Width = 32;

Tensor uniform(const Shape &S, std::mt19937 &Gen, double Bound) {
  std::uniform_real_distribution<double> U(-Bound, Bound);
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, U(Gen));
  return T;
}

ir::Value *node(ir::Graph &G, ir::OpKind K, std::vector<ir::Value *> In,
                const std::string &Out, ir::AttrMap A = {}) {
  return G.addNode(K, std::move(In), {Out}, std::move(A))->output();
}

/// x: f32[N,S,32], past: f32[N,P,32] -> (y: f32[N,S,32], present:
/// f32[N,P+S,32]): layer norm, q/k/v projections, keys appended to the
/// cache (values reuse the keys' cache: one cache input keeps the test
/// small), scaled scores, softmax, weighted sum, output projection with
/// its residual, a tanh gate (a fused region).
std::unique_ptr<ir::Graph> attentionBlock() {
  std::mt19937 Gen(7);
  auto G = std::make_unique<ir::Graph>();
  G->setName("attention");
  auto Sym = [](const char *Name) { return ir::Dim::symbol(Name); };
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {Sym("N"), Sym("S"), ir::Dim(Width)}));
  ir::Value *Past = G->addInput(
      "past", ir::TensorType(DType::F32, {Sym("N"), Sym("P"), ir::Dim(Width)}));
  double Bound = 1 / std::sqrt(double(Width));
  auto W = [&](const std::string &Name, Shape S) {
    return G->addInitializer(Name, uniform(S, Gen, Bound));
  };
  ir::AttrMap LnA;
  LnA.set("axis", int64_t(-1));
  ir::Value *H = node(*G, ir::OpKind::LayerNormalization,
                      {X, W("ln.weight", {Width}), W("ln.bias", {Width})},
                      "h", LnA);
  ir::Value *Q = node(*G, ir::OpKind::MatMul, {H, W("wq", {Width, Width})}, "q");
  ir::Value *K = node(*G, ir::OpKind::MatMul, {H, W("wk", {Width, Width})}, "k");
  ir::Value *V = node(*G, ir::OpKind::MatMul, {H, W("wv", {Width, Width})}, "v");
  ir::AttrMap Cat;
  Cat.set("axis", int64_t(1));
  ir::Value *Keys = node(*G, ir::OpKind::Concat, {Past, K}, "present", Cat);
  ir::Value *Values = node(*G, ir::OpKind::Concat, {Past, V}, "values", Cat);
  ir::AttrMap Perm;
  Perm.set("perm", std::vector<int64_t>{0, 2, 1});
  ir::Value *Kt = node(*G, ir::OpKind::Transpose, {Keys}, "kt", Perm);
  ir::Value *Scores = node(*G, ir::OpKind::MatMul, {Q, Kt}, "scores");
  ir::Value *Scale = G->addInitializer(
      "scale", Tensor::fromVector<float>({float(Bound)}, Shape{}));
  ir::Value *Scaled = node(*G, ir::OpKind::Mul, {Scores, Scale}, "scaled");
  ir::AttrMap SmA;
  SmA.set("axis", int64_t(-1));
  ir::Value *P = node(*G, ir::OpKind::Softmax, {Scaled}, "p", SmA);
  ir::Value *A = node(*G, ir::OpKind::MatMul, {P, Values}, "a");
  ir::Value *O = node(*G, ir::OpKind::MatMul, {A, W("wo", {Width, Width})}, "o");
  ir::Value *Ob = node(*G, ir::OpKind::Add, {O, W("bo", {Width})}, "ob");
  ir::Value *R = node(*G, ir::OpKind::Add, {Ob, X}, "r");
  // A gate after the residual: an elementwise chain -O2 makes a region.
  ir::Value *T = node(*G, ir::OpKind::Tanh, {R}, "t");
  ir::Value *Y = node(*G, ir::OpKind::Mul, {T, R}, "y");
  G->addOutput(Y);
  G->addOutput(Keys);
  ir::inferTypes(*G);
  passes::PassManager PM;
  PM.addPipeline(passes::presetPipeline(2));
  PM.run(*G);
  return G;
}

struct Dims {
  int64_t N, S, P;
};

/// Random shapes with every dim in 1..300 (the edges first), kept small
/// enough that the reference backend stays quick.
std::vector<Dims> randomDims(size_t Count) {
  std::vector<Dims> Out = {{1, 1, 1}, {300, 1, 1}, {1, 300, 1}, {1, 1, 300}};
  std::mt19937 Gen(11);
  std::uniform_int_distribution<int64_t> U(1, 300);
  while (Out.size() < Count) {
    Dims D{U(Gen), U(Gen), U(Gen)};
    if (D.N * D.S * (D.S + D.P) <= 60000)
      Out.push_back(D);
  }
  return Out;
}

void expectClose(const Tensor &Got, const Tensor &Want, const std::string &What) {
  ASSERT_EQ(Got.shape(), Want.shape()) << What;
  for (int64_t I = 0; I < Want.numel(); ++I)
    ASSERT_NEAR(Got.getFlat(I), Want.getFlat(I),
                1e-5 + 1e-4 * std::fabs(Want.getFlat(I)))
        << What << " element " << I;
}

#if NNGRAPH_HAVE_ONEDNN

TEST(CpuDynamicShapes, RandomShapesMatchTheReference) {
  std::unique_ptr<ir::Graph> G = attentionBlock();
  size_t Fused = 0;
  for (const auto &N : G->nodes())
    Fused += N->op() == ir::OpKind::Attention;
  EXPECT_EQ(Fused, 1u) << "-O2 did not fuse the attention";
  auto Exe = backends::getBackend("cpu").compile(*G);
  std::mt19937 Gen(3);
  for (const Dims &D : randomDims(14)) {
    std::string What = "N=" + std::to_string(D.N) + " S=" +
                       std::to_string(D.S) + " P=" + std::to_string(D.P);
    std::vector<Tensor> In = {uniform({D.N, D.S, Width}, Gen, 1),
                              uniform({D.N, D.P, Width}, Gen, 1)};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Want.size(); ++I)
      expectClose(Got[I], Want[I], What + " output " + std::to_string(I));
  }
}

TEST(CpuDynamicShapes, NewShapesPackNoWeightsAndCompileNoKernels) {
  std::unique_ptr<ir::Graph> G = attentionBlock();
  auto Exe = backends::getBackend("cpu").compile(*G);
  std::mt19937 Gen(5);
  auto Run = [&](int64_t S, int64_t P) {
    Exe->run({uniform({2, S, Width}, Gen, 1), uniform({2, P, Width}, Gen, 1)});
    return *backends::cpuExecutableStats(*Exe);
  };
  backends::CpuExecutableStats First = Run(8, 4);
  ASSERT_TRUE(First.Compiled);
  EXPECT_EQ(First.Specializations, 1);
  EXPECT_GT(First.WeightPacks, 0) << "the projections' weights are packed";
  bool Jit = backends::cpu::kernelJitAvailable();
  if (Jit)
    EXPECT_GT(First.JitKernels, 0) << "-O2 formed no fused region";
  int64_t JitCompiled = backends::cpu::KernelJit::global().stats().Compiled;
  // The second shape of a product switches it to a primitive for any M
  // (its weights in the layout that one reads, packed once more at most).
  backends::CpuExecutableStats Second = Run(8, 5);
  EXPECT_LE(Second.WeightPacks, 2 * First.WeightPacks);
  // A decoder's cache: a new P every step, then a few sequence lengths.
  for (int64_t Step = 2; Step < 100; ++Step) {
    int64_t S = Step < 90 ? 1 : Step - 80;
    backends::CpuExecutableStats Now = Run(S, 4 + Step);
    // Every shape is served: by the program reshaped (no compile), or, when
    // a decision made at one shape no longer holds, by a compile: the
    // second shape with other rows (products then take their rows at run
    // time), at most one more. (-O2 makes the attention one nng.Attention,
    // whose own loop serves every query and cache length.)
    ASSERT_EQ(Now.Specializations + Now.Reshapes, Step + 1);
    ASSERT_LE(Now.Specializations, Step < 90 ? 2 : 3)
        << "shape " << Step + 1 << " compiled a program: "
        << Now.ReshapeRefusal;
    ASSERT_EQ(Now.WeightPacks, Second.WeightPacks)
        << "shape " << Step + 1 << " packed weights again";
    ASSERT_EQ(Now.SharedWeightBytes, Second.SharedWeightBytes);
    if (Jit)
      ASSERT_EQ(backends::cpu::KernelJit::global().stats().Compiled,
                JitCompiled)
          << "shape " << Step + 1 << " compiled a fused-region kernel again";
  }
  backends::CpuExecutableStats Last = *backends::cpuExecutableStats(*Exe);
  // Reshaping makes no primitive for the projections (their rows are given
  // at run time) nor for a decode step's attention (an own loop); the
  // attention's primitive is made once per query length after the last
  // compile (10 lengths, 2 products).
  EXPECT_LE(Last.Primitives, Second.Primitives + 2 * 10 + 16)
      << Last.Primitives << " made, " << Second.Primitives << " by shape 2";
  EXPECT_GE(Last.Reshapes, 96);
  // One arena for every shape: at most the largest plan with its headroom.
  EXPECT_LE(Last.SharedArenaBytes, 2 * Last.ArenaBytes + 4096);
  EXPECT_EQ(Last.Lanes, 1) << "a lone caller runs on one lane";
}

// Four callers run one executable at once, at several shapes each (as an
// ONNX Runtime session allows): every result equals the reference
// backend's, nothing deadlocks, and the lanes made (programs and arena for
// one run at a time) never outnumber the CPUs the process may use.
TEST(CpuDynamicShapes, CallersOnSeveralThreadsAtOnce) {
  std::unique_ptr<ir::Graph> G = attentionBlock();
  auto Exe = backends::getBackend("cpu").compile(*G);
  std::mt19937 Gen(13);
  const std::vector<Dims> Shapes = {{1, 4, 3}, {2, 8, 5}, {1, 1, 17},
                                    {3, 2, 2}, {1, 1, 18}};
  std::vector<std::vector<Tensor>> Ins, Wants;
  for (const Dims &D : Shapes) {
    Ins.push_back({uniform({D.N, D.S, Width}, Gen, 1),
                   uniform({D.N, D.P, Width}, Gen, 1)});
    Wants.push_back(backends::runReference(*G, Ins.back()));
  }
  constexpr int Callers = 4, Runs = 30;
  std::atomic<int> Wrong{0}, Failed{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < Callers; ++T)
    Threads.emplace_back([&, T] {
      for (int R = 0; R < Runs; ++R) {
        size_t C = static_cast<size_t>(T * 7 + R) % Shapes.size();
        try {
          std::vector<Tensor> Got = Exe->run(Ins[C]);
          for (size_t I = 0; I < Got.size(); ++I)
            for (int64_t E = 0; E < Got[I].numel(); ++E) {
              double W = Wants[C][I].getFlat(E);
              if (!(std::fabs(Got[I].getFlat(E) - W) <=
                    1e-5 + 1e-4 * std::fabs(W))) {
                ++Wrong;
                break;
              }
            }
        } catch (const std::exception &) {
          ++Failed;
        }
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failed.load(), 0);
  EXPECT_EQ(Wrong.load(), 0) << "outputs that differ from the reference";
  backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
  EXPECT_GE(S.Lanes, 1);
  EXPECT_LE(S.Lanes, std::max(1, usableCpus().Count));
  // After them, a lone caller still gets the reference's results.
  std::vector<Tensor> Got = Exe->run(Ins[1]);
  for (size_t I = 0; I < Got.size(); ++I)
    expectClose(Got[I], Wants[1][I], "after the callers, output " +
                                         std::to_string(I));
}

TEST(CpuDynamicShapes, WeightsChangedInPlaceReachEveryShape) {
  std::unique_ptr<ir::Graph> G = attentionBlock();
  auto Exe = backends::getBackend("cpu").compile(*G);
  std::mt19937 Gen(9);
  std::vector<Tensor> A = {uniform({1, 5, Width}, Gen, 1),
                           uniform({1, 3, Width}, Gen, 1)};
  std::vector<Tensor> B = {uniform({2, 7, Width}, Gen, 1),
                           uniform({2, 6, Width}, Gen, 1)};
  Exe->run(A);
  Exe->run(B);
  // The shared packs of both shapes follow an in-place update.
  Tensor W = G->lookup("wo")->data();
  float *Wp = W.data<float>(); // Bumps the storage's version.
  for (int64_t I = 0; I < W.numel(); ++I)
    Wp[I] = -Wp[I];
  for (const auto &In : {A, B}) {
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    for (size_t I = 0; I < Want.size(); ++I)
      expectClose(Got[I], Want[I], "after the update, output " +
                                       std::to_string(I));
  }
}

#else

TEST(CpuDynamicShapes, NeedsOneDnn) {
  GTEST_SKIP() << "SKIPPED: built without oneDNN (NNGRAPH_ENABLE_ONEDNN=OFF), "
                  "there is no cpu backend";
}

#endif

} // namespace
