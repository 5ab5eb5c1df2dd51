//===- CpuAttentionViewsTest.cpp - Attention operands read in place -------===//
//
// torch's multi-head attention exports Slice -> Reshape -> Transpose from
// one projection to each of Q, K and V; the cpu backend leaves those views
// unmaterialized and its attention loop reads the projection in place
// (InPlaceViews.h). Checked against the reference backend at many shapes of
// one compiled executable (no copy step, no new compile), with K given
// either way, and the cases that must copy after all: a view the loop
// cannot read (a strided head axis) and a view another node reads too.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::cputest;

namespace {

#if NNGRAPH_HAVE_ONEDNN

constexpr int64_t E = 32, Heads = 4, Dh = 8;

/// What to vary in the attention block.
struct Block {
  bool KeysTransposed = true; ///< K as [.., Dh, S] (torch's), else [.., S, Dh].
  int64_t QStep = 1;          ///< Slice step of Q's columns (2: strided).
  bool KeysAlsoOutput = false; ///< K's slice is a graph output too.
};

/// x [S, N, E] -> qkv = x W [S, N, 3E] (W of twice the width when Q's slice
/// is strided) -> per operand Slice, Reshape [S, N*H, Dh], Transpose ->
/// nng.Attention -> Transpose back [S, N*H, Dh].
std::unique_ptr<ir::Graph> attentionBlock(const Block &B) {
  auto G = std::make_unique<ir::Graph>();
  G->setName("mha");
  auto Sym = [](const char *N) { return ir::Dim::symbol(N); };
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, {Sym("S"), Sym("N"), ir::Dim(E)}));
  int64_t Width = B.QStep == 1 ? 3 * E : (B.QStep + 2) * E;
  ir::Value *W = G->addInitializer("w", rnd({E, Width}, 5));
  ir::Value *Qkv = add(*G, ir::OpKind::MatMul, {X, W}, "qkv");
  auto I64 = [&](const std::string &Name, std::vector<int64_t> V) {
    int64_t Count = static_cast<int64_t>(V.size());
    return G->addInitializer(Name,
                             Tensor::fromVector<int64_t>(V, Shape{Count}));
  };
  ir::Value *Axes = I64("axes", {2});
  ir::Value *HeadShape = I64("heads", {0, -1, Dh});
  auto Operand = [&](const std::string &Name, int64_t Start, int64_t Step,
                     std::vector<int64_t> Perm) {
    std::vector<ir::Value *> In = {Qkv, I64(Name + ".start", {Start}),
                                   I64(Name + ".end", {Start + Step * E}),
                                   Axes};
    if (Step != 1)
      In.push_back(I64(Name + ".step", {Step}));
    ir::Value *S = add(*G, ir::OpKind::Slice, In, Name + ".slice");
    ir::Value *R = add(*G, ir::OpKind::Reshape, {S, HeadShape}, Name + ".r");
    ir::AttrMap A;
    A.set("perm", Perm);
    return std::pair{S, add(*G, ir::OpKind::Transpose, {R}, Name, A)};
  };
  int64_t KStart = B.QStep * E;
  auto [QS, Q] = Operand("q", 0, B.QStep, {1, 0, 2});
  auto [KS, K] = Operand("k", KStart, 1,
                         B.KeysTransposed ? std::vector<int64_t>{1, 2, 0}
                                          : std::vector<int64_t>{1, 0, 2});
  auto [VS, V] = Operand("v", KStart + E, 1, {1, 0, 2});
  ir::AttrMap A;
  A.set("scale", ir::Attribute(0.35f));
  A.set("k_transposed", ir::Attribute(int64_t(B.KeysTransposed)));
  ir::Value *Y = add(*G, ir::OpKind::Attention, {Q, K, V}, "y", A);
  ir::AttrMap P;
  P.set("perm", std::vector<int64_t>{1, 0, 2});
  G->addOutput(add(*G, ir::OpKind::Transpose, {Y}, "out", P));
  if (B.KeysAlsoOutput)
    G->addOutput(KS);
  ir::inferTypes(*G);
  return G;
}

/// Runs one executable of B's block at many (S, N), each against the
/// reference; returns the schedule of the last.
std::string checkShapes(const Block &B) {
  auto G = attentionBlock(B);
  auto Exe = backends::getBackend("cpu").compile(*G);
  const std::vector<std::pair<int64_t, int64_t>> Shapes = {
      {5, 2}, {1, 1}, {37, 3}, {130, 1}, {64, 4}, {1, 3}, {200, 2}};
  unsigned Seed = 40;
  for (const auto &[S, N] : Shapes) {
    std::string What = "S=" + std::to_string(S) + " N=" + std::to_string(N);
    SCOPED_TRACE(What);
    std::vector<Tensor> In = {rnd({S, N, E}, Seed++)};
    std::vector<Tensor> Want = backends::runReference(*G, In);
    std::vector<Tensor> Got = Exe->run(In);
    EXPECT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < std::min(Got.size(), Want.size()); ++I) {
      EXPECT_EQ(Got[I].shape(), Want[I].shape());
      if (Got[I].shape() != Want[I].shape())
        continue;
      int64_t Bad = -1;
      for (int64_t J = 0; J < Want[I].numel() && Bad < 0; ++J)
        if (!(std::fabs(Got[I].getFlat(J) - Want[I].getFlat(J)) <=
              1e-5 + 1e-4 * std::fabs(Want[I].getFlat(J))))
          Bad = J;
      EXPECT_LT(Bad, 0) << What << " output " << I << " element " << Bad
                        << ": " << (Bad < 0 ? 0 : Got[I].getFlat(Bad))
                        << " instead of "
                        << (Bad < 0 ? 0 : Want[I].getFlat(Bad));
    }
    auto Stats = backends::cpuExecutableStats(*Exe);
    EXPECT_TRUE(Stats && Stats->Fallbacks.empty()) << "ran on a node kernel";
    EXPECT_EQ(Stats->Specializations, 1)
        << "a new shape compiled a program: " << Stats->ReshapeRefusal;
  }
  return backends::cpuSchedule(*Exe).value_or("");
}

/// The number of lines of Schedule that contain Text.
int count(const std::string &Schedule, const std::string &Text) {
  int N = 0;
  for (size_t At = Schedule.find(Text); At != std::string::npos;
       At = Schedule.find(Text, At + 1))
    ++N;
  return N;
}

TEST(CpuAttentionViews, TorchBlockReadsTheProjectionInPlace) {
  REQUIRE_ONEDNN();
  std::string Sched = checkShapes({});
  EXPECT_EQ(count(Sched, "operands read in place"), 1) << Sched;
  EXPECT_EQ(count(Sched, "= Slice"), 0) << Sched;
  // The output's transpose is the one copy left.
  EXPECT_EQ(count(Sched, "= Transpose"), 1) << Sched;
}

TEST(CpuAttentionViews, KeysAsRowsReadInPlace) {
  REQUIRE_ONEDNN();
  std::string Sched = checkShapes({.KeysTransposed = false});
  EXPECT_EQ(count(Sched, "operands read in place"), 1) << Sched;
  EXPECT_EQ(count(Sched, "= Slice"), 0) << Sched;
}

TEST(CpuAttentionViews, StridedColumnsAreCopiedFirst) {
  REQUIRE_ONEDNN();
  // Q's columns two apart: the loop needs them contiguous, so Q's view is
  // copied where the attention reads it; K and V are still read in place.
  std::string Sched = checkShapes({.QStep = 2});
  EXPECT_EQ(count(Sched, "(view made real)"), 1) << Sched;
  EXPECT_EQ(count(Sched, "operands read in place"), 1) << Sched;
}

TEST(CpuAttentionViews, ASliceReadTwiceIsCopied) {
  REQUIRE_ONEDNN();
  // K's slice is also a graph output: a real buffer, copied once; its
  // reshape and transpose are views the loop reads.
  std::string Sched = checkShapes({.KeysAlsoOutput = true});
  EXPECT_EQ(count(Sched, "= Slice"), 1) << Sched;
  EXPECT_EQ(count(Sched, "operands read in place"), 1) << Sched;
}

#endif

} // namespace
