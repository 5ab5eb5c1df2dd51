//===- SkipInit.h - Build a module without initializing it ------*- C++ -*-===//
//
// torch.nn.utils.skip_init: constructs a module on the meta device (nothing
// allocated, nothing drawn from the generator), then gives every parameter
// and buffer fresh memory on the cpu with to_empty, skipping the
// initializers whose values a loaded checkpoint would overwrite anyway:
//
//   auto Net = nn::utils::skip_init<nn::Linear>(4096, 4096);
//   Net->load_state_dict(SD);   // the only write of the weights
//
// To avoid even that allocation, keep the module on the meta device and
// load with assign (the loaded tensors become the parameters):
//
//   std::shared_ptr<nn::Linear> Net;
//   {
//     DefaultDeviceGuard Meta(Device::meta());
//     Net = std::make_shared<nn::Linear>(4096, 4096);
//   }
//   Net->load_state_dict(SD, /*strict=*/true, /*assign=*/true);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Module.h"

#include <memory>
#include <utility>

namespace nng::nn::utils {

/// M(Args...) built on the meta device, then moved to uninitialized
/// (zero-filled) cpu memory with to_empty. Every layer honours it (their
/// constructors create tensors on the default device); a module that
/// computes values from its parameters while being built fails with the
/// meta device's error naming the op.
template <typename M, typename... Args>
std::shared_ptr<M> skip_init(Args &&...A) {
  std::shared_ptr<M> Module;
  {
    DefaultDeviceGuard Meta(Device::meta());
    Module = std::make_shared<M>(std::forward<Args>(A)...);
  }
  Module->to_empty(Device::cpu());
  return Module;
}

} // namespace nng::nn::utils
