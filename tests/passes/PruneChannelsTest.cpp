//===- PruneChannelsTest.cpp - prune-channels ------------------------------===//
//
// Structured channel pruning on graphs: channels whose weights are zero are
// the least important, so pruning exactly them must leave the outputs
// unchanged (checked on the reference backend) while every weight shrinks:
// through BatchNorm and Relu, a residual Add (both branches prune
// together), a depthwise Conv (its group follows), Flatten into a Gemm
// (blocks of H*W columns), a Reshape acting as a Flatten (it becomes one)
// and shared biases (private copies). Groups the
// analysis does not understand are left alone and counted; bad options are
// errors.
//
//===----------------------------------------------------------------------===//

#include "FusionTestUtils.h"
#include "nngraph/ir/ShapeInference.h"

using namespace nng;
using namespace nng::fusion_test;
using ir::OpKind;

namespace {

const char *Elided = " = elided(\"fnv1a64:0000000000000000\")\n";

/// Zeroes the given rows (axis 0 entries) of initializer Name.
void zeroRows(ir::Graph &G, const std::string &Name,
              const std::vector<int64_t> &Rows) {
  ir::Value *V = G.lookup(Name);
  ASSERT_NE(V, nullptr) << Name;
  rt::Tensor T = V->data().contiguous();
  int64_t Inner = T.numel() / T.size(0);
  for (int64_t R : Rows)
    for (int64_t I = 0; I < Inner; ++I)
      T.setFlat(R * Inner + I, 0.0);
  V->setData(T);
}

Shape shapeOf(const ir::Graph &G, const std::string &Name) {
  return *G.lookup(Name)->type().staticShape();
}

std::unique_ptr<ir::Graph> residualNet() {
  std::string Text =
      std::string("graph \"res\" {\n  input %x: f32[N,3,6,6]\n") +
      "  init %w1: f32[8,3,3,3]" + Elided + "  init %b1: f32[8]" + Elided +
      "  init %w2: f32[8,8,3,3]" + Elided + "  init %b2: f32[8]" + Elided +
      "  init %wd: f32[8,1,3,3]" + Elided +
      "  init %w3: f32[4,8,1,1]" + Elided + "  init %fw: f32[5,16]" + Elided +
      "  init %fb: f32[5]" + Elided +
      "  %c1 = Conv(%x, %w1, %b1) {pads = [1, 1, 1, 1]} name(\"conv1\")\n"
      "  %r1 = Relu(%c1)\n"
      "  %c2 = Conv(%r1, %w2, %b2) {pads = [1, 1, 1, 1]} name(\"conv2\")\n"
      "  %s = Add(%c2, %r1)\n"
      "  %r2 = Relu(%s)\n"
      "  %d = Conv(%r2, %wd) {group = 8, pads = [1, 1, 1, 1]} name(\"dw\")\n"
      "  %c3 = Conv(%d, %w3) {strides = [3, 3]} name(\"conv3\")\n"
      "  %f = Flatten(%c3)\n"
      "  %y = Gemm(%f, %fw, %fb) {transB = 1} name(\"fc\")\n"
      "  output %y\n}\n";
  return parseWithRandomWeights(Text, 21);
}

} // namespace

TEST(PruneChannelsTest, ZeroChannelsGoAndOutputsStay) {
  auto G = residualNet();
  // The residual group (conv1 and conv2 outputs, the depthwise conv) loses
  // channels 1, 4, 6, 7: zero in both producers; conv3 loses 0 and 2.
  for (const char *W : {"w1", "b1", "w2", "b2"})
    zeroRows(*G, W, {1, 4, 6, 7});
  zeroRows(*G, "w3", {0, 2});
  auto P = passes::createPass("prune-channels");
  P->setOption("ratio", "0.5");
  P->setOption("round", "1");
  std::unique_ptr<ir::Graph> Before = G->clone();
  EXPECT_TRUE(P->run(*G));
  ir::verifyOrThrow(*G);
  EXPECT_EQ(shapeOf(*G, "w1"), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(shapeOf(*G, "w2"), (Shape{4, 4, 3, 3}));
  EXPECT_EQ(shapeOf(*G, "wd"), (Shape{4, 1, 3, 3}));
  EXPECT_EQ(G->lookup("d")->producer()->attrInt("group"), 4);
  EXPECT_EQ(shapeOf(*G, "w3"), (Shape{2, 4, 1, 1}));
  EXPECT_EQ(shapeOf(*G, "fw"), (Shape{5, 8})); // 2 channels x 4 positions
  EXPECT_EQ(P->statistics().at("groups-pruned"), 2);
  EXPECT_EQ(P->statistics().at("channels-removed"), 6);
  passes::NumericCheckOptions O;
  O.Dims = {{"N", 2}};
  auto R = passes::compareOnReference(*Before, *G, O);
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(PruneChannelsTest, RoundingExcludeAndCriteria) {
  auto G = residualNet();
  auto P = passes::createPass("prune-channels");
  P->setOption("ratio", "0.5");
  P->setOption("round", "8"); // 8 channels keep 8: nothing to do there.
  P->setOption("exclude", "conv3");
  try {
    P->run(*G);
    FAIL() << "nothing was prunable, yet no error";
  } catch (const Error &E) {
    std::string M = E.what();
    EXPECT_NE(M.find("too few channels"), std::string::npos) << M;
    EXPECT_NE(M.find("excluded"), std::string::npos) << M;
  }
  for (const char *Crit : {"l2", "bn", "random"}) {
    auto H = residualNet();
    auto Q = passes::createPass("prune-channels");
    Q->setOption("criterion", Crit);
    Q->setOption("round", "2");
    EXPECT_TRUE(Q->run(*H)) << Crit;
    ir::verifyOrThrow(*H);
    EXPECT_EQ(shapeOf(*H, "w1")[0], 4) << Crit;
    auto Out = backends::runReference(
        *H, ir::makeDeterministicInputs(*H, {{"N", 1}}, 3));
    EXPECT_EQ(Out[0].shape(), (Shape{1, 5}));
  }
}

TEST(PruneChannelsTest, UnknownReadersLeaveTheGroupAlone) {
  std::string Text =
      std::string("graph \"blocked\" {\n  input %x: f32[1,3,4,4]\n") +
      "  init %w1: f32[8,3,1,1]" + Elided + "  init %w2: f32[8,3,1,1]" +
      Elided + "  init %shape: i64[2] = [2, 64]\n" +
      "  init %w3: f32[8,8,1,1]" + Elided + "  init %b: f32[8]" + Elided +
      "  %a = Conv(%x, %w1, %b) name(\"a\")\n"
      "  %r = Reshape(%a, %shape)\n"
      "  %c = Conv(%x, %w2, %b) name(\"c\")\n"
      "  %e = Conv(%c, %w3) name(\"e\")\n"
      "  output %r, %e\n}\n";
  auto G = parseWithRandomWeights(Text, 5);
  std::ostringstream Debug;
  passes::setDebugOnly({"prune-channels"});
  passes::setDebugStream(&Debug);
  auto P = passes::createPass("prune-channels");
  P->setOption("round", "1");
  bool Changed = P->run(*G);
  passes::setDebugOnly({});
  passes::setDebugStream(nullptr);
  EXPECT_TRUE(Changed);
  ir::verifyOrThrow(*G);
  EXPECT_EQ(shapeOf(*G, "w1"), (Shape{8, 3, 1, 1})); // read by a Reshape
  EXPECT_EQ(shapeOf(*G, "w2"), (Shape{4, 3, 1, 1}));
  EXPECT_EQ(shapeOf(*G, "w3"), (Shape{8, 4, 1, 1}));
  // The shared bias: conv a keeps it whole, conv c gets a pruned copy.
  EXPECT_EQ(shapeOf(*G, "b"), (Shape{8}));
  EXPECT_EQ(G->lookup("c")->producer()->input(2)->type().staticShape(),
            std::optional<Shape>(Shape{4}));
  // Conv a's channels and the reshaped result's features.
  EXPECT_EQ(P->statistics().at(
                "groups-left: a reshape the analysis does not follow"),
            2);
  EXPECT_NE(Debug.str().find("left alone: a reshape the analysis does not follow"), std::string::npos)
      << Debug.str();
}

TEST(PruneChannelsTest, FlatteningReshapeBecomesFlatten) {
  // A Reshape to [N, C*H*W] (how traced flattens look) is followed like a
  // Flatten; its shape constant would be stale, so it becomes one.
  std::string Text =
      std::string("graph \"reshape\" {\n  input %x: f32[N,3,2,2]\n") +
      "  init %w: f32[8,3,1,1]" + Elided + "  init %b: f32[8]" + Elided +
      "  init %shape: i64[2] = [-1, 32]\n" + "  init %fw: f32[4,32]" +
      Elided + "  %c = Conv(%x, %w, %b) name(\"conv\")\n"
               "  %r = Relu(%c)\n"
               "  %f = Reshape(%r, %shape)\n"
               "  %y = Gemm(%f, %fw) {transB = 1} name(\"fc\")\n"
               "  output %y\n}\n";
  auto G = parseWithRandomWeights(Text, 3);
  zeroRows(*G, "w", {0, 2, 3, 6});
  zeroRows(*G, "b", {0, 2, 3, 6});
  std::unique_ptr<ir::Graph> Before = G->clone();
  auto P = passes::createPass("prune-channels");
  P->setOption("round", "1");
  EXPECT_TRUE(P->run(*G));
  ir::verifyOrThrow(*G);
  EXPECT_EQ(shapeOf(*G, "w"), (Shape{4, 3, 1, 1}));
  EXPECT_EQ(shapeOf(*G, "fw"), (Shape{4, 16}));
  EXPECT_EQ(G->lookup("y")->producer()->input(0)->producer()->op(),
            OpKind::Flatten);
  EXPECT_EQ(G->lookup("shape"), nullptr); // Nothing reads it any more.
  passes::NumericCheckOptions O;
  O.Dims = {{"N", 2}};
  auto R = passes::compareOnReference(*Before, *G, O);
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(PruneChannelsTest, BadOptionsAreErrors) {
  auto G = residualNet();
  auto P = passes::createPass("prune-channels");
  P->setOption("ratio", "1.0");
  EXPECT_THROW(P->run(*G), Error);
  P->setOption("ratio", "0.5");
  P->setOption("exclude", "layer9.*");
  try {
    P->run(*G);
    FAIL() << "an exclude pattern that matches nothing was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("'layer9.*' matches no node"),
              std::string::npos)
        << E.what();
  }
}

TEST(PruneChannelsTest, ConcatResultsFollowTheirInputs) {
  std::string Text =
      std::string("graph \"cat\" {\n  input %x: f32[N,3,5,5]\n") +
      "  init %wa: f32[4,3,3,3]" + Elided + "  init %wb: f32[6,3,1,1]" +
      Elided + "  init %wc: f32[3,10,3,3]" + Elided +
      "  %a = Conv(%x, %wa) {pads = [1, 1, 1, 1]} name(\"a\")\n"
      "  %ra = Relu(%a)\n"
      "  %b = Conv(%x, %wb) name(\"b\")\n"
      "  %cat = Concat(%ra, %b) {axis = 1}\n"
      "  %y = Conv(%cat, %wc) name(\"c\")\n"
      "  output %y\n}\n";
  auto G = parseWithRandomWeights(Text, 8);
  zeroRows(*G, "wa", {0, 3});
  zeroRows(*G, "wb", {1, 2, 5});
  std::unique_ptr<ir::Graph> Before = G->clone();
  auto P = passes::createPass("prune-channels");
  P->setOption("round", "1");
  EXPECT_TRUE(P->run(*G));
  ir::verifyOrThrow(*G);
  EXPECT_EQ(shapeOf(*G, "wa"), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(shapeOf(*G, "wb"), (Shape{3, 3, 1, 1}));
  EXPECT_EQ(shapeOf(*G, "wc"), (Shape{3, 5, 3, 3})); // 2 + 3 columns
  passes::NumericCheckOptions O;
  O.Dims = {{"N", 2}};
  auto R = passes::compareOnReference(*Before, *G, O);
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(PruneChannelsTest, GlobalRankingPrunesTheWeakestGroupsMost) {
  auto G = residualNet();
  // conv3's channels are all tiny: a global ranking takes them first.
  ir::Value *W3 = G->lookup("w3");
  rt::Tensor T = W3->data().contiguous();
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, T.getFlat(I) * (I < T.numel() / 2 ? 1e-3 : 1.0));
  W3->setData(T);
  auto P = passes::createPass("prune-channels");
  P->setOption("global", "true");
  P->setOption("ratio", "0.25");
  P->setOption("round", "1");
  EXPECT_TRUE(P->run(*G));
  ir::verifyOrThrow(*G);
  // 12 channels in all, 3 go: conv3's two weak ones and one more.
  EXPECT_EQ(P->statistics().at("channels-removed"), 3);
  EXPECT_EQ(shapeOf(*G, "w3")[0], 2);
}
