//===- ModuleGuideExampleTest.cpp - The example of docs/modules.md -------===//
//
// The module of the user guide (docs/modules.md), built with the real
// layers: its state_dict keys and shapes, its tuple forward, its printing,
// the hooks of the guide, and the error lines naming each module level.
// Keeps the guide's example working.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;

namespace {

struct Block : nn::Module<Block> {
  std::shared_ptr<nn::Linear> fc =
      register_module("fc", std::make_shared<nn::Linear>(8, 8));
  Tensor gamma = register_parameter("gamma", ones({8}));
  Tensor steps = register_buffer("steps", zeros({}, DType::I64));

  Tensor forward(const Tensor &X) { return (*fc)(X).relu() * gamma + X; }
};

struct Net : nn::Module<Net> {
  std::shared_ptr<nn::Sequential> layers = register_module(
      "layers", std::make_shared<nn::Sequential>(
                    std::make_shared<nn::Linear>(4, 8),
                    std::make_shared<nn::ReLU>(), std::make_shared<Block>()));
  std::shared_ptr<nn::Linear> head =
      register_module("head", std::make_shared<nn::Linear>(8, 3));

  /// Logits and the hidden features.
  std::tuple<Tensor, Tensor> forward(const Tensor &X) {
    Tensor H = (*layers)(X);
    return {(*head)(H), H};
  }
};

} // namespace

TEST(ModuleGuideExample, StateDictForwardAndPrinting) {
  auto model = std::make_shared<Net>();
  auto [logits, features] = (*model)(randn({2, 4}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(features.sizes(), (std::vector<int64_t>{2, 8}));
  std::vector<std::string> Keys;
  for (auto &[name, t] : model->state_dict())
    Keys.push_back(name + " " + t.shape().toString());
  EXPECT_EQ(Keys, (std::vector<std::string>{
                      "layers.0.weight [8, 4]", "layers.0.bias [8]",
                      "layers.2.gamma [8]", "layers.2.steps []",
                      "layers.2.fc.weight [8, 8]", "layers.2.fc.bias [8]",
                      "head.weight [3, 8]", "head.bias [3]"}));
  std::ostringstream OS;
  OS << *model;
  EXPECT_EQ(OS.str(), "Net(\n"
                      "  (layers): Sequential(\n"
                      "    (0): Linear(in_features=4, out_features=8, bias=True)\n"
                      "    (1): ReLU()\n"
                      "    (2): Block(\n"
                      "      (fc): Linear(in_features=8, out_features=8, "
                      "bias=True)\n"
                      "    )\n"
                      "  )\n"
                      "  (head): Linear(in_features=8, out_features=3, "
                      "bias=True)\n"
                      ")");
}

TEST(ModuleGuideExample, HooksOfTheGuide) {
  auto model = std::make_shared<Net>();
  int PreCalls = 0;
  auto h1 = model->register_forward_pre_hook(
      [&](nn::ModuleBase &m, const std::vector<nn::Value> &inputs) {
        ++PreCalls;
      });
  auto h2 = model->head->register_forward_hook(
      [](nn::ModuleBase &m, const std::vector<nn::Value> &inputs,
         const nn::Value &output) { return nn::Value(output.toTensor() * 2.0); });
  std::vector<Tensor> GradOut;
  auto h3 = model->head->register_full_backward_hook(
      [&](nn::ModuleBase &m, const std::vector<Tensor> &grad_input,
          const std::vector<Tensor> &grad_output) { GradOut = grad_output; });
  Tensor X = randn({2, 4});
  auto [Doubled, F1] = (*model)(X);
  h2.remove();
  auto [Plain, F2] = (*model)(X);
  EXPECT_TRUE(allclose(Doubled, Plain * 2.0));
  EXPECT_EQ(PreCalls, 2);
  Plain.sum().backward();
  ASSERT_EQ(GradOut.size(), 1u);
  EXPECT_TRUE(allclose(GradOut[0], ones({2, 3})));
}

TEST(ModuleGuideExample, ErrorsNameEveryModuleLevel) {
  auto model = std::make_shared<Net>();
  try {
    (*model)(randn({2, 5}));
    ADD_FAILURE() << "expected a shape error";
  } catch (const Error &E) {
    std::string W = E.what();
    size_t A = W.find("in module layers.0 (Linear)");
    size_t B = W.find("in module layers (Sequential)");
    size_t C = W.find("in module <root> (Net)");
    EXPECT_NE(A, std::string::npos) << W;
    EXPECT_NE(B, std::string::npos) << W;
    EXPECT_NE(C, std::string::npos) << W;
    EXPECT_TRUE(A < B && B < C) << W;
    std::cerr << "[the guide's error example]\n" << W << "\n";
  }
}
