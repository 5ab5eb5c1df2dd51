//===- GraphTest.cpp - Tests for Graph, Node and Value -------------------===//
//
// Building graphs (names, uniquified outputs, use lists), attributes with
// op-table defaults, replaceAllUsesWith, eraseNode/eraseValue, rename,
// topologicalSort (stable order, cycle error) and clone.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"
#include "nngraph/ir/Parser.h"

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

bool has(const std::string &S, std::string_view Part) {
  return S.find(Part) != std::string::npos;
}

TEST(Graph, InputsInitializersAndNames) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[N,4]"));
  EXPECT_TRUE(X->isInput());
  EXPECT_EQ(X->producer(), nullptr);
  EXPECT_EQ(X->graph(), &G);
  EXPECT_THROW(G.addInput("x", ty("f32[2]")), Error);
  Value *W = G.addInitializer("fc.weight",
                              nng::rt::Tensor::empty(Shape{3, 4}, DType::F32));
  EXPECT_TRUE(W->isInitializer());
  EXPECT_EQ(W->type().toString(), "f32[3,4]");
  EXPECT_TRUE(W->data().defined());
  EXPECT_EQ(constantValue(W), &W->data());
  EXPECT_EQ(constantValue(X), nullptr);
  Value *E = G.addElidedInitializer("big", ty("f32[1000]"), "fnv1a64:00");
  EXPECT_FALSE(E->data().defined());
  EXPECT_EQ(constantValue(E), nullptr);
  EXPECT_EQ(G.lookup("fc.weight"), W);
  EXPECT_EQ(G.lookup("nope"), nullptr);
  EXPECT_EQ(G.inputs().size(), 1u);
  EXPECT_EQ(G.initializers().size(), 2u);
}

TEST(Graph, AddNodeUsesAndUniqueNames) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[2]"));
  Node *A = G.addNode(OpKind::Relu, {X}, {"y"});
  Node *B = G.addNode(OpKind::Add, {X, A->output()}, {"y"});
  EXPECT_EQ(A->output()->name(), "y");
  EXPECT_EQ(B->output()->name(), "y.1");
  EXPECT_EQ(G.uniqueName("y"), "y.2");
  EXPECT_EQ(G.uniqueName("z"), "z");
  EXPECT_EQ(A->output()->producer(), A);
  EXPECT_EQ(X->uses().size(), 2u);
  EXPECT_EQ(X->uses()[1], (Use{B, 0}));
  EXPECT_EQ(A->output()->uses(), (std::vector<Use>{{B, 1}}));
  B->setInput(1, X);
  EXPECT_FALSE(A->output()->hasUses());
  EXPECT_EQ(X->uses().size(), 3u);
  B->truncateInputs(1);
  EXPECT_EQ(X->uses().size(), 2u);
  EXPECT_EQ(B->numInputs(), 1u);
}

TEST(Graph, AttributesWithDefaults) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[1,1,4,4]"));
  Value *W = G.addInput("w", ty("f32[1,1,3,3]"));
  Node *C =
      G.addNode(OpKind::Conv, {X, W}, {"y"}, attrs({{"strides", Ints{2, 2}}}));
  C->setName("conv_0");
  EXPECT_EQ(C->describe(), "node %y = Conv ('conv_0')");
  EXPECT_EQ(C->attrInt("group"), 1);
  EXPECT_EQ(C->attrString("auto_pad"), "NOTSET");
  EXPECT_EQ(C->attrInts("strides"), (Ints{2, 2}));
  EXPECT_EQ(C->attrInts("pads"), Ints{});
  Node *Cat = G.addNode(OpKind::Concat, {X}, {"c"});
  try {
    Cat->attr("axis");
    ADD_FAILURE() << "no error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Verify);
    EXPECT_TRUE(has(E.what(), "%c = Concat") && has(E.what(), "'axis'"))
        << E.what();
  }
}

TEST(Graph, ReplaceAllUsesWithAndErase) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[2]"));
  Node *A = G.addNode(OpKind::Relu, {X}, {"a"});
  Node *B = G.addNode(OpKind::Neg, {A->output()}, {"b"});
  G.setOutputs({A->output(), B->output()});
  EXPECT_THROW(G.eraseNode(A), Error);
  G.replaceAllUsesWith(A->output(), X);
  EXPECT_EQ(B->input(0), X);
  EXPECT_EQ(G.outputs()[0], X);
  EXPECT_FALSE(A->output()->hasUses());
  G.eraseNode(A);
  EXPECT_EQ(G.numNodes(), 1u);
  EXPECT_EQ(G.lookup("a"), nullptr);
  EXPECT_EQ(X->uses(), (std::vector<Use>{{B, 0}}));
  Value *Unused = G.addInput("unused", ty("f32[]"));
  G.eraseValue(Unused);
  EXPECT_EQ(G.inputs().size(), 1u);
  EXPECT_THROW(G.eraseValue(X), Error);
  EXPECT_TRUE(G.isOutput(X));
}

TEST(Graph, Rename) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[2]"));
  G.addInput("taken", ty("f32[2]"));
  G.rename(X, "input");
  EXPECT_EQ(X->name(), "input");
  EXPECT_EQ(G.lookup("input"), X);
  EXPECT_EQ(G.lookup("x"), nullptr);
  EXPECT_THROW(G.rename(X, "taken"), Error);
}

TEST(Graph, TopologicalSortIsStable) {
  Graph G;
  Value *X = G.addInput("x", ty("f32[2]"));
  Node *A = G.addNode(OpKind::Relu, {X}, {"a"});
  Node *Early = G.addNode(OpKind::Neg, {A->output()}, {"early"}, {}, A);
  Node *Indep = G.addNode(OpKind::Abs, {X}, {"indep"}, {}, Early);
  Node *Last = G.addNode(OpKind::Exp, {X}, {"last"});
  G.topologicalSort();
  std::vector<Node *> Order;
  for (const auto &N : G.nodes())
    Order.push_back(N.get());
  EXPECT_EQ(Order, (std::vector<Node *>{Indep, A, Early, Last}));
}

TEST(Graph, TopologicalSortReportsCycle) {
  Graph G;
  G.setName("loop");
  Value *X = G.addInput("x", ty("f32[2]"));
  Node *A = G.addNode(OpKind::Relu, {X}, {"a"});
  Node *B = G.addNode(OpKind::Neg, {A->output()}, {"b"});
  A->setInput(0, B->output());
  try {
    G.topologicalSort();
    ADD_FAILURE() << "no error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Verify);
    EXPECT_TRUE(has(E.what(), "graph 'loop' has a cycle")) << E.what();
  }
  EXPECT_EQ(G.numNodes(), 2u); // Nothing lost.
}

TEST(Graph, Clone) {
  Graph G;
  G.setName("g");
  Value *X = G.addInput("x", ty("f32[N,4]"));
  Value *W = G.addInitializer("w", nng::rt::Tensor::fromVector<float>(
                                       {1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2}));
  Value *E = G.addElidedInitializer("e", ty("f32[2]"), "fnv1a64:12");
  Node *M = G.addNode(OpKind::MatMul, {X, W}, {"m"});
  M->setName("mm");
  M->setScope({"layer1.fc", "Linear"});
  Node *A = G.addNode(OpKind::Add, {M->output(), E}, {"y"});
  Node *Cl = G.addNode(OpKind::Clip, {A->output(), nullptr, nullptr}, {"c"});
  G.setOutputs({Cl->output()});
  inferTypes(G);

  std::unique_ptr<Graph> C = G.clone();
  EXPECT_EQ(C->name(), "g");
  ASSERT_EQ(C->numNodes(), 3u);
  const Node &CM = *C->nodes()[0];
  EXPECT_NE(&CM, M);
  EXPECT_EQ(CM.name(), "mm");
  EXPECT_EQ(CM.scope(), (Scope{"layer1.fc", "Linear"}));
  EXPECT_EQ(CM.input(0), C->lookup("x"));
  EXPECT_EQ(CM.input(0)->graph(), C.get());
  EXPECT_EQ(C->lookup("y")->type().toString(), "f32[N,2]");
  EXPECT_EQ(C->nodes()[2]->input(1), nullptr);
  EXPECT_EQ(C->nodes()[2]->numInputs(), 3u);
  EXPECT_EQ(C->outputs()[0], C->lookup("c"));
  // Initializer data is shared; elided ones keep their hash.
  EXPECT_EQ(C->lookup("w")->data().storage(), W->data().storage());
  EXPECT_EQ(C->lookup("e")->elidedHash(), "fnv1a64:12");
  // Independent structure.
  C->rename(C->lookup("x"), "x2");
  EXPECT_EQ(G.lookup("x"), X);
  EXPECT_EQ(X->uses().size(), 1u);
}

} // namespace

TEST(GraphTest, PurityComesFromTheOpTable) {
  // Dropout is random_in_training: pure when training_mode is absent or a
  // constant false, random when true or known only at run time.
  std::unique_ptr<Graph> G = parseGraph(R"(graph {
    input %x: f32[4]
    input %t: bool[]
    init %off: bool[] = [false]
    init %on: bool[] = [true]
    %a = Dropout(%x)
    %b = Dropout(%x, _, %off)
    %c = Dropout(%x, _, %on)
    %d = Dropout(%x, _, %t)
    %e = Relu(%x)
    output %a, %b, %c, %d, %e
  })",
                                        "purity.nng");
  std::vector<bool> Pure;
  for (const auto &N : G->nodes())
    Pure.push_back(N->isPure());
  EXPECT_EQ(Pure, (std::vector<bool>{true, true, false, false, true}));
}
