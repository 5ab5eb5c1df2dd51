//===- ShapePropTest.cpp - fx::ShapeProp on a dynamic-batch graph --------===//
//
// ShapeProp annotates every value of the example CNN (input f32[N,1,28,28])
// with the example's concrete shapes, leaves the graph's symbolic types
// alone, re-annotates for another batch size, and says which value lacks
// an annotation.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/ShapeProp.h"
#include "GraphModuleTestUtils.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::fx;
using namespace nng::fx::testing;

namespace {

std::shared_ptr<ir::Graph> smallCnn() {
  return frontend::loadModel(std::string(NNGRAPH_SOURCE_DIR) +
                             "/examples/models/small_cnn.nng");
}

rt::Tensor images(int64_t N) {
  return rt::Tensor::empty(Shape({N, 1, 28, 28}), DType::F32);
}

} // namespace

TEST(ShapePropTest, AnnotatesEveryValueWithConcreteShapes) {
  GraphModule GM(smallCnn(), OutputStructure{}, {}, "SmallCnn");
  ShapeProp SP(GM);
  const ShapeAnnotations &A = SP.propagate({images(2)});
  const ir::Graph &G = GM.graph();
  for (const auto &N : G.nodes())
    for (const ir::Value *V : N->outputs()) {
      ASSERT_TRUE(A.count(V)) << V->name();
      EXPECT_TRUE(A.at(V).isStatic()) << V->name();
      EXPECT_EQ(A.at(V).dim(0).value(), 2) << V->name();
    }
  EXPECT_EQ(A.size(), 1 + G.initializers().size() + G.numNodes());
  EXPECT_EQ(SP.shapeOf("x").toString(), "f32[2,1,28,28]");
  EXPECT_EQ(SP.shapeOf("h3").toString(), "f32[2,4,14,14]");
  EXPECT_EQ(SP.shapeOf("flat").toString(), "f32[2,8]");
  EXPECT_EQ(SP.shapeOf("y").toString(), "f32[2,10]");
  EXPECT_EQ(SP.shapeOf("fc.weight").toString(), "f32[10,8]");
  // The graph keeps its symbolic batch dim.
  EXPECT_EQ(G.lookup("h3")->type().toString(), "f32[N,4,14,14]");
  EXPECT_NE(SP.report().find("%h3: f32[N,4,14,14] -> f32[2,4,14,14]\n"),
            std::string::npos)
      << SP.report();
}

TEST(ShapePropTest, ReannotatesForAnotherBatch) {
  std::shared_ptr<ir::Graph> G = smallCnn();
  ShapeProp SP(*G);
  SP.propagate({images(2)});
  SP.propagate({images(5)});
  EXPECT_EQ(SP.shapeOf("h6").toString(), "f32[5,8,14,14]");
  EXPECT_EQ(SP.shapeOf("y").toString(), "f32[5,10]");
}

TEST(ShapePropTest, MissingAnnotationsAreNamed) {
  std::shared_ptr<ir::Graph> G = smallCnn();
  ShapeProp SP(*G);
  try {
    SP.shapeOf("h3");
    FAIL() << "no error before propagate()";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("%h3"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("propagate()"), std::string::npos)
        << E.what();
  }
  EXPECT_THROW(SP.shapeOf("nope"), Error);
}
