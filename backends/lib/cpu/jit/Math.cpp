//===- Math.cpp - Inline f32 math and conversions as LLVM IR --------------===//
//
// The math functions of the kernel IR as branch-free f32 polynomials (plain
// fmul/fadd, no fast-math flags, no FMA contraction, so results are the same
// on every x86-64 CPU with the same code). Accuracy against the correctly
// rounded result (the reference backend computes in double and rounds
// once), measured over sweeps by tests/backends/JitMathTest.cpp:
//   exp     Cephes' expf reduction and polynomial; 2^n applied in two
//           factors so subnormal results are rounded once: <= 1 ulp over
//           [-104, 88.72] (0 below, +inf above, NaN kept).
//   log     Cephes' logf (mantissa in [sqrt(1/2), sqrt(2)), degree-8
//           polynomial): <= 1 ulp, subnormal inputs included; log(0) = -inf,
//           log(x < 0) = NaN, log(inf) = inf.
//   tanh    |x| < 0.625: x + x * P(x^2) (degree 5, fitted with mpmath's
//           chebyfit); else 1 - 2 / (exp(2|x|) + 1): <= 2 ulp.
//   erf     |x| < 1: x + x * P(x^2) (degree 6); 1 <= |x| < 3.92:
//           1 - exp(-x^2) * Q(|x| - 2.5) (degree 10), both fitted with
//           mpmath's chebyfit; 1 beyond: <= 2 ulp.
//   sigmoid 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|):
//           <= 2 ulp, subnormal results included.
//   pow     exp(y * log|a|) with ONNX's signs (negative base: NaN unless y
//           is integral, negative for odd y); pow(a, 0) = pow(1, y) = 1,
//           pow(-1, +-inf) = 1. The relative error grows with
//           |y * log a|: about (2 + |y ln a|) ulp; exact small integer
//           exponents should be turned into products before code generation.
// Conversions are exact (f16/bf16 -> f32) or round to nearest even
// (f32 -> f16/bf16) bit for bit like nng::Half and nng::BFloat16.
//
//===----------------------------------------------------------------------===//

#include "Math.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>

namespace nng::backends::cpu::jit {

using namespace llvm;

Type *MathEmitter::intTypeLike(llvm::Value *Like, unsigned Bits) {
  Type *E = B.getIntNTy(Bits);
  if (auto *VT = dyn_cast<VectorType>(Like->getType()))
    return VectorType::get(E, VT->getElementCount());
  return E;
}

Type *MathEmitter::floatTypeLike(llvm::Value *Like) {
  Type *E = B.getFloatTy();
  if (auto *VT = dyn_cast<VectorType>(Like->getType()))
    return VectorType::get(E, VT->getElementCount());
  return E;
}

llvm::Value *MathEmitter::f(llvm::Value *Like, double V) {
  return ConstantFP::get(floatTypeLike(Like), V);
}

llvm::Value *MathEmitter::i(llvm::Value *Like, uint32_t V) {
  return ConstantInt::get(intTypeLike(Like, 32), V);
}

llvm::Value *MathEmitter::poly(llvm::Value *X,
                               std::initializer_list<double> C) {
  // Horner, highest coefficient first; each constant rounded to f32.
  auto It = C.begin();
  llvm::Value *P = f(X, static_cast<float>(*It++));
  for (; It != C.end(); ++It)
    P = B.CreateFAdd(B.CreateFMul(P, X), f(X, static_cast<float>(*It)));
  return P;
}

llvm::Value *MathEmitter::fabs(llvm::Value *X) {
  return B.CreateUnaryIntrinsic(Intrinsic::fabs, X);
}

llvm::Value *MathEmitter::copySign(llvm::Value *Mag, llvm::Value *Sign) {
  return B.CreateBinaryIntrinsic(Intrinsic::copysign, Mag, Sign);
}

llvm::Value *MathEmitter::maxF(llvm::Value *A, llvm::Value *C) {
  llvm::Value *R = B.CreateSelect(B.CreateFCmpOLT(A, C), C, A);
  R = B.CreateSelect(isNaN(C), C, R);
  return B.CreateSelect(isNaN(A), A, R);
}

llvm::Value *MathEmitter::minF(llvm::Value *A, llvm::Value *C) {
  llvm::Value *R = B.CreateSelect(B.CreateFCmpOLT(C, A), C, A);
  R = B.CreateSelect(isNaN(C), C, R);
  return B.CreateSelect(isNaN(A), A, R);
}

llvm::Value *MathEmitter::exp(llvm::Value *X) {
  // Clamp so that n = round(x / ln 2) stays in [-150, 128]; NaN -> 0 here
  // and restored at the end.
  llvm::Value *Xc =
      B.CreateSelect(B.CreateFCmpOGT(X, f(X, 89.0)), f(X, 89.0), X);
  Xc = B.CreateSelect(B.CreateFCmpOLT(Xc, f(X, -104.0)), f(X, -104.0), Xc);
  Xc = B.CreateSelect(isNaN(X), f(X, 0.0), Xc);
  // n by the 1.5 * 2^23 rounding trick; r = x - n ln 2 in two parts.
  llvm::Value *Magic = f(X, 12582912.0);
  llvm::Value *N = B.CreateFSub(
      B.CreateFAdd(B.CreateFMul(Xc, f(X, 1.44269504088896341f)), Magic), Magic);
  llvm::Value *R = B.CreateFSub(Xc, B.CreateFMul(N, f(X, 0.693359375)));
  R = B.CreateFSub(R, B.CreateFMul(N, f(X, -2.12194440e-4f)));
  llvm::Value *P = poly(R, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                            4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1});
  P = B.CreateFAdd(B.CreateFAdd(B.CreateFMul(B.CreateFMul(P, R), R), R),
                   f(X, 1.0));
  // 2^n as 2^n1 * 2^n2 (n1 = floor(n / 2)): both factors are normal, the
  // first product is exact, the second rounds once (subnormal results).
  Type *IT = intTypeLike(X, 32);
  llvm::Value *Ni = B.CreateFPToSI(N, IT);
  llvm::Value *N1 = B.CreateAShr(Ni, i(X, 1));
  llvm::Value *N2 = B.CreateSub(Ni, N1);
  auto Pow2 = [&](llvm::Value *E) {
    return B.CreateBitCast(B.CreateShl(B.CreateAdd(E, i(X, 127)), i(X, 23)),
                           floatTypeLike(X));
  };
  llvm::Value *Y = B.CreateFMul(B.CreateFMul(P, Pow2(N1)), Pow2(N2));
  return B.CreateSelect(isNaN(X), X, Y);
}

llvm::Value *MathEmitter::log(llvm::Value *X) {
  Type *IT = intTypeLike(X, 32);
  // Subnormal inputs: scale by 2^23 first.
  llvm::Value *Tiny = B.CreateFCmpOLT(X, f(X, 1.17549435e-38));
  llvm::Value *Xs = B.CreateSelect(Tiny, B.CreateFMul(X, f(X, 8388608.0)), X);
  llvm::Value *Bits = B.CreateBitCast(Xs, IT);
  // x = m * 2^e with m in [0.5, 1).
  llvm::Value *E = B.CreateSub(
      B.CreateAnd(B.CreateLShr(Bits, i(X, 23)), i(X, 0xff)), i(X, 126));
  E = B.CreateSub(E, B.CreateSelect(Tiny, i(X, 23), i(X, 0)));
  llvm::Value *M = B.CreateBitCast(
      B.CreateOr(B.CreateAnd(Bits, i(X, 0x007fffff)), i(X, 0x3f000000)),
      floatTypeLike(X));
  // m < sqrt(1/2): use 2m - 1 and e - 1, else m - 1.
  llvm::Value *Small = B.CreateFCmpOLT(M, f(X, 0.707106781186547524));
  E = B.CreateSub(E, B.CreateSelect(Small, i(X, 1), i(X, 0)));
  llvm::Value *Mm =
      B.CreateSelect(Small, B.CreateFSub(B.CreateFAdd(M, M), f(X, 1.0)),
                     B.CreateFSub(M, f(X, 1.0)));
  llvm::Value *Z = B.CreateFMul(Mm, Mm);
  llvm::Value *Y =
      poly(Mm, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  Y = B.CreateFMul(B.CreateFMul(Y, Mm), Z);
  llvm::Value *Ef = B.CreateSIToFP(E, floatTypeLike(X));
  Y = B.CreateFAdd(Y, B.CreateFMul(Ef, f(X, -2.12194440e-4f)));
  Y = B.CreateFAdd(Y, B.CreateFMul(Z, f(X, -0.5)));
  llvm::Value *R = B.CreateFAdd(Mm, Y);
  R = B.CreateFAdd(R, B.CreateFMul(Ef, f(X, 0.693359375)));
  // Special cases: 0 -> -inf, negative -> NaN, +inf -> +inf, NaN kept.
  R = B.CreateSelect(B.CreateFCmpOEQ(X, f(X, 0.0)), f(X, -INFINITY), R);
  R = B.CreateSelect(B.CreateFCmpOLT(X, f(X, 0.0)), f(X, NAN), R);
  R = B.CreateSelect(B.CreateFCmpOEQ(X, f(X, INFINITY)), X, R);
  return B.CreateSelect(isNaN(X), X, R);
}

llvm::Value *MathEmitter::tanh(llvm::Value *X) {
  llvm::Value *A = fabs(X);
  llvm::Value *S = B.CreateFMul(A, A);
  llvm::Value *P = poly(S, {-0.005657135184380392, 0.02058819145458637,
                            -0.05372010765662894, 0.1333111405568977,
                            -0.3333325986294753, -3.977278257048353e-09});
  llvm::Value *Ys = B.CreateFAdd(A, B.CreateFMul(A, P));
  llvm::Value *E = exp(B.CreateFAdd(A, A));
  llvm::Value *Yl = B.CreateFSub(
      f(X, 1.0), B.CreateFDiv(f(X, 2.0), B.CreateFAdd(E, f(X, 1.0))));
  llvm::Value *Y = B.CreateSelect(B.CreateFCmpOLT(A, f(X, 0.625)), Ys, Yl);
  return B.CreateSelect(isNaN(X), X, copySign(Y, X));
}

llvm::Value *MathEmitter::erf(llvm::Value *X) {
  llvm::Value *A = fabs(X);
  llvm::Value *S = B.CreateFMul(A, A);
  llvm::Value *P =
      poly(S, {7.875874871388078e-05, -0.000801686430349946,
               0.005189087241888046, -0.02685421146452427, 0.11283594369888306,
               -0.3761262595653534, 0.12837916612625122});
  llvm::Value *Ys = B.CreateFAdd(A, B.CreateFMul(A, P));
  llvm::Value *T = B.CreateFSub(A, f(X, 2.5));
  llvm::Value *Q = poly(
      T, {1.7728874581735e-06, -6.248156751098577e-06, 1.3904666957387235e-05,
          -5.417795182438567e-05, 0.00021364421991165727,
          -0.0007381609175354242, 0.002465595258399844, -0.007999775931239128,
          0.024938274174928665, -0.07434754073619843, 0.21080635488033295});
  llvm::Value *E = exp(B.CreateFNeg(S));
  llvm::Value *Yl = B.CreateFSub(f(X, 1.0), B.CreateFMul(E, Q));
  llvm::Value *Y =
      B.CreateSelect(B.CreateFCmpOLT(A, f(X, 3.92)), Yl, f(X, 1.0));
  Y = B.CreateSelect(B.CreateFCmpOLT(A, f(X, 1.0)), Ys, Y);
  return B.CreateSelect(isNaN(X), X, copySign(Y, X));
}

llvm::Value *MathEmitter::sigmoid(llvm::Value *X) {
  // e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e)
  // below (accurate down to the subnormal results).
  llvm::Value *E = exp(B.CreateFNeg(fabs(X)));
  llvm::Value *D = B.CreateFAdd(f(X, 1.0), E);
  llvm::Value *Num =
      B.CreateSelect(B.CreateFCmpOLT(X, f(X, 0.0)), E, f(X, 1.0));
  return B.CreateFDiv(Num, D);
}

llvm::Value *MathEmitter::pow(llvm::Value *A, llvm::Value *Y) {
  llvm::Value *R = exp(B.CreateFMul(Y, log(fabs(A))));
  llvm::Value *Fl = B.CreateUnaryIntrinsic(Intrinsic::floor, Y);
  llvm::Value *IsInt = B.CreateFCmpOEQ(Fl, Y);
  llvm::Value *Half = B.CreateFMul(Y, f(Y, 0.5));
  llvm::Value *IsOdd = B.CreateAnd(
      IsInt,
      B.CreateFCmpONE(B.CreateUnaryIntrinsic(Intrinsic::floor, Half), Half));
  // A negative base (or -0) with an odd exponent flips the sign.
  Type *IT = intTypeLike(A, 32);
  llvm::Value *SignBit = B.CreateICmpSLT(B.CreateBitCast(A, IT), i(A, 0));
  R = B.CreateSelect(B.CreateAnd(SignBit, IsOdd), B.CreateFNeg(R), R);
  llvm::Value *NegBase = B.CreateFCmpOLT(A, f(A, 0.0));
  R = B.CreateSelect(B.CreateAnd(NegBase, B.CreateNot(IsInt)), f(A, NAN), R);
  llvm::Value *One = f(A, 1.0);
  llvm::Value *MinusOneInf = B.CreateAnd(
      B.CreateFCmpOEQ(A, f(A, -1.0)), B.CreateFCmpOEQ(fabs(Y), f(A, INFINITY)));
  R = B.CreateSelect(MinusOneInf, One, R);
  R = B.CreateSelect(B.CreateFCmpOEQ(A, One), One, R);
  return B.CreateSelect(B.CreateFCmpOEQ(Y, f(A, 0.0)), One, R);
}

llvm::Value *MathEmitter::floatToInt(llvm::Value *X) {
  Type *IT = intTypeLike(X, 32);
  return B.CreateIntrinsic(Intrinsic::fptosi_sat, {IT, X->getType()}, {X});
}

llvm::Value *MathEmitter::halfToFloat(llvm::Value *H) {
  Type *IT = intTypeLike(H, 32);
  llvm::Value *U = B.CreateZExt(H, IT);
  llvm::Value *Sign = B.CreateShl(B.CreateAnd(U, i(U, 0x8000)), i(U, 16));
  llvm::Value *Em = B.CreateAnd(U, i(U, 0x7fff));
  // Normal: rebias the exponent; inf/NaN: all-ones exponent, same payload.
  llvm::Value *Normal =
      B.CreateAdd(B.CreateShl(Em, i(U, 13)), i(U, 112u << 23));
  llvm::Value *Special =
      B.CreateOr(B.CreateShl(Em, i(U, 13)), i(U, 0x7f800000));
  // Zero and subnormal: Em * 2^-24, exact.
  llvm::Value *Sub =
      B.CreateBitCast(B.CreateFMul(B.CreateUIToFP(Em, floatTypeLike(U)),
                                   f(U, 5.9604644775390625e-08)),
                      IT);
  llvm::Value *Bits =
      B.CreateSelect(B.CreateICmpUGE(Em, i(U, 0x7c00)), Special, Normal);
  Bits = B.CreateSelect(B.CreateICmpULT(Em, i(U, 0x0400)), Sub, Bits);
  return B.CreateBitCast(B.CreateOr(Bits, Sign), floatTypeLike(U));
}

llvm::Value *MathEmitter::bfloatToFloat(llvm::Value *H) {
  Type *IT = intTypeLike(H, 32);
  llvm::Value *Z = B.CreateZExt(H, IT);
  return B.CreateBitCast(B.CreateShl(Z, i(Z, 16)), floatTypeLike(Z));
}

llvm::Value *MathEmitter::floatToHalf(llvm::Value *X) {
  Type *IT = intTypeLike(X, 32);
  llvm::Value *U = B.CreateBitCast(X, IT);
  llvm::Value *Sign = B.CreateAnd(B.CreateLShr(U, i(X, 16)), i(X, 0x8000));
  llvm::Value *Abs = B.CreateAnd(U, i(X, 0x7fffffff));
  // Normal: rebias, round to nearest even on the 13 dropped bits (a carry
  // into the exponent is the right result).
  llvm::Value *Lsb = B.CreateAnd(B.CreateLShr(Abs, i(X, 13)), i(X, 1));
  llvm::Value *Normal =
      B.CreateLShr(B.CreateAdd(B.CreateSub(Abs, i(X, 112u << 23)),
                               B.CreateAdd(i(X, 0xfff), Lsb)),
                   i(X, 13));
  // Subnormal and zero: round(|x| * 2^24) to even.
  llvm::Value *Scaled =
      B.CreateFMul(B.CreateBitCast(Abs, floatTypeLike(X)), f(X, 16777216.0));
  llvm::Value *Sub =
      B.CreateFPToUI(B.CreateUnaryIntrinsic(Intrinsic::roundeven, Scaled), IT);
  llvm::Value *H =
      B.CreateSelect(B.CreateICmpULT(Abs, i(X, 0x38800000)), Sub, Normal);
  H = B.CreateSelect(B.CreateICmpUGE(Abs, i(X, 0x477ff000)), i(X, 0x7c00), H);
  H = B.CreateSelect(B.CreateICmpUGT(Abs, i(X, 0x7f800000)), i(X, 0x7e00), H);
  return B.CreateTrunc(B.CreateOr(H, Sign), intTypeLike(X, 16));
}

llvm::Value *MathEmitter::floatToBfloat(llvm::Value *X) {
  Type *IT = intTypeLike(X, 32);
  llvm::Value *U = B.CreateBitCast(X, IT);
  llvm::Value *Lsb = B.CreateAnd(B.CreateLShr(U, i(X, 16)), i(X, 1));
  llvm::Value *Rounded =
      B.CreateLShr(B.CreateAdd(U, B.CreateAdd(i(X, 0x7fff), Lsb)), i(X, 16));
  llvm::Value *Quiet = B.CreateOr(B.CreateLShr(U, i(X, 16)), i(X, 0x40));
  llvm::Value *IsNaN =
      B.CreateICmpUGT(B.CreateAnd(U, i(X, 0x7fffffff)), i(X, 0x7f800000));
  return B.CreateTrunc(B.CreateSelect(IsNaN, Quiet, Rounded),
                       intTypeLike(X, 16));
}

} // namespace nng::backends::cpu::jit
