//===- StateDict.h - An ordered name -> tensor map ---------------*- C++
//-*-===//
//
// nn::StateDict is what Module::state_dict() returns and load_state_dict()
// takes: tensors under dotted keys ("layer1.0.conv1.weight"), in insertion
// order (PyTorch's OrderedDict). Keys are unique; insert() replaces an
// existing key's tensor in place, keeping its position. Lookups are by
// hash; iteration yields (key, tensor) pairs in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/runtime/OrderedMap.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace nng::nn {

/// An insertion-ordered map from dotted names to tensors (the container is
/// nng::OrderedMap, as for weights::TensorMap).
class StateDict : public OrderedMap<Tensor> {
public:
  StateDict() = default;
  /// From (key, tensor) pairs; a repeated key is an error.
  StateDict(std::vector<Entry> Entries);
  StateDict(std::initializer_list<Entry> Entries);

  /// The tensor under Key; throws nng::Error naming the key (and a few
  /// present keys) when absent.
  const Tensor &at(const std::string &Key) const;
  Tensor &at(const std::string &Key);
};

} // namespace nng::nn
