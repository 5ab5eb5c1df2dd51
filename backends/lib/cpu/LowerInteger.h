//===- LowerInteger.h - Dynamic quantization's ops (internal) --*- C++ -*-===//
//
// The lowerings of the ops ONNX Runtime's quantize_dynamic writes
// (DynamicQuantizeLinear, ConvInteger, MatMulInteger; LowerDynamicQuant.cpp
// and LowerInteger.cpp), named in KernelTable.def, and the layout helpers
// they share with the (de)quantization loops of LowerQuant.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Lower.h"

namespace nng::backends::cpu {

/// DynamicQuantizeLinear as the backend's own loop (range, then the
/// reference's quantization), in its operand's layout when that is dense.
bool lowerDynamicQuantize(LowerContext &C, const ir::Node &N);
/// ConvInteger as a oneDNN int8 convolution, with a following Cast to f32,
/// Mul by a scale, Add of a bias and an activation fused when present.
bool lowerConvInteger(LowerContext &C, const ir::Node &N);
/// MatMulInteger as a oneDNN int8 matmul, with the same fusions.
bool lowerMatMulInteger(LowerContext &C, const ir::Node &N);

/// True when MD is a blocked (or strided) layout without padding, offset or
/// extra data whose bytes hold exactly the T elements of shape S: an
/// elementwise loop may run over them in order (LowerQuant.cpp).
bool isDenseLayout(const dnnl::memory::desc &MD, const Shape &S, DType T);
/// MD with data type T (the same dims and blocking).
dnnl::memory::desc withType(const dnnl::memory::desc &MD,
                            dnnl::memory::data_type T);

} // namespace nng::backends::cpu
