//===- LowerPool.cpp - Pooling in the producer's layout -------------------===//
//
// Average and global average pooling are oneDNN pooling primitives reading
// the producer's layout (blocked or plain) and writing the same one. Max
// pooling (and global max pooling) is the backend's own loop
// (LoopsMaxPool.cpp), since oneDNN's drops NaN where the reference propagates
// it; it reads NCHW, NHWC and the channel-blocked nChw8c/nChw16c layouts
// directly and writes the same layout. Max pooling of u8/s8 data is
// oneDNN's (exact on integers), in the producer's layout.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

using dnnl::memory;

namespace {

/// A 4-d layout with channels in interleaved blocks of Block (NCHW is
/// Block 1; NHWC is one block of all channels).
struct ChannelLayout {
  memory::format_tag Tag;
  int64_t Block;
};

std::optional<ChannelLayout> channelLayout(const memory::desc &MD,
                                           const Shape &S) {
  memory::dims D = dimsOf(S);
  using T = memory::format_tag;
  for (auto [Tag, Blk] : {std::pair{T::nchw, int64_t(1)},
                          std::pair{T::nChw16c, int64_t(16)},
                          std::pair{T::nChw8c, int64_t(8)},
                          std::pair{T::nhwc, int64_t(-1)}})
    if (MD == memory::desc(D, memory::data_type::f32, Tag))
      return ChannelLayout{Tag, Blk < 0 ? S[1] : Blk};
  return std::nullopt;
}

class MaxPoolStep final : public Step {
public:
  int In = -1, Out = -1;
  MaxPoolGeometry G{};
  void run(Program &P) override {
    const Tensor X = P.tensorOf(In);
    maxPool2d(static_cast<const float *>(X.rawData()),
              reinterpret_cast<float *>(P.bufferData(Out)), G);
  }
};

bool lowerMaxPool(LowerContext &C, const ir::Node &N, bool Global) {
  if (N.numOutputs() > 1 && C.needed(N.output(1)))
    return false; // Indices: the node kernel.
  const ir::Value *X = N.input(0);
  const Shape &XS = C.shapeOf(X);
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  int In = C.slotOf(X);
  auto L = channelLayout(C.slot(In).MD, XS);
  if (!L) {
    In = C.B.plainOf(In);
    L = channelLayout(C.slot(In).MD, XS);
  }
  if (!L || L->Block > 64 * 1024)
    return false;
  MaxPoolGeometry G{};
  G.N = XS[0];
  G.Block = L->Block;
  G.CBlocks = L->Tag == memory::format_tag::nhwc ? 1
                                                 : (XS[1] + G.Block - 1) / G.Block;
  G.H = XS[2];
  G.W = XS[3];
  G.OH = YS[2];
  G.OW = YS[3];
  if (Global) {
    G.KH = G.H;
    G.KW = G.W;
    G.SH = G.SW = G.DH = G.DW = 1;
  } else {
    if (N.attrInt("storage_order") != 0)
      return false;
    KernelContext KC{N, {}, {}, {}, {}};
    reference::Window W = reference::forwardWindow(KC, XS);
    G.KH = W.Kernel[0];
    G.KW = W.Kernel[1];
    G.SH = W.Strides[0];
    G.SW = W.Strides[1];
    G.DH = W.Dilations[0];
    G.DW = W.Dilations[1];
    G.PT = W.PadBegin[0];
    G.PL = W.PadBegin[1];
  }
  memory::desc OutMD(dimsOf(YS), memory::data_type::f32, L->Tag);
  int Out = C.defineBuffer(N.output(0), OutMD);
  auto St = std::make_unique<MaxPoolStep>();
  St->In = In;
  St->Out = Out;
  St->G = G;
  St->Desc = C.describe(N);
  C.B.reads(In);
  C.B.writes(Out);
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
  return true;
}

/// A oneDNN pooling window: kernel, strides, dilations (gaps), pads.
struct PoolWindow {
  memory::dims Kernel, Strides, Dilations, PadL, PadR;
};

/// Emits a oneDNN pooling primitive over N's input in the producer's
/// layout, writing N's result in the layout DstMD (usually `any`) allows.
void emitPooling(LowerContext &C, const ir::Node &N, dnnl::algorithm Alg,
                 const memory::desc &DstMD, const PoolWindow &W) {
  int In = C.slotOf(N.input(0));
  // (A plain u8/s8 slot has no MD of its own: the row-major one.)
  memory::desc SrcMD = C.program().layoutOf(In);
  dnnl::pooling_v2_forward::desc D(dnnl::prop_kind::forward_inference, Alg,
                                   SrcMD, DstMD, W.Strides, W.Kernel,
                                   W.Dilations, W.PadL, W.PadR);
  dnnl::pooling_v2_forward::primitive_desc PD(D, cpuEngine());
  int Out = C.defineBuffer(N.output(0), PD.dst_desc());
  emitPrimitive(C, N, dnnl::pooling_v2_forward(PD), PD,
                {{DNNL_ARG_SRC, In, SrcMD}, {DNNL_ARG_DST, Out, PD.dst_desc()}},
                {In}, Out);
}

bool lowerAvgPool(LowerContext &C, const ir::Node &N, bool Global) {
  const ir::Value *X = N.input(0);
  const Shape &XS = C.shapeOf(X);
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  memory::dims K, St, PadL, PadR, Dil;
  dnnl::algorithm Alg = dnnl::algorithm::pooling_avg_exclude_padding;
  if (Global) {
    K.assign(XS.begin() + 2, XS.end());
    St.assign(K.size(), 1);
    PadL.assign(K.size(), 0);
    PadR = PadL;
  } else {
    if (N.attrInt("ceil_mode") != 0)
      return false; // Windows past the end: the node kernel.
    KernelContext KC{N, {}, {}, {}, {}};
    reference::Window W = reference::forwardWindow(KC, XS);
    K.assign(W.Kernel.begin(), W.Kernel.end());
    St.assign(W.Strides.begin(), W.Strides.end());
    PadL.assign(W.PadBegin.begin(), W.PadBegin.end());
    PadR.assign(W.PadEnd.begin(), W.PadEnd.end());
    if (N.attrInt("count_include_pad") != 0)
      Alg = dnnl::algorithm::pooling_avg_include_padding;
  }
  Dil.assign(K.size(), 0);
  emitPooling(C, N, Alg, anyF32(dimsOf(YS)), {K, St, Dil, PadL, PadR});
  return true;
}

/// MaxPool of u8/s8 data (QDQ models after fuse-qdq): oneDNN's max
/// pooling in the producer's layout, exact (integers have no NaN).
bool lowerInt8MaxPool(LowerContext &C, const ir::Node &N, memory::data_type T) {
  if (N.numOutputs() > 1 && C.needed(N.output(1)))
    return false; // Indices: the node kernel.
  if (N.attrInt("ceil_mode") != 0)
    return false;
  const ir::Value *X = N.input(0);
  const Shape &XS = C.shapeOf(X);
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window W = reference::forwardWindow(KC, XS);
  memory::dims K(W.Kernel.begin(), W.Kernel.end()),
      St(W.Strides.begin(), W.Strides.end()),
      PadL(W.PadBegin.begin(), W.PadBegin.end()),
      PadR(W.PadEnd.begin(), W.PadEnd.end()), Dil;
  for (int64_t D : W.Dilations)
    Dil.push_back(D - 1); // oneDNN counts the gaps.
  emitPooling(C, N, dnnl::algorithm::pooling_max,
              memory::desc(dimsOf(YS), T, memory::format_tag::any),
              {K, St, Dil, PadL, PadR});
  return true;
}

} // namespace

bool lowerPool(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (C.shapeOf(X).rank() != 4)
    return false;
  DType XT = X->type().dtype();
  if (N.op() == ir::OpKind::MaxPool && (XT == DType::U8 || XT == DType::I8))
    return lowerInt8MaxPool(C, N,
                            XT == DType::U8 ? memory::data_type::u8
                                            : memory::data_type::s8);
  if (!C.isF32(X))
    return false;
  switch (N.op()) {
  case ir::OpKind::MaxPool:
    return lowerMaxPool(C, N, false);
  case ir::OpKind::GlobalMaxPool:
    return lowerMaxPool(C, N, true);
  case ir::OpKind::AveragePool:
    return lowerAvgPool(C, N, false);
  case ir::OpKind::GlobalAveragePool:
    return lowerAvgPool(C, N, true);
  default:
    return false;
  }
}

} // namespace nng::backends::cpu
