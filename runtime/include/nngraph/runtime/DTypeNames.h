//===- DTypeNames.h - The names other formats give dtypes -------*- C++ -*-===//
//
// The names PyTorch, NumPy and safetensors give each element type, and the
// reverse lookups, generated from the names section of DTypes.def: the one
// place they are written. Kept out of DType.h so that most files never see
// them. Every function returns null (or nullopt) where the format has no
// such type.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"

#include <optional>
#include <string_view>

namespace nng {

/// The name of torch's dtype without "torch." ("float32", "bool").
const char *torchName(DType T);
/// torch's legacy storage class without "torch." ("FloatStorage"); null for
/// the types .pt files cannot hold.
const char *torchStorageName(DType T);
/// torch's legacy tensor type without "torch." ("FloatTensor").
const char *torchTensorTypeName(DType T);
/// The little-endian .npy descr ("<f4", "|b1").
const char *numpyDescr(DType T);
/// The attribute of numpy's type without "numpy." ("float32", "bool_").
const char *numpyName(DType T);
/// The safetensors header's dtype ("F32", "BOOL").
const char *safetensorsName(DType T);

/// The dtype whose torch storage class is Name ("FloatStorage").
std::optional<DType> dtypeFromTorchStorageName(std::string_view Name);
/// The dtype whose safetensors name is Name ("F32").
std::optional<DType> dtypeFromSafetensorsName(std::string_view Name);

} // namespace nng
