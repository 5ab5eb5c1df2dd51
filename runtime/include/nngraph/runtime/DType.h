//===- DType.h - Element types ----------------------------------*- C++ -*-===//
//
// DType enumerates the element types of tensors (generated from DTypes.def)
// with their names, sizes and properties, and maps C++ types to DTypes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Half.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nng {

/// The element of a str tensor: a handle into the process-wide, append-only
/// string pool (rt::internString / rt::stringOf in runtime/Strings.h). Equal
/// strings have equal ids; id 0 is the empty string, so a zero-filled str
/// tensor holds empty strings.
struct StringId {
  uint64_t Id = 0;
  friend bool operator==(StringId A, StringId B) { return A.Id == B.Id; }
  friend bool operator!=(StringId A, StringId B) { return A.Id != B.Id; }
};

/// The element type of a tensor.
enum class DType : uint8_t {
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx) Enum,
#define NNG_HANDLE_DTYPE(Enum, Name, CppType, Size, Onnx) Enum,
#include "nngraph/runtime/DTypes.def"
};

/// Number of DTypes (numeric and handle types).
inline constexpr int NumDTypes = 0
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx) +1
#define NNG_HANDLE_DTYPE(Enum, Name, CppType, Size, Onnx) +1
#include "nngraph/runtime/DTypes.def"
    ;

/// The short text name ("f32", "i64", "bool", ...).
std::string_view dtypeName(DType T);
/// Parses a short text name; nullopt when unknown.
std::optional<DType> parseDType(std::string_view Name);
/// Size of one element in bytes.
size_t dtypeSize(DType T);
/// True for f16, bf16, f32, f64.
bool isFloatingPoint(DType T);
/// True for the integer types (not bool, not str).
bool isIntegral(DType T);
/// True for str, whose elements are StringIds (runtime/Strings.h).
inline bool isString(DType T) { return T == DType::String; }
/// True for the numeric types kernels compute with (everything but str).
inline bool isNumeric(DType T) { return T != DType::String; }
/// True for signed integer and floating types.
bool isSigned(DType T);
/// ONNX TensorProto.DataType number of T.
int dtypeToOnnx(DType T);
/// DType for an ONNX TensorProto.DataType number; nullopt when unsupported.
std::optional<DType> dtypeFromOnnx(int OnnxType);

/// Maps a C++ element type to its DType: dtypeOf<float>() == DType::F32.
template <typename T> constexpr DType dtypeOf();
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx)         \
  template <> constexpr DType dtypeOf<CppType>() { return DType::Enum; }
#define NNG_HANDLE_DTYPE(Enum, Name, CppType, Size, Onnx)                     \
  template <> constexpr DType dtypeOf<CppType>() { return DType::Enum; }
#include "nngraph/runtime/DTypes.def"

} // namespace nng
