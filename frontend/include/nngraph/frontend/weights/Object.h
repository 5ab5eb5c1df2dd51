//===- Object.h - The value tree a checkpoint file holds ----------*- C++ -*-===//
//
// weights::Object is what a checkpoint holds once read: None, a bool, an
// integer, a float, a string, a data tensor (rt::Tensor), a list, a tuple
// or a dict whose keys are strings or integers (an optimizer's state is
// keyed by parameter index), in insertion order. It is exactly what the
// restricted unpickler of .pt files can rebuild, and what the .pt writer
// writes. Flat formats (safetensors, .npz) and state dicts are TensorMaps
// (TensorMap.h); selectTensors() picks one out of a tree. Data only: the
// readers depend on the runtime alone (fuzzable without the eager
// frontend).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nng::weights {

class Object {
public:
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,
    Float,
    String,
    Tensor,
    List,
    Tuple,
    Dict
  };
  using DictEntry = std::pair<Object, Object>;

  /// None.
  Object() = default;
  static Object boolean(bool B);
  static Object integer(int64_t I);
  static Object floating(double D);
  static Object string(std::string S);
  static Object tensor(rt::Tensor T);
  static Object list(std::vector<Object> Elements);
  static Object tuple(std::vector<Object> Elements);
  /// A dict with the entries in the given order (keys: String or Int).
  static Object dict(std::vector<DictEntry> Entries);

  Kind kind() const { return K; }
  bool isNone() const { return K == Kind::None; }
  bool isTensor() const { return K == Kind::Tensor; }
  bool isDict() const { return K == Kind::Dict; }
  bool isSequence() const { return K == Kind::List || K == Kind::Tuple; }

  /// Accessors; each throws nng::Error naming the actual kind on a mismatch.
  bool toBool() const;
  int64_t toInt() const;
  /// Float, Int or Bool as double.
  double toDouble() const;
  const std::string &toStringRef() const;
  const rt::Tensor &toTensor() const;
  /// The elements of a list or tuple.
  const std::vector<Object> &elements() const;
  std::vector<Object> &elements();
  /// The entries of a dict.
  const std::vector<DictEntry> &entries() const;
  std::vector<DictEntry> &entries();
  /// The value under a string key of a dict, or null when absent.
  const Object *find(const std::string &Key) const;

  /// "dict", "tensor", ... for messages.
  static const char *kindName(Kind K);
  /// A short Python-like rendering for messages and --list:
  /// {'epoch': 3, 'model': {...12 entries}}, tensor(f32[64, 3, 7, 7]).
  std::string summary(int MaxDepth = 2) const;

private:
  Kind K = Kind::None;
  bool B = false;
  int64_t I = 0;
  double D = 0;
  std::string S;
  rt::Tensor T;
  std::vector<Object> Elems;
  std::vector<DictEntry> Entries;
};

} // namespace nng::weights
