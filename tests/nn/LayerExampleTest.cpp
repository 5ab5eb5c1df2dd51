//===- LayerExampleTest.cpp - The example of docs/layers.md ---------------===//
//
// Compiles and runs the CNN of docs/layers.md's example (keep the two in
// sync) and checks what the document says about it: printing equal to
// PyTorch's print of the same nn.Module, PyTorch's state_dict keys, the
// output shape, and eval mode propagating to the layers.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace nng;

namespace {

struct Net : nn::Module<Net> {
  std::shared_ptr<nn::Conv2d> conv1 = register_module(
      "conv1", nn::make<nn::Conv2d>(1, 8, 3, 1, 1, 1, 1, false));
  std::shared_ptr<nn::BatchNorm2d> bn1 =
      register_module("bn1", nn::make<nn::BatchNorm2d>(8));
  std::shared_ptr<nn::ReLU> relu =
      register_module("relu", nn::make<nn::ReLU>());
  std::shared_ptr<nn::MaxPool2d> pool =
      register_module("pool", nn::make<nn::MaxPool2d>(2));
  std::shared_ptr<nn::Flatten> flatten =
      register_module("flatten", nn::make<nn::Flatten>());
  std::shared_ptr<nn::Dropout> drop =
      register_module("drop", nn::make<nn::Dropout>(0.25));
  std::shared_ptr<nn::Linear> fc =
      register_module("fc", nn::make<nn::Linear>(8 * 14 * 14, 10));

  Tensor forward(const Tensor &x) {
    Tensor h = (*pool)((*relu)((*bn1)((*conv1)(x))));
    return (*fc)((*drop)((*flatten)(h)));
  }
};

} // namespace

TEST(LayerExampleTest, DocumentedCnnBehavesAsDocumented) {
  manual_seed(0);
  auto net = nn::make<Net>();
  std::ostringstream OS;
  OS << *net;
  // print(Net()) of the same torch.nn.Module in PyTorch 1.13.
  EXPECT_EQ(OS.str(),
            "Net(\n"
            "  (conv1): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), "
            "padding=(1, 1), bias=False)\n"
            "  (bn1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, "
            "track_running_stats=True)\n"
            "  (relu): ReLU()\n"
            "  (pool): MaxPool2d(kernel_size=2, stride=2, padding=0, "
            "dilation=1, ceil_mode=False)\n"
            "  (flatten): Flatten(start_dim=1, end_dim=-1)\n"
            "  (drop): Dropout(p=0.25, inplace=False)\n"
            "  (fc): Linear(in_features=1568, out_features=10, bias=True)\n"
            ")");
  Tensor logits = (*net)(randn({4, 1, 28, 28}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{4, 10}));
  EXPECT_EQ(net->bn1->num_batches_tracked.item<int64_t>(), 1);
  net->eval();
  EXPECT_FALSE(net->drop->is_training());
  Tensor X = randn({2, 1, 28, 28});
  EXPECT_TRUE(allclose((*net)(X), (*net)(X)));
  EXPECT_EQ(net->bn1->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(net->state_dict().keys(),
            (std::vector<std::string>{"conv1.weight", "bn1.weight", "bn1.bias",
                                      "bn1.running_mean", "bn1.running_var",
                                      "bn1.num_batches_tracked", "fc.weight",
                                      "fc.bias"}));
}
