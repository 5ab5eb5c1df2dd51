//===- Device.h - Where a tensor's memory lives -----------------*- C++ -*-===//
//
// Device names a memory space: the host CPU or CUDA device N. Parsed from and
// printed as "cpu", "cuda", "cuda:1".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace nng {

/// A device: its type and, for CUDA, its index.
struct Device {
  enum class Type : uint8_t { CPU, CUDA };
  Type DeviceType = Type::CPU;
  int Index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int I = 0) { return {Type::CUDA, I}; }
  /// Parses "cpu", "cuda" or "cuda:N"; throws Error(InvalidArgument).
  static Device parse(std::string_view S);

  bool isCPU() const { return DeviceType == Type::CPU; }
  bool isCUDA() const { return DeviceType == Type::CUDA; }
  std::string toString() const;
  bool operator==(const Device &O) const = default;
};

} // namespace nng
