//===- KernelsQuantizedLinalg.cpp - Integer and quantized conv / matmul ---===//
//
// Reference kernels of ConvInteger, MatMulInteger (opset 10: subtract the
// zero points, accumulate exactly, i32 result), QLinearConv, QLinearMatMul
// (opset 10: the same accumulation, then requantization as ONNX Runtime
// does it: multiplier x_scale * w_scale / y_scale in float, round half to
// even, add y_zero_point, saturate) and DynamicQuantizeLinear (opset 11: u8
// with scale and zero point from the range of x and 0). The accumulation
// runs the Conv and MatMul reference kernels on f64 copies of the
// zero-point-adjusted operands: every partial sum of 8-bit products is an
// integer far below 2^53, so it is exact.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// Fails unless X is u8 or i8.
void requireInt8(const KernelContext &C, const Tensor &X, const char *What) {
  if (X.dtype() != DType::U8 && X.dtype() != DType::I8)
    C.fail(What, " must be u8 or i8, got ", dtypeName(X.dtype()));
}

/// X minus its zero point Z, as f64. Z is absent (0), one value, or one
/// value per slice of axis Axis of X (per channel / per row / per column).
/// For an N-d Z matching X's rank, Z broadcasts against X.
Tensor minusZeroPoint(KernelContext &C, const Tensor &X, const Tensor *Z,
                      int64_t Axis, const char *What) {
  Tensor XF = toF64(X);
  if (!Z || !Z->defined())
    return XF;
  if (Z->dtype() != X.dtype())
    C.fail(What, " zero point (", dtypeName(Z->dtype()),
           ") must have the dtype of its input (", dtypeName(X.dtype()), ")");
  Tensor ZF = toF64(*Z);
  if (ZF.numel() == 1) {
    double V = ptr<double>(ZF)[0];
    double *P = mutPtr<double>(XF);
    for (int64_t I = 0; I < XF.numel(); ++I)
      P[I] -= V;
    return XF;
  }
  Shape ZS = ZF.shape();
  int64_t R = static_cast<int64_t>(X.rank());
  if (ZF.rank() == 1 && Axis >= 0 && Axis < R && ZF.numel() == X.size(Axis)) {
    ZS = Shape(std::vector<int64_t>(R - Axis, 1));
    ZS[0] = ZF.numel();
  } else if (static_cast<int64_t>(ZF.rank()) != R) {
    C.fail(What, " zero point ", ZF.shape().toString(),
           " must be one value or one per slice of axis ", Axis, " of ",
           X.shape().toString());
  }
  Tensor ZB = ZF.reshape(ZS).broadcastTo(X.shape()).contiguous();
  double *P = mutPtr<double>(XF);
  const double *PZ = ptr<double>(ZB);
  for (int64_t I = 0; I < XF.numel(); ++I)
    P[I] -= PZ[I];
  return XF;
}

/// Runs kernel K on Ins in a context that shares C's node (so it reads C's
/// attributes and names C in errors); returns its output 0.
Tensor runAs(KernelContext &C, KernelFn K, std::vector<Tensor> Ins) {
  KernelContext Sub{C.N, std::move(Ins), {}, {}, {}};
  Sub.Outputs.resize(1);
  K(Sub);
  return Sub.Outputs[0];
}

/// An exact f64 accumulator tensor converted to i32.
void storeI32(KernelContext &C, const Tensor &Acc) {
  Tensor &Y = C.allocOutput(0, Acc.shape(), DType::I32);
  Tensor A = Acc.contiguous();
  const double *P = ptr<double>(A);
  int32_t *Q = mutPtr<int32_t>(Y);
  for (int64_t I = 0; I < A.numel(); ++I)
    Q[I] = saturateCast<int32_t>(P[I]);
}

/// Requantizes the f64 accumulator Acc: y = saturate(round_half_even(acc *
/// Mult) + zero_point), with Mult[i] = scale_a * scale_b / scale_y per
/// element (float arithmetic, as ONNX Runtime), into output 0 of dtype T.
void requantize(KernelContext &C, const Tensor &Acc,
                const std::vector<float> &Mult, int64_t ZeroPoint, DType T) {
  Tensor A = Acc.contiguous();
  const double *P = ptr<double>(A);
  Tensor &Y = C.allocOutput(0, A.shape(), T);
  double Lo = T == DType::U8 ? 0 : -128, Hi = T == DType::U8 ? 255 : 127;
  for (int64_t I = 0; I < A.numel(); ++I) {
    float V = static_cast<float>(P[I]) * Mult[I];
    double Q = std::clamp(std::nearbyint(static_cast<double>(V)) +
                              static_cast<double>(ZeroPoint),
                          Lo, Hi);
    if (T == DType::U8)
      mutPtr<uint8_t>(Y)[I] = static_cast<uint8_t>(Q);
    else
      mutPtr<int8_t>(Y)[I] = static_cast<int8_t>(Q);
  }
}

/// A scale input's values, checked to be float, positive and either one
/// value or N values.
std::vector<float> scaleOf(KernelContext &C, size_t I, int64_t N,
                           const char *What) {
  const Tensor &S = C.in(I);
  requireFloat(C, S, What);
  if (S.numel() != 1 && S.numel() != N)
    C.fail(What, " ", S.shape().toString(), " must hold one value or ", N);
  std::vector<float> V;
  for (double D : S.toDoubleVector()) {
    if (!(D > 0))
      C.fail(What, " ", D, " must be positive");
    V.push_back(static_cast<float>(D));
  }
  return V;
}

/// The single value of a per-tensor zero point (0 when absent).
int64_t zeroPointOf(KernelContext &C, size_t I, const char *What) {
  if (!C.hasInput(I))
    return 0;
  if (C.in(I).numel() != 1)
    C.fail(What, " ", C.in(I).shape().toString(), " must hold one value");
  return C.in(I).getFlatInt(0);
}

} // namespace

void kernelConvInteger(KernelContext &C) {
  requireInt8(C, C.in(0), "x");
  requireInt8(C, C.in(1), "w");
  const Tensor *XZ = C.hasInput(2) ? &C.in(2) : nullptr;
  const Tensor *WZ = C.hasInput(3) ? &C.in(3) : nullptr;
  if (XZ && XZ->numel() != 1)
    C.fail("x_zero_point ", XZ->shape().toString(), " must hold one value");
  Tensor X = minusZeroPoint(C, C.in(0), XZ, -1, "x");
  Tensor W = minusZeroPoint(C, C.in(1), WZ, 0, "w");
  storeI32(C, runAs(C, kernelConv, {X, W}));
}

void kernelMatMulInteger(KernelContext &C) {
  const Tensor &A = C.in(0), &B = C.in(1);
  requireInt8(C, A, "A");
  requireInt8(C, B, "B");
  int64_t RA = static_cast<int64_t>(A.rank()),
          RB = static_cast<int64_t>(B.rank());
  Tensor AF =
      minusZeroPoint(C, A, C.hasInput(2) ? &C.in(2) : nullptr, RA - 2, "A");
  Tensor BF =
      minusZeroPoint(C, B, C.hasInput(3) ? &C.in(3) : nullptr, RB - 1, "B");
  storeI32(C, runAs(C, kernelMatMul, {AF, BF}));
}

void kernelQLinearConv(KernelContext &C) {
  const Tensor &X = C.in(0), &W = C.in(3);
  requireInt8(C, X, "x");
  requireInt8(C, W, "w");
  requireInt8(C, C.in(7), "y_zero_point");
  if (W.rank() < 1)
    C.fail("w must have rank >= 3, got ", W.shape().toString());
  int64_t M = W.size(0);
  std::vector<float> XS = scaleOf(C, 1, 1, "x_scale");
  std::vector<float> WS = scaleOf(C, 4, M, "w_scale");
  std::vector<float> YS = scaleOf(C, 6, 1, "y_scale");
  if (C.in(2).numel() != 1)
    C.fail("x_zero_point ", C.in(2).shape().toString(), " must hold one value");
  Tensor XF = minusZeroPoint(C, X, &C.in(2), -1, "x");
  Tensor WF = minusZeroPoint(C, W, &C.in(5), 0, "w");
  std::vector<Tensor> Ins = {XF, WF};
  if (C.hasInput(8)) {
    if (C.in(8).dtype() != DType::I32)
      C.fail("B must be i32, got ", dtypeName(C.in(8).dtype()));
    Ins.push_back(toF64(C.in(8)));
  }
  Tensor Acc = runAs(C, kernelConv, Ins);
  // Per output channel multipliers over [N, M, spatial...].
  int64_t Spatial = Acc.numel() / std::max<int64_t>(1, Acc.size(0) * M);
  std::vector<float> Mult(Acc.numel());
  for (int64_t I = 0; I < Acc.numel(); ++I) {
    int64_t Ch = (I / std::max<int64_t>(Spatial, 1)) % M;
    Mult[I] = XS[0] * WS[WS.size() == 1 ? 0 : Ch] / YS[0];
  }
  requantize(C, Acc, Mult, zeroPointOf(C, 7, "y_zero_point"), C.in(7).dtype());
}

void kernelQLinearMatMul(KernelContext &C) {
  const Tensor &A = C.in(0), &B = C.in(3);
  requireInt8(C, A, "a");
  requireInt8(C, B, "b");
  requireInt8(C, C.in(7), "y_zero_point");
  int64_t RA = static_cast<int64_t>(A.rank()),
          RB = static_cast<int64_t>(B.rank());
  if (RA < 1 || RB < 1)
    C.fail("a ", A.shape().toString(), " and b ", B.shape().toString(),
           " must have rank >= 1");
  int64_t Rows = RA >= 2 ? A.size(RA - 2) : 1,
          Cols = RB >= 2 ? B.size(RB - 1) : 1;
  std::vector<float> AS = scaleOf(C, 1, Rows, "a_scale");
  std::vector<float> BS = scaleOf(C, 4, Cols, "b_scale");
  std::vector<float> YS = scaleOf(C, 6, 1, "y_scale");
  Tensor AF = minusZeroPoint(C, A, &C.in(2), RA - 2, "a");
  Tensor BF = minusZeroPoint(C, B, &C.in(5), RB - 1, "b");
  Tensor Acc = runAs(C, kernelMatMul, {AF, BF});
  // Row m and column n of each output element (1-D operands have none).
  int64_t NCols = RB >= 2 ? Cols : 1, NRows = RA >= 2 ? Rows : 1;
  std::vector<float> Mult(Acc.numel());
  for (int64_t I = 0; I < Acc.numel(); ++I) {
    int64_t N = I % NCols, Mr = (I / NCols) % NRows;
    Mult[I] = AS[AS.size() == 1 ? 0 : Mr] * BS[BS.size() == 1 ? 0 : N] / YS[0];
  }
  requantize(C, Acc, Mult, zeroPointOf(C, 7, "y_zero_point"), C.in(7).dtype());
}

void kernelDynamicQuantizeLinear(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (X.dtype() != DType::F32)
    C.fail("x must be f32, got ", dtypeName(X.dtype()));
  Tensor XC = X.contiguous();
  const float *PX = ptr<float>(XC);
  // The range always includes 0, so that 0 is exactly representable.
  float Min = 0, Max = 0;
  for (int64_t I = 0; I < X.numel(); ++I) {
    if (std::isnan(PX[I]))
      C.fail("x holds NaN at flat index ", I, "; its range is undefined");
    Min = std::min(Min, PX[I]);
    Max = std::max(Max, PX[I]);
  }
  float Scale = Max == Min ? 1.0f : (Max - Min) / 255.0f;
  float ZP = std::clamp(std::nearbyint(0.0f - Min / Scale), 0.0f, 255.0f);
  Tensor &Y = C.allocOutput(0, X.shape(), DType::U8);
  uint8_t *PY = mutPtr<uint8_t>(Y);
  for (int64_t I = 0; I < X.numel(); ++I)
    PY[I] = static_cast<uint8_t>(
        std::clamp(std::nearbyint(PX[I] / Scale) + ZP, 0.0f, 255.0f));
  C.allocOutput(1, Shape{}, DType::F32).data<float>()[0] = Scale;
  C.allocOutput(2, Shape{}, DType::U8).data<uint8_t>()[0] =
      static_cast<uint8_t>(ZP);
}

} // namespace nng::backends::reference
