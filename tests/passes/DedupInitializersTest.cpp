//===- DedupInitializersTest.cpp - dedup-initializers keeps the numbers ---===//
//
// dedup-initializers on graphs with copied weights: outputs agree before and
// after on the reference backend, the first name survives, bytes saved are
// counted, and copies that differ in shape, dtype or bytes stay.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/passes/Passes.h"

using namespace nng;
using namespace nng::simplify_test;

TEST(DedupInitializersTest, SharesCopiesAndCountsBytes) {
  const char *Text = R"(graph {
    input %x: f32[2,3]
    init %w1: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w2: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w3: f32[3,2] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %w4: f32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    init %b1: f32[3] = [0.0, 0.0, 0.0]
    init %b2: f32[3] = [-0.0, 0.0, 0.0]
    %a = Add(%x, %w1)
    %b = Mul(%a, %w2)
    %c = MatMul(%b, %w3)
    %d = Sub(%b, %w4)
    %e = Add(%d, %b1)
    %f = Add(%e, %b2)
    output %c, %f
  })";
  auto P = passes::createDedupInitializersPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "initializers-merged"), 2);
  EXPECT_EQ(stat(*P, "bytes-saved"), 2 * 6 * 4);
  EXPECT_EQ(G->initializers().size(), 4u);
  EXPECT_NE(G->lookup("w1"), nullptr);
  EXPECT_EQ(G->lookup("w2"), nullptr);
  EXPECT_NE(G->lookup("w3"), nullptr); // Same bytes, other shape.
  EXPECT_NE(G->lookup("b2"), nullptr); // -0.0 is other bytes than 0.0.
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(DedupInitializersTest, ElidedDataAndOutputCopiesAreDeclined) {
  const char *Text = R"(graph {
    input %x: f32[2]
    init %e1: f32[2] = elided("fnv1a64:0123456789abcdef")
    init %e2: f32[2] = elided("fnv1a64:0123456789abcdef")
    init %w: f32[2] = [1.0, 2.0]
    init %o: f32[2] = [1.0, 2.0]
    %a = Add(%x, %e1)
    %b = Add(%a, %e2)
    %c = Mul(%b, %w)
    output %c, %o
  })";
  auto G = ir::parseGraph(Text);
  auto P = passes::createDedupInitializersPass();
  EXPECT_FALSE(P->run(*G));
  EXPECT_EQ(stat(*P, "declined: data is elided"), 2);
  EXPECT_EQ(stat(*P, "declined: duplicate is a graph output"), 1);
  EXPECT_EQ(G->initializers().size(), 4u);
}

TEST(DedupInitializersTest, LargeWeightsDifferingBetweenSampledBytesStay) {
  // 64 KiB of weights: the bucket hashes a sample of their bytes, so copies
  // that differ in one element between the sampled blocks share a bucket
  // and only the byte comparison tells them apart.
  constexpr int64_t N = 16384;
  ir::Graph G;
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({N})));
  std::vector<float> Values(N);
  for (int64_t I = 0; I < N; ++I)
    Values[I] = static_cast<float>(I % 97) * 0.25f;
  ir::Value *W1 = G.addInitializer("w1", Tensor::fromVector(Values, {N}));
  ir::Value *W2 = G.addInitializer("w2", Tensor::fromVector(Values, {N}));
  Values[N / 2 + 3] += 1.0f; // Not in a sampled block of 64 bytes.
  ir::Value *W3 = G.addInitializer("w3", Tensor::fromVector(Values, {N}));
  ir::Value *A = G.addNode(ir::OpKind::Add, {X, W1}, {"a"})->output(0);
  ir::Value *B = G.addNode(ir::OpKind::Add, {A, W2}, {"b"})->output(0);
  G.addOutput(G.addNode(ir::OpKind::Add, {B, W3}, {"c"})->output(0));
  auto P = passes::createDedupInitializersPass();
  EXPECT_TRUE(P->run(G));
  EXPECT_EQ(stat(*P, "initializers-merged"), 1);
  EXPECT_NE(G.lookup("w1"), nullptr);
  EXPECT_EQ(G.lookup("w2"), nullptr);
  EXPECT_NE(G.lookup("w3"), nullptr);
}
