//===- BuiltinPassesTest.cpp - shape-infer and dce ------------------------===//
//
// The two built-in passes on graphs built with the IR API: dce removes dead
// chains and unused initializers but keeps graph inputs and outputs; both
// passes report "changed" exactly when they changed something.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::ir;

namespace {

TensorType f32(std::vector<Dim> Dims) {
  return TensorType(DType::F32, std::move(Dims));
}

} // namespace

TEST(DeadCodeEliminationTest, RemovesDeadChainsAndUnusedInitializers) {
  Graph G;
  Value *X = G.addInput("x", f32({2, 3}));
  Value *Unused = G.addInput("unused", f32({1}));
  Value *W =
      G.addInitializer("w", Tensor::fromVector<float>({1, 2, 3}, Shape{3}));
  G.addInitializer("dead_weight", Tensor::fromVector<float>({1}, Shape{1}));
  Node *Live = G.addNode(OpKind::Add, {X, W}, {"y"});
  Node *Dead1 = G.addNode(OpKind::Neg, {X}, {"d1"});
  G.addNode(OpKind::Abs, {Dead1->output()}, {"d2"});
  G.addOutput(Live->output());
  inferTypes(G);

  auto Dce = passes::createDeadCodeEliminationPass();
  EXPECT_EQ(Dce->name(), "dce");
  EXPECT_TRUE(Dce->run(G));
  ASSERT_EQ(G.numNodes(), 1u);
  EXPECT_EQ(G.nodes()[0].get(), Live);
  ASSERT_EQ(G.initializers().size(), 1u);
  EXPECT_EQ(G.initializers()[0]->name(), "w");
  EXPECT_EQ(G.lookup("d1"), nullptr);
  EXPECT_EQ(G.lookup("dead_weight"), nullptr);
  // Graph inputs are the interface: kept even when unused.
  ASSERT_EQ(G.inputs().size(), 2u);
  EXPECT_EQ(G.inputs()[1], Unused);
  EXPECT_EQ(Dce->statistics().at("nodes-erased"), 2);
  EXPECT_EQ(Dce->statistics().at("initializers-erased"), 1);

  Dce->clearStatistics();
  EXPECT_FALSE(Dce->run(G));
  EXPECT_EQ(G.numNodes(), 1u);
}

TEST(DeadCodeEliminationTest, KeepsNodesWithAnyUsedOrOutputResult) {
  Graph G;
  Value *X = G.addInput("x", f32({4}));
  Node *Split = G.addNode(OpKind::Split, {X}, {"a", "b"});
  Node *Copy = G.addNode(OpKind::Identity, {X}, {"c"});
  G.addOutput(Split->output(1)); // Only one of two results is used.
  G.addOutput(Copy->output());
  inferTypes(G);
  EXPECT_FALSE(passes::createDeadCodeEliminationPass()->run(G));
  EXPECT_EQ(G.numNodes(), 2u);
}

TEST(ShapeInferPassTest, FillsUnsetTypesAndReportsChange) {
  Graph G;
  Value *X = G.addInput("x", f32({Dim::symbol("N"), 3}));
  Node *R = G.addNode(OpKind::Relu, {X}, {"y"});
  G.addOutput(R->output());

  auto P = passes::createShapeInferPass();
  EXPECT_EQ(P->name(), "shape-infer");
  EXPECT_TRUE(P->run(G));
  EXPECT_EQ(R->output()->type(), f32({Dim::symbol("N"), 3}));
  EXPECT_EQ(P->statistics().at("values-refined"), 1);
  EXPECT_FALSE(P->run(G));
}
