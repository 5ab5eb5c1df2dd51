//===- Pickle.h - Restricted unpickler and pickler for .pt ------*- C++ -*-===//
//
// The pickle side of the .pt format (private to formats/). unpickle() reads
// protocols 2-5 with an allow-list of globals like torch.load's
// weights_only unpickler: tensor rebuild functions, collections.OrderedDict,
// the torch.*Storage types, torch dtypes and torch.device, builtins
// set/frozenset and _codecs.encode; anything else, and any call (REDUCE,
// NEWOBJ, BUILD) on something not allowed, is an nng::Error naming the
// archive, the global and the byte offset. Nothing is ever executed.
// pickle() writes protocol 2 as torch.save does, in the subset that
// torch 1.13's weights_only unpickler accepts (except floats: BINFLOAT).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Object.h"
#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Storage.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nng::weights::pickle {

/// Returns the bytes of storage Key (persistent id ('storage', type, Key,
/// location, Numel)) holding at least Numel elements of T; the same Storage
/// for the same key so views alias. Throws nng::Error when missing or short.
using StorageLoader = std::function<std::shared_ptr<Storage>(
    const std::string &Key, DType T, int64_t Numel)>;

/// Limits against hostile input.
struct Limits {
  /// Nesting of containers in the result (also catches cycles).
  int MaxDepth = 256;
  /// Values produced when shared references are expanded into a tree; 0:
  /// 100000 + 16 per pickle byte (an honest pickle needs about one byte a
  /// value, memo references aside).
  uint64_t MaxObjects = 0;
};

/// Rebuilds the object pickled in Bytes; Where (e.g. "model.pt: archive/
/// data.pkl") prefixes messages.
Object unpickle(std::string_view Bytes, const std::string &Where,
                const StorageLoader &Load, const Limits &L = {});

/// A storage referenced by a pickled tensor.
struct StorageRef {
  std::string Key;
  DType Type = DType::F32;
  int64_t Numel = 0;
};

/// Describes how one tensor is written: its storage and its view of it.
struct TensorRef {
  StorageRef Storage;
  int64_t Offset = 0;
  std::vector<int64_t> Sizes, Strides;
};

/// Pickles Root (protocol 2). Describe maps each tensor to its storage
/// reference (assigning storage keys is the caller's job). Dicts whose
/// values are all tensors are written as collections.OrderedDict.
std::string pickle(const Object &Root,
                   const std::function<TensorRef(const rt::Tensor &)> &Describe);

} // namespace nng::weights::pickle
