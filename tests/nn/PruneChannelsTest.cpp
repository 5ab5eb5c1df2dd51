//===- PruneChannelsTest.cpp - nn::utils::prune_channels ------------------===//
//
// Structured channel pruning of modules on a small CNN with BatchNorm, a
// residual add, a depthwise conv and Flatten -> Linear: channels whose
// weights are zero go and the eager outputs stay; every state_dict shape and
// layer hyperparameter (and so printing) follows; a training step runs on
// the pruned model; the pruned module re-traces to the graph that the
// prune-channels pass makes of the original's trace (the same layers,
// initializer shapes and values, outputs), for every criterion, global or
// not; exclude; the errors, after which nothing has changed; and the example
// of docs/pruning.md.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/PruneChannels.h"
#include "nngraph/ir/Inputs.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/frontend/optim/SGD.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::nn;

namespace {

/// conv-bn-relu, a residual conv-bn, depthwise conv-bn-relu, a strided 1x1
/// conv, flatten, linear-relu, linear: [N, 3, 6, 6] -> [N, 5].
struct SmallNet : Module<SmallNet> {
  std::shared_ptr<Conv2d> conv1 =
      register_module("conv1", make<Conv2d>(ConvOptions{.in_channels = 3,
                                                        .out_channels = 16,
                                                        .kernel_size = 3,
                                                        .padding = 1,
                                                        .bias = false}));
  std::shared_ptr<BatchNorm2d> bn1 =
      register_module("bn1", make<BatchNorm2d>(16));
  std::shared_ptr<Conv2d> conv2 =
      register_module("conv2", make<Conv2d>(16, 16, 3, 1, 1));
  std::shared_ptr<BatchNorm2d> bn2 =
      register_module("bn2", make<BatchNorm2d>(16));
  std::shared_ptr<Conv2d> dw =
      register_module("dw", make<Conv2d>(16, 16, 3, 1, 1, 1, 16));
  std::shared_ptr<BatchNorm2d> bn3 =
      register_module("bn3", make<BatchNorm2d>(16));
  std::shared_ptr<Conv2d> conv3 =
      register_module("conv3", make<Conv2d>(16, 8, 1, 2));
  std::shared_ptr<Flatten> flatten =
      register_module("flatten", make<Flatten>());
  std::shared_ptr<Linear> fc1 = register_module("fc1", make<Linear>(72, 12));
  std::shared_ptr<Linear> fc2 = register_module("fc2", make<Linear>(12, 5));

  Tensor forward(const Tensor &X) {
    Tensor H = F::relu((*bn1)((*conv1)(X)));
    H = F::relu((*bn2)((*conv2)(H)) + H);
    H = F::relu((*bn3)((*dw)(H)));
    H = (*flatten)((*conv3)(H));
    return (*fc2)(F::relu((*fc1)(H)));
  }
};

const std::vector<fx::InputSpec> Inputs = {fx::InputSpec({"N", 3, 6, 6})};

/// A SmallNet whose BatchNorms have non-trivial statistics and scales.
std::shared_ptr<SmallNet> makeNet(uint64_t Seed) {
  manual_seed(Seed);
  auto Net = make<SmallNet>();
  NoGradGuard G;
  for (const auto &B : {Net->bn1, Net->bn2, Net->bn3}) {
    init::uniform_(B->weight, 0.5, 1.5);
    init::uniform_(B->bias, -0.5, 0.5);
    init::uniform_(B->running_mean, -0.5, 0.5);
    init::uniform_(B->running_var, 0.5, 1.5);
  }
  return Net;
}

/// Zeroes rows Rows (axis 0 entries) of T.
void zeroRows(Tensor T, const std::vector<int64_t> &Rows) {
  NoGradGuard G;
  int64_t Inner = T.numel() / T.sizes()[0];
  float *P = T.data_ptr<float>();
  for (int64_t R : Rows)
    std::fill(P + R * Inner, P + (R + 1) * Inner, 0.0f);
}

std::vector<int64_t> shapeOf(const Tensor &T) { return T.sizes(); }

std::map<std::string, std::vector<int64_t>> shapes(const ModuleBase &M) {
  std::map<std::string, std::vector<int64_t>> Out;
  for (const auto &[K, T] : M.state_dict())
    Out[K] = shapeOf(T);
  return Out;
}

template <typename F> void expectError(F &&Fn, const std::string &Needle) {
  try {
    Fn();
    ADD_FAILURE() << "expected an nng::Error with '" << Needle << "'";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find(Needle), std::string::npos)
        << "message lacks '" << Needle << "':\n"
        << E.what();
  }
}

/// "Op name" of G's nodes, leaving out shape computations and reshapes.
std::vector<std::string> layerNodes(const ir::Graph &G) {
  std::vector<std::string> Out;
  for (const auto &N : G.nodes()) {
    switch (N->op()) {
    case ir::OpKind::Shape:
    case ir::OpKind::Gather:
    case ir::OpKind::Unsqueeze:
    case ir::OpKind::Concat:
    case ir::OpKind::Constant:
    case ir::OpKind::Reshape:
    case ir::OpKind::Flatten:
      continue;
    default:
      Out.push_back(std::string(N->schema().Name) + " " + N->name());
    }
  }
  return Out;
}

std::shared_ptr<ir::Graph> traceEval(ModuleBase &M) {
  bool Was = M.is_training();
  M.eval();
  auto G = fx::Tracer().trace_graph(M, Inputs).Graph;
  M.train(Was);
  return G;
}

} // namespace

TEST(PruneChannels, ZeroChannelsGoAndOutputsStay) {
  auto Net = makeNet(1);
  // The residual group (conv1, conv2, bn1-3, the depthwise conv) loses
  // channels whose producers are zero and whose BatchNorms output zero.
  std::vector<int64_t> Res = {1, 4, 6, 7, 9, 10, 13, 15};
  for (const Tensor &T :
       {Net->conv1->weight, Net->conv2->weight, Net->conv2->bias,
        Net->dw->weight, Net->dw->bias, Net->bn1->weight, Net->bn1->bias,
        Net->bn2->weight, Net->bn2->bias, Net->bn3->weight, Net->bn3->bias})
    zeroRows(T, Res);
  zeroRows(Net->conv3->weight, {0, 2, 5, 7});
  zeroRows(Net->conv3->bias, {0, 2, 5, 7});
  zeroRows(Net->fc1->weight, {0, 3, 4, 7, 8, 11});
  zeroRows(Net->fc1->bias, {0, 3, 4, 7, 8, 11});
  Net->eval();
  manual_seed(5);
  Tensor X = randn({2, 3, 6, 6});
  Tensor Before = (*Net)(X);

  utils::PruneChannelsOptions O;
  O.round = 2;
  utils::PruneChannelsReport R = utils::prune_channels(*Net, Inputs, O);
  EXPECT_EQ(R.groups_pruned, 3);
  EXPECT_EQ(R.channels_removed, 8 + 4 + 6);
  EXPECT_EQ(R.groups_left.at("a graph output"), 1);
  EXPECT_EQ(R.parameters_after, Net->num_parameters());
  EXPECT_LT(R.parameters_after, R.parameters_before);
  EXPECT_FALSE(Net->is_training()); // Flags kept.

  auto S = shapes(*Net);
  using V = std::vector<int64_t>;
  EXPECT_EQ(S["conv1.weight"], (V{8, 3, 3, 3}));
  for (const char *K :
       {"bn1.weight", "bn1.bias", "bn1.running_mean", "bn2.running_var",
        "bn3.weight", "conv2.bias", "dw.bias"})
    EXPECT_EQ(S[K], (V{8})) << K;
  EXPECT_EQ(S["bn1.num_batches_tracked"], V{});
  EXPECT_EQ(S["conv2.weight"], (V{8, 8, 3, 3}));
  EXPECT_EQ(S["dw.weight"], (V{8, 1, 3, 3}));
  EXPECT_EQ(S["conv3.weight"], (V{4, 8, 1, 1}));
  EXPECT_EQ(S["conv3.bias"], (V{4}));
  EXPECT_EQ(S["fc1.weight"], (V{6, 36})); // 4 channels x 3x3 positions.
  EXPECT_EQ(S["fc2.weight"], (V{5, 6}));
  EXPECT_EQ(S["fc2.bias"], (V{5}));
  // The layers' hyperparameters follow (and so does printing).
  EXPECT_EQ(Net->conv1->out_channels, 8);
  EXPECT_EQ(Net->conv2->in_channels, 8);
  EXPECT_EQ(Net->dw->groups, 8);
  EXPECT_EQ(Net->dw->in_channels, 8);
  EXPECT_EQ(Net->dw->out_channels, 8);
  EXPECT_EQ(Net->conv3->in_channels, 8);
  EXPECT_EQ(Net->conv3->out_channels, 4);
  EXPECT_EQ(Net->bn2->num_features, 8);
  EXPECT_EQ(Net->fc1->in_features, 36);
  EXPECT_EQ(Net->fc1->out_features, 6);
  EXPECT_EQ(Net->fc2->in_features, 6);
  std::string Printed = Net->to_string();
  EXPECT_NE(Printed.find("(dw): Conv2d(8, 8, kernel_size=(3, 3)"),
            std::string::npos)
      << Printed;
  EXPECT_NE(Printed.find("groups=8"), std::string::npos) << Printed;
  EXPECT_NE(Printed.find("(bn3): BatchNorm2d(8, eps"), std::string::npos)
      << Printed;
  EXPECT_NE(Printed.find("in_features=36, out_features=6"), std::string::npos)
      << Printed;
  // The forward members see the new tensors.
  EXPECT_EQ(shapeOf(Net->bn1->running_mean), V{8});
  EXPECT_EQ(shapeOf(Net->fc1->weight), (V{6, 36}));

  Tensor After = (*Net)(X);
  EXPECT_TRUE(allclose(After, Before, 1e-4, 1e-5));
}

TEST(PruneChannels, TrainingContinuesOnThePrunedModel) {
  auto Net = makeNet(2);
  Net->train();
  utils::PruneChannelsOptions O;
  O.round = 4;
  utils::prune_channels(*Net, Inputs, O);
  EXPECT_TRUE(Net->is_training());
  optim::SGD Opt(Net->parameters(), {.lr = 0.1, .momentum = 0.9});
  manual_seed(3);
  Tensor X = randn({4, 3, 6, 6});
  Tensor Y = Tensor(rt::Tensor::fromVector<int64_t>({0, 1, 2, 3}, Shape{4}));
  Tensor W0 = Net->conv2->weight.detach().clone();
  double First = 0, Last = 0;
  for (int Step = 0; Step < 5; ++Step) {
    Opt.zero_grad();
    Tensor Loss = F::cross_entropy((*Net)(X), Y);
    Loss.backward();
    for (const auto &[Name, P] : Net->named_parameters()) {
      ASSERT_TRUE(P.grad().defined()) << Name;
      EXPECT_EQ(shapeOf(P.grad()), shapeOf(P)) << Name;
    }
    Opt.step();
    double L = Loss.item<double>();
    EXPECT_TRUE(std::isfinite(L));
    (Step == 0 ? First : Last) = L;
  }
  EXPECT_LT(Last, First);
  EXPECT_FALSE(allclose(Net->conv2->weight, W0));
  EXPECT_EQ(shapeOf(Net->bn2->running_mean), std::vector<int64_t>{8});
  EXPECT_EQ(Net->bn2->num_batches_tracked.item<int64_t>(), 5);
}

TEST(PruneChannels, RetracesToThePassResult) {
  struct Case {
    const char *Criterion;
    bool Global;
    int64_t Round;
    double Ratio;
  };
  for (const Case &C :
       {Case{"l1", false, 2, 0.5}, Case{"l2", true, 1, 0.4},
        Case{"bn", false, 4, 0.5}, Case{"random", false, 1, 0.3}}) {
    SCOPED_TRACE(C.Criterion);
    auto Net = makeNet(11);
    std::shared_ptr<ir::Graph> Expected = traceEval(*Net);
    auto P = passes::createPass("prune-channels");
    P->setOption("ratio", std::to_string(C.Ratio));
    P->setOption("criterion", C.Criterion);
    P->setOption("round", std::to_string(C.Round));
    P->setOption("global", C.Global ? "true" : "false");
    P->setOption("seed", "9");
    ASSERT_TRUE(P->run(*Expected));

    utils::PruneChannelsOptions O;
    O.ratio = C.Ratio;
    O.criterion = C.Criterion;
    O.round = C.Round;
    O.global = C.Global;
    O.seed = 9;
    utils::PruneChannelsReport R = utils::prune_channels(*Net, Inputs, O);
    EXPECT_EQ(R.groups_pruned, P->statistics().at("groups-pruned"));
    EXPECT_EQ(R.channels_removed, P->statistics().at("channels-removed"));
    std::shared_ptr<ir::Graph> Got = traceEval(*Net);

    // The same layers (the pass makes the traced flatten's Reshape, whose
    // shape it would leave stale, a Flatten; a trace computes the shape).
    EXPECT_EQ(layerNodes(*Got), layerNodes(*Expected));
    EXPECT_EQ(Got->initializers().size(), Expected->initializers().size());
    for (const ir::Value *V : Got->initializers()) {
      const ir::Value *E = Expected->lookup(V->name());
      ASSERT_NE(E, nullptr) << V->name();
      ASSERT_EQ(V->data().shape(), E->data().shape()) << V->name();
      EXPECT_TRUE(allclose(Tensor(V->data()), Tensor(E->data()), 0, 0))
          << V->name();
    }
    auto In = ir::makeDeterministicInputs(*Got, {{"N", 2}}, 4);
    auto OutGot = backends::runReference(*Got, In);
    auto OutExpected = backends::runReference(*Expected, In);
    EXPECT_TRUE(
        allclose(Tensor(OutGot[0]), Tensor(OutExpected[0]), 1e-5, 1e-6));
    EXPECT_EQ(shapeOf((*Net)(randn({2, 3, 6, 6}))),
              (std::vector<int64_t>{2, 5}));
  }
}

TEST(PruneChannels, ExcludeKeepsALayer) {
  auto Net = makeNet(4);
  utils::PruneChannelsOptions O;
  O.round = 1;
  O.exclude = {"conv3"};
  utils::PruneChannelsReport R = utils::prune_channels(*Net, Inputs, O);
  EXPECT_EQ(R.groups_left.at("excluded"), 1);
  EXPECT_EQ(Net->conv3->out_channels, 8);
  EXPECT_EQ(Net->conv3->in_channels, 8); // Its input group was pruned.
  EXPECT_EQ(Net->fc1->in_features, 72);
}

/// A BatchNorm without affine parameters: forward makes its ones and zeros.
struct NoAffine : Module<NoAffine> {
  std::shared_ptr<Conv2d> conv1 =
      register_module("conv1", make<Conv2d>(3, 8, 3, 1, 1));
  std::shared_ptr<BatchNorm2d> bn = register_module(
      "bn",
      make<BatchNorm2d>(BatchNormOptions{.num_features = 8, .affine = false}));
  std::shared_ptr<Conv2d> conv2 =
      register_module("conv2", make<Conv2d>(8, 4, 1));
  Tensor forward(const Tensor &X) {
    return (*conv2)(F::relu((*bn)((*conv1)(X))));
  }
};

TEST(PruneChannels, BatchNormWithoutAffineParameters) {
  manual_seed(8);
  auto Net = make<NoAffine>();
  utils::PruneChannelsOptions O;
  O.round = 1;
  utils::prune_channels(*Net, {fx::InputSpec({"N", 3, 5, 5})}, O);
  EXPECT_EQ(Net->bn->num_features, 4);
  EXPECT_EQ(shapeOf(Net->bn->running_var), std::vector<int64_t>{4});
  EXPECT_FALSE(Net->bn->weight.defined());
  EXPECT_EQ(Net->conv2->in_channels, 4);
  Net->eval();
  EXPECT_EQ(shapeOf((*Net)(randn({2, 3, 5, 5}))),
            (std::vector<int64_t>{2, 4, 5, 5}));
  Net->train();
  EXPECT_EQ(shapeOf((*Net)(randn({2, 3, 5, 5}))),
            (std::vector<int64_t>{2, 4, 5, 5}));
}

/// Multiplies by a per-channel tensor that is not registered.
struct UnregisteredScale : Module<UnregisteredScale> {
  std::shared_ptr<Conv2d> conv1 =
      register_module("conv1", make<Conv2d>(3, 8, 1));
  std::shared_ptr<Conv2d> conv2 =
      register_module("conv2", make<Conv2d>(8, 4, 1));
  Tensor Scale = ones({8, 1, 1});
  Tensor forward(const Tensor &X) { return (*conv2)((*conv1)(X)*Scale); }
};

TEST(PruneChannels, ErrorsChangeNothing) {
  auto Net = makeNet(6);
  auto Before = shapes(*Net);
  auto Try = [&](utils::PruneChannelsOptions O, const std::string &Needle) {
    expectError([&] { utils::prune_channels(*Net, Inputs, O); }, Needle);
    EXPECT_EQ(shapes(*Net), Before) << Needle;
  };
  utils::PruneChannelsOptions O;
  O.ratio = 1.0;
  Try(O, "ratio 1 is outside [0, 1)");
  O = {};
  O.criterion = "l3";
  Try(O, "criterion 'l3' is not one of l1, l2, bn, random");
  O = {};
  O.exclude = {"conv9"};
  Try(O, "exclude pattern 'conv9' matches no node");
  O = {};
  O.round = 16; // 16 keep 16, 8 keep 8, 12 keep 16.
  Try(O, "no channel group of graph 'SmallNet' can be pruned");

  nn::utils::prune::l1_unstructured(Net->conv2, "weight", 0.3);
  expectError([&] { utils::prune_channels(*Net, Inputs, {}); },
              "prune::remove first");
  EXPECT_EQ(shapeOf(Net->conv2->weight), (std::vector<int64_t>{16, 16, 3, 3}));

  auto Lin = make<Sequential>(make<Linear>(4, 3));
  expectError(
      [&] {
        utils::prune_channels(*Lin, {fx::InputSpec({"N", 4})}, {});
      },
      "left alone: a graph");

  auto U = make<UnregisteredScale>();
  utils::PruneChannelsOptions R1;
  R1.round = 1;
  expectError(
      [&] {
        utils::prune_channels(*U, {fx::InputSpec({1, 3, 4, 4})}, R1);
      },
      "not a parameter or buffer of the module");
  EXPECT_EQ(U->conv1->out_channels, 8);
  EXPECT_EQ(shapeOf(U->conv1->weight), (std::vector<int64_t>{8, 3, 1, 1}));
}

/// The example of docs/pruning.md, "Pruning modules".
struct DocsNet : Module<DocsNet> {
  std::shared_ptr<Conv2d> conv1 =
      register_module("conv1", make<Conv2d>(1, 32, 3, 1, 1));
  std::shared_ptr<BatchNorm2d> bn1 =
      register_module("bn1", make<BatchNorm2d>(32));
  std::shared_ptr<Conv2d> conv2 =
      register_module("conv2", make<Conv2d>(32, 64, 3, 2, 1));
  std::shared_ptr<Flatten> flatten =
      register_module("flatten", make<Flatten>());
  std::shared_ptr<Linear> fc =
      register_module("fc", make<Linear>(64 * 14 * 14, 10));
  Tensor forward(const Tensor &x) {
    Tensor h = F::relu((*bn1)((*conv1)(x)));
    return (*fc)((*flatten)(F::relu((*conv2)(h))));
  }
};

TEST(PruneChannels, DocsExample) {
  auto Net = make<DocsNet>();
  utils::PruneChannelsReport R =
      utils::prune_channels(*Net, {fx::InputSpec({"N", 1, 28, 28})}, {});
  EXPECT_EQ(R.channels_removed, 48);
  EXPECT_EQ(R.parameters_before, 144330);
  EXPECT_EQ(R.parameters_after, 67562);
  std::string Printed = Net->to_string();
  for (const char *Needle :
       {"Conv2d(1, 16,", "BatchNorm2d(16,", "Conv2d(16, 32,",
        "in_features=6272, out_features=10"})
    EXPECT_NE(Printed.find(Needle), std::string::npos) << Printed;
  optim::SGD Opt(Net->parameters(), {.lr = 0.01, .momentum = 0.9});
  Tensor Loss = (*Net)(randn({2, 1, 28, 28})).sum();
  Loss.backward();
  Opt.step();
}
