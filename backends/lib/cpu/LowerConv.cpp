//===- LowerConv.cpp - Conv and FusedConv as oneDNN convolutions ---------===//
//
// A 2-d f32 convolution with constant weights becomes one oneDNN
// convolution_forward whose source and destination keep the layout the
// primitive picks (nChw16c, nhwc, ...; format_tag::any) and whose weights
// are reordered into its layout once. Fused into the same step:
// - the bias,
// - a residual Add that is the convolution's only consumer, as a sum
//   post-op: the destination starts as the residual, in place when the
//   residual dies at that Add and already has the destination's layout;
// - an activation after that (FusedConv's, or the sole consumer's; see
//   LowerActivation.cpp for which become post-ops and which own loops).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

using dnnl::memory;

bool lowerConv(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0), *W = N.input(1);
  if (!C.isF32(X))
    return false;
  const Tensor *Wt = C.constantOf(W);
  if (!Wt || Wt->dtype() != DType::F32)
    return false;
  const Shape &XS = C.shapeOf(X);
  if (XS.rank() != 4)
    return false;
  const ir::Value *Bias = N.hasInput(2) ? N.input(2) : nullptr;
  if (Bias && (!C.isF32(Bias) || C.slotOfValue(Bias).Blocked))
    return false;
  int64_t Group = N.attrInt("group");
  std::vector<int64_t> Kernel(Wt->shape().begin() + 2, Wt->shape().end());
  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(KC, XS, Kernel, true, false);

  // What follows the convolution: a residual sum, then an activation.
  Activation Act;
  if (N.op() == ir::OpKind::FusedConv) {
    Act = fusedNodeActivation(N);
    if (!Act.Ok)
      return false;
    if (Act.needsOwnLoop())
      speculateClamp(C, Act,
                     C.Speculate ? convResultBound(C, N) : std::nullopt, N);
  }
  const ir::Value *Y = N.output(0);
  const ir::Node *SumNode = nullptr;
  const ir::Value *Residual = nullptr;
  const ir::Node *ActNode = nullptr;
  const Shape &YS = C.shapeOf(Y);
  if (N.op() == ir::OpKind::Conv) {
    FusedTail T = fusedTail(C, Y, YS, [&] { return convResultBound(C, N); });
    SumNode = T.SumNode;
    Residual = T.Residual;
    ActNode = T.ActNode;
    if (ActNode)
      Act = T.Act;
    Y = T.Out;
  }

  memory::dims Src = dimsOf(XS), Dst = dimsOf(YS);
  memory::dims Wei = dimsOf(Wt->shape());
  memory::dims WeiPlainDims = Wei;
  if (Group > 1) {
    Wei[0] /= Group;
    Wei.insert(Wei.begin(), Group);
    WeiPlainDims = Wei;
  }
  memory::dims Strides(Win.Strides.begin(), Win.Strides.end());
  memory::dims Dil(Win.Dilations.begin(), Win.Dilations.end());
  for (auto &D : Dil)
    D -= 1;
  memory::dims PadL(Win.PadBegin.begin(), Win.PadBegin.end());
  memory::dims PadR(Win.PadEnd.begin(), Win.PadEnd.end());

  dnnl::post_ops Ops;
  if (SumNode)
    Ops.append_sum(1.0f);
  Act.appendTo(Ops);
  dnnl::primitive_attr Attr;
  Attr.set_post_ops(Ops);
  Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  memory::desc BiasMD =
      Bias ? plainDesc({Dst[1]}) : memory::desc();
  dnnl::convolution_forward::desc D(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      anyF32(Src), anyF32(Wei), BiasMD, anyF32(Dst), Strides, Dil, PadL, PadR);
  dnnl::convolution_forward::primitive_desc PD(D, Attr, cpuEngine());

  // Operands: the source in the primitive's layout (a reorder only when the
  // producer's differs), the residual as the destination's start.
  int XSlot = C.B.inLayout(C.slotOf(X), PD.src_desc());
  int OutSlot;
  bool InPlace = false;
  if (SumNode) {
    int R = C.slotOf(Residual);
    const ValueSlot &RS = C.slot(R);
    InPlace = RS.Kind == SlotKind::Buffer && RS.MD == PD.dst_desc() &&
              C.diesAt(Residual, N, SumNode);
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
          "copy of %" + RS.Name + " as the start of " + N.describe();
      ++C.program().Stats.DnnlSteps;
    }
  } else {
    C.PendingTypes[Y] = {DType::F32, YS};
    OutSlot = C.defineBuffer(Y, PD.dst_desc());
  }

  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, XSlot, PD.src_desc()},
                                     {DNNL_ARG_DST, OutSlot, PD.dst_desc()}};
  std::vector<int> Reads = {XSlot, OutSlot};
  if (Bias) {
    Args.push_back({DNNL_ARG_BIAS, C.slotOf(Bias), BiasMD});
    Reads.push_back(C.slotOf(Bias));
  }
  emitPrimitive(C, N, dnnl::convolution_forward(PD), PD, std::move(Args),
                Reads, OutSlot, WeightToPack{*Wt, plainDesc(WeiPlainDims)});
  if (Act.needsOwnLoop())
    emitEpilogue(C, OutSlot, Act.Own, N.describe() + " activation");
  if (SumNode) {
    C.Done.insert(SumNode);
    ++C.program().Stats.FusedNodes;
  }
  if (ActNode) {
    C.Done.insert(ActNode);
    ++C.program().Stats.FusedNodes;
  }
  return true;
}

} // namespace nng::backends::cpu
