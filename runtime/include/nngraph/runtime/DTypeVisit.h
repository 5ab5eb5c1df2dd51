//===- DTypeVisit.h - Calling typed code for a runtime DType ----*- C++ -*-===//
//
// visitDType(T, F) calls F(TypeTag<CppType>{}) for the C++ type of DType T,
// so a kernel is written once as a generic lambda. It instantiates F for the
// numeric types only: for str it throws Error(Unsupported), so a numeric
// kernel refuses string tensors with a message (the interpreter adds the
// node). visitDTypeOrString also calls F(TypeTag<StringId>{}) for str, for
// code that only moves or compares elements. Include only in .cpp files that
// need it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Error.h"

namespace nng {

/// Carries a C++ type through a generic lambda's argument.
template <typename T> struct TypeTag {
  using type = T;
};

/// Throws Error(Unsupported): an operation that computes with numbers got a
/// tensor of the non-numeric dtype T.
[[noreturn]] void failNonNumericDType(DType T);

/// Calls F(TypeTag<C>{}) where C is the C++ type of T; T must be numeric
/// (str throws Error(Unsupported) saying the operation does not take string
/// tensors).
template <typename Fn> decltype(auto) visitDType(DType T, Fn &&F) {
  switch (T) {
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx)         \
  case DType::Enum:                                                            \
    return F(TypeTag<CppType>{});
#include "nngraph/runtime/DTypes.def"
  default:
    break;
  }
  if (!isNumeric(T))
    failNonNumericDType(T);
  fail(ErrorKind::Internal, "visitDType: bad dtype ", static_cast<int>(T));
}

/// Like visitDType, but str calls F(TypeTag<StringId>{}): for code that
/// only copies elements or compares them for equality.
template <typename Fn> decltype(auto) visitDTypeOrString(DType T, Fn &&F) {
  if (T == DType::String)
    return F(TypeTag<StringId>{});
  return visitDType(T, std::forward<Fn>(F));
}

/// Converts a value of any element type to double.
template <typename T> inline double toDouble(T V) {
  return static_cast<double>(static_cast<std::conditional_t<
      std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>(V));
}

/// Converts a double to element type T (saturating NaN to 0 for integers is
/// the caller's business; this is a plain C++ conversion via float for f16).
template <typename T> inline T fromDouble(double V) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(V));
  else if constexpr (std::is_same_v<T, bool>)
    return V != 0.0;
  else
    return static_cast<T>(V);
}

} // namespace nng
