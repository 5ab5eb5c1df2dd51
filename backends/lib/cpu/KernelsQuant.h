//===- KernelsQuant.h - Own (de)quantization loops (internal)   -*- C++ -*-===//
//
// The cpu backend's QuantizeLinear and DequantizeLinear loops
// (KernelsQuant.cpp): the reference's formulas in float, element for
// element, so results equal the reference kernel's exactly. The compiled
// schedule calls them with constant parameters (LowerQuant.cpp); node
// kernels call them through runQuantizeLinear / runDequantizeLinear
// (Kernels.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"

#include <optional>
#include <vector>

namespace nng::backends::cpu {

/// The parameters of a linear (de)quantization of a tensor viewed as
/// [Outer, Channels, Inner]: one scale and zero point per channel
/// (Channels == 1: per tensor).
struct QuantGeometry {
  std::vector<float> Scale;
  std::vector<int32_t> ZeroPoint;
  int64_t Outer = 1, Channels = 1, Inner = 1;
};

/// The geometry of QuantizeLinear / DequantizeLinear on an X of shape XS
/// with these scale and zero point (null: absent) tensors and attribute
/// axis; nullopt wherever the reference kernel would report an error
/// (a scale of 0 or NaN, mismatched shapes, a bad axis), so that it does.
std::optional<QuantGeometry> quantGeometry(const Tensor &Scale,
                                           const Tensor *ZeroPoint,
                                           const Shape &XS, int64_t Axis);

/// Y = saturate(round_half_even(X / scale) + zero_point) into u8 or i8
/// (Out), NaN to the zero point; X holds Outer * Channels * Inner floats.
void quantizeFloats(const float *X, void *Y, DType Out, const QuantGeometry &G);
/// Y = float(X - zero_point) * scale from u8, i8 or i32 (In).
void dequantizeToFloats(const void *X, DType In, float *Y,
                        const QuantGeometry &G);

} // namespace nng::backends::cpu
