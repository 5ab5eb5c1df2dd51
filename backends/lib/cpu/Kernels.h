//===- Kernels.h - The cpu backend's node kernels (internal)    -*- C++ -*-===//
//
// The cpu backend's node kernels: typed loops over whole tensors that
// eager mode's one-op graphs, data-dependent shapes and fallback steps try
// before the oneDNN or reference kernel, for some ops (the kernel table's
// Loop column, KernelTable.def): reductions, Expand and Transpose
// (KernelsReduceCopy.cpp), max pooling (KernelsMaxPool.cpp), LSTM
// (KernelsLSTM.cpp), RoiAlign (KernelsRoiAlign.cpp), ScatterElements
// (KernelsScatter.cpp), comparisons (KernelsCompare.cpp) and linear
// (de)quantization (KernelsQuant.cpp). The loops steps run over arena
// buffers are Loops*.cpp's (declared in Lower.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../reference/Interpreter.h"

namespace nng::backends::cpu {

/// Output I of shape S and dtype T for a loop that writes every element:
/// the caller's planned buffer (KernelContext::Preset) as it is, else new
/// memory from the cpu allocator; neither is zero-filled, unlike
/// allocOutput's.
Tensor &allocDenseOutput(reference::KernelContext &C, size_t I, const Shape &S,
                         DType T);

// Each returns false when it does not serve C (another dtype, a layout it
// does not handle, bad attributes), and the caller's fallback kernel runs;
// the kernel table (KernelTable.def) says which op uses which.

/// Reduces the contiguous f32 X over the axes flagged in Reduced into Y
/// (contiguous, its element count the product of the kept extents), summing
/// in double; Mean divides each sum by the count.
void reduceF32(const Tensor &X, const std::vector<bool> &Reduced, Tensor &Y,
               bool Mean);

/// ReduceSum / ReduceMean over any axes of a large f32 tensor.
bool runReduceSum(reference::KernelContext &C);
bool runReduceMean(reference::KernelContext &C);
/// Expand and Transpose of f32 tensors.
bool runExpand(reference::KernelContext &C);
bool runTranspose(reference::KernelContext &C);
/// MaxPool and nng.MaxPoolGrad on f32 (KernelsMaxPool.cpp).
bool runFastMaxPool(reference::KernelContext &C);
bool runFastMaxPoolGrad(reference::KernelContext &C);
/// QuantizeLinear of f32 and DequantizeLinear of u8, i8 and i32 tensors,
/// per tensor or per axis (KernelsQuant.cpp).
bool runQuantizeLinear(reference::KernelContext &C);
bool runDequantizeLinear(reference::KernelContext &C);
/// RoiAlign on f32 feature maps (KernelsRoiAlign.cpp).
bool runRoiAlign(reference::KernelContext &C);
/// The comparisons of dense f32 tensors (KernelsCompare.cpp).
bool runEqual(reference::KernelContext &C);
bool runLess(reference::KernelContext &C);
bool runLessOrEqual(reference::KernelContext &C);
bool runGreater(reference::KernelContext &C);
bool runGreaterOrEqual(reference::KernelContext &C);
/// ScatterElements without a reduction, any numeric dtype
/// (KernelsScatter.cpp).
bool runScatterElements(reference::KernelContext &C);
/// LSTM on f32 with its default activations (KernelsLSTM.cpp).
bool runLSTM(reference::KernelContext &C);

} // namespace nng::backends::cpu
