//===- TraceModelsTest.cpp - Whole models traced == eager ------------------===//
//
// Models traced once and run on the reference backend against eager: a
// residual CNN (flatten(1)) and a transformer encoder with a dynamic batch
// dim, run at batch 1 and 8 from one trace; an unrolled loop; a shared
// submodule used twice (weights once); several inputs with tuple, list and
// dict outputs; scopes ("layer1.0.conv1"); initializer names equal to the
// state_dict keys; symbolic sizes in user code (view with x.size(0)).
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/nn/NN.h"

#include <set>

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

struct BasicBlock : nn::Module<BasicBlock> {
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Sequential> downsample;
  BasicBlock(int64_t In, int64_t Out, int64_t Stride) {
    conv1 = register_module("conv1",
                            nn::make<nn::Conv2d>(In, Out, 3, Stride, 1, 1, 1, false));
    bn1 = register_module("bn1", nn::make<nn::BatchNorm2d>(Out));
    conv2 = register_module("conv2",
                            nn::make<nn::Conv2d>(Out, Out, 3, 1, 1, 1, 1, false));
    bn2 = register_module("bn2", nn::make<nn::BatchNorm2d>(Out));
    if (Stride != 1 || In != Out)
      downsample = register_module(
          "downsample",
          nn::make<nn::Sequential>(
              nn::make<nn::Conv2d>(In, Out, 1, Stride, 0, 1, 1, false),
              nn::make<nn::BatchNorm2d>(Out)));
  }
  Tensor forward(const Tensor &x) {
    Tensor Out = (*bn1)((*conv1)(x)).relu();
    Out = (*bn2)((*conv2)(Out));
    Tensor Id = downsample ? Tensor((*downsample)(x)) : x;
    Out += Id;
    return Out.relu();
  }
};

struct ResNetTiny : nn::Module<ResNetTiny> {
  std::shared_ptr<nn::Conv2d> conv1 =
      register_module("conv1", nn::make<nn::Conv2d>(3, 8, 3, 1, 1, 1, 1, false));
  std::shared_ptr<nn::BatchNorm2d> bn1 =
      register_module("bn1", nn::make<nn::BatchNorm2d>(8));
  std::shared_ptr<nn::MaxPool2d> maxpool =
      register_module("maxpool", nn::make<nn::MaxPool2d>(3, 2, 1));
  std::shared_ptr<nn::Sequential> layer1 = register_module(
      "layer1", nn::make<nn::Sequential>(nn::make<BasicBlock>(8, 8, 1),
                                         nn::make<BasicBlock>(8, 8, 1)));
  std::shared_ptr<nn::Sequential> layer2 = register_module(
      "layer2", nn::make<nn::Sequential>(nn::make<BasicBlock>(8, 16, 2)));
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool = register_module(
      "avgpool", nn::make<nn::AdaptiveAvgPool2d>(std::vector<int64_t>{1, 1}));
  std::shared_ptr<nn::Linear> fc =
      register_module("fc", nn::make<nn::Linear>(16, 10));
  Tensor forward(const Tensor &x) {
    Tensor h = (*maxpool)((*bn1)((*conv1)(x)).relu());
    h = (*layer2)((*layer1)(h));
    h = (*avgpool)(h).flatten(1);
    return (*fc)(h);
  }
};

/// Randomizes the batchnorm statistics so eval mode is not an identity.
void randomizeStats(nn::ModuleBase &M) {
  NoGradGuard G;
  for (const auto &[Name, B] : M.named_buffers()) {
    if (Name.find("running_mean") != std::string::npos)
      Tensor(B).copy_(randn(B.sizes()) * 0.1);
    if (Name.find("running_var") != std::string::npos)
      Tensor(B).copy_(rand(B.sizes()) + 0.5);
  }
}

} // namespace

TEST(TraceModels, ResidualCnnDynamicBatch) {
  manual_seed(10);
  auto Net = nn::make<ResNetTiny>();
  randomizeStats(*Net);
  Net->eval();
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(*Net, {InputSpec({"N", 3, 16, 16})});
  ir::verifyOrThrow(*R.Graph);
  const ir::Graph &G = *R.Graph;
  EXPECT_EQ(G.inputs()[0]->type().toString(), "f32[N,3,16,16]");
  EXPECT_EQ(G.outputs()[0]->type().toString(), "f32[N,10]");
  // The flatten(1) is a Reshape whose shape keeps the batch dynamic, and
  // its output type keeps the symbol.
  EXPECT_GE(countOps(G, ir::OpKind::Reshape), 1u);
  for (const auto &N : G.nodes())
    if (N->op() == ir::OpKind::Reshape && N->scope().Path.empty())
      EXPECT_EQ(N->output()->type().toString(), "f32[N,16]");
  expectGraphEqualsEager(R, *Net, {randn({1, 3, 16, 16})});
  expectGraphEqualsEager(R, *Net, {randn({8, 3, 16, 16})});

  // Initializers are exactly the state_dict keys, in order.
  std::vector<std::string> Keys;
  for (const auto &[K, V] : Net->state_dict())
    Keys.push_back(K);
  EXPECT_EQ(initializerNames(G), Keys);

  // Scopes: module path and type.
  std::set<std::string> Paths;
  for (const auto &N : G.nodes()) {
    Paths.insert(N->scope().Path);
    if (N->scope().Path == "layer1.0.conv1") {
      EXPECT_EQ(N->scope().ModuleType, "Conv2d");
      EXPECT_EQ(N->op(), ir::OpKind::Conv);
    }
  }
  EXPECT_TRUE(Paths.count("layer1.0.conv1"));
  EXPECT_TRUE(Paths.count("layer2.0.downsample.0"));
  EXPECT_TRUE(Paths.count("fc"));

  // Train mode: batch statistics, same graph semantics as eager; the
  // trace leaves the running statistics alone.
  Net->train();
  Tensor RM = Net->bn1->running_mean.clone();
  fx::TraceResult RT = T.trace_graph(*Net, {InputSpec({"N", 3, 16, 16})});
  EXPECT_TRUE(allClose(Net->bn1->running_mean.data(), RM, 0.0));
  Tensor X = randn({4, 3, 16, 16});
  std::vector<rt::Tensor> Got = runGraph(*RT.Graph, {X});
  Tensor Want = (*Net)(X);
  EXPECT_TRUE(allClose(Got[0], Want, 1e-4));
}

TEST(TraceModels, TransformerEncoderDynamicBatch) {
  manual_seed(11);
  nn::TransformerEncoderLayer L(16, 4, 32, 0.1);
  L.eval();
  fx::Tracer T;
  fx::TraceResult R = T.trace_graph(L, {InputSpec({6, "N", 16})});
  ir::verifyOrThrow(*R.Graph);
  EXPECT_EQ(R.Graph->outputs()[0]->type().toString(), "f32[6,N,16]");
  expectGraphEqualsEager(R, L, {randn({6, 1, 16})});
  expectGraphEqualsEager(R, L, {randn({6, 8, 16})});

  nn::TransformerEncoderLayer BF(16, 4, 32, 0.0, "gelu", 1e-5,
                                 /*batch_first=*/true, /*norm_first=*/true);
  BF.eval();
  fx::TraceResult RB = T.trace_graph(BF, {InputSpec({"N", "S", 16})});
  ir::verifyOrThrow(*RB.Graph);
  expectGraphEqualsEager(RB, BF, {randn({1, 5, 16})});
  expectGraphEqualsEager(RB, BF, {randn({8, 3, 16})});
}

namespace {
struct Loop : nn::Module<Loop> {
  std::shared_ptr<nn::ModuleList> Layers = register_module(
      "layers", nn::make<nn::ModuleList>());
  Loop() {
    for (int I = 0; I < 3; ++I)
      Layers->append(nn::make<nn::Linear>(4, 4));
  }
  Tensor forward(const Tensor &x) {
    Tensor h = x;
    for (int Rep = 0; Rep < 2; ++Rep)
      for (const auto &M : *Layers)
        h = Tensor((*M)(h)).tanh() + h * 0.5;
    return h;
  }
};

struct Shared : nn::Module<Shared> {
  std::shared_ptr<nn::Linear> a = register_module("a", nn::make<nn::Linear>(4, 4));
  std::shared_ptr<nn::Linear> b = register_module("b", a); // same module
  Tensor forward(const Tensor &x) { return (*b)((*a)(x).relu()); }
};

struct MultiIO : nn::Module<MultiIO> {
  std::shared_ptr<nn::Linear> fc = register_module("fc", nn::make<nn::Linear>(4, 3));
  std::tuple<Tensor, Tensor> forward(const Tensor &x, const Tensor &y) {
    Tensor h = (*fc)(x + y);
    return {h, h.softmax(-1)};
  }
};

struct DictOut : nn::Module<DictOut> {
  nn::Value forward(const Tensor &x, const Tensor &y) {
    return nn::Value::dict({{"sum", nn::Value(x + y)},
                            {"parts", nn::Value::list({nn::Value(x * 2.0),
                                                       nn::Value(y)})},
                            {"scale", nn::Value(2.5)}});
  }
};

/// Uses sizes in C++: x.view({x.size(0), -1}) and x.size(0) * 2.
struct SizeUser : nn::Module<SizeUser> {
  Tensor forward(const Tensor &x) {
    SymInt B = x.size(0);
    Tensor f = x.view({B, -1});
    Tensor r = f.reshape({B * 2, f.size(1) / 2});
    return r.expand({2, B * 2, -1}) + 1.0;
  }
};
} // namespace

TEST(TraceModels, UnrolledLoop) {
  manual_seed(12);
  Loop M;
  auto R = traceAndCompare(M, {InputSpec({2, 4})}, {randn({2, 4})});
  EXPECT_EQ(countOps(*R.Graph, ir::OpKind::Tanh), 6u);
  // Six layer calls share three weights.
  EXPECT_EQ(R.Graph->initializers().size(), 6u);
}

TEST(TraceModels, SharedSubmoduleWeightsOnce) {
  manual_seed(13);
  Shared M;
  auto R = traceAndCompare(M, {InputSpec({3, 4})}, {randn({3, 4})});
  EXPECT_EQ(initializerNames(*R.Graph),
            (std::vector<std::string>{"a.weight", "a.bias"}));
}

TEST(TraceModels, SeveralInputsTupleAndDictOutputs) {
  manual_seed(14);
  MultiIO M;
  fx::Tracer T;
  auto R = T.trace_graph(M, {InputSpec({2, 4}, DType::F32, "x"),
                             InputSpec({2, 4}, DType::F32, "y")});
  EXPECT_EQ(R.Graph->inputs()[1]->name(), "y");
  EXPECT_EQ(R.Out.K, fx::OutputStructure::Kind::Tuple);
  ASSERT_EQ(R.Out.Children.size(), 2u);
  EXPECT_EQ(R.Out.Children[1].Index, 1u);
  expectGraphEqualsEager(R, M, {randn({2, 4}), randn({2, 4})});

  DictOut D;
  auto RD = T.trace_graph(D, {InputSpec({3}), InputSpec({3})});
  ASSERT_EQ(RD.Out.K, fx::OutputStructure::Kind::Dict);
  EXPECT_EQ(RD.Out.Keys, (std::vector<std::string>{"sum", "parts", "scale"}));
  EXPECT_EQ(RD.Out.Children[1].K, fx::OutputStructure::Kind::List);
  EXPECT_EQ(RD.Out.Children[2].K, fx::OutputStructure::Kind::Constant);
  EXPECT_DOUBLE_EQ(RD.Out.Children[2].Constant.toDouble(), 2.5);
  // y returned as is: an Identity makes it a node output.
  EXPECT_EQ(RD.Graph->outputs().size(), 3u);
  expectGraphEqualsEager(RD, D, {randn({3}), randn({3})});
}

TEST(TraceModels, SymbolicSizesInUserCode) {
  manual_seed(15);
  SizeUser M;
  fx::Tracer T;
  auto R = T.trace_graph(M, {InputSpec({"B", 3, 4})});
  ir::verifyOrThrow(*R.Graph);
  EXPECT_GE(countOps(*R.Graph, ir::OpKind::Shape), 1u);
  EXPECT_GE(countOps(*R.Graph, ir::OpKind::Concat), 1u);
  expectGraphEqualsEager(R, M, {randn({1, 3, 4})});
  expectGraphEqualsEager(R, M, {randn({6, 3, 4})});
  // Concrete sizes stay plain integers in eager code.
  Tensor X = randn({2, 3});
  SymInt S = X.size(1);
  EXPECT_FALSE(S.isSymbolic());
  int64_t N = X.size(0) * 3;
  EXPECT_EQ(N, 6);
  EXPECT_EQ(sizeof(SymInt), 16u);
}
