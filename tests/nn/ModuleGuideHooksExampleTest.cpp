//===- ModuleGuideHooksExampleTest.cpp - docs/modules.md's hook examples --===//
//
// The examples of the guide's state-dict extension and hook sections
// (extra state, load_from_state_dict for an old layout, state-dict and load
// hooks, assign, always_call hooks, registration hooks), as written there,
// with checks of what the guide says they do. Keeps those examples working;
// ModuleGuideExampleTest.cpp does the same for the guide's first example.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;

namespace {

struct Counter : nn::Module<Counter> {
  Tensor weight = register_parameter("weight", ones({2}));
  int64_t steps = 0;
  std::optional<Tensor> get_extra_state() const override {
    return full({1}, steps, DType::I64);
  }
  void set_extra_state(const Tensor &state) override {
    steps = state.item<int64_t>();
  }
  Tensor forward(const Tensor &x) {
    ++steps;
    return x * weight;
  }
};

struct Scale : nn::Module<Scale> {
  Tensor weight = register_parameter("weight", ones({3}));
  // Old checkpoints named the parameter "w".
  void load_from_state_dict(nn::StateDict &sd, const std::string &prefix,
                            nn::LoadStateDictContext &ctx) override {
    if (const Tensor *old = sd.find(prefix + "w")) {
      sd.insert(prefix + "weight", *old);
      sd.erase(prefix + "w");
    }
    nn::ModuleBase::load_from_state_dict(sd, prefix, ctx);
  }
  Tensor forward(const Tensor &x) { return x * weight; }
};

} // namespace

TEST(ModuleGuideHooksExample, ExtraState) {
  struct Parent : nn::Module<Parent> {
    std::shared_ptr<Counter> counter =
        register_module("counter", std::make_shared<Counter>());
  };
  auto P = std::make_shared<Parent>();
  (*P->counter)(ones({2}));
  (*P->counter)(ones({2}));
  nn::StateDict SD = P->state_dict();
  EXPECT_EQ(SD.keys(), (std::vector<std::string>{"counter.weight",
                                                 "counter._extra_state"}));
  auto Q = std::make_shared<Parent>();
  Q->load_state_dict(SD);
  EXPECT_EQ(Q->counter->steps, 2);
  SD.erase("counter._extra_state");
  EXPECT_THROW(Q->load_state_dict(SD), Error);
  EXPECT_EQ(Q->load_state_dict(SD, false).missing_keys,
            std::vector<std::string>{"counter._extra_state"});
}

TEST(ModuleGuideHooksExample, OldLayout) {
  auto M = std::make_shared<Scale>();
  M->load_state_dict(nn::StateDict{{"w", full({3}, 2.0)}});
  EXPECT_EQ(M->weight.to_vector<double>(), (std::vector<double>{2, 2, 2}));
}

TEST(ModuleGuideHooksExample, StateDictAndLoadHooks) {
  auto net = std::make_shared<nn::Sequential>(
      std::make_shared<nn::Linear>(2, 2), std::make_shared<nn::Linear>(2, 2));
  // Checkpoints of an older version called the first layer "enc".
  net->register_load_state_dict_pre_hook([](nn::ModuleBase &, nn::StateDict &sd,
                                            const std::string &prefix) {
    for (const std::string &key : sd.keys())
      if (key.rfind(prefix + "enc.", 0) == 0) {
        sd.insert(prefix + "0." + key.substr(prefix.size() + 4), sd.at(key));
        sd.erase(key);
      }
  });
  // The second layer's bias may be absent: not an error.
  net->at<nn::Linear>(1)->register_load_state_dict_post_hook(
      [](nn::ModuleBase &, nn::LoadStateDictResult &keys) {
        std::erase(keys.missing_keys, "1.bias");
      });
  // Leave the first layer's bias out of saved checkpoints.
  net->at<nn::Linear>(0)->register_state_dict_post_hook(
      [](nn::ModuleBase &, nn::StateDict &sd, const std::string &prefix) {
        sd.erase(prefix + "bias");
      });

  EXPECT_EQ(net->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "1.weight", "1.bias"}));
  nn::StateDict Old{{"enc.weight", full({2, 2}, 3.0)},
                    {"enc.bias", full({2}, 3.0)},
                    {"1.weight", full({2, 2}, 4.0)}};
  nn::LoadStateDictResult R = net->load_state_dict(Old);
  EXPECT_TRUE(R.missing_keys.empty());
  EXPECT_TRUE(R.unexpected_keys.empty());
  EXPECT_EQ(net->at<nn::Linear>(0)->bias.to_vector<double>()[0], 3.0);
  EXPECT_EQ(net->at<nn::Linear>(1)->weight.to_vector<double>()[0], 4.0);
}

TEST(ModuleGuideHooksExample, Assign) {
  auto model = std::make_shared<nn::Linear>(1024, 1024);
  nn::StateDict sd = model->state_dict(); // e.g. from weights::load
  model->load_state_dict(sd, /*strict=*/true, /*assign=*/true);
  // model->weight now shares sd.at("weight")'s data.
  EXPECT_EQ(model->weight.data().rawData(), sd.at("weight").data().rawData());
  EXPECT_TRUE(model->weight.requires_grad());
  EXPECT_TRUE(model->weight.is_same(model->get_parameter("weight")));
}

TEST(ModuleGuideHooksExample, AlwaysCall) {
  auto layer = std::make_shared<nn::Linear>(2, 2);
  auto timer_start = std::make_shared<double>(0);
  layer->register_forward_pre_hook(
      [=](nn::ModuleBase &, const std::vector<nn::Value> &) {
        *timer_start = 1;
      });
  layer->register_forward_hook(
      [=](nn::ModuleBase &, const std::vector<nn::Value> &,
          const nn::Value &out) {
        *timer_start = 0; // out.isNone() when forward threw
      },
      {.always_call = true});
  EXPECT_THROW((*layer)(ones({2, 5})), Error); // Wrong in_features.
  EXPECT_EQ(*timer_start, 0.0);
}

TEST(ModuleGuideHooksExample, ParameterRegistrationHook) {
  // Every parameter registered from now on is frozen.
  auto handle = nn::register_module_parameter_registration_hook(
      [](nn::ModuleBase &, const std::string &, const Tensor &p) {
        return p.detach(); // a leaf sharing the data, requires_grad false
      });
  auto lin = std::make_shared<nn::Linear>(2, 2); // weight, bias frozen
  handle.remove();
  EXPECT_FALSE(lin->weight.requires_grad());
  EXPECT_FALSE(lin->bias.requires_grad());
  EXPECT_TRUE(lin->weight.is_same(lin->get_parameter("weight")));
  EXPECT_EQ(lin->num_parameters(/*OnlyTrainable=*/true), 0);
  auto plain = std::make_shared<nn::Linear>(2, 2);
  EXPECT_TRUE(plain->weight.requires_grad());
}
