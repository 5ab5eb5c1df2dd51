//===- LayerArgs.h - Argument types shared by the layers ------ -*- C++ -*-===//
//
// PyTorch layers take sizes as "an int or a tuple" (kernel_size=3 or
// kernel_size=(3, 5)) and print them back in the form given; IntOrTuple
// keeps both the values and the form. ConvPadding adds the 'same'/'valid'
// strings of the convolutions. The repr helpers format values exactly as
// Python's str.format does (1e-05, 0.1, True, (3, 3), (4,)), so extra_repr
// strings equal PyTorch's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Device.h"

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace nng::nn {

/// PyTorch's device= and dtype= arguments (factory_kwargs) of the layers
/// that hold parameters or buffers, passed last: where and in which
/// floating-point dtype the constructor creates them; unset: the defaults
/// (get_default_device(), get_default_dtype()). Device::meta() builds the
/// layer without memory (see ModuleBase::to_empty and utils::skip_init):
///   nn::Linear(4, 3, true, {.dtype = DType::F64})
///   nn::Linear(1 << 16, 1 << 16, true, {.device = Device::meta()})
struct FactoryKwargs {
  std::optional<Device> device = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};

/// An int or a tuple of ints (PyTorch's _size_2_t arguments).
class IntOrTuple {
public:
  /// A single int (printed as 3); any integral type.
  template <std::integral T>
  IntOrTuple(T V) : Values{static_cast<int64_t>(V)}, Tuple(false) {}
  /// A tuple (printed as (3, 5), or (3,) for one element).
  IntOrTuple(std::initializer_list<int64_t> Vs) : Values(Vs), Tuple(true) {}
  IntOrTuple(std::vector<int64_t> Vs) : Values(std::move(Vs)), Tuple(true) {}

  bool isTuple() const { return Tuple; }
  const std::vector<int64_t> &values() const { return Values; }
  /// PyTorch's _single/_pair/_triple: an int repeated N times; a tuple must
  /// have N elements (What names the layer and argument in the error).
  std::vector<int64_t> expand(size_t N, const std::string &What) const;
  /// This value expanded to a tuple of N (the form conv layers store).
  IntOrTuple asTuple(size_t N, const std::string &What) const {
    return IntOrTuple(expand(N, What));
  }
  /// Python's str(): 3, (3, 5) or (3,).
  std::string repr() const;
  bool operator==(const IntOrTuple &O) const = default;

private:
  std::vector<int64_t> Values;
  bool Tuple;
};

/// Convolution padding: sizes, or the strings "same" / "valid".
class ConvPadding {
public:
  template <std::integral T> ConvPadding(T V) : Sizes(V) {}
  ConvPadding(std::initializer_list<int64_t> Vs) : Sizes(Vs) {}
  ConvPadding(std::vector<int64_t> Vs) : Sizes(std::move(Vs)) {}
  ConvPadding(IntOrTuple S) : Sizes(std::move(S)) {}
  ConvPadding(std::string Mode) : Sizes(0), Mode(std::move(Mode)) {}
  ConvPadding(const char *Mode) : Sizes(0), Mode(Mode) {}

  bool isString() const { return Mode.has_value(); }
  /// "same" or "valid" (only when isString()).
  const std::string &mode() const { return *Mode; }
  const IntOrTuple &sizes() const { return Sizes; }

private:
  IntOrTuple Sizes;
  std::optional<std::string> Mode;
};

namespace repr {
/// Python's repr of a float: shortest round-trip digits, exponent form
/// below 1e-4 and from 1e16 (1e-05, 0.1, 1.0, 1e+16, inf, nan).
std::string pyFloat(double V);
/// True / False.
inline std::string pyBool(bool B) { return B ? "True" : "False"; }
/// A tuple of ints: (2, 3) or (4,).
std::string pyTuple(const std::vector<int64_t> &Vs);
/// A quoted string: 'none'.
inline std::string pyStr(const std::string &S) { return "'" + S + "'"; }
} // namespace repr

} // namespace nng::nn
