//===- LowerInteger.h - Dynamic quantization's ops (internal) --*- C++ -*-===//
//
// The lowerings of the ops ONNX Runtime's quantize_dynamic writes
// (DynamicQuantizeLinear, ConvInteger, MatMulInteger; LowerDynamicQuant.cpp
// and LowerInteger.cpp), named in KernelTable.def, the layout helpers they
// share with the (de)quantization loops of LowerQuant.cpp, and the oneDNN
// helpers they share with the QLinear lowerings (LowerQLinear.cpp).
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

/// A primitive descriptor with its primitive created.
template <typename PD, typename Prim> struct Built {
  PD Desc;
  Prim P;
};

/// Creates the primitive descriptor of D with attributes A and its
/// primitive, moving on to oneDNN's next implementation when one fails to
/// generate its kernel (oneDNN 2.6's grouped jit_int8_1x1 with the round
/// post-op); nullopt when none does. (D and A must outlive the iteration.)
template <typename Prim, typename OpDesc>
std::optional<Built<typename Prim::primitive_desc, Prim>>
build(const OpDesc &D, const dnnl::primitive_attr &A) {
  typename Prim::primitive_desc PD(D, A, cpuEngine());
  do {
    try {
      Prim P(PD);
      return Built<typename Prim::primitive_desc, Prim>{PD, std::move(P)};
    } catch (const dnnl::error &) {
    }
  } while (PD.next_impl());
  return std::nullopt;
}

/// True when oneDNN picked a vectorized kernel (not a reference one).
bool isVectorized(const dnnl::primitive_desc_base &PD);
/// Names oneDNN's implementation in the last step's description (profiles).
void nameImplementation(LowerContext &C, const dnnl::primitive_desc_base &PD);

} // namespace nng::backends::cpu
