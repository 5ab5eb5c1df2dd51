//===- CpuRowsCopyTest.cpp - Row loops and views of the cpu schedules -----===//
//
// Softmax, LogSoftmax and LayerNormalization run on the cpu backend's own
// row loops and keep the reference's NaN and infinity semantics; Transpose
// and Slice become aliases (a transpose of size-1 axes) or exact copies of
// strided views; nothing of it falls back to node kernels. A small
// attention block (the shapes of a transformer encoder layer) puts them
// together.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <limits>

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

/// A one-node graph of op K on input X (f32, shape of T) plus constant
/// extra inputs, compiled on the cpu backend and run against the
/// reference; returns the stats after a run.
backends::CpuExecutableStats runBoth(ir::OpKind K, const Tensor &X,
                                     std::vector<Tensor> Consts,
                                     ir::AttrMap A, bool Exact,
                                     bool WantSpecials = false) {
  ir::Graph G;
  G.setName("case");
  std::vector<ir::Value *> In{
      G.addInput("x", ir::TensorType(X.dtype(), X.shape()))};
  for (size_t I = 0; I < Consts.size(); ++I)
    In.push_back(Consts[I].defined()
                     ? G.addInitializer("c" + std::to_string(I), Consts[I])
                     : nullptr);
  G.addOutput(G.addNode(K, In, {"y"}, std::move(A))->output());
  ir::inferTypes(G);
  std::vector<Tensor> Feeds{X};
  Tensor Want = backends::runReference(G, Feeds).at(0);
  auto Cpu = backends::getBackend("cpu").compile(G);
  Tensor Got = Cpu->run(Feeds).at(0);
  if (Exact) {
    EXPECT_TRUE(Got.equals(Want)) << "cpu " << Got.toString()
                                  << "\nreference " << Want.toString();
  } else {
    EXPECT_TRUE(closeTo(Got, Want));
  }
  if (WantSpecials)
    for (int64_t I = 0; I < Want.numel(); ++I) {
      double Gv = Got.getFlat(I), Wv = Want.getFlat(I);
      EXPECT_EQ(std::isnan(Gv), std::isnan(Wv)) << "element " << I;
      if (std::isinf(Wv))
        EXPECT_EQ(Gv, Wv) << "element " << I;
    }
  return *backends::cpuExecutableStats(*Cpu);
}

TEST(CpuRows, SoftmaxKeepsTheReferenceSemantics) {
  // Rows: plain values, a NaN, +inf, -inf, all -inf, large magnitudes (exp
  // under- and overflow after the max shift), and a 37-long tail.
  for (int64_t Len : {5, 37, 128}) {
    Tensor X = rnd({6, Len}, 300 + Len, -30, 30);
    float *P = X.data<float>();
    P[1 * Len + 2] = NaN;
    P[2 * Len + 1] = Inf;
    P[3 * Len + 0] = -Inf;
    for (int64_t I = 0; I < Len; ++I)
      P[4 * Len + I] = -Inf;
    for (int64_t I = 0; I < Len; ++I)
      P[5 * Len + I] = I % 2 ? 85.0f : -100.0f;
    for (ir::OpKind K : {ir::OpKind::Softmax, ir::OpKind::LogSoftmax}) {
      SCOPED_TRACE(std::string(ir::getOpSchema(K).Name) + " len " +
                   std::to_string(Len));
      ir::AttrMap A;
      A.set("axis", int64_t(-1));
      auto S = runBoth(K, X, {}, A, false, true);
      EXPECT_TRUE(S.Fallbacks.empty());
      EXPECT_EQ(S.OwnKernels, 1);
    }
  }
}

TEST(CpuRows, SoftmaxOverAnInnerAxisFallsBack) {
  ir::AttrMap A;
  A.set("axis", int64_t(1));
  auto S = runBoth(ir::OpKind::Softmax, rnd({2, 3, 4}, 310), {}, A, false);
  EXPECT_EQ(S.Fallbacks.size(), 1u);
}

TEST(CpuRows, LayerNormalizationKeepsTheReferenceSemantics) {
  Tensor X = rnd({4, 3, 40}, 320, -3, 3);
  X.data<float>()[45] = NaN;
  X.data<float>()[130] = Inf;
  Tensor Scale = rnd({40}, 321), Bias = rnd({40}, 322);
  ir::AttrMap A;
  A.set("axis", int64_t(-1));
  A.set("epsilon", 1e-5f);
  auto S = runBoth(ir::OpKind::LayerNormalization, X, {Scale, Bias}, A, false,
                   true);
  EXPECT_TRUE(S.Fallbacks.empty());
  EXPECT_EQ(S.OwnKernels, 1);
  // Over the last two axes, without a bias.
  ir::AttrMap A2;
  A2.set("axis", int64_t(1));
  auto S2 = runBoth(ir::OpKind::LayerNormalization, rnd({4, 3, 40}, 323),
                    {rnd({3, 40}, 324)}, A2, false);
  EXPECT_TRUE(S2.Fallbacks.empty());
  // A broadcast scale stays with the node kernel.
  auto S3 = runBoth(ir::OpKind::LayerNormalization, rnd({4, 40}, 325),
                    {rnd({1}, 326)}, A, false);
  EXPECT_EQ(S3.Fallbacks.size(), 1u);
}

TEST(CpuViews, TransposesAreAliasesOrExactCopies) {
  for (auto Perm : {Ints{1, 0, 2}, Ints{2, 0, 1}, Ints{0, 2, 1}, Ints{}}) {
    ir::AttrMap A;
    if (!Perm.empty())
      A.set("perm", Perm);
    auto S = runBoth(ir::OpKind::Transpose, rnd({2, 5, 3}, 330), {}, A, true);
    EXPECT_TRUE(S.Fallbacks.empty());
  }
  // [1, 5, 3] -> [5, 1, 3] moves only a size-1 axis: the same bytes in the
  // same order, an alias of the producer's buffer.
  {
    ir::Graph G;
    G.setName("alias");
    ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({1, 5, 3})));
    ir::Value *R = G.addNode(ir::OpKind::Abs, {X}, {"r"})->output();
    ir::AttrMap A;
    A.set("perm", Ints{1, 0, 2});
    G.addOutput(G.addNode(ir::OpKind::Transpose, {R}, {"t"}, A)->output());
    ir::inferTypes(G);
    std::vector<Tensor> In{rnd({1, 5, 3}, 331)};
    auto Cpu = backends::getBackend("cpu").compile(G);
    EXPECT_TRUE(Cpu->run(In).at(0).equals(backends::runReference(G, In).at(0)));
    auto St = backends::cpuExecutableStats(*Cpu);
    EXPECT_EQ(St->AliasNodes, 1);
    EXPECT_EQ(St->OwnKernels, 0);
    EXPECT_TRUE(St->Fallbacks.empty());
  }
  // Other dtypes copy the same way.
  Tensor I64 = Tensor::fromVector<int64_t>({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  auto S = runBoth(ir::OpKind::Transpose, I64, {}, {}, true);
  EXPECT_TRUE(S.Fallbacks.empty());
}

TEST(CpuViews, SlicesAreExactCopies) {
  Tensor X = rnd({4, 6, 10}, 340);
  auto I64 = [](Ints V) {
    return Tensor::fromVector<int64_t>(V, Shape({static_cast<int64_t>(V.size())}));
  };
  struct Bounds {
    Ints Starts, Ends, Axes, Steps;
  };
  for (const Bounds &B : {Bounds{{0}, {3}, {-1}, {1}},       // a column block
                          Bounds{{1, 8}, {3, 1}, {0, 2}, {1, -2}}, // backwards
                          Bounds{{-100}, {100}, {1}, {2}},   // clamped
                          Bounds{{5}, {2}, {2}, {1}},        // empty
                          Bounds{{1}, {3}, {0}, {1}}}) {     // whole rows
    auto Str = [](const Ints &V) {
      std::string R = "[";
      for (int64_t I : V)
        R += std::to_string(I) + " ";
      return R + "]";
    };
    SCOPED_TRACE(Str(B.Starts) + Str(B.Ends) + Str(B.Axes) + Str(B.Steps));
    auto S = runBoth(ir::OpKind::Slice, X,
                     {I64(B.Starts), I64(B.Ends), I64(B.Axes), I64(B.Steps)},
                     {}, true);
    EXPECT_TRUE(S.Fallbacks.empty());
  }
}

/// x[N, S, 64] -> QKV projection -> slices -> heads -> softmax(QK^T/8) V
/// -> merge heads -> + x -> LayerNorm: one encoder layer's attention.
TEST(CpuViews, AttentionBlockHasNoFallbacks) {
  ir::Graph G;
  G.setName("attention");
  const int64_t S = 16, D = 64, H = 4;
  ir::Value *X = G.addInput(
      "x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), ir::Dim(S),
                                       ir::Dim(D)}));
  auto Add = [&](ir::OpKind K, std::vector<ir::Value *> In,
                 const std::string &Out, ir::AttrMap A = {}) {
    return G.addNode(K, std::move(In), {Out}, std::move(A))->output();
  };
  auto Const = [&](const std::string &Name, Tensor T) {
    return G.addInitializer(Name, std::move(T));
  };
  auto I64 = [&](const std::string &Name, Ints V) {
    return Const(Name, Tensor::fromVector<int64_t>(
                           V, Shape({static_cast<int64_t>(V.size())})));
  };
  ir::Value *Qkv = Add(ir::OpKind::MatMul, {X, Const("w", rnd({D, 3 * D}, 350, -0.2, 0.2))}, "qkv");
  ir::Value *Heads[3];
  for (int I = 0; I < 3; ++I) {
    std::string Sfx = std::to_string(I);
    ir::Value *Part = Add(ir::OpKind::Slice,
                          {Qkv, I64("s" + Sfx, {I * D}), I64("e" + Sfx, {(I + 1) * D}),
                           I64("a" + Sfx, {-1})},
                          "part" + Sfx);
    // [N, S, D] -> [N, S, H, D/H] -> [N, H, S, D/H]
    ir::Value *R = Add(ir::OpKind::Reshape,
                       {Part, I64("shape" + Sfx, {0, S, H, D / H})}, "r" + Sfx);
    ir::AttrMap P;
    P.set("perm", I == 1 ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
    Heads[I] = Add(ir::OpKind::Transpose, {R}, "h" + Sfx, P);
  }
  ir::Value *Q = Add(ir::OpKind::Div,
                     {Heads[0], Const("scale", Tensor::scalar<float>(8.0f))}, "q");
  ir::Value *Scores = Add(ir::OpKind::MatMul, {Q, Heads[1]}, "scores");
  ir::AttrMap Last;
  Last.set("axis", int64_t(-1));
  ir::Value *Probs = Add(ir::OpKind::Softmax, {Scores}, "probs", Last);
  ir::Value *Ctx = Add(ir::OpKind::MatMul, {Probs, Heads[2]}, "ctx");
  ir::AttrMap Back;
  Back.set("perm", Ints{0, 2, 1, 3});
  ir::Value *Merged = Add(ir::OpKind::Transpose, {Ctx}, "merged", Back);
  ir::Value *Flat = Add(ir::OpKind::Reshape, {Merged, I64("flat", {0, S, D})}, "flat");
  ir::Value *Res = Add(ir::OpKind::Add, {Flat, X}, "res");
  ir::AttrMap Ln = Last;
  Ln.set("epsilon", 1e-5f);
  ir::Value *Y = Add(ir::OpKind::LayerNormalization,
                     {Res, Const("gamma", rnd({D}, 351)), Const("beta", rnd({D}, 352))},
                     "y", Ln);
  G.addOutput(Y);
  ir::inferTypes(G);
  auto Cpu = backends::getBackend("cpu").compile(G);
  for (int64_t Batch : {1, 2}) {
    std::vector<Tensor> In{rnd({Batch, S, D}, 353 + Batch)};
    EXPECT_TRUE(closeTo(Cpu->run(In).at(0), backends::runReference(G, In).at(0)))
        << "batch " << Batch;
    auto St = backends::cpuExecutableStats(*Cpu);
    EXPECT_TRUE(St->Fallbacks.empty());
    // Slices, head splits and the merge are copies; softmax and the
    // normalization row loops.
    EXPECT_GE(St->OwnKernels, 6);
  }
}

#else

TEST(CpuRows, NeedsOneDnn) {
  GTEST_SKIP() << "SKIPPED: built without oneDNN (NNGRAPH_ENABLE_ONEDNN=OFF), "
                  "there is no cpu backend";
}

#endif

} // namespace
} // namespace nng
