//===- DType.cpp - Element type properties and f16 conversion ------------===//
//
// Tables generated from DTypes.def, and IEEE half <-> float conversion.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng {

namespace {
struct DTypeInfo {
  std::string_view Name;
  size_t Size;
  bool IsFloat;
  bool IsSigned;
  int Onnx;
};
constexpr DTypeInfo Infos[] = {
#define NNG_DTYPE(Enum, Name, CppType, Size, IsFloat, IsSigned, Onnx)         \
  {Name, Size, IsFloat, IsSigned, Onnx},
#define NNG_HANDLE_DTYPE(Enum, Name, CppType, Size, Onnx)                     \
  {Name, Size, false, false, Onnx},
#include "nngraph/runtime/DTypes.def"
};
const DTypeInfo &info(DType T) { return Infos[static_cast<int>(T)]; }
} // namespace

std::string_view dtypeName(DType T) { return info(T).Name; }
size_t dtypeSize(DType T) { return info(T).Size; }
bool isFloatingPoint(DType T) { return info(T).IsFloat; }
bool isIntegral(DType T) {
  return !info(T).IsFloat && T != DType::Bool && isNumeric(T);
}
bool isSigned(DType T) { return info(T).IsSigned; }
int dtypeToOnnx(DType T) { return info(T).Onnx; }

void failNonNumericDType(DType T) {
  fail(ErrorKind::Unsupported, "this operation does not take ",
       isString(T) ? "string tensors" : "tensors", " (dtype ", dtypeName(T),
       "); string tensors can only be moved (Identity, Reshape, Transpose, "
       "Concat, Slice, Gather, ...), compared with Equal, converted with "
       "Cast/CastLike or normalized with StringNormalizer");
}

std::optional<DType> parseDType(std::string_view Name) {
  for (int I = 0; I < NumDTypes; ++I)
    if (Infos[I].Name == Name)
      return static_cast<DType>(I);
  return std::nullopt;
}

std::optional<DType> dtypeFromOnnx(int OnnxType) {
  for (int I = 0; I < NumDTypes; ++I)
    if (Infos[I].Onnx == OnnxType)
      return static_cast<DType>(I);
  return std::nullopt;
}

float halfBitsToFloat(uint16_t H) {
  uint32_t Sign = static_cast<uint32_t>(H & 0x8000u) << 16;
  uint32_t Exp = (H >> 10) & 0x1fu;
  uint32_t Mant = H & 0x3ffu;
  uint32_t U;
  if (Exp == 0) {
    if (Mant == 0) {
      U = Sign;
    } else { // Subnormal: normalize.
      int E = -1;
      do {
        ++E;
        Mant <<= 1;
      } while ((Mant & 0x400u) == 0);
      U = Sign | (static_cast<uint32_t>(127 - 15 - E) << 23) |
          ((Mant & 0x3ffu) << 13);
    }
  } else if (Exp == 0x1f) {
    U = Sign | 0x7f800000u | (Mant << 13);
  } else {
    U = Sign | ((Exp + 127 - 15) << 23) | (Mant << 13);
  }
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

uint16_t floatToHalfBits(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  uint16_t Sign = static_cast<uint16_t>((U >> 16) & 0x8000u);
  uint32_t Abs = U & 0x7fffffffu;
  if (Abs > 0x7f800000u) // NaN
    return Sign | 0x7e00u;
  if (Abs >= 0x477ff000u) // Rounds to >= 65520: infinity.
    return Sign | 0x7c00u;
  if (Abs < 0x38800000u) { // Below the smallest normal half: subnormal/zero.
    // Value = Abs as float; half subnormal unit is 2^-24.
    float A;
    std::memcpy(&A, &Abs, 4);
    float Scaled = A * 16777216.0f; // A / 2^-24, exact in float.
    float R = std::nearbyint(Scaled); // ties to even in default rounding mode
    return Sign | static_cast<uint16_t>(R);
  }
  uint32_t Exp = (Abs >> 23) - 127 + 15;
  uint32_t Mant = Abs & 0x7fffffu;
  uint32_t Half = (Exp << 10) | (Mant >> 13);
  uint32_t Rest = Mant & 0x1fffu;
  if (Rest > 0x1000u || (Rest == 0x1000u && (Half & 1u)))
    ++Half; // May carry into the exponent; that is the correct result.
  return Sign | static_cast<uint16_t>(Half);
}

} // namespace nng
