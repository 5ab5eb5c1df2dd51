//===- Zoo.h - The model zoo: build a model by name -------------*- C++ -*-===//
//
// A registry of the zoo's architectures, so a tool can build one from a
// name (nngraph-convert --arch resnet18):
//   resnet18, resnet34, resnet50, mobilenet_v2, vgg11_bn (torchvision's,
//   same module names and state_dict keys), mlp (784-1024-1024-10) and
//   transformer_encoder (4 layers, d_model 256, batch_first).
// create() returns a freshly initialized model in training mode, like
// calling the torchvision constructor with weights=None; load a state dict
// into it to use trained weights (docs/zoo.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nng::zoo {

/// Constructor arguments common to the zoo's models.
struct ZooOptions {
  /// The classifier's output size; unset: the model's default (1000 for
  /// the vision models, 10 for mlp). transformer_encoder has none.
  std::optional<int64_t> num_classes;
};

/// What the registry knows about one architecture.
struct ModelInfo {
  std::string Name;
  /// One line: what it is and where its names come from.
  std::string Summary;
  /// The input of one example with batch size 1 ([1, 3, 224, 224] for the
  /// vision models, [1, 784] for mlp, [1, 128, 256] for the encoder).
  std::vector<int64_t> InputShape;
};

/// The registered names, in a fixed order.
std::vector<std::string> names();
/// The registry entry of Name; an error listing the known names when absent.
const ModelInfo &info(const std::string &Name);
/// A new model Name built with Opts. An unknown name is an error listing the
/// known names; an option the model does not take is an error too.
nn::ModulePtr create(const std::string &Name, const ZooOptions &Opts = {});

} // namespace nng::zoo
