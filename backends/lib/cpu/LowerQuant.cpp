//===- LowerQuant.cpp - QuantizeLinear and DequantizeLinear as own loops --===//
//
// Linear (de)quantization with constant scale and zero point becomes one
// step of the backend's own loop (KernelsQuant.cpp), whose results are the
// reference kernel's bit for bit. With per-tensor parameters the loop is
// elementwise, so it runs in its operand's layout when that layout has no
// padding (an int8 convolution's nhwc result, an f32 convolution's
// nChw16c one over a multiple of 16 channels): the result keeps that
// layout in the other dtype and neither side needs a reorder. Per-axis
// parameters read plain data. Run-time parameters and i32 inputs to
// QuantizeLinear decline: the node kernel (the same loops, or the
// reference kernel) serves them.
//
//===----------------------------------------------------------------------===//

#include "LowerInteger.h"
#include "KernelsQuant.h"

namespace nng::backends::cpu {

using dnnl::memory;

bool isDenseLayout(const memory::desc &MD, const Shape &S, DType T) {
  const dnnl_memory_desc_t &D = MD.data;
  if (D.format_kind != dnnl_blocked || D.offset0 != 0 || D.extra.flags != 0)
    return false;
  for (int I = 0; I < D.ndims; ++I)
    if (D.padded_dims[I] != D.dims[I] || D.padded_offsets[I] != 0)
      return false;
  return MD.get_size() == static_cast<size_t>(S.numel()) * dtypeSize(T);
}

memory::desc withType(const memory::desc &MD, memory::data_type T) {
  dnnl_memory_desc_t D = MD.data;
  D.data_type = static_cast<dnnl_data_type_t>(T);
  return memory::desc(D);
}

bool lowerQuantize(LowerContext &C, const ir::Node &N) {
  bool Quantize = N.op() == ir::OpKind::QuantizeLinear;
  const ir::Value *X = N.input(0);
  int In = C.slotOf(X);
  DType InT = C.slot(In).Type;
  DType OutT = C.PendingTypes.at(N.output(0)).first;
  const Tensor *Scale = C.constantOf(N.input(1));
  const Tensor *Zp = N.hasInput(2) ? C.constantOf(N.input(2)) : nullptr;
  if (!Scale || (N.hasInput(2) && !Zp))
    return false; // Run-time parameters: the node kernel.
  if (Quantize) {
    if (InT != DType::F32 || (OutT != DType::U8 && OutT != DType::I8) ||
        (Zp && Zp->dtype() != OutT))
      return false;
  } else if ((InT != DType::U8 && InT != DType::I8 && InT != DType::I32) ||
             OutT != DType::F32 || (Zp && Zp->dtype() != InT)) {
    return false;
  }
  const Shape XS = C.shapeOf(X);
  std::optional<QuantGeometry> G =
      quantGeometry(*Scale, Zp, XS, N.attrInt("axis"));
  if (!G)
    return false; // The node kernel reports what is wrong.
  if (InT == DType::I32)
    for (int32_t Z : G->ZeroPoint)
      if (Z != 0)
        return false;

  // Per tensor: the operand's own layout when the loop can walk it.
  memory::desc OutMD;
  const ValueSlot &XSlot = C.slot(In);
  if (XSlot.Blocked) {
    if (G->Channels == 1 && isDenseLayout(XSlot.MD, XS, InT))
      OutMD = withType(XSlot.MD, *dnnlType(OutT));
    else
      In = C.B.plainOf(In);
  }
  int Out = C.defineBuffer(N.output(0), OutMD);
  emitLoop(C, {In}, Out, C.describe(N),
           [In, Out, G = *G, InT, OutT, Quantize](Program &P) {
             if (Quantize)
               quantizeFloats(static_cast<const float *>(P.dataOf(In)),
                              P.bufferData(Out), OutT, G);
             else
               dequantizeToFloats(P.dataOf(In), InT,
                                  reinterpret_cast<float *>(P.bufferData(Out)),
                                  G);
           });
  return true;
}

} // namespace nng::backends::cpu
