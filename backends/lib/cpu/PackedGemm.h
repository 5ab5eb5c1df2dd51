//===- PackedGemm.h - Products over packed weights, any rows ---*- C++ -*-===//
//
// The cpu backend's own f32 product for linear layers whose rows vary
// (LoopsPackedGemm.cpp): weights packed once into panels of PanelCols
// columns, any number of rows per call, the bias, a residual and a clamp or
// leaky activation fused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <dnnl.hpp>

#include <cstdint>

namespace nng::backends::cpu {

/// Columns of a panel of packed weights (four AVX-512 vectors).
constexpr int64_t PanelCols = 64;

/// The activation packedGemm applies last.
struct GemmActivation {
  enum Kind { None, Clamp, Leaky } K = None;
  /// Clamp: X < Lo ? Lo : (X > Hi ? Hi : X) (NaN stays NaN; Relu is Lo 0,
  /// Hi +inf). Leaky: X < 0 ? X * Alpha : X.
  float Lo = 0, Hi = 0, Alpha = 0;
};

/// True when this CPU runs packedGemm (AVX-512: x86-64-v4, in a GCC build);
/// elsewhere the products stay on oneDNN.
bool packedGemmServes();

/// W ([K, N], f32) packed for packedGemm, as a oneDNN description (a
/// reorder into it packs): panel p holds columns [64p, 64p + 64) of every
/// row, row after row; the last panel's columns past N are zeros.
dnnl::memory::desc panelDesc(int64_t K, int64_t N);

/// Y ([M, N]) = Act(A ([M, K], rows dense) x W + Bias + Residual), W packed
/// as panelDesc(K, N) says. Bias (N floats) and Residual ([M, N]) may be
/// null; Residual may be Y itself. In parallel over the panels (or rows).
void packedGemm(const float *A, const float *Panels, float *Y, int64_t M,
                int64_t K, int64_t N, const float *Bias, const float *Residual,
                GemmActivation Act);

} // namespace nng::backends::cpu
