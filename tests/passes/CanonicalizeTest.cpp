//===- CanonicalizeTest.cpp - canonicalize keeps the numbers --------------===//
//
// canonicalize on the lit test graphs and a few more: outputs before and
// after agree on the reference backend, output names survive, a second run
// changes nothing, statistics name every rewrite and every decline, the
// declines are explained under --debug-only=canonicalize, and the
// max-folded-elements option is checked.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <sstream>

using namespace nng;
using namespace nng::simplify_test;
using ir::OpKind;

namespace {

std::string litFile(const std::string &Name) {
  return std::string(NNGRAPH_SOURCE_DIR) + "/tests/lit/passes/" + Name;
}

std::string readLit(const std::string &Name) {
  return ir::printGraph(*ir::parseGraphFile(litFile(Name)));
}

} // namespace

TEST(CanonicalizeTest, NoOpsKeepTheNumbers) {
  auto P = passes::createCanonicalizePass();
  auto G = expectSameOutputs(readLit("canonicalize.nng"), *P);
  EXPECT_EQ(countOps(*G, OpKind::Identity), 1u); // %keep: output of an input.
  EXPECT_EQ(countOps(*G, OpKind::Concat), 0u);
  EXPECT_EQ(stat(*P, "remove-identity"), 2);
  EXPECT_EQ(stat(*P, "remove-dropout"), 3);
  EXPECT_EQ(stat(*P, "remove-noop-reshape"), 1);
  EXPECT_EQ(stat(*P, "remove-identity-transpose"), 1);
  EXPECT_EQ(stat(*P, "remove-noop-cast"), 1);
  EXPECT_EQ(stat(*P, "remove-zero-pad"), 1);
  EXPECT_EQ(stat(*P, "remove-single-concat"), 1);
  EXPECT_EQ(stat(*P, "remove-noop-expand"), 2);
  EXPECT_EQ(stat(*P, "remove-full-slice"), 2);
  EXPECT_EQ(stat(*P, "cancel-squeeze-pair"), 4);
  // Every negative case is counted with its reason, once per node however
  // many sweeps and rounds the pass makes.
  EXPECT_EQ(stat(*P, "declined: remove-noop-reshape: changes the shape"), 1);
  EXPECT_EQ(stat(*P, "declined: remove-identity-transpose: perm is not the "
                     "identity"),
            1);
  EXPECT_EQ(stat(*P, "declined: remove-noop-cast: changes the dtype"), 1);
  EXPECT_EQ(stat(*P, "declined: remove-zero-pad: pads are not all zero"), 1);
  EXPECT_EQ(stat(*P, "declined: remove-dropout: training mode"), 1);
  EXPECT_EQ(stat(*P, "declined: remove-dropout: training_mode is not a "
                     "constant"),
            1);
  EXPECT_EQ(stat(*P, "declined: remove-full-slice: not the full range"), 1);
  EXPECT_GE(stat(*P, "declined: remove-noop-expand: changes the shape"), 1);
  EXPECT_GE(stat(*P, "declined: cancel-squeeze-pair: axes differ"), 1);
  EXPECT_GE(stat(*P, "declined: cancel-squeeze-pair: axes or rank unknown"), 1);
  EXPECT_GE(stat(*P, "declined: remove-identity: graph output would be "
                     "renamed to an input or initializer"),
            1);
  // A fixed point: a second run changes nothing.
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(CanonicalizeTest, AlgebraKeepsTheNumbers) {
  auto P = passes::createCanonicalizePass();
  auto G = expectSameOutputs(readLit("canonicalize-algebra.nng"), *P);
  EXPECT_EQ(stat(*P, "mul-one"), 3);
  EXPECT_EQ(stat(*P, "add-zero"), 2);
  EXPECT_EQ(stat(*P, "sub-zero"), 1);
  EXPECT_EQ(stat(*P, "div-one"), 1);
  EXPECT_EQ(stat(*P, "remove-double-neg"), 1);
  EXPECT_EQ(stat(*P, "compose-transposes"), 2);
  EXPECT_GE(stat(*P, "declined: mul-one: broadcasting changes the shape"), 1);
  EXPECT_GE(stat(*P, "declined: mul-one: constant is not all ones"), 1);
  EXPECT_GE(stat(*P, "declined: add-zero: constant is not all zeros"), 1);
  EXPECT_EQ(countOps(*G, OpKind::Transpose), 1u);
  EXPECT_EQ(countOps(*G, OpKind::Neg), 1u);
}

TEST(CanonicalizeTest, FoldsConstantsAndStaticShapes) {
  const char *Text = R"(graph {
    input %x: f32[N,4,3]
    input %z: f32[2,6]
    init %a: f32[3] = [1.0, 2.0, 3.0]
    init %b: f32[3] = [10.0, 20.0, 30.0]
    init %m: f32[3,3] = [1.0, 0.5, 0.0, 2.0, 1.0, -1.0, 0.0, 0.0, 3.0]
    %sum = Add(%a, %b)
    %e = Exp(%sum)
    %l = Log(%e)
    %mm = MatMul(%m, %m)
    %y = MatMul(%x, %mm)
    %y2 = Add(%y, %l)
    %s = Shape(%z)
    %i1 = Constant() {value_ints = [1]}
    %d = Gather(%s, %i1)
    %minus1 = Constant() {value = tensor<i64[1]> [-1]}
    %newshape = Concat(%minus1, %d) {axis = 0}
    %r = Reshape(%z, %newshape)
    %out2 = Relu(%r)
    %sx = Shape(%x)
    %one = Constant() {value_int = 1}
    %dim1 = Gather(%sx, %one)
    %dimf = Cast(%dim1) {to = 1}
    %scaled = Mul(%y2, %dimf)
    %n = Size(%z)
    output %scaled, %out2, %n
  })";
  auto P = passes::createCanonicalizePass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(countOps(*G, OpKind::Shape), 0u);
  EXPECT_EQ(countOps(*G, OpKind::Reshape), 0u);
  EXPECT_EQ(countOps(*G, OpKind::Gather), 0u);
  EXPECT_EQ(G->numNodes(), 4u) << ir::printGraph(*G); // 2 MatMul/Add/Mul, Relu
  EXPECT_EQ(stat(*P, "fold-shape"), 1);
  EXPECT_EQ(stat(*P, "fold-shape-gather"), 1);
  EXPECT_EQ(stat(*P, "fold-size"), 1);
  EXPECT_GE(stat(*P, "fold-constant"), 6);
  // Only the initializers that folded nodes used are gone.
  EXPECT_EQ(G->lookup("a"), nullptr);
  EXPECT_EQ(G->lookup("m"), nullptr);
  ASSERT_NE(G->lookup("n"), nullptr);
  EXPECT_TRUE(G->lookup("n")->isInitializer());
  EXPECT_EQ(G->lookup("n")->data().getFlatInt(0), 12);
  EXPECT_GE(stat(*P, "initializers-erased"), 3);
}

TEST(CanonicalizeTest, FoldingRespectsTheSizeLimitAndRandomOps) {
  const char *Text = R"(graph {
    input %x: f32[4]
    init %a: f32[4] = [1.0, 2.0, 3.0, 4.0]
    init %b: f32[4] = [1.0, 1.5, 2.0, 2.5]
    init %true: bool[] = [true]
    %sum = Add(%a, %b)
    %d = Dropout(%sum, _, %true)
    %y = Mul(%x, %d)
    output %y
  })";
  auto P = passes::createCanonicalizePass();
  P->setOption("max-folded-elements", "3");
  auto G = expectSameOutputs(Text, *P, /*Changed=*/false);
  EXPECT_EQ(G->numNodes(), 3u);
  EXPECT_EQ(stat(*P, "declined: fold-constant: result larger than "
                     "max-folded-elements"),
            1);

  auto Q = passes::createCanonicalizePass();
  G = expectSameOutputs(Text, *Q);
  EXPECT_EQ(G->numNodes(), 2u); // Dropout in training mode is never folded.
  // (Counted at each sweep of the driver that tried it.)
  EXPECT_GE(stat(*Q, "declined: fold-constant: random op (Dropout in "
                     "training mode)"),
            1);
}

TEST(CanonicalizeTest, DropoutMaskIsAllTrue) {
  const char *Text = R"(graph {
    input %x: f32[N,3]
    %y, %mask = Dropout(%x)
    %m = Not(%mask)
    %r = Relu(%y)
    output %r, %m, %mask
  })";
  auto P = passes::createCanonicalizePass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(countOps(*G, OpKind::Dropout), 0u);
  EXPECT_EQ(countOps(*G, OpKind::ConstantOfShape), 1u);
}

TEST(CanonicalizeTest, DeclinesAreExplainedUnderDebugOnly) {
  const char *Text = R"(graph {
    input %x: f32[2,3]
    init %s: i64[2] = [3, 2]
    %r = Reshape(%x, %s)
    %y = Relu(%r)
    output %y
  })";
  std::ostringstream OS;
  passes::setDebugStream(&OS);
  passes::setDebugOnly({"canonicalize"});
  auto G = ir::parseGraph(Text);
  auto P = passes::createCanonicalizePass();
  EXPECT_FALSE(P->run(*G));
  passes::setDebugOnly({});
  passes::setDebugStream(nullptr);
  EXPECT_NE(OS.str().find("[canonicalize] remove-noop-reshape declined at"),
            std::string::npos)
      << OS.str();
  EXPECT_NE(OS.str().find("changes the shape"), std::string::npos);
  EXPECT_EQ(stat(*P, "declined: remove-noop-reshape: changes the shape"), 1);
}

TEST(CanonicalizeTest, RejectsBadOptions) {
  auto P = passes::createCanonicalizePass();
  EXPECT_THROW(P->setOption("max-folded-elements", "many"), Error);
  // A negative limit parses as an integer but is refused when the pass runs.
  P->setOption("max-folded-elements", "-1");
  ir::Graph Empty;
  EXPECT_THROW(P->run(Empty), Error);
  EXPECT_THROW(P->setOption("no-such-option", "1"), Error);
  EXPECT_NO_THROW(P->setOption("max-folded-elements", "0"));
}
