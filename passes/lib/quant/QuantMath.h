//===- QuantMath.h - Scales, zero points and int8 weights -------*- C++ -*-===//
//
// The arithmetic of post-training quantization, shared by the static and
// dynamic quantizers: an activation's (scale, zero point) from its float
// range, s8 weights (symmetric, per tensor or per output channel) and i32
// biases. Rounding is ONNX's: half to even, then saturation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/passes/Quantize.h"
#include "nngraph/runtime/DType.h"

#include <cstdint>
#include <vector>

namespace nng::passes::quant {

/// Per-tensor quantization parameters of an activation.
struct QParams {
  float Scale = 1;
  int32_t ZeroPoint = 0;
  DType Type = DType::U8; ///< U8 or I8.
};

/// Asymmetric u8 (or s8) parameters covering R and 0: scale =
/// (max - min) / 255, zero point = qmin - round(min / scale). A range of
/// width 0 gets scale 1 (every value quantizes to the zero point).
QParams activationParams(Range R, bool Signed);

/// s8 weights of a float constant W, symmetric in [-127, 127] with zero
/// point 0: one scale per index of Axis (PerChannel) or one for the whole
/// tensor. Scales of all-zero channels are 1.
struct QuantizedWeights {
  rt::Tensor Values;         ///< I8, W's shape.
  std::vector<float> Scales; ///< Dim Axis of W entries, or one.
};
QuantizedWeights quantizeWeights(const rt::Tensor &W, int64_t Axis,
                                 bool PerChannel);

/// An i32 bias: round(B[c] / (InputScale * WeightScales[c])), saturated;
/// WeightScales has one entry (per tensor) or B's length.
rt::Tensor quantizeBias(const rt::Tensor &B, float InputScale,
                        const std::vector<float> &WeightScales);

/// round-half-even(X / Scale) + ZeroPoint, saturated to Type's range (as
/// QuantizeLinear computes it).
int32_t quantizeValue(float X, const QParams &P);

/// The scale operand of a Q/DQ node: 0-d for one scale, 1-D (per axis)
/// when Vector.
rt::Tensor scaleTensor(const std::vector<float> &Scales, bool Vector);
/// The zero-point operand: Count copies of ZeroPoint as Type, 0-d unless
/// Vector.
rt::Tensor zeroPointTensor(int32_t ZeroPoint, DType Type, int64_t Count,
                           bool Vector);

} // namespace nng::passes::quant
