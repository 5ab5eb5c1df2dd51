//===- RegionsTest.cpp - Regions, captures and implicit inputs -----------===//
//
// The invariants every pass relies on: a value a region reads is an
// implicit input of the node owning the region (so it has a use), captures
// follow their outer value through replaceAllUsesWith and rename, clones
// copy regions deeply, the verifier names broken bindings, and a region
// lifts into a standalone graph (captures as trailing inputs).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Regions.h"
#include "nngraph/ir/Verifier.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::ir;

namespace {

const char *Text = R"(graph {
  input %c: bool[]
  input %x: f32[2]
  init %w: f32[2] = [1, 2]
  %h = Mul(%x, %w)
  %y = If(%c) {then_branch = graph {
    %t = Add(%h, %x)
    output %t
  }, else_branch = graph {
    output %w
  }}
  output %y
})";

Node *ifNode(Graph &G) { return G.outputs()[0]->producer(); }

TEST(Regions, OuterValuesReadInsideAreUsedByTheOwner) {
  auto G = parseGraph(Text, "t");
  Node *If = ifNode(*G);
  Value *H = G->lookup("h");
  ASSERT_EQ(H->uses().size(), 1u);
  EXPECT_EQ(H->uses()[0].User, If);
  EXPECT_TRUE(If->isImplicitInput(H->uses()[0].Index));
  EXPECT_EQ(If->numExplicitInputs(), 1u);
  // %h, %x (then) and %w (else): one implicit input each.
  EXPECT_EQ(If->numImplicitInputs(), 3u);
}

TEST(Regions, CapturesFollowReplaceAllUsesAndRename) {
  auto G = parseGraph(Text, "t");
  Node *If = ifNode(*G);
  Graph &Then = If->attrs().find("then_branch")->g();
  // %h replaced by a new value: the capture is renamed after it.
  Node *Neg = G->addNode(OpKind::Neg, {G->lookup("x")}, {"n"}, {}, If);
  Neg->output()->setType(G->lookup("x")->type());
  G->replaceAllUsesWith(G->lookup("h"), Neg->output());
  EXPECT_TRUE(Then.lookup("n") && Then.lookup("n")->isCapture());
  EXPECT_EQ(Then.lookup("h"), nullptr);
  // A rename of an outer value renames its captures.
  G->rename(G->lookup("x"), "input_x");
  EXPECT_TRUE(Then.lookup("input_x") && Then.lookup("input_x")->isCapture());
  EXPECT_TRUE(verifyGraph(*G).empty()) << verifyGraph(*G)[0].Message;
  // Replacing %n by %input_x makes two captures of one value: they merge.
  G->replaceAllUsesWith(Neg->output(), G->lookup("input_x"));
  EXPECT_EQ(Then.captures().size(), 1u);
  EXPECT_TRUE(verifyGraph(*G).empty()) << verifyGraph(*G)[0].Message;
  // The printed text parses back to the same text.
  std::string P = printGraph(*G);
  EXPECT_EQ(printGraph(*parseGraph(P, "again")), P);
}

TEST(Regions, CloneCopiesRegionsDeeply) {
  auto G = parseGraph(Text, "t");
  auto C = G->clone();
  Graph &A = ifNode(*G)->attrs().find("then_branch")->g();
  Graph &B = ifNode(*C)->attrs().find("then_branch")->g();
  EXPECT_NE(&A, &B);
  EXPECT_EQ(ifNode(*C)->numImplicitInputs(), 3u);
  EXPECT_EQ(printGraph(*C), printGraph(*G));
  EXPECT_TRUE(verifyGraph(*C).empty());
}

TEST(Regions, VerifierNamesABrokenBinding) {
  auto G = parseGraph(Text, "t");
  Node *If = ifNode(*G);
  Graph &Then = If->attrs().find("then_branch")->g();
  Then.rename(Then.lookup("h"), "elsewhere");
  auto D = verifyGraph(*G);
  ASSERT_FALSE(D.empty());
  EXPECT_NE(D[0].Message.find("captures %elsewhere but implicit input"),
            std::string::npos)
      << D[0].Message;
}

TEST(Regions, LiftMakesCapturesInputs) {
  auto G = parseGraph(Text, "t");
  Graph &Then = ifNode(*G)->attrs().find("then_branch")->g();
  auto L = liftRegion(Then);
  ASSERT_EQ(L->inputs().size(), Then.captures().size());
  EXPECT_TRUE(L->captures().empty());
  EXPECT_EQ(L->inputs()[0]->type().toString(), "f32[?]");
  EXPECT_TRUE(verifyGraph(*L).empty());
}

TEST(Regions, ParserRefusesAnUndefinedName) {
  std::string Bad = Text;
  Bad.replace(Bad.find("Add(%h"), 6, "Add(%q");
  try {
    parseGraph(Bad, "bad.nng");
    FAIL() << "parsed";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("use of undefined value %q"),
              std::string::npos)
        << E.what();
  }
}

TEST(Regions, ParserRefusesRegionsNestedTooDeep) {
  std::string Open, Close;
  for (int I = 0; I < 70; ++I) {
    Open += "%y" + std::to_string(I) +
            " = If(%c) {then_branch = graph {\n";
    Close += "output %c }, else_branch = graph { output %c }}\n";
  }
  // Each level's node defines %yI and the region outputs %c: a bool.
  std::string Text = "graph {\n input %c: bool[]\n" + Open + Close +
                     "output %c\n}\n";
  try {
    parseGraph(Text, "deep.nng");
    FAIL() << "parsed";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("nested more than 64 levels"),
              std::string::npos)
        << E.what();
  }
}

TEST(Regions, JoinTypes) {
  TensorType A(DType::F32, std::vector<Dim>{Dim(2), Dim(3)});
  TensorType B(DType::F32, std::vector<Dim>{Dim(2), Dim(4)});
  EXPECT_EQ(joinTypes(A, B).toString(), "f32[2,?]");
  TensorType C(DType::F32, std::vector<Dim>{Dim(2)});
  EXPECT_EQ(joinTypes(A, C).toString(), "f32[*]");
}

} // namespace
