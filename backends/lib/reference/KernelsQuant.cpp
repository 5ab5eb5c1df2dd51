//===- KernelsQuant.cpp - QuantizeLinear and DequantizeLinear ------------===//
//
// Reference kernels of linear (de)quantization, per tensor (scalar scale and
// zero point) or per axis (1-D scale and zero point along 'axis'). Quantize
// divides in float, rounds half to even and saturates to u8 or i8 (the zero
// point's type; u8 when absent); NaN quantizes to the zero point.
// Dequantize computes (x - zero_point) * scale in float.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// Per-element access to scale and zero point: for element I of X, which
/// entry of the (per-tensor or per-axis) parameters applies.
struct QuantParams {
  std::vector<double> Scale;
  std::vector<int64_t> ZeroPoint;
  int64_t Inner = 1, Channels = 1; ///< Per-axis layout of X.
  bool PerAxis = false;
  size_t at(int64_t I) const {
    return PerAxis ? static_cast<size_t>((I / Inner) % Channels) : 0;
  }
};

QuantParams quantParams(KernelContext &C, const Tensor &X) {
  const Tensor &S = C.in(1);
  if (S.dtype() != DType::F32)
    C.fail("scale must be f32, got ", dtypeName(S.dtype()));
  if (S.rank() > 1)
    C.fail("scale must be a scalar or 1-D, got ", S.shape().toString());
  QuantParams P;
  P.Scale = S.toDoubleVector();
  if (C.hasInput(2)) {
    const Tensor &Z = C.in(2);
    if (Z.shape() != S.shape())
      C.fail("zero point ", Z.shape().toString(),
             " must have the shape of the scale ", S.shape().toString());
    P.ZeroPoint = Z.toIntVector();
  } else {
    P.ZeroPoint.assign(P.Scale.size(), 0);
  }
  // A one-entry scale is per-tensor whatever 'axis' says (ONNX Runtime
  // reads it so; torch's exporter writes weight and bias scales so).
  if (S.rank() == 1 && S.numel() != 1) {
    int64_t R = static_cast<int64_t>(X.rank());
    int64_t Axis = normAxis(C, C.attrInt("axis"), R);
    P.Channels = X.size(Axis);
    if (S.numel() != P.Channels) {
      C.fail("per-axis scale ", S.shape().toString(),
             " must have one value per entry of axis ", Axis, " of ",
             X.shape().toString());
    } else {
      P.PerAxis = true;
      for (int64_t D = Axis + 1; D < R; ++D)
        P.Inner *= X.size(D);
    }
  }
  for (double V : P.Scale)
    if (!(V > 0) && !(V < 0))
      C.fail("scale must be non-zero and not NaN, got ", V);
  return P;
}

} // namespace

void kernelQuantizeLinear(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (X.dtype() != DType::F32 && X.dtype() != DType::I32)
    C.fail("x must be f32 or i32, got ", dtypeName(X.dtype()));
  DType OutT = C.hasInput(2) ? C.in(2).dtype() : DType::U8;
  if (OutT != DType::U8 && OutT != DType::I8)
    C.fail("zero point must be u8 or i8, got ", dtypeName(OutT));
  QuantParams P = quantParams(C, X);
  double Lo = OutT == DType::U8 ? 0 : -128, Hi = OutT == DType::U8 ? 255 : 127;
  Tensor Xc = X.to(DType::F32);
  const float *PX = ptr<float>(Xc);
  Tensor &Y = C.allocOutput(0, X.shape(), OutT);
  for (int64_t I = 0; I < X.numel(); ++I) {
    size_t K = P.at(I);
    float Q = PX[I] / static_cast<float>(P.Scale[K]);
    double V = std::isnan(Q) ? 0.0 : std::nearbyint(static_cast<double>(Q));
    V = std::clamp(V + static_cast<double>(P.ZeroPoint[K]), Lo, Hi);
    if (OutT == DType::U8)
      mutPtr<uint8_t>(Y)[I] = static_cast<uint8_t>(V);
    else
      mutPtr<int8_t>(Y)[I] = static_cast<int8_t>(V);
  }
}

void kernelDequantizeLinear(KernelContext &C) {
  const Tensor &X = C.in(0);
  DType T = X.dtype();
  if (T != DType::U8 && T != DType::I8 && T != DType::I32)
    C.fail("x must be u8, i8 or i32, got ", dtypeName(T));
  if (C.hasInput(2))
    requireSameDType(C, X, C.in(2), "x", "x_zero_point");
  QuantParams P = quantParams(C, X);
  if (T == DType::I32)
    for (int64_t Z : P.ZeroPoint)
      if (Z != 0)
        C.fail("an i32 input needs a zero point of 0, got ", Z);
  std::vector<int64_t> XV = X.toIntVector();
  Tensor &Y = C.allocOutput(0, X.shape(), DType::F32);
  float *PY = mutPtr<float>(Y);
  for (int64_t I = 0; I < X.numel(); ++I) {
    size_t K = P.at(I);
    PY[I] = static_cast<float>(XV[I] - P.ZeroPoint[K]) *
            static_cast<float>(P.Scale[K]);
  }
}

} // namespace nng::backends::reference
