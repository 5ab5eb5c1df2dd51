//===- Device.h - Where a tensor's memory lives -----------------*- C++ -*-===//
//
// Device names a memory space: the host CPU, CUDA device N, or "meta" (no
// memory at all: a tensor there has a shape and a dtype but no data, as on
// PyTorch's meta device, so a large model can be built before its weights
// are loaded). Parsed from and printed as "cpu", "cuda", "cuda:1", "meta".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nng {

/// A device: its type and, for CUDA, its index.
struct Device {
  enum class Type : uint8_t { CPU, CUDA, Meta };
  Type DeviceType = Type::CPU;
  int Index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int I = 0) { return {Type::CUDA, I}; }
  static Device meta() { return {Type::Meta, 0}; }
  /// Parses "cpu", "cuda", "cuda:N" or "meta"; throws Error(InvalidArgument).
  static Device parse(std::string_view S);

  bool isCPU() const { return DeviceType == Type::CPU; }
  bool isCUDA() const { return DeviceType == Type::CUDA; }
  bool isMeta() const { return DeviceType == Type::Meta; }
  std::string toString() const;
  bool operator==(const Device &O) const = default;
};

} // namespace nng
