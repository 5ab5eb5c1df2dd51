//===- LowerQLinear.cpp - QLinearConv and QLinearMatMul as int8 oneDNN ----===//
//
// ONNX's quantized convolution and product with constant s8 weights become
// one oneDNN int8 primitive each (u8 or s8 activations, s32 accumulation;
// oneDNN picks its VNNI / AMX kernels where the CPU has them):
// - weights reordered once into the primitive's layout (with the
//   compensation oneDNN keeps beside them for s8 sources and zero points),
//   repacked when the initializer's storage version moves;
// - output scales x_scale * w_scale[c] / y_scale, per output channel or per
//   tensor, computed in float in the reference's order;
// - the source and destination zero points as oneDNN run-time zero
//   points: the source's makes padding a real zero, as ONNX pads with
//   x_zero_point. Where only a reference implementation takes a source zero
//   point (none on AVX2 or AVX-512 machines with oneDNN 2.6), a
//   convolution without padding folds it into the bias instead: B' = B -
//   x_zp * sum(W[c]), recomputed when W or B changes;
// - rounding as the reference: oneDNN adds the destination zero point
//   before it rounds (round(v + zp), which differs from round(v) + zp on
//   ties, and where v + zp rounds in float), so with a destination zero
//   point an eltwise_round post-op (half to even) rounds first; the zero
//   point then adds exactly and the conversion saturates. Without one the
//   conversion itself rounds half to even. Results equal the reference's
//   bit for bit (the int32 accumulator becomes a float as the reference's
//   exact sum does; only sums beyond 2^24 with a bias could round
//   differently);
// - an implementation that fails to generate its kernel (oneDNN 2.6's
//   grouped jit_int8_1x1 with the round post-op) gives way to the next;
// - a QDQ residual join after the convolution (DequantizeLinear of its
//   result and of a residual, Add, Relu, QuantizeLinear) as more post-ops
//   and a sum over the destination (LowerQLinearResidual.cpp).
// Convolutions read and write int8 activations in the layout oneDNN picks
// (nhwc for its int8 kernels), so consecutive int8 convolutions pass them
// on without reorders. Products read and write plain data. Declined (the
// reference kernel in a fallback step): run-time or u8 weights, a nonzero
// weight zero point, per-row a_scale, 1-d and 3-d convolutions, run-time
// scales or zero points.
//
//===----------------------------------------------------------------------===//

#include "LowerInteger.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng::backends::cpu {

namespace {

using dnnl::memory;
using DT = memory::data_type;

/// The constant scale input I of N: Count values (or one), each positive
/// and finite; nullopt otherwise (the reference reports bad ones).
std::optional<std::vector<float>>
constScales(LowerContext &C, const ir::Node &N, size_t I, int64_t Count) {
  const Tensor *T = N.hasInput(I) ? C.constantOf(N.input(I)) : nullptr;
  if (!T || T->dtype() != DType::F32 || T->rank() > 1 ||
      (T->numel() != 1 && T->numel() != Count))
    return std::nullopt;
  std::vector<float> V;
  for (double D : T->toDoubleVector()) {
    if (!(D > 0) || !std::isfinite(D))
      return std::nullopt;
    V.push_back(static_cast<float>(D));
  }
  return V;
}

/// The constant zero point input I of N, one value of dtype T (0 when
/// absent and not Required); nullopt otherwise.
std::optional<int32_t> constZeroPoint(LowerContext &C, const ir::Node &N,
                                      size_t I, DType T, bool Required) {
  if (!N.hasInput(I))
    return Required ? std::nullopt : std::optional<int32_t>(0);
  const Tensor *Z = C.constantOf(N.input(I));
  if (!Z || Z->dtype() != T || Z->numel() != 1)
    return std::nullopt;
  return static_cast<int32_t>(Z->getFlatInt(0));
}

/// True when the weight zero point input I of N is absent or a constant i8
/// zero (one value, or Count values).
bool zeroWeightZeroPoint(LowerContext &C, const ir::Node &N, size_t I,
                         int64_t Count) {
  if (!N.hasInput(I))
    return true;
  const Tensor *Z = C.constantOf(N.input(I));
  if (!Z || Z->dtype() != DType::I8 || Z->rank() > 1 ||
      (Z->numel() != 1 && Z->numel() != Count))
    return false;
  for (int64_t I2 = 0; I2 < Z->numel(); ++I2)
    if (Z->getFlatInt(I2) != 0)
      return false;
  return true;
}

/// The int8 requantization shared by both ops: the multipliers A * W[c] /
/// Y (float, the reference's order), the zero points and the output type.
struct Requant {
  std::vector<float> Mult;
  int32_t SrcZp = 0, DstZp = 0;
  DType Out = DType::U8;
};

/// Reads x/a (input 0..2), w/b (3..5) and y (6..7) parameters of N with
/// Channels output channels; nullopt when some is not served.
std::optional<Requant> requantOf(LowerContext &C, const ir::Node &N, DType In,
                                 int64_t Channels) {
  auto XS = constScales(C, N, 1, 1);
  auto WS = constScales(C, N, 4, Channels);
  auto YS = constScales(C, N, 6, 1);
  std::optional<int32_t> XZ = constZeroPoint(C, N, 2, In, false);
  Requant R;
  R.Out = C.PendingTypes.at(N.output(0)).first;
  if (R.Out != DType::U8 && R.Out != DType::I8)
    return std::nullopt;
  std::optional<int32_t> YZ = constZeroPoint(C, N, 7, R.Out, true);
  if (!XS || !WS || !YS || !XZ || !YZ ||
      !zeroWeightZeroPoint(C, N, 5, Channels))
    return std::nullopt;
  for (float W : *WS)
    R.Mult.push_back((*XS)[0] * W / (*YS)[0]);
  R.SrcZp = *XZ;
  R.DstZp = *YZ;
  return R;
}

/// The attributes of an int8 primitive: output scales over dimension
/// ChannelDim (or per tensor), run-time zero points, a user scratchpad and,
/// with a destination zero point, the rounding post-op (without one, the
/// conversion to int8 rounds half to even and saturates by itself). With a
/// residual join (Tail), its post-ops and o_q's zero point instead.
dnnl::primitive_attr int8Attr(const Requant &R, int ChannelDim, bool SrcZp,
                              const QLinearTail *Tail = nullptr) {
  dnnl::primitive_attr A;
  A.set_output_scales(R.Mult.size() > 1 ? 1 << ChannelDim : 0, R.Mult);
  if (SrcZp)
    A.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  int32_t DstZp = Tail ? Tail->ZpO : R.DstZp;
  if (DstZp != 0)
    A.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops Ops;
  if (Tail)
    appendTailPostOps(*Tail, Ops);
  else if (DstZp != 0)
    Ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
  if (Ops.len() > 0)
    A.set_post_ops(Ops);
  A.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return A;
}

/// A constant slot holding one s32 zero point, and its description.
PrimitiveArg zeroPointArg(LowerContext &C, int Arg, int32_t Z) {
  int S = C.B.newConstant(Tensor::fromVector<int32_t>({Z}, Shape{1}));
  return {DNNL_ARG_ATTR_ZERO_POINTS | Arg, S, plainDesc({1}, DT::s32)};
}

/// Bias' = Bias - Zp * sum(W[c]) for the [M, ...] i8 weights W, recomputed
/// before a run when W or the bias changed (the f32 weights' staleness
/// rule).
class FoldedBias {
public:
  FoldedBias(Tensor W, const Tensor *Bias, int32_t Zp)
      : W(std::move(W)), Zp(Zp) {
    if (Bias)
      this->Bias = *Bias;
    Out = Tensor::empty(Shape{this->W.size(0)}, DType::I32);
  }
  /// Recomputes when a source changed; false when some value overflows
  /// i32 (then the fold cannot be used).
  bool refresh() {
    uint64_t WV = W.storage()->version();
    uint64_t BV = Bias.defined() ? Bias.storage()->version() : 0;
    if (Done && WV == WVersion && BV == BVersion)
      return true;
    Done = true;
    WVersion = WV;
    BVersion = BV;
    int64_t M = W.size(0), Per = W.numel() / std::max<int64_t>(M, 1);
    const auto *PW =
        static_cast<const int8_t *>(static_cast<const Tensor &>(W).rawData());
    auto *PO = static_cast<int32_t *>(Out.rawData());
    bool Ok = true;
    for (int64_t Ch = 0; Ch < M; ++Ch) {
      int64_t Sum = 0;
      for (int64_t I = 0; I < Per; ++I)
        Sum += PW[Ch * Per + I];
      int64_t V = (Bias.defined() ? Bias.getFlatInt(Ch) : 0) -
                  static_cast<int64_t>(Zp) * Sum;
      Ok = Ok && V >= INT32_MIN && V <= INT32_MAX;
      PO[Ch] =
          static_cast<int32_t>(std::clamp<int64_t>(V, INT32_MIN, INT32_MAX));
    }
    return Ok;
  }
  Tensor Out;

private:
  Tensor W, Bias;
  int32_t Zp;
  bool Done = false;
  uint64_t WVersion = 0, BVersion = 0;
};

using ConvPD = dnnl::convolution_forward::primitive_desc;

} // namespace

bool isVectorized(const dnnl::primitive_desc_base &PD) {
  std::string Impl = PD.impl_info_str();
  return Impl.rfind("ref", 0) != 0 && (Impl.find("jit") != std::string::npos ||
                                       Impl.find("brg") != std::string::npos);
}

void nameImplementation(LowerContext &C, const dnnl::primitive_desc_base &PD) {
  C.program().Steps.back()->Desc +=
      std::string(" [oneDNN ") + PD.impl_info_str() + "]";
}

bool lowerQLinearConv(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  DType XT = C.slotOfValue(X).Type;
  const Tensor *Wt = C.constantOf(N.input(3));
  if ((XT != DType::U8 && XT != DType::I8) || !Wt || Wt->dtype() != DType::I8)
    return false; // u8 or run-time weights: the reference kernel.
  const Shape XS = C.shapeOf(X);
  if (XS.rank() != 4 || Wt->rank() != 4)
    return false;
  int64_t M = Wt->size(0), Group = N.attrInt("group");
  if (Group <= 0 || M % Group != 0 || XS[1] != Wt->size(1) * Group)
    return false;
  std::vector<int64_t> Kernel(Wt->shape().begin() + 2, Wt->shape().end());
  std::vector<int64_t> KS = N.attrInts("kernel_shape");
  if (!KS.empty() && KS != Kernel)
    return false;
  std::optional<Requant> R = requantOf(C, N, XT, M);
  if (!R)
    return false;
  const ir::Value *Bias = N.hasInput(8) ? N.input(8) : nullptr;
  if (Bias &&
      (C.slotOfValue(Bias).Type != DType::I32 || C.shapeOf(Bias) != Shape{M}))
    return false;
  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(KC, XS, Kernel);
  bool Padded = false;
  for (size_t I = 0; I < Win.PadBegin.size(); ++I)
    Padded = Padded || Win.PadBegin[I] != 0 || Win.PadEnd[I] != 0;

  const Shape &YS = C.shapeOf(N.output(0));
  memory::dims Src = dimsOf(XS), Dst = dimsOf(YS), Wei = dimsOf(Wt->shape());
  if (Group > 1) {
    Wei[0] /= Group;
    Wei.insert(Wei.begin(), Group);
  }
  auto [Strides, Dil, PadL, PadR] = dnnlWindow(Win);
  DT XDT = *dnnlType(XT);
  memory::desc BiasMD = plainDesc({M}, DT::s32);
  // A residual join after the convolution (LowerQLinearResidual.cpp): its
  // post-ops, and o_q's dtype as the destination's.
  std::optional<QLinearTail> Tail = qlinearTailOf(C, N, R->Out, R->DstZp, YS);
  using Conv = Built<ConvPD, dnnl::convolution_forward>;
  auto Make = [&](const memory::desc &SrcMD, bool SrcZp, bool WithBias) {
    DT YDT = *dnnlType(Tail ? Tail->OutType : R->Out);
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        SrcMD, memory::desc(Wei, DT::s8, memory::format_tag::any),
        WithBias ? BiasMD : memory::desc(),
        memory::desc(Dst, YDT, memory::format_tag::any), Strides, Dil, PadL,
        PadR);
    return build<dnnl::convolution_forward>(
        D, int8Attr(*R, 1, SrcZp, Tail ? &*Tail : nullptr));
  };
  // The producer's layout when a vectorized kernel takes it (consecutive
  // int8 convolutions: no reorder), else the one the primitive prefers.
  const ValueSlot &XSlot = C.slotOfValue(X);
  auto Choose = [&](bool SrcZp, bool WithBias) -> std::optional<Conv> {
    if (XSlot.Blocked) {
      try {
        std::optional<Conv> P = Make(XSlot.MD, SrcZp, WithBias);
        if (P && isVectorized(P->Desc))
          return P;
      } catch (const dnnl::error &) {
      }
    }
    try {
      return Make(memory::desc(Src, XDT, memory::format_tag::any), SrcZp,
                  WithBias);
    } catch (const dnnl::error &) {
      return std::nullopt;
    }
  };
  // The source zero point as oneDNN's run-time one; where no vectorized
  // implementation takes it, folded into the bias when that is exact (no
  // padding: oneDNN pads with 0 where ONNX pads with x_zero_point).
  bool SrcZp = R->SrcZp != 0;
  std::optional<Conv> PD;
  std::shared_ptr<FoldedBias> Folded;
  auto Select = [&] {
    PD = Choose(SrcZp, Bias != nullptr);
    Folded.reset();
    if (SrcZp && (!PD || !isVectorized(PD->Desc)) && !Padded &&
        (!Bias || C.constantOf(Bias))) {
      auto F = std::make_shared<FoldedBias>(
          *Wt, Bias ? C.constantOf(Bias) : nullptr, R->SrcZp);
      std::optional<Conv> FoldedPD;
      if (F->refresh()) // Else beyond i32.
        FoldedPD = Choose(false, true);
      if (FoldedPD && (!PD || isVectorized(FoldedPD->Desc))) {
        PD = std::move(FoldedPD);
        Folded = std::move(F);
      }
    }
  };
  Select();
  // The join only in a vectorized kernel (else the unfused loops are
  // faster than oneDNN's reference convolution with post-ops).
  if (Tail && (!PD || !isVectorized(PD->Desc))) {
    Tail.reset();
    Select();
  }
  if (!PD)
    return false;

  const ConvPD &P = PD->Desc;
  int XSl = C.B.inLayout(C.slotOf(X), P.src_desc());
  std::vector<PrimitiveArg> Args;
  int Out = Tail ? defineTailDestination(C, N, *Tail, P.dst_desc(), Args)
                 : C.defineBuffer(N.output(0), P.dst_desc());
  Args.push_back({DNNL_ARG_SRC, XSl, P.src_desc()});
  Args.push_back({DNNL_ARG_DST, Out, P.dst_desc()});
  std::vector<int> Reads = {XSl};
  if (Tail)
    Reads.push_back(Out); // The sum reads the destination.
  if (Folded) {
    int B = C.B.newConstant(Folded->Out, N.output(0)->name() + ".bias");
    Args.push_back({DNNL_ARG_BIAS, B, BiasMD});
    // Before each run: the fold again when W or B changed.
    std::string Where = C.describe(N);
    auto St = std::make_unique<LoopStep>([Folded, Where](Program &) {
      if (!Folded->refresh())
        fail(ErrorKind::Unsupported, "in ", Where,
             ": the weights changed since compile and x_zero_point * sum(w) "
             "no longer fits the i32 bias it is folded into; compile the "
             "graph again (it then runs on the reference kernel)");
    });
    St->Desc = "x_zero_point of " + C.describe(N) + " folded into its bias";
    C.B.emit(std::move(St));
  } else {
    if (Bias) {
      Args.push_back({DNNL_ARG_BIAS, C.slotOf(Bias), BiasMD});
      Reads.push_back(C.slotOf(Bias));
    }
    if (SrcZp)
      Args.push_back(zeroPointArg(C, DNNL_ARG_SRC, R->SrcZp));
  }
  int32_t DstZp = Tail ? Tail->ZpO : R->DstZp;
  if (DstZp != 0)
    Args.push_back(zeroPointArg(C, DNNL_ARG_DST, DstZp));
  emitPrimitive(C, N, PD->P, P, std::move(Args), Reads, Out,
                {{*Wt, plainDesc(Wei, DT::s8)}});
  nameImplementation(C, P);
  if (Tail)
    finishTail(C, *Tail);
  return true;
}

bool lowerQLinearMatMul(LowerContext &C, const ir::Node &N) {
  const ir::Value *A = N.input(0);
  DType AT = C.slotOfValue(A).Type;
  const Tensor *Bt = C.constantOf(N.input(3));
  if ((AT != DType::U8 && AT != DType::I8) || !Bt || Bt->dtype() != DType::I8)
    return false;
  const Shape AS = C.shapeOf(A);
  const Shape &YS = C.shapeOf(N.output(0));
  size_t RA = AS.rank(), RB = Bt->rank();
  if (RA < 2 || RB < 2 || AS.numel() == 0 || Bt->numel() == 0)
    return false;
  int64_t K = AS[RA - 1], NOut = Bt->size(RB - 1);
  if (Bt->size(RB - 2) != K)
    return false;
  std::optional<Requant> R = requantOf(C, N, AT, NOut);
  if (!R)
    return false;

  // A constant matrix: the activation as [rows, K]; else a batched
  // product with numpy broadcasting of the batch dims.
  memory::dims AD, BD, YD;
  if (RB == 2) {
    AD = {AS.numel() / K, K};
    BD = {K, NOut};
    YD = {AS.numel() / K, NOut};
  } else {
    size_t Rank = YS.rank();
    if (Rank > 12)
      return false;
    AD = padDims(dimsOf(AS), Rank);
    BD = padDims(dimsOf(Bt->shape()), Rank);
    YD = dimsOf(YS);
  }
  DT ADT = *dnnlType(AT), YDT = *dnnlType(R->Out);
  memory::desc SrcMD = plainDesc(AD, ADT), DstMD = plainDesc(YD, YDT);
  dnnl::matmul::desc D(SrcMD, memory::desc(BD, DT::s8, memory::format_tag::any),
                       DstMD);
  dnnl::primitive_attr Attr =
      int8Attr(*R, static_cast<int>(YD.size()) - 1, R->SrcZp != 0);
  auto Mm = build<dnnl::matmul>(D, Attr);
  if (!Mm)
    return false;
  const dnnl::matmul::primitive_desc &PD = Mm->Desc;

  int In = C.B.plainOf(C.slotOf(A));
  int Out = C.defineBuffer(N.output(0));
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, In, SrcMD},
                                    {DNNL_ARG_DST, Out, DstMD}};
  if (R->SrcZp != 0)
    Args.push_back(zeroPointArg(C, DNNL_ARG_SRC, R->SrcZp));
  if (R->DstZp != 0)
    Args.push_back(zeroPointArg(C, DNNL_ARG_DST, R->DstZp));
  emitPrimitive(C, N, Mm->P, PD, std::move(Args), {In}, Out,
                {{*Bt, plainDesc(BD, DT::s8)}});
  nameImplementation(C, PD);
  return true;
}

} // namespace nng::backends::cpu
