//===- ZooStructureTest.cpp - The zoo's registry, names and init -----------===//
//
// What needs no PyTorch: the registry (names, create with options, errors
// that list the known names), state_dict sizes and selected keys and shapes
// of each model (torchvision's numbers, written down from torchvision
// 0.14), torchvision's initialization (kaiming_normal_ fan_out convs,
// BatchNorm 1/0, normal(0, 0.01) classifiers where torchvision uses it,
// identical encoder layers), forward output shapes, and that the models
// end with flatten(1) so any batch size works.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/zoo/Blocks.h"
#include "nngraph/frontend/zoo/MobileNetV2.h"
#include "nngraph/frontend/zoo/ResNet.h"
#include "nngraph/frontend/zoo/TransformerEncoder.h"
#include "nngraph/frontend/zoo/VGG.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace nng;

namespace {

/// Population statistics of T.
std::pair<double, double> meanStd(const Tensor &T) {
  std::vector<double> V = T.data().toDoubleVector();
  double S = 0, S2 = 0;
  for (double X : V)
    S += X;
  double Mean = S / static_cast<double>(V.size());
  for (double X : V)
    S2 += (X - Mean) * (X - Mean);
  return {Mean, std::sqrt(S2 / static_cast<double>(V.size()))};
}

std::vector<int64_t> dims(const Tensor &T) { return T.shape().dims(); }

TEST(ZooRegistry, NamesAndErrors) {
  EXPECT_EQ(zoo::names(),
            (std::vector<std::string>{"resnet18", "resnet34", "resnet50",
                                      "mobilenet_v2", "vgg11_bn", "mlp",
                                      "transformer_encoder"}));
  try {
    zoo::create("resnet19");
    FAIL() << "no error for an unknown name";
  } catch (const Error &E) {
    std::string M = E.what();
    EXPECT_NE(M.find("'resnet19'"), std::string::npos) << M;
    EXPECT_NE(M.find("resnet18, resnet34, resnet50, mobilenet_v2, vgg11_bn, "
                     "mlp, transformer_encoder"),
              std::string::npos)
        << M;
  }
  EXPECT_THROW(zoo::create("transformer_encoder", {.num_classes = 3}), Error);
  EXPECT_THROW(zoo::create("mlp", {.num_classes = 0}), Error);
  EXPECT_THROW(zoo::info("nope"), Error);
  EXPECT_EQ(zoo::info("mlp").InputShape, (std::vector<int64_t>{1, 784}));
  EXPECT_EQ(zoo::info("resnet50").InputShape,
            (std::vector<int64_t>{1, 3, 224, 224}));
}

TEST(ZooRegistry, NumClasses) {
  nn::ModulePtr M = zoo::create("resnet18", {.num_classes = 7});
  EXPECT_EQ(dims(M->get_parameter("fc.weight")),
            (std::vector<int64_t>{7, 512}));
  M = zoo::create("mobilenet_v2", {.num_classes = 5});
  EXPECT_EQ(dims(M->get_parameter("classifier.1.weight")),
            (std::vector<int64_t>{5, 1280}));
  M = zoo::create("mlp", {.num_classes = 3});
  EXPECT_EQ(dims(M->get_parameter("4.weight")),
            (std::vector<int64_t>{3, 1024}));
  M = zoo::create("mlp");
  EXPECT_EQ(dims(M->get_parameter("4.weight")),
            (std::vector<int64_t>{10, 1024}));
  EXPECT_EQ(M->type_name(), "Sequential");
}

/// torchvision 0.14's state_dict sizes and parameter counts (vgg11_bn's in
/// VggAndTransformerKeys: it is slow to build).
TEST(ZooModels, StateDictSizes) {
  struct Want {
    size_t Keys;
    int64_t Params;
  };
  std::map<std::string, Want> W = {
      {"resnet18", {122, 11689512}},     {"resnet34", {218, 21797672}},
      {"resnet50", {320, 25557032}},     {"mobilenet_v2", {314, 3504872}},
      {"mlp", {6, 1863690}},
      {"transformer_encoder", {48, 3159040}}};
  for (const auto &[Name, Expect] : W) {
    nn::ModulePtr M = zoo::create(Name);
    EXPECT_EQ(M->state_dict().size(), Expect.Keys) << Name;
    EXPECT_EQ(M->num_parameters(), Expect.Params) << Name;
  }
}

TEST(ZooModels, ResNetKeys) {
  auto M = zoo::resnet50();
  nn::StateDict SD = M->state_dict();
  std::vector<std::string> K = SD.keys();
  EXPECT_EQ(K.front(), "conv1.weight");
  EXPECT_EQ(K[1], "bn1.weight");
  EXPECT_EQ(K[5], "bn1.num_batches_tracked");
  EXPECT_EQ(K.back(), "fc.bias");
  // v1.5: the stride sits on the 3x3 conv.
  EXPECT_EQ(M->get_submodule_as<nn::Conv2d>("layer2.0.conv2")->stride,
            (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(M->get_submodule_as<nn::Conv2d>("layer2.0.conv1")->stride,
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(dims(SD.at("layer2.0.downsample.0.weight")),
            (std::vector<int64_t>{512, 256, 1, 1}));
  EXPECT_EQ(dims(SD.at("layer4.2.conv3.weight")),
            (std::vector<int64_t>{2048, 512, 1, 1}));
  EXPECT_EQ(SD.at("layer1.0.bn1.num_batches_tracked").dtype(), DType::I64);
  auto R18 = zoo::resnet18();
  EXPECT_FALSE(R18->state_dict().contains("layer1.0.downsample.0.weight"));
  EXPECT_TRUE(R18->state_dict().contains("layer2.0.downsample.1.running_var"));
}

TEST(ZooModels, MobileNetV2Keys) {
  auto M = zoo::mobilenet_v2();
  nn::StateDict SD = M->state_dict();
  EXPECT_EQ(dims(SD.at("features.0.0.weight")),
            (std::vector<int64_t>{32, 3, 3, 3}));
  EXPECT_TRUE(SD.contains("features.0.1.running_mean"));
  // Block 1 (t=1): depthwise conv.0, projection conv.1, BN conv.2.
  EXPECT_EQ(dims(SD.at("features.1.conv.0.0.weight")),
            (std::vector<int64_t>{32, 1, 3, 3}));
  EXPECT_EQ(dims(SD.at("features.1.conv.1.weight")),
            (std::vector<int64_t>{16, 32, 1, 1}));
  EXPECT_TRUE(SD.contains("features.1.conv.2.running_var"));
  // Block 2 (t=6): expand conv.0, depthwise conv.1, projection conv.2, BN.
  EXPECT_EQ(dims(SD.at("features.2.conv.0.0.weight")),
            (std::vector<int64_t>{96, 16, 1, 1}));
  EXPECT_EQ(dims(SD.at("features.2.conv.1.0.weight")),
            (std::vector<int64_t>{96, 1, 3, 3}));
  EXPECT_TRUE(SD.contains("features.2.conv.3.bias"));
  EXPECT_EQ(dims(SD.at("features.18.0.weight")),
            (std::vector<int64_t>{1280, 320, 1, 1}));
  EXPECT_EQ(dims(SD.at("classifier.1.weight")),
            (std::vector<int64_t>{1000, 1280}));
  EXPECT_EQ(M->get_submodule("features.0")->type_name(),
            "Conv2dNormActivation");
  EXPECT_EQ(M->get_submodule("features.0.2")->to_string(),
            "ReLU6(inplace=True)");
  EXPECT_EQ(M->get_submodule("classifier.0")->to_string(),
            "Dropout(p=0.2, inplace=False)");
  EXPECT_TRUE(M->get_submodule_as<zoo::InvertedResidual>("features.3")
                  ->use_res_connect);
  EXPECT_FALSE(M->get_submodule_as<zoo::InvertedResidual>("features.4")
                   ->use_res_connect);
}

TEST(ZooModels, VggAndTransformerKeys) {
  auto V = zoo::vgg11_bn();
  nn::StateDict SD = V->state_dict();
  EXPECT_EQ(SD.size(), 62u);
  EXPECT_EQ(V->num_parameters(), 132868840);
  EXPECT_EQ(dims(SD.at("features.0.weight")),
            (std::vector<int64_t>{64, 3, 3, 3}));
  EXPECT_TRUE(SD.contains("features.1.running_mean"));
  EXPECT_EQ(dims(SD.at("features.25.weight")),
            (std::vector<int64_t>{512, 512, 3, 3}));
  EXPECT_EQ(dims(SD.at("classifier.0.weight")),
            (std::vector<int64_t>{4096, 25088}));
  EXPECT_EQ(dims(SD.at("classifier.6.weight")),
            (std::vector<int64_t>{1000, 4096}));

  auto T = zoo::transformer_encoder();
  std::vector<std::string> K = T->state_dict().keys();
  EXPECT_EQ(K.front(), "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(K.back(), "layers.3.norm2.bias");
  EXPECT_EQ(dims(T->get_parameter("layers.2.self_attn.in_proj_weight")),
            (std::vector<int64_t>{768, 256}));
  EXPECT_EQ(dims(T->get_parameter("layers.1.linear1.weight")),
            (std::vector<int64_t>{1024, 256}));
  // The layers start as copies of one another (PyTorch deep-copies).
  Tensor A = T->get_parameter("layers.0.linear1.weight");
  Tensor B = T->get_parameter("layers.3.linear1.weight");
  EXPECT_EQ(A.data().toDoubleVector(), B.data().toDoubleVector());

  auto Mlp = zoo::mlp();
  EXPECT_EQ(Mlp->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight",
                                      "2.bias", "4.weight", "4.bias"}));
}

TEST(ZooModels, TorchvisionInit) {
  manual_seed(0);
  auto R = zoo::resnet18();
  // kaiming_normal_(fan_out, relu): std = sqrt(2 / (out * k * k)).
  auto [Mean, Std] = meanStd(R->get_parameter("layer1.0.conv1.weight"));
  EXPECT_NEAR(Std, std::sqrt(2.0 / (64 * 9)), 0.05 * std::sqrt(2.0 / 576));
  EXPECT_NEAR(Mean, 0.0, 0.01);
  EXPECT_EQ(meanStd(R->get_parameter("bn1.weight")), std::make_pair(1.0, 0.0));
  EXPECT_EQ(meanStd(R->get_parameter("bn1.bias")), std::make_pair(0.0, 0.0));
  // resnet's fc keeps Linear's default: U(-1/sqrt(512), 1/sqrt(512)).
  auto [FcMean, FcStd] = meanStd(R->get_parameter("fc.weight"));
  EXPECT_NEAR(FcStd, 1.0 / std::sqrt(512.0) / std::sqrt(3.0), 0.002);

  auto M = zoo::mobilenet_v2();
  auto [CMean, CStd] = meanStd(M->get_parameter("classifier.1.weight"));
  EXPECT_NEAR(CStd, 0.01, 0.0005);
  EXPECT_EQ(meanStd(M->get_parameter("classifier.1.bias")),
            std::make_pair(0.0, 0.0));
  // Depthwise conv: fan_out = out_channels * 9 / groups... PyTorch's fan
  // ignores groups: size(0) * receptive field = 32 * 9.
  auto [DMean, DStd] = meanStd(M->get_parameter("features.1.conv.0.0.weight"));
  EXPECT_NEAR(DStd, std::sqrt(2.0 / (32 * 9)), 0.2 * std::sqrt(2.0 / 288));
}

TEST(ZooModels, ForwardShapes) {
  NoGradGuard NoGrad;
  manual_seed(1);
  for (const std::string &Name : {"resnet18", "mobilenet_v2"}) {
    nn::ModulePtr M = zoo::create(Name, {.num_classes = 10});
    M->eval();
    for (int64_t N : {1, 3}) {
      Tensor Y = (*M)(randn({N, 3, 32, 32}));
      EXPECT_EQ(dims(Y), (std::vector<int64_t>{N, 10})) << Name;
    }
  }
  nn::ModulePtr Mlp = zoo::create("mlp");
  EXPECT_EQ(dims((*Mlp)(randn({4, 784}))), (std::vector<int64_t>{4, 10}));
  nn::ModulePtr Enc = zoo::create("transformer_encoder");
  Enc->eval();
  EXPECT_EQ(dims((*Enc)(randn({2, 5, 256}))),
            (std::vector<int64_t>{2, 5, 256}));
}

TEST(ZooModels, Printing) {
  auto B = nn::make<zoo::Conv2dNormActivation>(3, 8, 3, 2, 1, true,
                                               zoo::Activation::ReLU6);
  EXPECT_EQ(B->to_string(),
            "Conv2dNormActivation(\n"
            "  (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), "
            "padding=(1, 1), bias=False)\n"
            "  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, "
            "track_running_stats=True)\n"
            "  (2): ReLU6(inplace=True)\n"
            ")");
}

} // namespace
