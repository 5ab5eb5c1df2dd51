//===- VerifierTest.cpp - Tests for the IR verifier ----------------------===//
//
// A valid graph passes; each invariant the verifier checks (operand counts,
// absent inputs, attribute names/types/requiredness, SSA order, values of
// another graph, graph outputs, inferred types) is broken once and the
// diagnostic names the node and the problem; verifyOrThrow lists them all.
//
//===----------------------------------------------------------------------===//

#include "IrTestUtils.h"

#include "nngraph/ir/Verifier.h"

#include <cmath>

using namespace nng;
using namespace nng::ir;
using namespace nng::ir::test;

namespace {

class Verifier : public IrTest {
protected:
  /// The diagnostics' messages joined by newlines.
  std::string problems() {
    std::string S;
    for (const VerifyDiagnostic &D : verifyGraph(G))
      S += D.Message + "\n";
    return S;
  }
  bool has(const std::string &S, std::string_view Part) {
    return S.find(Part) != std::string::npos;
  }
};

TEST_F(Verifier, ValidGraphPasses) {
  Value *X = in("f32[N,3,8,8]");
  Value *W = G.addInitializer(
      "conv.weight", nng::rt::Tensor::empty(Shape{4, 3, 3, 3}, DType::F32));
  Value *B =
      G.addInitializer("conv.bias", nng::rt::Tensor::empty(Shape{4}, DType::F32));
  Node *C = node(OpKind::Conv, {X, W, B}, attrs({{"pads", Ints{1, 1, 1, 1}}}));
  Node *R = node(OpKind::Relu, {C->output()});
  Node *F = node(OpKind::Flatten, {R->output()});
  G.setOutputs({F->output(), F->output()}); // Listing a value twice is fine.
  EXPECT_EQ(problems(), "");
  inferTypes(G);
  EXPECT_EQ(F->output()->type().toString(), "f32[N,256]");
  EXPECT_EQ(problems(), "");
  EXPECT_NO_THROW(verifyOrThrow(G));
}

TEST_F(Verifier, UninferredGraphUsesInferredTypesOfEarlierNodes) {
  // Nothing ran inferTypes: %shape is still f32[*], yet Reshape needs an
  // i64 shape; the verifier infers along the way instead of complaining.
  Value *X = in("f32[N,3,4]");
  Node *S = node(OpKind::Shape, {X}, attrs({{"end", 2}}));
  Node *R = node(OpKind::Reshape, {X, S->output()});
  G.setOutputs({R->output()});
  EXPECT_EQ(S->output()->type().toString(), "f32[*]");
  EXPECT_EQ(problems(), "");
  // A wrong declaration downstream is still caught.
  R->output()->setType(ty("f32[?,?,?]"));
  EXPECT_TRUE(has(problems(), "declared f32[?,?,?] but inference gives "
                              "f32[?,?]"));
}

TEST_F(Verifier, OptionalInputsMayBeAbsent) {
  Node *N = node(OpKind::Clip, {in("f32[3]"), nullptr, scalar(6.0f)});
  Node *S = node(OpKind::Split, {in("f32[4]")}, {}, 2);
  G.setOutputs({N->output(), S->output(1)});
  EXPECT_EQ(problems(), "");
}

TEST_F(Verifier, OperandCounts) {
  Node *N = node(OpKind::Add, {in("f32[2]")});
  std::string P = problems();
  EXPECT_TRUE(has(P, N->describe()) && has(P, "has 1 inputs") &&
              has(P, "Add takes exactly 2"))
      << P;
  G.eraseNode(N);
  node(OpKind::Relu, {in("f32[2]")}, {}, 2);
  P = problems();
  EXPECT_TRUE(has(P, "has 2 outputs") && has(P, "produces exactly 1")) << P;
}

TEST_F(Verifier, VariadicAndRangeCounts) {
  node(OpKind::Conv,
       {in("f32[1,1,3,3]"), in("f32[1,1,1,1]"), in("f32[1]"), in("f32[1]")});
  std::string P = problems();
  EXPECT_TRUE(has(P, "has 4 inputs; Conv takes 2 to 3")) << P;
  EXPECT_EQ(verifyGraph(G).size(), 1u);
  Graph G2;
  Value *X = G2.addInput("x", ty("f32[2]"));
  G2.addNode(OpKind::Concat, {}, {"y"}, attrs({{"axis", 0}}));
  G2.addNode(OpKind::Sum, {X, X, X, X}, {"s"});
  auto D = verifyGraph(G2);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_TRUE(has(D[0].Message, "Concat takes at least 1")) << D[0].Message;
}

TEST_F(Verifier, AbsentRequiredInput) {
  Node *N = node(OpKind::Add, {in("f32[2]"), nullptr});
  auto D = verifyGraph(G);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0].Where, N);
  EXPECT_TRUE(has(D[0].Message, "input 1 ('B') is absent but not optional"))
      << D[0].Message;
}

TEST_F(Verifier, Attributes) {
  node(OpKind::Relu, {in("f32[2]")}, attrs({{"alpha", 1.0f}}));
  node(OpKind::LeakyRelu, {in("f32[2]")}, attrs({{"alpha", 1}}));
  node(OpKind::Concat, {in("f32[2]")});
  std::string P = problems();
  EXPECT_TRUE(has(P, "attribute 'alpha' is not an attribute of Relu")) << P;
  EXPECT_TRUE(has(P, "attribute 'alpha' is int but LeakyRelu expects float"))
      << P;
  EXPECT_TRUE(has(P, "required attribute 'axis' (int) is missing")) << P;
  EXPECT_EQ(verifyGraph(G).size(), 3u);
}

TEST_F(Verifier, UseBeforeDefinition) {
  Value *X = in("f32[2]");
  Node *A = node(OpKind::Relu, {X});
  Node *B = G.addNode(OpKind::Neg, {A->output()}, {"early"}, {}, A);
  auto D = verifyGraph(G);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0].Where, B);
  EXPECT_TRUE(has(D[0].Message, "used before it is defined") &&
              has(D[0].Message, "%early = Neg"))
      << D[0].Message;
  G.topologicalSort();
  EXPECT_TRUE(verifyGraph(G).empty());
}

TEST_F(Verifier, ValuesOfAnotherGraph) {
  Graph Other;
  Value *Foreign = Other.addInput("foreign", ty("f32[2]"));
  node(OpKind::Relu, {Foreign});
  G.setOutputs({Foreign});
  std::string P = problems();
  EXPECT_TRUE(has(P, "%foreign is not a value of this graph")) << P;
  EXPECT_TRUE(has(P, "graph output 0 %foreign is not defined in this graph"))
      << P;
}

TEST_F(Verifier, DeclaredTypesMustMatchInference) {
  Node *N = node(OpKind::Relu, {in("f32[2]")});
  N->output()->setType(ty("f32[3]"));
  std::string P = problems();
  EXPECT_TRUE(has(P, "declared f32[3] but inference gives f32[2]")) << P;
  N->output()->setType(ty("f32[?]"));
  EXPECT_EQ(problems(), "");
  N->output()->setType(ty("i64[2]"));
  EXPECT_TRUE(has(problems(), "declared i64[2]"));
}

TEST_F(Verifier, InferenceFailuresAreReported) {
  node(OpKind::Add, {in("f32[2]"), in("i64[2]")});
  std::string P = problems();
  EXPECT_TRUE(has(P, "type inference failed") && has(P, "i64[2]")) << P;
}

TEST_F(Verifier, UnknownOp) {
  Node *N = G.addNode(static_cast<OpKind>(NumOpKinds), {in("f32[2]")}, {"y"});
  auto D = verifyGraph(G);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0].Where, N);
  EXPECT_TRUE(has(D[0].Message, "unknown op")) << D[0].Message;
}

TEST_F(Verifier, VerifyOrThrowListsEveryProblem) {
  G.setName("bad");
  node(OpKind::Add, {in("f32[2]")});
  node(OpKind::Concat, {in("f32[2]")});
  node(OpKind::Relu, {in("f32[2]")}, attrs({{"bogus", 1}}));
  try {
    verifyOrThrow(G);
    ADD_FAILURE() << "no error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Verify);
    std::string M = E.what();
    EXPECT_TRUE(has(M, "graph 'bad' is invalid (3 problems)")) << M;
    EXPECT_TRUE(has(M, "= Add") && has(M, "= Concat") && has(M, "= Relu")) << M;
    EXPECT_TRUE(has(M, "'bogus'")) << M;
  }
}

} // namespace

TEST_F(Verifier, QuantizationScalesMustBeFiniteAndNonzero) {
  Value *X = in("f32[2,3]");
  Value *Zero = G.addInitializer("s0", nng::rt::Tensor::scalar<float>(0.f));
  Value *Good = G.addInitializer("s1", nng::rt::Tensor::scalar<float>(0.5f));
  Value *Nan = G.addInitializer(
      "w_scale", nng::rt::Tensor::fromVector<float>({1.f, std::nanf("")}, Shape{2}));
  Value *Q8 = G.addInitializer(
      "q", nng::rt::Tensor::fromVector<int8_t>({1, 2, 3, 4}, Shape{2, 2}));
  Node *Q = node(OpKind::QuantizeLinear, {X, Zero});
  Node *D = node(OpKind::DequantizeLinear, {Q8, Nan}, attrs({{"axis", 0}}));
  Node *Ok = node(OpKind::QuantizeLinear, {X, Good});
  G.setOutputs({Q->output(), D->output(), Ok->output()});
  std::string P = problems();
  EXPECT_TRUE(has(P, "y_scale %s0 holds 0; a quantization scale must be a "
                     "finite nonzero number"))
      << P;
  EXPECT_TRUE(has(P, "x_scale %w_scale holds nan at index 1")) << P;
  EXPECT_FALSE(has(P, "%s1")) << P;
}
