//===- LowerConv.cpp - Conv, FusedConv and ConvTranspose with oneDNN -----===//
//
// A 1-d or 2-d f32 convolution with constant weights becomes one oneDNN
// convolution_forward whose source and destination keep the layout the
// primitive picks (nChw16c, nhwc, nCw16c, nwc, ...; format_tag::any) and
// whose weights are reordered into its layout once (1-d ones are oneDNN's
// 3-d descriptors, ncw: an audio model's convolutions over time). Fused
// into the same step:
// - the bias,
// - FusedConv's residual Sum, as a sum post-op: the destination starts as
//   the residual, in place when the residual dies at the convolution and
//   already has the destination's layout;
// - FusedConv's activation (see LowerActivation.cpp for which become
//   post-ops and which own loops). The residual Add and the activation
//   after a Conv became that FusedConv in the graph, by the epilogue rule
//   (rules/FuseEpilogues.cpp), before lowering;
// - after a pointwise (1x1) convolution whose activation is post-ops, the
//   3x3 depthwise convolution (stride 1 or 2, padding 1) that is its sole
//   consumer, with its own activation (a FusedConv's without a Sum):
//   oneDNN's depthwise post-op, which never writes the pointwise result to
//   memory (MobileNet's expansion).
//
// A 3x3 stride-1 convolution runs as Winograd's algorithm (oneDNN's
// F(2x2,3x3) or F(4x4,3x3) kernels, about twice as fast as direct ones on
// AVX-512) when the program may speculate: a guard first checks that its
// input (and residual) is finite and below winogradInputLimit, where the
// transforms give the direct results up to rounding and its ReLU may be
// oneDNN's; a run whose guard fails is redone by the exact program
// (ValueBounds.cpp). Those kernels take only the channel-blocked nChw16c
// layout, so a graph that has such convolutions keeps all its
// convolutions in it (LowerContext::PreferBlocked). The depthwise post-op
// and Winograd's kernels are 2-d only.
//
// A 1-d depthwise convolution (group = channels, weights [C, 1, k]) is an
// own loop over the plain layout: oneDNN serves it only with its gemm
// kernel, a call per channel (Silero VAD's 258 channels over 8 steps took
// 0.09 ms; the loop takes about 1 us).
//
// A 1-d or 2-d ConvTranspose with constant f32 weights is a oneDNN
// deconvolution_forward with its bias, its weights packed once from ONNX's
// [C, M/G, k...] layout (described by strides), its source and destination
// in the layouts the primitive picks; nothing after it is fused.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Parallel.h"

namespace nng::backends::cpu {

using dnnl::memory;

namespace {

/// A depthwise convolution fused after a pointwise one.
struct DepthwiseTail {
  const ir::Node *Dw = nullptr;
  const Tensor *W = nullptr;
  const ir::Value *Bias = nullptr;
  int64_t Stride = 1;
  Shape Out;      ///< The depthwise convolution's result shape.
  FusedTail Tail; ///< What the depthwise convolution fuses after it.
};

/// True when Win is a 2-d window of Kernel x Kernel, the given stride on
/// both axes, padding Pad at the start and no dilation.
bool isSquareWindow(const reference::Window &Win, int64_t Kernel,
                    int64_t Stride, int64_t Pad) {
  if (Win.rank() != 2)
    return false;
  for (size_t I = 0; I < 2; ++I)
    if (Win.Kernel[I] != Kernel || Win.Strides[I] != Stride ||
        Win.Dilations[I] != 1 || Win.PadBegin[I] != Pad)
      return false;
  return true;
}

/// The 3x3 depthwise convolution (stride 1 or 2, padding 1, output
/// ceil(in / stride)) that is the sole consumer of Y, a pointwise
/// convolution's (activated) result of shape YS, as oneDNN's depthwise
/// post-op takes it; nullopt when there is none.
std::optional<DepthwiseTail> depthwiseAfter(LowerContext &C, const ir::Value *Y,
                                            const Shape &YS) {
  const ir::Node *D = C.soleConsumer(Y);
  if (!D || D->input(0) != Y ||
      (D->op() != ir::OpKind::Conv &&
       (D->op() != ir::OpKind::FusedConv || D->hasInput(3))))
    return std::nullopt;
  int64_t Channels = YS[1];
  const Tensor *W = C.constantOf(D->input(1));
  if (!W || W->dtype() != DType::F32 ||
      W->shape() != Shape({Channels, 1, 3, 3}) ||
      D->attrInt("group") != Channels)
    return std::nullopt;
  const ir::Value *Bias = D->hasInput(2) ? D->input(2) : nullptr;
  if (Bias && (!C.constantOf(Bias) || !C.isF32(Bias)))
    return std::nullopt;
  KernelContext KC{*D, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(KC, YS, {3, 3});
  int64_t Stride = Win.rank() == 2 ? Win.Strides[0] : 0;
  if ((Stride != 1 && Stride != 2) || !isSquareWindow(Win, 3, Stride, 1))
    return std::nullopt;
  for (size_t I = 0; I < 2; ++I)
    if (Win.Out[I] != (Win.In[I] + Stride - 1) / Stride)
      return std::nullopt;
  // oneDNN takes no sum after the depthwise post-op (a FusedConv with a
  // Sum declined above).
  const ir::Node *After = C.soleConsumer(D->output(0));
  if (D->op() == ir::OpKind::Conv && After && After->op() == ir::OpKind::Add)
    return std::nullopt;
  DepthwiseTail T;
  T.Dw = D;
  T.W = W;
  T.Bias = Bias;
  T.Stride = Stride;
  T.Out = Shape({YS[0], Channels, Win.Out[0], Win.Out[1]});
  T.Tail.Out = D->output(0);
  if (D->op() == ir::OpKind::FusedConv) {
    T.Tail.Act = fusedNodeActivation(*D);
    if (!T.Tail.Act.Ok)
      return std::nullopt;
    if (T.Tail.Act.needsOwnLoop())
      speculateClamp(C, T.Tail.Act,
                     C.Speculate ? convResultBound(C, *D) : std::nullopt, *D);
  }
  return T;
}

/// Y[r, t] = Bias[c] + sum_k W[c, k] * X[r, t * Stride + k * Dil - Pad]
/// (zero outside X) for the rows r in [Begin, End) (channel c = r %
/// Channels) of length L in, Out out.
NNG_VECTOR_CLONES void depthwiseRows(const float *X, const float *W,
                                     const float *Bias, float *Y,
                                     int64_t Begin, int64_t End,
                                     int64_t Channels, int64_t L, int64_t Out,
                                     int64_t K, int64_t Stride, int64_t Dil,
                                     int64_t Pad) {
  for (int64_t R = Begin; R < End; ++R) {
    int64_t Ch = R % Channels;
    const float *XR = X + R * L, *WR = W + Ch * K;
    float *YR = Y + R * Out;
    float B = Bias ? Bias[Ch] : 0.0f;
    for (int64_t T = 0; T < Out; ++T)
      YR[T] = B;
    // Tap by tap over the outputs whose input index T * Stride + Shift
    // lies in X (a loop that vectorizes).
    for (int64_t Tap = 0; Tap < K; ++Tap) {
      int64_t Shift = Tap * Dil - Pad;
      int64_t Lo = Shift >= 0 ? 0 : (-Shift + Stride - 1) / Stride;
      int64_t Hi = L - 1 - Shift < 0 ? -1 : (L - 1 - Shift) / Stride;
      Hi = std::min(Hi, Out - 1);
      float Wk = WR[Tap];
      for (int64_t T = Lo; T <= Hi; ++T)
        YR[T] += Wk * XR[T * Stride + Shift];
    }
  }
}

/// Lowers N, a 1-d depthwise convolution of X (plain [N, C, L]) by the
/// constant weights W [C, 1, k], as depthwiseRows.
bool lowerDepthwise1d(LowerContext &C, const ir::Node &N,
                      const reference::Window &Win) {
  const ir::Value *X = N.input(0), *W = N.input(1);
  const ir::Value *Bias = N.hasInput(2) ? N.input(2) : nullptr;
  int In = C.B.plainOf(C.slotOf(X));
  int Wt = C.B.plainOf(C.slotOf(W));
  int B = Bias ? C.B.plainOf(C.slotOf(Bias)) : -1;
  int Out = C.defineBuffer(N.output(0));
  int64_t K = Win.Kernel[0], Stride = Win.Strides[0], Dil = Win.Dilations[0],
          Pad = Win.PadBegin[0], PadEnd = Win.PadEnd[0];
  std::vector<int> Reads = {In, Wt};
  if (B >= 0)
    Reads.push_back(B);
  emitLoop(
      C, Reads, Out, C.describe(N),
      [=](Program &P) {
        const Shape &XS = P.Slots[In].S, &YS = P.Slots[Out].S;
        const float *PX = static_cast<const float *>(P.dataOf(In));
        const float *PW = static_cast<const float *>(P.dataOf(Wt));
        const float *PB =
            B >= 0 ? static_cast<const float *>(P.dataOf(B)) : nullptr;
        float *PY = reinterpret_cast<float *>(P.bufferData(Out));
        int64_t Rows = XS[0] * XS[1], L = XS[2], Len = YS[2];
        // Rows of at least 2^15 multiply-adds a thread.
        int64_t Grain = std::max<int64_t>(
            1, (int64_t(1) << 15) / std::max<int64_t>(Len * K, 1));
        parallelFor(0, Rows, Grain, [&](int64_t Begin, int64_t End) {
          depthwiseRows(PX, PW, PB, PY, Begin, End, XS[1], L, Len, K, Stride,
                        Dil, Pad);
        });
      },
      [=](const Program &, const SlotShapes &New) {
        const Shape &NX = New[In], &NY = New[Out];
        int64_t Span = NX[2] + Pad + PadEnd - Dil * (K - 1) - 1;
        return NX.rank() == 3 && NY.rank() == 3 && NY[0] == NX[0] &&
               NY[1] == NX[1] && Span >= 0 && NY[2] == Span / Stride + 1;
      });
  return true;
}

/// Below this many output pixels (batch x height x width) Winograd's
/// transforms cost more than they save, unless the convolution has many
/// channels: then the direct kernel, which reads its weights once per
/// output row, is bound by reading them, and the Winograd kernel is faster
/// though its transformed weights are 16/9 the size. ResNet-50's 7x7
/// layers at batch 1 (49 pixels, 512 channels), inside the model where the
/// weights come from memory: 0.57-0.59 ms against the direct kernel's
/// 0.91-1.1 ms (AMD EPYC, AVX-512, 2 threads).
constexpr int64_t MinWinogradPixels = 128;
constexpr int64_t MinWinogradPixelsWide = 49;
constexpr int64_t WideChannels = 256;

/// True when a Winograd kernel pays for a 3x3 convolution with these
/// output pixels and input channels.
bool winogradPays(int64_t Pixels, int64_t InChannels) {
  return Pixels >= MinWinogradPixels ||
         (Pixels >= MinWinogradPixelsWide && InChannels >= WideChannels);
}

/// True when oneDNN has a Winograd kernel for f32 on this CPU (probed
/// once).
bool winogradKernelExists() {
  static const bool Exists = [] {
    try {
      memory::dims S{1, 16, 8, 8};
      dnnl::convolution_forward::desc D(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::convolution_winograd, anyF32(S),
          anyF32({16, 16, 3, 3}), memory::desc(), anyF32(S), {1, 1}, {1, 1},
          {1, 1});
      dnnl::convolution_forward::primitive_desc P(D, cpuEngine());
      return std::string(P.impl_info_str()).find("wino") != std::string::npos;
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return Exists;
}

} // namespace

bool winogradCandidate(const LowerContext &C, const ir::Node &N) {
  if ((N.op() != ir::OpKind::Conv && N.op() != ir::OpKind::FusedConv) ||
      N.numInputs() < 2 || !N.hasInput(1))
    return false;
  const Tensor *W = C.constantOf(N.input(1));
  if (!W || W->dtype() != DType::F32 || W->rank() != 4)
    return false;
  const Shape &WS = W->shape();
  auto AllOnes = [&](ir::IntsAttrName Attr) {
    for (int64_t V : N.attrInts(Attr))
      if (V != 1)
        return false;
    return true;
  };
  return WS[2] == 3 && WS[3] == 3 && WS[0] % 16 == 0 && WS[1] % 16 == 0 &&
         N.attrInt("group") == 1 && AllOnes("strides") &&
         AllOnes("dilations") && winogradKernelExists();
}

bool lowerConv(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0), *W = N.input(1);
  if (!C.isF32(X))
    return false;
  const Tensor *Wt = C.constantOf(W);
  if (!Wt || Wt->dtype() != DType::F32)
    return false;
  const Shape &XS = C.shapeOf(X);
  if ((XS.rank() != 3 && XS.rank() != 4) || Wt->rank() != XS.rank())
    return false;
  const ir::Value *Bias = N.hasInput(2) ? N.input(2) : nullptr;
  if (Bias && (!C.isF32(Bias) || C.slotOfValue(Bias).Blocked))
    return false;
  int64_t Group = N.attrInt("group");
  std::vector<int64_t> Kernel(Wt->shape().begin() + 2, Wt->shape().end());
  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(KC, XS, Kernel);
  if (N.op() == ir::OpKind::Conv && XS.rank() == 3 && Group > 1 &&
      Group == XS[1] && Wt->shape()[0] == Group && Wt->shape()[1] == 1 &&
      (!Bias || C.constantOf(Bias)))
    return lowerDepthwise1d(C, N, Win);

  // What the convolution fuses: FusedConv's residual sum, then its
  // activation (the epilogue rule made them explicit).
  const ir::Value *Y = N.output(0);
  const Shape &YS = C.shapeOf(Y);
  const ir::Value *Residual =
      N.op() == ir::OpKind::FusedConv && N.hasInput(3) ? N.input(3) : nullptr;
  if (Residual && (!C.isF32(Residual) || C.shapeOf(Residual) != YS))
    return false; // The node kernel reports it.
  Activation Act;
  if (N.op() == ir::OpKind::FusedConv) {
    Act = fusedNodeActivation(N);
    if (!Act.Ok)
      return false;
    if (Act.needsOwnLoop()) {
      // A clamp: oneDNN's when what it clamps is proven finite.
      std::optional<double> Pre;
      if (C.Speculate) {
        Pre = convResultBound(C, N);
        if (Pre && Residual) {
          std::optional<double> R = valueBound(C, Residual);
          Pre = R ? std::optional<double>(*Pre + *R) : std::nullopt;
        }
      }
      speculateClamp(C, Act, Pre, N);
    }
  }

  memory::dims Src = dimsOf(XS), Dst = dimsOf(YS);
  memory::dims Wei = dimsOf(Wt->shape());
  memory::dims WeiPlainDims = Wei;
  if (Group > 1) {
    Wei[0] /= Group;
    Wei.insert(Wei.begin(), Group);
    WeiPlainDims = Wei;
  }
  auto [Strides, Dil, PadL, PadR] = dnnlWindow(Win);

  memory::desc BiasMD =
      Bias ? plainDesc({Dst[1]}) : memory::desc();
  using ConvPD = dnnl::convolution_forward::primitive_desc;
  auto MakePD = [&](const DepthwiseTail *Dw, const memory::desc &SrcMD,
                    const memory::desc &DstMD,
                    dnnl::algorithm Alg = dnnl::algorithm::convolution_direct,
                    const Activation *A = nullptr) {
    dnnl::convolution_forward::desc D(dnnl::prop_kind::forward_inference, Alg,
                                      SrcMD, anyF32(Wei), BiasMD, DstMD,
                                      Strides, Dil, PadL, PadR);
    dnnl::post_ops Ops;
    if (Residual)
      Ops.append_sum(1.0f);
    (A ? *A : Act).appendTo(Ops);
    if (Dw) {
      Ops.append_dw(memory::data_type::f32,
                    Dw->Bias ? memory::data_type::f32 : memory::data_type::undef,
                    memory::data_type::f32, 3, Dw->Stride, 1, 0, {1.0f});
      Dw->Tail.Act.appendTo(Ops);
    }
    dnnl::primitive_attr Attr;
    Attr.set_post_ops(Ops);
    Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return ConvPD(D, Attr, cpuEngine());
  };
  auto Vectorized = [](const ConvPD &P) {
    std::string Impl = P.impl_info_str();
    // ("ref_fused_convolution:..." runs two primitives through a buffer.)
    return Impl.rfind("ref", 0) != 0 &&
           (Impl.find("jit") != std::string::npos ||
            Impl.find("brg") != std::string::npos);
  };
  // Destinations to try: nChw16c first when the graph keeps that layout
  // (PreferBlocked), then oneDNN's choice.
  std::vector<memory::desc> Dsts;
  if (C.PreferBlocked && Group == 1 && XS.rank() == 4)
    Dsts.push_back(
        memory::desc(Dst, memory::data_type::f32, memory::format_tag::nChw16c));
  Dsts.push_back(anyF32(Dst));
  auto TryVectorized = [&](const DepthwiseTail *Dw,
                           const memory::desc &SrcMD) -> std::optional<ConvPD> {
    for (const memory::desc &D : Dsts) {
      try {
        ConvPD P = MakePD(Dw, SrcMD, D);
        if (Vectorized(P))
          return P;
      } catch (const dnnl::error &) {
      }
    }
    return std::nullopt;
  };
  // The producer's layout when it is one oneDNN chose (blocked, nhwc) and a
  // vectorized kernel takes it (no reorder between them), else the layout
  // this primitive prefers. With a depthwise post-op: only a vectorized
  // kernel (nullopt: none).
  const ValueSlot &XS0 = C.slotOfValue(X);
  auto Choose = [&](const DepthwiseTail *Dw) -> std::optional<ConvPD> {
    if (XS0.Blocked)
      if (std::optional<ConvPD> P = TryVectorized(Dw, XS0.MD))
        return P;
    if (!Dw) {
      if (C.PreferBlocked)
        if (std::optional<ConvPD> P = TryVectorized(nullptr, anyF32(Src)))
          return P;
      // A grouped 1-d convolution on `any` layouts gets oneDNN's gemm
      // kernel, a call per group; a vectorized one, where oneDNN has it,
      // takes a channel-blocked or channels-last layout.
      using Tag = memory::format_tag;
      if (Group > 1 && XS.rank() == 3)
        for (Tag T : {Tag::nCw16c, Tag::nwc})
          if (std::optional<ConvPD> P = TryVectorized(
                  nullptr, memory::desc(Src, memory::data_type::f32, T)))
            return P;
      return MakePD(nullptr, anyF32(Src), anyF32(Dst));
    }
    // oneDNN's choice, else its channel-blocked layouts (its fused kernels
    // take those; its nhwc pair is two primitives through a buffer).
    for (memory::format_tag Tag :
         {memory::format_tag::any, memory::format_tag::nChw16c,
          memory::format_tag::nChw8c})
      if (std::optional<ConvPD> P = TryVectorized(
              Dw, memory::desc(Src, memory::data_type::f32, Tag)))
        return P;
    return std::nullopt;
  };

  // A depthwise convolution after a pointwise one, when oneDNN has a
  // vectorized kernel for the pair.
  std::optional<DepthwiseTail> Dw;
  if (!Residual && !Act.needsOwnLoop() && Group == 1 &&
      isSquareWindow(Win, 1, 1, 0) && Win.PadEnd == std::vector<int64_t>{0, 0})
    Dw = depthwiseAfter(C, Y, YS);
  std::optional<ConvPD> FusedPD;
  if (Dw && !(FusedPD = Choose(&*Dw)))
    Dw.reset();
  // Winograd's algorithm behind a guard on its input.
  std::optional<float> WinoLimit;
  if (!FusedPD && C.Speculate && winogradCandidate(C, N) &&
      isSquareWindow(Win, 3, 1, 1) && Win.PadEnd == std::vector<int64_t>{1, 1} &&
      (!Bias || C.constantOf(Bias)) &&
      winogradPays(YS[0] * YS[2] * YS[3], XS[1]))
    WinoLimit = winogradInputLimit(C, *Wt, Bias ? C.constantOf(Bias) : nullptr);
  if (WinoLimit) {
    Activation Fast = onFiniteValues(Act);
    try {
      ConvPD P = MakePD(nullptr,
                        memory::desc(Src, memory::data_type::f32,
                                     memory::format_tag::nChw16c),
                        Dsts.front(), dnnl::algorithm::convolution_winograd,
                        &Fast);
      if (std::string(P.impl_info_str()).find("wino") != std::string::npos) {
        FusedPD = P;
        Act = Fast;
      }
    } catch (const dnnl::error &) {
    }
    if (!FusedPD)
      WinoLimit.reset();
  }
  ConvPD PD = FusedPD ? *FusedPD : *Choose(nullptr);
  Shape OutShape = Dw ? Dw->Out : YS;
  if (Dw)
    Y = Dw->Tail.Out;

  // Operands: the source in the primitive's layout (a reorder only when the
  // producer's differs), the residual as the destination's start.
  int XSlot = C.B.inLayout(C.slotOf(X), PD.src_desc());
  int OutSlot;
  bool InPlace = false;
  if (Residual) {
    int R = C.slotOf(Residual);
    const ValueSlot &RS = C.slot(R);
    // (Not when the convolution reads the residual as another operand.)
    InPlace = RS.Kind == SlotKind::Buffer && RS.MD == PD.dst_desc() &&
              Residual != X && Residual != Bias &&
              C.diesAt(Residual, N, &N);
    if (InPlace) {
      // The sum's result takes over the residual's bytes.
      ValueSlot Same = RS;
      Same.Name = Y->name();
      Same.PlainTwin = -1;
      C.program().Slots.push_back(Same);
      OutSlot = static_cast<int>(C.program().Slots.size()) - 1;
      C.SlotOf[Y] = OutSlot;
    } else {
      C.PendingTypes[Y] = {DType::F32, YS};
      OutSlot = C.defineBuffer(Y, PD.dst_desc());
      // The destination starts as a copy of the residual.
      C.B.reads(R);
      C.B.writes(OutSlot);
      C.B.emit(makeReorderStep(R, RS.MD, OutSlot, PD.dst_desc()));
      C.program().Steps.back()->Desc =
          "copy of %" + RS.Name + " as the start of " + C.describe(N);
      ++C.program().Stats.DnnlSteps;
    }
  } else {
    C.PendingTypes[Y] = {DType::F32, OutShape};
    OutSlot = C.defineBuffer(Y, PD.dst_desc());
  }

  if (WinoLimit) {
    float Limit = WinoLimit.value_or(0.0f);
    std::vector<std::pair<int, float>> Checks = {{XSlot, Limit}};
    // (The residual, when in place, is the destination's bytes.)
    if (Residual)
      Checks.push_back({InPlace ? OutSlot : C.slotOf(Residual), 1e30f});
    emitGuard(C, Checks, "guard of " + C.describe(N) + " (Winograd)");
    ++C.program().Stats.WinogradConvs;
  }
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, XSlot, PD.src_desc()},
                                     {DNNL_ARG_DST, OutSlot, PD.dst_desc()}};
  std::vector<int> Reads = {XSlot, OutSlot};
  if (Bias) {
    Args.push_back({DNNL_ARG_BIAS, C.slotOf(Bias), BiasMD});
    Reads.push_back(C.slotOf(Bias));
  }
  std::vector<WeightToPack> Ws = {{*Wt, plainDesc(WeiPlainDims)}};
  if (Dw) {
    constexpr int DwWeights = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS;
    constexpr int DwBias = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS;
    Ws.push_back({*Dw->W, plainDesc({YS[1], 1, 1, 3, 3}), DwWeights,
                  PD.query_md(dnnl::query::exec_arg_md, DwWeights)});
    if (Dw->Bias) {
      int B = C.slotOf(Dw->Bias);
      Args.push_back(
          {DwBias, B, PD.query_md(dnnl::query::exec_arg_md, DwBias)});
      Reads.push_back(B);
    }
  }
  emitPrimitive(C, N, dnnl::convolution_forward(PD), PD, std::move(Args),
                Reads, OutSlot, std::move(Ws));
  if (Act.needsOwnLoop())
    emitEpilogue(C, OutSlot, Act.Own, C.describe(N) + " activation");
  if (Dw) {
    if (Dw->Tail.Act.needsOwnLoop())
      emitEpilogue(C, OutSlot, Dw->Tail.Act.Own,
                   Dw->Dw->describe() + " activation");
    C.Done.insert(Dw->Dw);
    ++C.program().Stats.FusedNodes;
    // Its activation, which the epilogue rule fused into it.
    if (Dw->Dw->op() == ir::OpKind::FusedConv &&
        Dw->Dw->attrString("activation") != "Identity")
      ++C.program().Stats.FusedNodes;
  }
  // The nodes the epilogue rule fused into this one: its residual Add and
  // its activation.
  if (Residual)
    ++C.program().Stats.FusedNodes;
  if (N.op() == ir::OpKind::FusedConv &&
      N.attrString("activation") != "Identity")
    ++C.program().Stats.FusedNodes;
  return true;
}

bool lowerConvTranspose(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X))
    return false;
  const Tensor *Wt = C.constantOf(N.input(1));
  if (!Wt || Wt->dtype() != DType::F32)
    return false;
  const ir::Value *Bias = N.hasInput(2) ? N.input(2) : nullptr;
  if (Bias && !C.isF32(Bias))
    return false;
  const Shape &XS = C.shapeOf(X), &WS = Wt->shape();
  const Shape &YS = C.shapeOf(N.output(0));
  size_t Rank = XS.rank();
  if ((Rank != 3 && Rank != 4) || XS.numel() == 0 || YS.numel() == 0)
    return false;
  std::optional<DeconvGeometry> Geo = deconvGeometry(N, XS, YS, WS);
  if (!Geo)
    return false;
  int64_t M = WS[1] * N.attrInt("group");
  if (YS[1] != M || (Bias && C.shapeOf(Bias) != Shape{M}))
    return false;
  memory::desc BiasMD = Bias ? plainDesc({M}) : memory::desc();
  using DeconvPD = dnnl::deconvolution_forward::primitive_desc;
  auto MakePD = [&](const memory::desc &SrcMD) {
    dnnl::deconvolution_forward::desc D(
        dnnl::prop_kind::forward_inference,
        dnnl::algorithm::deconvolution_direct, SrcMD,
        anyF32(Geo->Weights.dims()), BiasMD, anyF32(dimsOf(YS)), Geo->Strides,
        Geo->Dil, Geo->PadL, Geo->PadR);
    dnnl::primitive_attr Attr;
    Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return DeconvPD(D, Attr, cpuEngine());
  };
  // The producer's layout when it is one oneDNN chose and the primitive
  // takes it, else the layout the primitive prefers.
  const ValueSlot &XSlot0 = C.slotOfValue(X);
  std::optional<DeconvPD> PD;
  if (XSlot0.Blocked) {
    try {
      PD = MakePD(XSlot0.MD);
      if (std::string(PD->impl_info_str()).rfind("ref", 0) == 0)
        PD.reset(); // oneDNN's reference code: another layout.
    } catch (const dnnl::error &) {
    }
  }
  if (!PD)
    PD = MakePD(anyF32(dimsOf(XS)));
  int XSlot = C.B.inLayout(C.slotOf(X), PD->src_desc());
  int Out = C.defineBuffer(N.output(0), PD->dst_desc());
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, XSlot, PD->src_desc()},
                                    {DNNL_ARG_DST, Out, PD->dst_desc()}};
  std::vector<int> Reads = {XSlot};
  if (Bias) {
    int B = C.B.plainOf(C.slotOf(Bias));
    Args.push_back({DNNL_ARG_BIAS, B, BiasMD});
    Reads.push_back(B);
  }
  emitPrimitive(C, N, dnnl::deconvolution_forward(*PD), *PD, std::move(Args),
                Reads, Out, {{*Wt, Geo->Weights}});
  return true;
}

} // namespace nng::backends::cpu
