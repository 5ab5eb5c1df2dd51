//===- InterpreterTest.cpp - fx::Interpreter and compareBackends ---------===//
//
// The Interpreter's run_node hook sees every node (an override collects
// every intermediate), the node-by-node run equals the whole-graph run on
// every backend (and on "eager"), and compareBackends finds no difference
// between the reference and cpu backends on the example CNN, while an
// injected perturbation is reported at the right (first) node.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/Interpreter.h"
#include "GraphModuleTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/Parser.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>

using namespace nng;
using namespace nng::fx;
using namespace nng::fx::testing;

namespace {

/// Keeps every node's outputs by value name, in the order they ran.
class Collector : public Interpreter {
public:
  using Interpreter::Interpreter;
  std::vector<std::string> Order;
  std::map<std::string, rt::Tensor> Seen;
  std::vector<rt::Tensor> run_node(const ir::Node &N,
                                   const std::vector<rt::Tensor> &In) override {
    std::vector<rt::Tensor> Out = Interpreter::run_node(N, In);
    for (size_t I = 0; I < Out.size(); ++I) {
      Order.push_back(N.output(I)->name());
      Seen[N.output(I)->name()] = Out[I];
    }
    return Out;
  }
};

/// Adds Delta to the first element of the outputs of the nodes that
/// produce the named values.
class Perturber : public Interpreter {
public:
  Perturber(const ir::Graph &G, std::vector<std::string> Names, double Delta)
      : Interpreter(G), Names(std::move(Names)), Delta(Delta) {}
  std::vector<rt::Tensor> run_node(const ir::Node &N,
                                   const std::vector<rt::Tensor> &In) override {
    std::vector<rt::Tensor> Out = Interpreter::run_node(N, In);
    if (std::find(Names.begin(), Names.end(), N.output(0)->name()) !=
        Names.end()) {
      Out[0] = Out[0].clone();
      Out[0].setFlat(0, Out[0].getFlat(0) + Delta);
    }
    return Out;
  }

private:
  std::vector<std::string> Names;
  double Delta;
};

bool hasBackend(const std::string &Name) {
  auto Names = backends::backendNames();
  return std::find(Names.begin(), Names.end(), Name) != Names.end();
}

std::shared_ptr<ir::Graph> smallCnn() {
  return frontend::loadModel(std::string(NNGRAPH_SOURCE_DIR) +
                             "/examples/models/small_cnn.nng");
}

/// A deterministic [N,1,28,28] image batch.
rt::Tensor images(int64_t N) {
  rt::Tensor T = rt::Tensor::empty(Shape({N, 1, 28, 28}), DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, static_cast<double>((I * 7919) % 255) / 255.0 - 0.3);
  return T;
}

} // namespace

TEST(InterpreterTest, HookCollectsEveryIntermediate) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  Tensor X = input(3, 4);
  Collector C(GM);
  std::vector<rt::Tensor> Out = C.run({X.data()});
  EXPECT_EQ(C.Order, (std::vector<std::string>{"h", "r", "y"}));
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_TRUE(allclose(Tensor(Out[0]), M(X), 1e-5, 1e-5));
  // The intermediates are what the eager layers compute.
  Tensor H = (*M.fc1)(X);
  EXPECT_TRUE(allclose(Tensor(C.Seen.at("h")), H, 1e-5, 1e-5));
  EXPECT_TRUE(allclose(Tensor(C.Seen.at("r")), H.relu(), 1e-6, 1e-6));
  // The environment holds inputs, initializers and every output.
  const ir::Graph &G = GM.graph();
  EXPECT_TRUE(C.valueOf(G.inputs()[0])->equals(X.data()));
  EXPECT_TRUE(C.valueOf(G.lookup("fc1.weight"))
                  ->equals(GM.state_dict().at("fc1.weight").data()));
  EXPECT_EQ(C.env().size(), 1u + 4u + 3u);
}

TEST(InterpreterTest, NodeByNodeEqualsWholeGraphOnEveryBackend) {
  std::shared_ptr<ir::Graph> G = smallCnn();
  GraphModule GM(G, OutputStructure{}, {}, "SmallCnn");
  rt::Tensor X = images(2);
  Tensor Want = GM({Tensor(X)});
  std::vector<std::string> Names = backends::backendNames();
  Names.push_back("eager");
  for (const std::string &B : Names) {
    if (B == "cuda")
      continue; // Needs a device; the cuda tests cover it.
    Interpreter I(*G, B);
    std::vector<rt::Tensor> Got = I.run({X});
    EXPECT_TRUE(allclose(Tensor(Got[0]), Want, 1e-4, 1e-4)) << B;
  }
}

TEST(InterpreterTest, NodesWithRegionsRunNodeByNode) {
  // An If and a Loop whose regions read outer values (implicit inputs):
  // each runs as a one-node graph that keeps its implicit inputs.
  auto G = ir::parseGraph(R"(graph {
  input %c: bool[]
  input %x: f32[2]
  init %w: f32[2] = [1, -1]
  init %n: i64[] = [3]
  %y = If(%c) {then_branch = graph {
    %t = Add(%x, %w)
    output %t
  }, else_branch = graph {
    output %w
  }}
  %z = Loop(%n, _, %y) {body = graph {
    input %i: i64[]
    input %go: bool[]
    input %a: f32[2]
    %b = Mul(%a, %x)
    output %go, %b
  }}
  output %z
})",
                          "regions");
  rt::Tensor C = rt::Tensor::empty(Shape{}, DType::Bool);
  C.data<bool>()[0] = true;
  rt::Tensor X = rt::Tensor::fromVector<float>({2, 3}, Shape{2});
  // (x + w) * x^3 = [3, 2] * [8, 27].
  rt::Tensor Want = rt::Tensor::fromVector<float>({24, 54}, Shape{2});
  std::vector<std::string> Names = backends::backendNames();
  Names.push_back("eager");
  for (const std::string &B : Names) {
    if (B == "cuda")
      continue;
    Interpreter I(*G, B);
    EXPECT_TRUE(I.run({C, X})[0].equals(Want)) << B;
  }
}

TEST(InterpreterTest, ErrorsNameTheInputAndTheNode) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  Interpreter I(GM);
  try {
    I.run({rt::Tensor::empty(Shape({2, 5}), DType::F32)});
    FAIL() << "no error for a [2, 5] input";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("input %x"), std::string::npos)
        << E.what();
  }
  EXPECT_THROW(Interpreter(GM.graph(), "tpu"), Error);
}

TEST(InterpreterTest, ReferenceAndCpuAgreeNodeByNode) {
  if (!hasBackend("cpu"))
    GTEST_SKIP() << "this build has no 'cpu' backend";
  std::shared_ptr<ir::Graph> G = smallCnn();
  BackendDiff D = compareBackends(*G, {images(3)}, "reference", "cpu",
                                  Tolerances{1e-4, 1e-4});
  EXPECT_FALSE(D.Differs) << D.message();
  EXPECT_EQ(D.NodesCompared, G->numNodes());
  EXPECT_EQ(D.message(),
            "all " + std::to_string(G->numNodes()) + " nodes agree");
}

TEST(InterpreterTest, InjectedDifferenceIsReportedAtTheFirstNode) {
  std::shared_ptr<ir::Graph> G = smallCnn();
  Interpreter Ref(*G);
  // h2 (features.2, Relu) and h5 are perturbed: h2 comes first.
  Perturber Bad(*G, {"h5", "h2"}, 0.25);
  BackendDiff D = compareInterpreters(Ref, Bad, {images(2)});
  ASSERT_TRUE(D.Differs);
  EXPECT_EQ(D.OutputName, "h2");
  EXPECT_EQ(D.Op, "Relu");
  EXPECT_EQ(D.ScopePath, "features.2");
  EXPECT_EQ(D.ScopeType, "ReLU");
  EXPECT_EQ(D.NodeIndex, 2u);
  EXPECT_NEAR(D.MaxError, 0.25, 1e-6);
  EXPECT_NE(D.message().find("features.2 (ReLU)"), std::string::npos)
      << D.message();
  EXPECT_NE(D.message().find("output %h2"), std::string::npos) << D.message();
  // Below the tolerance it is not a difference.
  Perturber Tiny(*G, {"h2"}, 1e-7);
  EXPECT_FALSE(compareInterpreters(Ref, Tiny, {images(2)}).Differs);
}

TEST(InterpreterTest, CompareTensorsSeesShapeDtypeAndNaN) {
  double Max = 0;
  rt::Tensor A = rt::Tensor::fromVector<float>({1, 2, 3}, Shape({3}));
  rt::Tensor B = rt::Tensor::fromVector<float>({1, 2, 3}, Shape({1, 3}));
  EXPECT_NE(compareTensors(A, B, {}, Max).find("shape"), std::string::npos);
  EXPECT_TRUE(std::isinf(Max));
  rt::Tensor C = rt::Tensor::fromVector<int64_t>({1, 2, 3}, Shape({3}));
  EXPECT_NE(compareTensors(A, C, {}, Max).find("dtype"), std::string::npos);
  rt::Tensor N1 = rt::Tensor::fromVector<float>({1, NAN}, Shape({2}));
  rt::Tensor N2 = rt::Tensor::fromVector<float>({1, NAN}, Shape({2}));
  rt::Tensor N3 = rt::Tensor::fromVector<float>({1, 0}, Shape({2}));
  EXPECT_EQ(compareTensors(N1, N2, {}, Max), "");
  EXPECT_NE(compareTensors(N1, N3, {}, Max), "");
}
