//===- Arithmetic.cpp - Elementwise math, comparisons and operators --------===//
//
// The elementwise free functions of TensorOps.h and the operators of
// Tensor.h. Binary ops promote both operands to promote_types (PyTorch's
// rules) with dispatched Casts, then dispatch the ONNX op, whose
// broadcasting is numpy's; a Scalar operand becomes a 0-d tensor of the
// tensor's dtype (f32 when an integral tensor meets a fractional value).
// Broadcast-incompatible shapes fail naming the op and both operands.
//
//===----------------------------------------------------------------------===//

#include "EagerFastPath.h"
#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng {

using detail::describe;
using detail::scalarLike;
using ir::OpKind;

namespace {

/// 0 bool, 1 integral, 2 floating.
int category(DType T) {
  if (T == DType::Bool)
    return 0;
  return isFloatingPoint(T) ? 2 : 1;
}

DType signedOfSize(size_t Bytes) {
  switch (Bytes) {
  case 1:
    return DType::I8;
  case 2:
    return DType::I16;
  case 4:
    return DType::I32;
  default:
    return DType::I64;
  }
}

/// Checks that A and B broadcast; the error names the op and both shapes.
void checkBroadcast(const char *Op, const Tensor &A, const Tensor &B) {
  const Shape &SA = A.shape(), &SB = B.shape();
  size_t R = std::max(SA.rank(), SB.rank());
  for (size_t I = 0; I < R; ++I) {
    int64_t DA = I < SA.rank() ? SA[SA.rank() - 1 - I] : 1;
    int64_t DB = I < SB.rank() ? SB[SB.rank() - 1 - I] : 1;
    if (DA != DB && DA != 1 && DB != 1)
      fail(ErrorKind::ShapeMismatch, Op, ": A ", describe(A), " and B ",
           describe(B), " do not broadcast: dimension ",
           static_cast<int64_t>(R - 1 - I), " is ", DA, " and ", DB);
  }
}

void checkDefined(const char *Op, const Tensor &A) {
  if (!A.defined())
    fail(ErrorKind::InvalidArgument, Op, ": an operand is undefined");
}

/// Dispatches Op on A and B cast to T (no cast, and no handle copies, when
/// they already have it).
Tensor callAs(OpKind Op, DType T, const Tensor &A, const Tensor &B) {
  if (A.dtype() == T && B.dtype() == T)
    return detail::dispatchBinary(Op, A, B);
  return detail::dispatchBinary(Op, A.to(T), B.to(T));
}

/// A binary op after promotion to a common dtype.
Tensor binary(OpKind Op, const char *Name, const Tensor &A, const Tensor &B) {
  checkDefined(Name, A);
  checkDefined(Name, B);
  checkBroadcast(Name, A, B);
  return callAs(Op, promote_types(A.dtype(), B.dtype()), A, B);
}

/// An arithmetic binary op: bool operands compute in i64... except where
/// both are bool, which PyTorch keeps for add/mul as logical ops; we
/// promote bool+bool to i64 for arithmetic, a documented simplification.
Tensor arith(OpKind Op, const char *Name, const Tensor &A, const Tensor &B) {
  checkDefined(Name, A);
  checkDefined(Name, B);
  checkBroadcast(Name, A, B);
  DType T = promote_types(A.dtype(), B.dtype());
  if (T == DType::Bool)
    T = DType::I64;
  return callAs(Op, T, A, B);
}

/// A comparison after promotion; bool result.
Tensor compare(OpKind Op, const char *Name, const Tensor &A, const Tensor &B) {
  return binary(Op, Name, A, B);
}

Tensor unary(OpKind Op, const char *Name, const Tensor &A) {
  checkDefined(Name, A);
  return detail::dispatchUnary(Op, A);
}

/// A unary op that needs a floating input (integers are promoted to f32,
/// like torch.exp on an integer tensor).
Tensor floatUnary(OpKind Op, const char *Name, const Tensor &A) {
  checkDefined(Name, A);
  if (A.is_floating_point())
    return detail::dispatchUnary(Op, A);
  return detail::dispatchUnary(Op, A.to(DType::F32));
}

Tensor toBool(const Tensor &A) {
  return A.dtype() == DType::Bool ? A : ne(A, zeros({}, A.dtype()));
}

} // namespace

DType promote_types(DType A, DType B) {
  NNG_CHECK_KIND(isNumeric(A) && isNumeric(B), Unsupported,
                 "promote_types(", dtypeName(A), ", ", dtypeName(B),
                 "): string tensors take no arithmetic or comparisons in "
                 "eager code");
  if (A == B)
    return A;
  int CA = category(A), CB = category(B);
  if (CA != CB)
    return CA > CB ? A : B;
  if (CA == 2) {
    if (A == DType::F64 || B == DType::F64)
      return DType::F64;
    if (A == DType::F32 || B == DType::F32)
      return DType::F32;
    return DType::F32; // f16 with bf16
  }
  // Both integral.
  bool SA = isSigned(A), SB = isSigned(B);
  size_t ZA = dtypeSize(A), ZB = dtypeSize(B);
  if (SA == SB)
    return ZA >= ZB ? A : B;
  size_t ZS = SA ? ZA : ZB, ZU = SA ? ZB : ZA;
  if (ZS > ZU)
    return SA ? A : B;
  return signedOfSize(std::min<size_t>(2 * ZU, 8));
}

// --- Arithmetic ---------------------------------------------------------------

Tensor add(const Tensor &A, const Tensor &B, Scalar Alpha) {
  if (Alpha == 1)
    return arith(OpKind::Add, "add", A, B);
  return arith(OpKind::Add, "add", A, B * Alpha);
}

Tensor sub(const Tensor &A, const Tensor &B, Scalar Alpha) {
  if (A.defined() && B.defined() && A.dtype() == DType::Bool &&
      B.dtype() == DType::Bool)
    fail(ErrorKind::InvalidArgument,
         "sub: subtracting two bool tensors is not supported; use "
         "logical_xor or cast to an integer type");
  if (Alpha == 1)
    return arith(OpKind::Sub, "sub", A, B);
  return arith(OpKind::Sub, "sub", A, B * Alpha);
}

Tensor mul(const Tensor &A, const Tensor &B) {
  return arith(OpKind::Mul, "mul", A, B);
}

Tensor div(const Tensor &A, const Tensor &B) {
  // True division, like torch.div: integers divide as floats.
  checkDefined("div", A);
  checkDefined("div", B);
  DType T = promote_types(A.dtype(), B.dtype());
  if (!isFloatingPoint(T))
    T = DType::F32;
  checkBroadcast("div", A, B);
  return callAs(OpKind::Div, T, A, B);
}

Tensor neg(const Tensor &A) {
  if (A.defined() && A.dtype() == DType::Bool)
    fail(ErrorKind::InvalidArgument,
         "neg: negation of a bool tensor is not supported; use logical_not");
  return unary(OpKind::Neg, "neg", A);
}

Tensor pow(const Tensor &A, Scalar E) {
  checkDefined("pow", A);
  return pow(A, scalarLike(A, E));
}

Tensor pow(const Tensor &A, const Tensor &E) {
  return arith(OpKind::Pow, "pow", A, E);
}

Tensor exp(const Tensor &A) { return floatUnary(OpKind::Exp, "exp", A); }
Tensor log(const Tensor &A) { return floatUnary(OpKind::Log, "log", A); }
Tensor sqrt(const Tensor &A) { return floatUnary(OpKind::Sqrt, "sqrt", A); }
Tensor rsqrt(const Tensor &A) { return reciprocal(sqrt(A)); }
Tensor abs(const Tensor &A) { return unary(OpKind::Abs, "abs", A); }
Tensor sin(const Tensor &A) { return floatUnary(OpKind::Sin, "sin", A); }
Tensor cos(const Tensor &A) { return floatUnary(OpKind::Cos, "cos", A); }
Tensor erf(const Tensor &A) { return floatUnary(OpKind::Erf, "erf", A); }
Tensor sign(const Tensor &A) { return unary(OpKind::Sign, "sign", A); }
Tensor reciprocal(const Tensor &A) {
  return floatUnary(OpKind::Reciprocal, "reciprocal", A);
}

Tensor clamp(const Tensor &A, std::optional<Scalar> Min,
             std::optional<Scalar> Max) {
  checkDefined("clamp", A);
  if (!Min && !Max)
    fail(ErrorKind::InvalidArgument,
         "clamp: at least one of min and max must be given");
  DType T = A.dtype();
  if (!isFloatingPoint(T) &&
      ((Min && std::floor(*Min) != *Min) || (Max && std::floor(*Max) != *Max)))
    T = DType::F32;
  Tensor X = A.to(T);
  return dispatch::call1(OpKind::Clip,
                         {X, Min ? detail::scalarOf(T, *Min) : Tensor(),
                          Max ? detail::scalarOf(T, *Max) : Tensor()});
}

Tensor maximum(const Tensor &A, const Tensor &B) {
  return binary(OpKind::Max, "maximum", A, B);
}

Tensor minimum(const Tensor &A, const Tensor &B) {
  return binary(OpKind::Min, "minimum", A, B);
}

Tensor where(const Tensor &Cond, const Tensor &A, const Tensor &B) {
  checkDefined("where", Cond);
  checkDefined("where", A);
  checkDefined("where", B);
  checkBroadcast("where", A, B);
  checkBroadcast("where", Cond, A);
  checkBroadcast("where", Cond, B);
  DType T = promote_types(A.dtype(), B.dtype());
  return dispatch::call1(OpKind::Where, {toBool(Cond), A.to(T), B.to(T)});
}

Tensor masked_fill(const Tensor &A, const Tensor &Mask, Scalar V) {
  checkDefined("masked_fill", A);
  checkDefined("masked_fill", Mask);
  if (Mask.dtype() != DType::Bool)
    fail(ErrorKind::InvalidArgument,
         "masked_fill: the mask must be a bool tensor, got ", describe(Mask));
  checkBroadcast("masked_fill", A, Mask);
  Tensor R = where(Mask, detail::scalarOf(A.dtype(), V), A);
  if (R.shape() != A.shape())
    fail(ErrorKind::ShapeMismatch, "masked_fill: mask ", describe(Mask),
         " broadcasts the tensor ", describe(A), " to ",
         R.shape().toString(), "; the mask must broadcast to the tensor");
  return R;
}

// --- Comparisons and logic ------------------------------------------------------

Tensor eq(const Tensor &A, const Tensor &B) {
  return compare(OpKind::Equal, "eq", A, B);
}
Tensor ne(const Tensor &A, const Tensor &B) { return logical_not(eq(A, B)); }
Tensor lt(const Tensor &A, const Tensor &B) {
  return compare(OpKind::Less, "lt", A, B);
}
Tensor le(const Tensor &A, const Tensor &B) {
  return compare(OpKind::LessOrEqual, "le", A, B);
}
Tensor gt(const Tensor &A, const Tensor &B) {
  return compare(OpKind::Greater, "gt", A, B);
}
Tensor ge(const Tensor &A, const Tensor &B) {
  return compare(OpKind::GreaterOrEqual, "ge", A, B);
}

Tensor logical_not(const Tensor &A) {
  checkDefined("logical_not", A);
  return dispatch::call1(OpKind::Not, {toBool(A)});
}

Tensor logical_and(const Tensor &A, const Tensor &B) {
  checkDefined("logical_and", A);
  checkDefined("logical_and", B);
  checkBroadcast("logical_and", A, B);
  return dispatch::call1(OpKind::And, {toBool(A), toBool(B)});
}

Tensor logical_or(const Tensor &A, const Tensor &B) {
  checkDefined("logical_or", A);
  checkDefined("logical_or", B);
  checkBroadcast("logical_or", A, B);
  return dispatch::call1(OpKind::Or, {toBool(A), toBool(B)});
}

bool allclose(const Tensor &A, const Tensor &B, double Rtol, double Atol) {
  checkDefined("allclose", A);
  checkDefined("allclose", B);
  checkBroadcast("allclose", A, B);
  Shape S = broadcastShapes(A.shape(), B.shape());
  rt::Tensor DA = A.data().broadcastTo(S), DB = B.data().broadcastTo(S);
  for (int64_t I = 0, N = S.numel(); I < N; ++I) {
    double X = DA.getFlat(I), Y = DB.getFlat(I);
    if (X == Y)
      continue;
    if (std::isnan(X) || std::isnan(Y) ||
        !(std::fabs(X - Y) <= Atol + Rtol * std::fabs(Y)))
      return false;
  }
  return true;
}

bool equal(const Tensor &A, const Tensor &B) {
  checkDefined("equal", A);
  checkDefined("equal", B);
  if (A.shape() != B.shape())
    return false;
  for (int64_t I = 0, N = A.numel(); I < N; ++I)
    if (A.data().getFlat(I) != B.data().getFlat(I))
      return false;
  return true;
}

// --- Operators --------------------------------------------------------------------

Tensor operator+(const Tensor &A, const Tensor &B) { return add(A, B); }
Tensor operator-(const Tensor &A, const Tensor &B) { return sub(A, B); }
Tensor operator*(const Tensor &A, const Tensor &B) { return mul(A, B); }
Tensor operator/(const Tensor &A, const Tensor &B) { return div(A, B); }
Tensor operator+(const Tensor &A, Scalar B) { return add(A, scalarLike(A, B)); }
Tensor operator-(const Tensor &A, Scalar B) { return sub(A, scalarLike(A, B)); }
Tensor operator*(const Tensor &A, Scalar B) { return mul(A, scalarLike(A, B)); }
Tensor operator/(const Tensor &A, Scalar B) { return div(A, scalarLike(A, B)); }
Tensor operator+(Scalar A, const Tensor &B) { return add(scalarLike(B, A), B); }
Tensor operator-(Scalar A, const Tensor &B) { return sub(scalarLike(B, A), B); }
Tensor operator*(Scalar A, const Tensor &B) { return mul(scalarLike(B, A), B); }
Tensor operator/(Scalar A, const Tensor &B) { return div(scalarLike(B, A), B); }
Tensor operator-(const Tensor &A) { return neg(A); }
Tensor operator==(const Tensor &A, const Tensor &B) { return eq(A, B); }
Tensor operator<(const Tensor &A, const Tensor &B) { return lt(A, B); }
Tensor operator>(const Tensor &A, const Tensor &B) { return gt(A, B); }
Tensor operator==(const Tensor &A, Scalar B) { return eq(A, scalarLike(A, B)); }
Tensor operator<(const Tensor &A, Scalar B) { return lt(A, scalarLike(A, B)); }
Tensor operator>(const Tensor &A, Scalar B) { return gt(A, scalarLike(A, B)); }

// Compound assignment rebinds the handle to the result (out of place, so
// autograd records it), unlike the in-place methods add_/mul_.
Tensor &operator+=(Tensor &A, const Tensor &B) { return A = A + B; }
Tensor &operator-=(Tensor &A, const Tensor &B) { return A = A - B; }
Tensor &operator*=(Tensor &A, const Tensor &B) { return A = A * B; }
Tensor &operator+=(Tensor &A, Scalar B) { return A = A + B; }
Tensor &operator*=(Tensor &A, Scalar B) { return A = A * B; }

} // namespace nng
