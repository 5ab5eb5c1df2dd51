//===- AttentionTest.cpp - nng.Attention on both backends -----------------===//
//
// The reference kernel of nng.Attention gives exactly what the unfused
// graph (MatMul, Transpose, Mul, Add, Softmax, MatMul) gives on the
// reference backend, for masks of every broadcast shape, K given as [.., N,
// D] or transposed, batch axes that broadcast; bad operands fail with
// messages naming them. The cpu backend's flash-attention loop matches the
// reference within 1e-5 (relative to the output's magnitude) on random
// shapes, runs as its own loop (no fallback), and one compiled executable
// serves many sequence and cache lengths by reshaping, without compiling.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>

using namespace nng;
using namespace nng::cputest;

namespace {

/// An attention case: Q [.., M, D], K [.., N, D] (or [.., D, N] when KT),
/// V [.., N, Dv], an optional mask.
struct AttnCase {
  Tensor Q, K, V, Mask;
  float Scale = 0.125f;
  bool KT = false;
};

/// The one-node graph of nng.Attention over C (all operands inputs).
std::unique_ptr<ir::Graph> fusedGraph(const AttnCase &C,
                                      std::vector<Tensor> &Feeds) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("attention");
  std::vector<ir::Value *> Ins;
  const Tensor *Ops[] = {&C.Q, &C.K, &C.V, &C.Mask};
  const char *Names[] = {"q", "k", "v", "mask"};
  for (size_t I = 0; I < 4; ++I) {
    if (!Ops[I]->defined())
      continue;
    Ins.push_back(G->addInput(
        Names[I], ir::TensorType(Ops[I]->dtype(), Ops[I]->shape())));
    Feeds.push_back(*Ops[I]);
  }
  ir::AttrMap A;
  A.set("scale", ir::Attribute(C.Scale));
  A.set("k_transposed", ir::Attribute(int64_t(C.KT)));
  G->addOutput(add(*G, OpKind::Attention, Ins, "y", A));
  ir::inferTypes(*G);
  return G;
}

/// The unfused graph: MatMul(Q, Transpose(K)) -> Mul(scale) -> [Add(mask)]
/// -> Softmax(-1) -> MatMul(., V).
std::unique_ptr<ir::Graph> unfusedGraph(const AttnCase &C,
                                        std::vector<Tensor> &Feeds) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("unfused");
  ir::Value *Q = G->addInput("q", ir::TensorType(DType::F32, C.Q.shape()));
  ir::Value *K = G->addInput("k", ir::TensorType(DType::F32, C.K.shape()));
  ir::Value *V = G->addInput("v", ir::TensorType(DType::F32, C.V.shape()));
  Feeds = {C.Q, C.K, C.V};
  ir::Value *Kt = K;
  if (!C.KT) {
    int64_t R = static_cast<int64_t>(C.K.rank());
    std::vector<int64_t> Perm(R);
    for (int64_t I = 0; I < R; ++I)
      Perm[I] = I < R - 2 ? I : 2 * R - 3 - I;
    ir::AttrMap A;
    A.set("perm", Perm);
    Kt = add(*G, OpKind::Transpose, {K}, "kt", A);
  }
  ir::Value *S = add(*G, OpKind::MatMul, {Q, Kt}, "s");
  ir::Value *Sc = G->addInitializer(
      "scale", Tensor::fromVector<float>({C.Scale}, Shape{}));
  S = add(*G, OpKind::Mul, {S, Sc}, "scaled");
  if (C.Mask.defined()) {
    ir::Value *M =
        G->addInput("mask", ir::TensorType(DType::F32, C.Mask.shape()));
    Feeds.push_back(C.Mask);
    S = add(*G, OpKind::Add, {S, M}, "masked");
  }
  ir::AttrMap SmA;
  SmA.set("axis", int64_t(-1));
  ir::Value *P = add(*G, OpKind::Softmax, {S}, "p", SmA);
  G->addOutput(add(*G, OpKind::MatMul, {P, V}, "y"));
  ir::inferTypes(*G);
  return G;
}

Tensor runFused(const AttnCase &C) {
  std::vector<Tensor> Feeds;
  auto G = fusedGraph(C, Feeds);
  return backends::runReference(*G, Feeds).at(0);
}

Tensor runUnfused(const AttnCase &C) {
  std::vector<Tensor> Feeds;
  auto G = unfusedGraph(C, Feeds);
  return backends::runReference(*G, Feeds).at(0);
}

TEST(AttentionReference, SmallCaseByHand) {
  // One query against two keys: scores 1*0.5 = 0.5 and 0; probabilities
  // e^0.5/(e^0.5+1) and 1/(e^0.5+1).
  Tensor Y = OpTest(OpKind::Attention)
                 .in(f32({1, 0}, {1, 2}))
                 .in(f32({1, 0, 0, 1}, {2, 2}))
                 .in(f32({2, 0, 0, 4}, {2, 2}))
                 .attr("scale", ir::Attribute(0.5f))
                 .run1();
  double P0 = std::exp(0.5) / (std::exp(0.5) + 1), P1 = 1 - P0;
  EXPECT_TENSOR_TOL(Y, f32({float(2 * P0), float(4 * P1)}, {1, 2}), 1e-6);
}

TEST(AttentionReference, EqualsTheUnfusedGraphExactly) {
  struct Shapes {
    Shape Q, K, V, Mask;
    bool KT;
  };
  std::vector<Shapes> All = {
      {{5, 8}, {7, 8}, {7, 3}, {}, false},
      {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, {5, 7}, false},
      {{2, 3, 5, 8}, {2, 3, 8, 7}, {2, 3, 7, 4}, {2, 1, 1, 7}, true},
      {{2, 3, 5, 8}, {1, 3, 7, 8}, {3, 7, 4}, {7}, false},
      {{3, 1, 8}, {3, 9, 8}, {3, 9, 8}, {3, 1, 9}, false},
      {{4, 2, 6}, {4, 6, 2}, {4, 2, 6}, {1}, true},
  };
  unsigned Seed = 1;
  for (const Shapes &S : All) {
    AttnCase C;
    C.Q = rnd(S.Q, Seed++);
    C.K = rnd(S.K, Seed++);
    C.V = rnd(S.V, Seed++);
    if (S.Mask.rank() > 0)
      C.Mask = rnd(S.Mask, Seed++, -2, 0);
    C.KT = S.KT;
    C.Scale = 0.3f;
    SCOPED_TRACE("Q " + S.Q.toString() + " K " + S.K.toString());
    EXPECT_TENSOR_TOL(runFused(C), runUnfused(C), 0.0);
  }
}

TEST(AttentionReference, MaskedKeysGetNoWeight) {
  // A causal -inf mask: row i sees keys 0..i only.
  AttnCase C;
  C.Q = rnd({3, 4}, 1);
  C.K = rnd({3, 4}, 2);
  C.V = rnd({3, 2}, 3);
  float Inf = std::numeric_limits<float>::infinity();
  C.Mask = f32({0, -Inf, -Inf, 0, 0, -Inf, 0, 0, 0}, {3, 3});
  Tensor Y = runFused(C);
  EXPECT_TENSOR_TOL(Y, runUnfused(C), 0.0);
  // Row 0 is V's row 0.
  EXPECT_NEAR(Y.getFlat(0), C.V.getFlat(0), 1e-7);
  EXPECT_NEAR(Y.getFlat(1), C.V.getFlat(1), 1e-7);
}

TEST(AttentionReference, BadOperandsFail) {
  auto T = [](Tensor Q, Tensor K, Tensor V) {
    OpTest O(OpKind::Attention);
    O.in(std::move(Q)).in(std::move(K)).in(std::move(V));
    O.attr("scale", ir::Attribute(1.0f));
    return O;
  };
  EXPECT_FAILS(T(rnd({2, 4}, 1), rnd({3, 5}, 2), rnd({3, 2}, 3)), "D = 4");
  EXPECT_FAILS(T(rnd({2, 4}, 1), rnd({3, 4}, 2), rnd({5, 2}, 3)), "N = 3");
  EXPECT_FAILS(T(rnd({4}, 1), rnd({3, 4}, 2), rnd({3, 2}, 3)), "rank");
  // A mask that would grow the one query row to five.
  OpTest M = T(rnd({1, 4}, 1), rnd({3, 4}, 2), rnd({3, 2}, 3));
  M.in(rnd({5, 3}, 4));
  EXPECT_FAILS(M, "mask");
}

#if NNGRAPH_HAVE_ONEDNN

/// |Got - Want| <= Tol * max(1, max |Want|).
::testing::AssertionResult near(const Tensor &Got, const Tensor &Want,
                                double Tol) {
  if (Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "shape " << Got.shape().toString() << ", want "
           << Want.shape().toString();
  double Mag = 1, Worst = 0;
  for (int64_t I = 0; I < Want.numel(); ++I)
    Mag = std::max(Mag, std::fabs(Want.getFlat(I)));
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double D = std::fabs(Got.getFlat(I) - Want.getFlat(I));
    if (!(D <= Tol * Mag))
      return ::testing::AssertionFailure()
             << "element " << I << ": cpu " << Got.getFlat(I)
             << ", reference " << Want.getFlat(I);
    Worst = std::max(Worst, D);
  }
  return ::testing::AssertionSuccess();
}

/// C's graph run by the cpu backend and by the reference, and the cpu
/// executable's statistics.
struct CpuRun {
  Tensor Got, Want;
  std::optional<backends::CpuExecutableStats> Stats;
};
CpuRun runOnCpu(const AttnCase &C) {
  std::vector<Tensor> Feeds;
  auto G = fusedGraph(C, Feeds);
  CpuRun R;
  R.Want = backends::runReference(*G, Feeds).at(0);
  auto Exe = backends::getBackend("cpu").compile(*G);
  R.Got = Exe->run(Feeds).at(0);
  R.Stats = backends::cpuExecutableStats(*Exe);
  return R;
}

TEST(AttentionCpu, RandomShapesMatchTheReference) {
  std::mt19937 Gen(17);
  auto U = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Gen);
  };
  // The edges first (one row, one key, decode-like), then random ones.
  std::vector<std::array<int64_t, 6>> Dims = {
      {1, 1, 1, 1, 8, 0},   {2, 4, 1, 300, 64, 1}, {1, 2, 300, 1, 16, 2},
      {1, 1, 5, 257, 128, 3}, {8, 1, 3, 129, 32, 4}, {1, 8, 1, 300, 64, 5}};
  while (Dims.size() < 22) {
    int64_t B = U(1, 4), H = U(1, 8), M = U(1, 300), N = U(1, 300),
            D = U(8, 128);
    if (B * H * M * N * D <= 12'000'000)
      Dims.push_back({B, H, M, N, D, U(0, 5)});
  }
  unsigned Seed = 100;
  for (const auto &[B, H, M, N, D, Variant] : Dims) {
    AttnCase C;
    int64_t Dv = Variant % 2 ? D : std::max<int64_t>(1, D / 2 + 3);
    C.KT = Variant % 3 == 1;
    C.Scale = 1.0f / std::sqrt(float(D));
    C.Q = rnd({B, H, M, D}, Seed++);
    // K broadcast over the batch in one variant.
    C.K = rnd(C.KT ? Shape{Variant == 4 ? 1 : B, H, D, N}
                   : Shape{Variant == 4 ? 1 : B, H, N, D},
              Seed++);
    C.V = rnd({Variant == 4 ? 1 : B, H, N, Dv}, Seed++);
    switch (Variant) {
    case 1:
      C.Mask = rnd({M, N}, Seed++, -3, 0);
      break;
    case 2:
      C.Mask = rnd({B, 1, 1, N}, Seed++, -3, 0); // Key padding.
      break;
    case 3:
      C.Mask = rnd({B, H, M, N}, Seed++, -3, 0);
      break;
    case 5:
      C.Mask = rnd({N}, Seed++, -3, 0);
      break;
    default:
      break;
    }
    std::string What = "B=" + std::to_string(B) + " H=" + std::to_string(H) +
                       " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                       " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv) +
                       " variant " + std::to_string(Variant);
    SCOPED_TRACE(What);
    CpuRun R = runOnCpu(C);
    EXPECT_TRUE(near(R.Got, R.Want, 1e-5));
    ASSERT_TRUE(R.Stats && R.Stats->Compiled);
    EXPECT_TRUE(R.Stats->Fallbacks.empty()) << "ran on a node kernel";
    EXPECT_GE(R.Stats->OwnKernels, 1);
  }
}

TEST(AttentionCpu, HeadsWiderThanTheLoopRunOnTheNodeKernel) {
  // D over 512: the loop copies a block's queries to the stack and declines
  // such heads (LowerAttention.cpp); the node kernel serves them.
  AttnCase C;
  constexpr int64_t D = 520;
  C.Scale = 1.0f / std::sqrt(float(D));
  C.Q = rnd({1, 2, 3, D}, 90);
  C.K = rnd({1, 2, 5, D}, 91);
  C.V = rnd({1, 2, 5, 8}, 92);
  CpuRun R = runOnCpu(C);
  EXPECT_TRUE(near(R.Got, R.Want, 1e-5));
  ASSERT_TRUE(R.Stats && R.Stats->Compiled);
  EXPECT_FALSE(R.Stats->Fallbacks.empty()) << "the loop took a head of 520";
}

TEST(AttentionCpu, OneExecutableServesEveryLength) {
  // Q [2, 3, M, 16] against a cache of N keys, mask [M, N]: M and N
  // symbolic, drawn from 1..300 (a decoder's step has M = 1).
  auto G = std::make_unique<ir::Graph>();
  G->setName("lengths");
  auto Sym = [](const char *N) { return ir::Dim::symbol(N); };
  auto T = [&](std::vector<ir::Dim> D) {
    return ir::TensorType(DType::F32, std::move(D));
  };
  ir::Value *Q = G->addInput("q", T({2, 3, Sym("M"), 16}));
  ir::Value *K = G->addInput("k", T({2, 3, Sym("N"), 16}));
  ir::Value *V = G->addInput("v", T({2, 3, Sym("N"), 16}));
  ir::Value *Mask = G->addInput("mask", T({Sym("M"), Sym("N")}));
  ir::AttrMap A;
  A.set("scale", ir::Attribute(0.25f));
  G->addOutput(add(*G, OpKind::Attention, {Q, K, V, Mask}, "y", A));
  ir::inferTypes(*G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  std::mt19937 Gen(23);
  std::uniform_int_distribution<int64_t> U(1, 300);
  unsigned Seed = 1;
  for (int Run = 0; Run < 40; ++Run) {
    int64_t M = Run < 20 ? 1 + Run % 3 : U(Gen), N = Run < 20 ? 5 + 13 * Run
                                                              : U(Gen);
    SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N));
    std::vector<Tensor> Feeds = {rnd({2, 3, M, 16}, Seed++),
                                 rnd({2, 3, N, 16}, Seed++),
                                 rnd({2, 3, N, 16}, Seed++),
                                 rnd({M, N}, Seed++, -2, 0)};
    Tensor Want = backends::runReference(*G, Feeds).at(0);
    Tensor Got = Exe->run(Feeds).at(0);
    ASSERT_TRUE(near(Got, Want, 1e-5));
    auto Stats = backends::cpuExecutableStats(*Exe);
    ASSERT_GE(Stats->Specializations, 1);
    ASSERT_LE(Stats->Specializations, 2)
        << "a new length compiled a program: " << Stats->ReshapeRefusal;
    ASSERT_EQ(Stats->Specializations + Stats->Reshapes, Run + 1);
  }
}

#endif

} // namespace
