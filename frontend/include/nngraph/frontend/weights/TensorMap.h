//===- TensorMap.h - An ordered name -> data tensor map ----------*- C++
//-*-===//
//
// weights::TensorMap is a state dict at the data level: rt::Tensors under
// dotted keys, in insertion order, keys unique. It is what the flat formats
// (safetensors, .npz) read and write, what selectTensors() takes out of a
// .pt checkpoint, what the key remapping works on, and what converts to and
// from nn::StateDict (Load.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/Object.h"
#include "nngraph/runtime/OrderedMap.h"

#include <string>
#include <vector>

namespace nng::weights {

/// Data tensors under unique dotted keys, in insertion order (the
/// container is nng::OrderedMap, as for nn::StateDict).
class TensorMap : public OrderedMap<rt::Tensor> {
public:
  TensorMap() = default;
  /// From (key, tensor) pairs; a repeated key is an error naming it.
  explicit TensorMap(std::vector<Entry> Entries);

  /// The tensor under Key; throws nng::Error naming the key when absent.
  const rt::Tensor &at(const std::string &Key) const;
};

/// The tensors of a checkpoint tree as a state dict. KeyPath picks a
/// sub-dict first: keys separated by '/', e.g. "model_state_dict" or
/// "ema/model" (an integer key is written as its digits). The selected
/// value must be a dict; nested dicts flatten to dotted keys
/// ("a" -> {"b": t} gives "a.b"); non-tensor leaves (epoch counters, None)
/// are skipped and listed in *Skipped when given. An empty KeyPath takes the
/// root. Errors name the path component that is missing and the keys that
/// exist there.
TensorMap selectTensors(const Object &Root, const std::string &KeyPath = "",
                        std::vector<std::string> *Skipped = nullptr);

/// The map as a dict Object (what the .pt writer writes for a state dict).
Object toObject(const TensorMap &M);

} // namespace nng::weights
