//===- Zoo.cpp - The model zoo: build a model by name ----------------------===//
//
// The registry table: one row per architecture with its summary, example
// input shape and constructor.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/frontend/zoo/MobileNetV2.h"
#include "nngraph/frontend/zoo/ResNet.h"
#include "nngraph/frontend/zoo/TransformerEncoder.h"
#include "nngraph/frontend/zoo/VGG.h"
#include "nngraph/runtime/Error.h"

#include <functional>

namespace nng::zoo {

namespace {

struct Entry {
  ModelInfo Info;
  /// Default num_classes; 0 when the model takes none.
  int64_t DefaultClasses;
  std::function<nn::ModulePtr(int64_t NumClasses)> Make;
};

const std::vector<Entry> &table() {
  static const std::vector<Entry> T = {
      {{"resnet18", "torchvision ResNet-18 (BasicBlock [2, 2, 2, 2])",
        {1, 3, 224, 224}},
       1000,
       [](int64_t C) { return nn::ModulePtr(resnet18(C)); }},
      {{"resnet34", "torchvision ResNet-34 (BasicBlock [3, 4, 6, 3])",
        {1, 3, 224, 224}},
       1000,
       [](int64_t C) { return nn::ModulePtr(resnet34(C)); }},
      {{"resnet50", "torchvision ResNet-50 v1.5 (Bottleneck [3, 4, 6, 3])",
        {1, 3, 224, 224}},
       1000,
       [](int64_t C) { return nn::ModulePtr(resnet50(C)); }},
      {{"mobilenet_v2", "torchvision MobileNetV2 (width 1.0)",
        {1, 3, 224, 224}},
       1000,
       [](int64_t C) { return nn::ModulePtr(mobilenet_v2(C)); }},
      {{"vgg11_bn", "torchvision VGG-11 with batch norm (config A)",
        {1, 3, 224, 224}},
       1000,
       [](int64_t C) { return nn::ModulePtr(vgg11_bn(C)); }},
      {{"mlp", "nn.Sequential Linear(784, 1024), ReLU, Linear(1024, 1024), "
               "ReLU, Linear(1024, 10)",
        {1, 784}},
       10,
       [](int64_t C) { return nn::ModulePtr(mlp(C)); }},
      {{"transformer_encoder",
        "nn.TransformerEncoder: 4 layers, d_model 256, nhead 4, "
        "dim_feedforward 1024, batch_first",
        {1, 128, 256}},
       0,
       [](int64_t) { return nn::ModulePtr(transformer_encoder()); }},
  };
  return T;
}

std::string knownNames() {
  std::string S;
  for (const Entry &E : table())
    S += (S.empty() ? "" : ", ") + E.Info.Name;
  return S;
}

const Entry &find(const std::string &Name) {
  for (const Entry &E : table())
    if (E.Info.Name == Name)
      return E;
  fail(ErrorKind::InvalidArgument, "model zoo: unknown architecture '", Name,
       "'; known architectures: ", knownNames());
}

} // namespace

std::vector<std::string> names() {
  std::vector<std::string> N;
  for (const Entry &E : table())
    N.push_back(E.Info.Name);
  return N;
}

const ModelInfo &info(const std::string &Name) { return find(Name).Info; }

nn::ModulePtr create(const std::string &Name, const ZooOptions &Opts) {
  const Entry &E = find(Name);
  int64_t Classes = E.DefaultClasses;
  if (Opts.num_classes) {
    if (E.DefaultClasses == 0)
      fail(ErrorKind::InvalidArgument, "model zoo: '", Name,
           "' has no classifier; leave num_classes unset");
    if (*Opts.num_classes <= 0)
      fail(ErrorKind::InvalidArgument, "model zoo: '", Name,
           "': num_classes must be positive, got ", *Opts.num_classes);
    Classes = *Opts.num_classes;
  }
  return E.Make(Classes);
}

} // namespace nng::zoo
