//===- DTypeNames.cpp - The names other formats give dtypes ---------------===//
//
// One table from the names section of DTypes.def, indexed by DType.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/DTypeNames.h"

namespace nng {

namespace {
struct Names {
  const char *Torch, *TorchStorage, *TorchTensorType, *NumpyDescr, *Numpy,
      *Safetensors;
};
/// "" (no such type) as null.
constexpr const char *orNull(const char *S) { return *S ? S : nullptr; }
constexpr Names Table[] = {
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx)
#define NNG_DTYPE_NAMES(Enum, Torch, TorchScalar, NpDescr, Np, St)             \
  {orNull(Torch),                                                              \
   *TorchScalar ? TorchScalar "Storage" : nullptr,                             \
   *TorchScalar ? TorchScalar "Tensor" : nullptr,                              \
   orNull(NpDescr),                                                            \
   orNull(Np),                                                                 \
   orNull(St)},
#include "nngraph/runtime/DTypes.def"
};
static_assert(sizeof(Table) / sizeof(Table[0]) == NumDTypes,
              "DTypes.def: one NNG_DTYPE_NAMES row per dtype");

/// The rows of DTypes.def's names section are in enum order.
constexpr bool inEnumOrder() {
  int I = 0;
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx)
#define NNG_DTYPE_NAMES(Enum, Torch, TorchScalar, NpDescr, Np, St)             \
  if (static_cast<int>(DType::Enum) != I++)                                    \
    return false;
#include "nngraph/runtime/DTypes.def"
  return true;
}
static_assert(inEnumOrder(), "DTypes.def: NNG_DTYPE_NAMES rows in enum order");

const Names &names(DType T) { return Table[static_cast<int>(T)]; }

/// The dtype whose name in Column is Name.
std::optional<DType> find(const char *Names::*Column, std::string_view Name) {
  for (int I = 0; I < NumDTypes; ++I)
    if (const char *N = Table[I].*Column; N && Name == N)
      return static_cast<DType>(I);
  return std::nullopt;
}
} // namespace

const char *torchName(DType T) { return names(T).Torch; }
const char *torchStorageName(DType T) { return names(T).TorchStorage; }
const char *torchTensorTypeName(DType T) { return names(T).TorchTensorType; }
const char *numpyDescr(DType T) { return names(T).NumpyDescr; }
const char *numpyName(DType T) { return names(T).Numpy; }
const char *safetensorsName(DType T) { return names(T).Safetensors; }

std::optional<DType> dtypeFromTorchStorageName(std::string_view Name) {
  return find(&Names::TorchStorage, Name);
}
std::optional<DType> dtypeFromSafetensorsName(std::string_view Name) {
  return find(&Names::Safetensors, Name);
}

} // namespace nng
