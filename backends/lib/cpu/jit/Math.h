//===- Math.h - Inline f32 math and conversions as LLVM IR (internal) -*- C++
//-*-===//
//
// MathEmitter emits the kernel IR's math functions (exp, log, tanh, erf,
// sigmoid, pow), the reference's NaN-propagating max/min and the f16/bf16
// conversions as straight-line LLVM IR without calls, on f32 scalars or
// vectors alike, so they vectorize and need no libm at run time. The
// accuracy of each function is documented in Math.cpp and measured by
// tests/backends/JitMathTest.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace nng::backends::cpu::jit {

class MathEmitter {
public:
  explicit MathEmitter(llvm::IRBuilder<> &B) : B(B) {}

  llvm::Value *exp(llvm::Value *X);
  llvm::Value *log(llvm::Value *X);
  llvm::Value *tanh(llvm::Value *X);
  llvm::Value *erf(llvm::Value *X);
  llvm::Value *sigmoid(llvm::Value *X);
  llvm::Value *pow(llvm::Value *A, llvm::Value *Y);
  /// The reference's Max/Min: a NaN operand wins (A first).
  llvm::Value *maxF(llvm::Value *A, llvm::Value *C);
  llvm::Value *minF(llvm::Value *A, llvm::Value *C);
  /// f32 -> i32: truncation toward zero, saturating, NaN -> 0.
  llvm::Value *floatToInt(llvm::Value *X);
  /// i16 bits (f16 / bf16) -> f32, exact.
  llvm::Value *halfToFloat(llvm::Value *H);
  llvm::Value *bfloatToFloat(llvm::Value *H);
  /// f32 -> i16 bits, rounding to nearest even (NaN: sign | 0x7e00 for f16,
  /// the quieted upper half for bf16, like nng::Half / nng::BFloat16).
  llvm::Value *floatToHalf(llvm::Value *X);
  llvm::Value *floatToBfloat(llvm::Value *X);

private:
  /// An f32 constant of X's shape (scalar or splat).
  llvm::Value *f(llvm::Value *Like, double V);
  /// An i32 constant of X's shape.
  llvm::Value *i(llvm::Value *Like, uint32_t V);
  llvm::Type *intTypeLike(llvm::Value *Like, unsigned Bits);
  llvm::Type *floatTypeLike(llvm::Value *Like);
  llvm::Value *isNaN(llvm::Value *X) { return B.CreateFCmpUNO(X, X); }
  llvm::Value *poly(llvm::Value *X, std::initializer_list<double> C);
  llvm::Value *fabs(llvm::Value *X);
  llvm::Value *copySign(llvm::Value *Mag, llvm::Value *Sign);

  llvm::IRBuilder<> &B;
};

} // namespace nng::backends::cpu::jit
