//===- Callbacks.h - C++ callbacks behind nng.ModuleCall nodes --*- C++ -*-===//
//
// A leaf module of a traced model becomes one nng.ModuleCall node whose
// 'callback' attribute is the id of a C++ function registered here (the
// GraphModule that owns the module registers it and keeps the handle; the
// handle's destruction unregisters it). Backends run such a node with
// runModuleCall, which looks the id up, calls the function and checks what
// it returns against the node's declared output types. An id that is not
// registered is an error naming the node and the module: the owner was
// destroyed, or the graph was saved and reloaded (callbacks are not data).
// Callbacks may be impure, so passes never fold or merge these nodes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace nng::backends {

/// This layer names the runtime's data tensor plainly.
using rt::Tensor;

/// Runs a leaf module on concrete inputs and returns its outputs.
using ModuleCallback =
    std::function<std::vector<rt::Tensor>(const std::vector<rt::Tensor> &)>;

/// Keeps a callback registered; destroying the handle unregisters it (a
/// node that names its id afterwards fails with a clear error).
class CallbackHandle {
public:
  CallbackHandle(const CallbackHandle &) = delete;
  CallbackHandle &operator=(const CallbackHandle &) = delete;
  ~CallbackHandle();
  /// The id to store in the node's 'callback' attribute. Ids are unique
  /// within the process and never reused.
  int64_t id() const { return Id; }

private:
  friend std::shared_ptr<CallbackHandle> registerCallback(ModuleCallback F);
  explicit CallbackHandle(int64_t Id) : Id(Id) {}
  int64_t Id;
};

/// Registers F; it stays callable while the returned handle lives.
/// Thread-safe. Throws Error(InvalidArgument) when F is empty.
std::shared_ptr<CallbackHandle> registerCallback(ModuleCallback F);

/// The callback registered under Id, or an empty function when there is none
/// (never registered in this process, or its handle was destroyed).
ModuleCallback lookupCallback(int64_t Id);

/// True when Id was handed out by this process (and may have expired since);
/// false for ids that come from elsewhere (a saved and reloaded graph).
bool isCallbackIdFromThisProcess(int64_t Id);

/// Number of callbacks registered now (for tests and leak checks).
size_t numRegisteredCallbacks();

/// Runs nng.ModuleCall node N on Inputs through its callback. Throws
/// Error naming the node and module when the callback is unknown or expired,
/// when it throws, or when its outputs do not match N's declared output
/// types (count, dtype, rank, static dims).
std::vector<rt::Tensor> runModuleCall(const ir::Node &N,
                                      const std::vector<rt::Tensor> &Inputs);

} // namespace nng::backends
