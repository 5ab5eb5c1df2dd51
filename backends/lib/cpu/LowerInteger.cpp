//===- LowerInteger.cpp - ConvInteger and MatMulInteger as int8 oneDNN ----===//
//
// ONNX Runtime's quantize_dynamic writes a convolution as
// DynamicQuantizeLinear -> ConvInteger -> Cast(f32) -> Mul(x_scale *
// w_scale) [-> Add(bias)], and a linear layer the same with MatMulInteger.
// Each ConvInteger / MatMulInteger with constant weights becomes one oneDNN
// int8 primitive (u8 or s8 activations, s8 weights, s32 accumulation; VNNI
// where the CPU has it):
// - the activation's zero point (a constant, or DynamicQuantizeLinear's
//   run-time u8 one, converted to s32 by a one-element step) is oneDNN's
//   run-time source zero point, which also pads with it as ONNX does;
// - s8 weights without a zero point are packed as they are; u8 weights, or
//   weights with a zero point (per tensor or per output channel / column),
//   are packed as w - zp converted once to s8 when every difference fits
//   (recomputed when the initializer changes); a convolution whose
//   differences do not fit (u8 weights far from their zero point, as
//   quantize_dynamic writes them) and that has the tail below runs as two
//   primitives over two s8 parts of w - zp (clamp(w - zp, -128, 127) and
//   the rest), the second adding the first's float result by a sum post-op
//   before the tail, where 255 * max_c sum |w - zp| <= 2^24 makes every
//   float accumulator and their sum exact; else the node falls back;
// - the Cast, the Mul by a scale that is one value or one per output
//   channel (computed by this step from x_scale and a constant w_scale when
//   their Mul is not computed yet), an Add of a bias of that form and an
//   activation are fused as post-ops: f32(acc) then binary_mul then
//   binary_add then the activation chain, the reference's float operations
//   in ONNX's order (the accumulator is an exact s32 sum, converted to
//   float rounding to nearest as the Cast does), and the primitive writes
//   f32, in the layout it prefers (nhwc for convolutions: the next
//   DynamicQuantizeLinear runs in it and the next convolution reads its u8
//   result without a reorder);
// - unfused, the i32 result itself: oneDNN passes its accumulators through
//   float, so this form is taken only where every result is below 2^24 in
//   magnitude whatever the activations (255 * max_c sum |w - zp| <= 2^24),
//   else it falls back.
// Every form requires 255 * sum |w - zp| < 2^31 (no i32 overflow, where the
// reference saturates). Declined (the reference kernel in a fallback step):
// run-time weights, 1-d and 3-d convolutions, per-row activation zero
// points, batched constant B, weights that do not fit s8 (as two parts for
// a convolution with a rescale; in channel groups only with at most a Relu
// after it, group 1 and at most 64 groups).
//
//===----------------------------------------------------------------------===//

#include "LowerInteger.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"

#include <cmath>
#include <cstring>

namespace nng::backends::cpu {

namespace {

using dnnl::memory;
using DT = memory::data_type;

/// Largest |result| a product of 8-bit operands may reach for the i32
/// output through oneDNN's float conversion (exact up to 2^24).
constexpr double ExactI32 = 16777216.0;
/// Largest |accumulator| (i32 range).
constexpr double MaxI32 = 2147483647.0;

/// Which s8 tensor of W - zp a primitive packs: all of it (every
/// difference fits s8), or one of two parts that sum to it (differences
/// in [-256, 254]): High = clamp(W - zp, -128, 127), Low the rest. Both
/// parts keep the sign of the difference.
enum class S8Part { Whole, High, Low };

/// Constant integer weights as the s8 tensor a primitive packs: W itself
/// when s8 without a zero point, else W - zp (or the part of it Part
/// names) computed once per change of W or zp. W is viewed as [Outer, Ch,
/// Inner]; zp holds one value or Ch.
class S8Weights {
public:
  /// Limit bounds 255 * sum |w - zp| over each of Chunks equal parts of a
  /// channel's Inner values (the input-channel groups of a split
  /// convolution) and, with MaxI32, over the whole channel.
  S8Weights(Tensor W, Tensor Zp, int64_t Axis, double Limit,
            S8Part Part = S8Part::Whole, int64_t Chunks = 1)
      : W(std::move(W)), Zp(std::move(Zp)), Limit(Limit), Part(Part),
        Chunks(Chunks) {
    const Shape &S = this->W.shape();
    for (int64_t I = 0; I < static_cast<int64_t>(S.rank()); ++I)
      (I < Axis ? Outer : I == Axis ? Ch : Inner) *= S[I];
    Converted = this->W.dtype() != DType::I8 || this->Zp.defined() ||
                Part != S8Part::Whole;
    Packed = Converted ? Tensor::empty(this->W.shape(), DType::I8) : this->W;
  }
  /// Recomputes the s8 values and the channel sums when W or zp changed;
  /// false when a difference (a part) no longer fits s8 or 255 * sum
  /// |w - zp| exceeds the limit.
  bool refresh() {
    uint64_t WV = W.storage()->version();
    uint64_t ZV = Zp.defined() ? Zp.storage()->version() : 0;
    if (Done && WV == WVersion && ZV == ZVersion)
      return Ok;
    Done = true;
    WVersion = WV;
    ZVersion = ZV;
    Ok = compute();
    if (Converted)
      Packed.storage()->bumpVersion(); // The packed copy follows.
    return Ok;
  }
  Tensor Packed;

private:
  bool compute() {
    const Tensor WC = W.contiguous(); // (const: reading bumps no version)
    std::vector<int64_t> Z(Ch, 0);
    if (Zp.defined())
      for (int64_t C = 0; C < Ch; ++C)
        Z[C] = Zp.getFlatInt(Zp.numel() == 1 ? 0 : C);
    const auto *PU = static_cast<const uint8_t *>(WC.rawData());
    const auto *PS = static_cast<const int8_t *>(WC.rawData());
    bool U8 = W.dtype() == DType::U8;
    auto *Out = static_cast<int8_t *>(Packed.rawData());
    std::vector<double> L1(Ch * Chunks, 0.0), Whole(Ch, 0.0);
    int64_t ChunkSize = Inner / Chunks;
    bool Fits = true;
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t C = 0; C < Ch; ++C)
        for (int64_t I = 0; I < Inner; ++I) {
          int64_t At = (O * Ch + C) * Inner + I;
          int64_t V = (U8 ? int64_t(PU[At]) : int64_t(PS[At])) - Z[C];
          double A = static_cast<double>(V < 0 ? -V : V);
          L1[C * Chunks + I / ChunkSize] += A;
          Whole[C] += A;
          int64_t High = std::clamp<int64_t>(V, -128, 127);
          int64_t P = Part == S8Part::Whole  ? V
                      : Part == S8Part::High ? High
                                             : V - High;
          Fits = Fits && P >= -128 && P <= 127;
          if (Converted)
            Out[At] = static_cast<int8_t>(std::clamp<int64_t>(P, -128, 127));
        }
    for (double S : L1)
      Fits = Fits && 255.0 * S <= Limit;
    for (double S : Whole)
      Fits = Fits && 255.0 * S <= MaxI32;
    return Fits;
  }

  Tensor W, Zp;
  double Limit;
  S8Part Part;
  int64_t Chunks;
  int64_t Outer = 1, Ch = 1, Inner = 1;
  bool Converted = false, Done = false, Ok = false;
  uint64_t WVersion = 0, ZVersion = 0;
};

/// W (constant input 1 of N) as s8 with its zero point (input 3) applied
/// per slice of axis Axis; null when W is not a constant 8-bit tensor, the
/// zero point is not a constant of W's dtype holding one value or one per
/// slice, or some w - zp (its Part) does not fit s8 or exceeds Limit
/// (S8Weights).
std::shared_ptr<S8Weights> s8WeightsOf(LowerContext &C, const ir::Node &N,
                                       int64_t Axis, double Limit,
                                       S8Part Part = S8Part::Whole,
                                       int64_t Chunks = 1) {
  const Tensor *W = C.constantOf(N.input(1));
  if (!W || (W->dtype() != DType::U8 && W->dtype() != DType::I8) ||
      W->rank() <= static_cast<size_t>(Axis))
    return nullptr;
  Tensor Zp;
  if (N.hasInput(3)) {
    const Tensor *Z = C.constantOf(N.input(3));
    if (!Z || Z->dtype() != W->dtype() || Z->rank() > 1 ||
        (Z->numel() != 1 && Z->numel() != W->size(Axis)))
      return nullptr;
    bool AllZero = true;
    for (int64_t I = 0; I < Z->numel(); ++I)
      AllZero = AllZero && Z->getFlatInt(I) == 0;
    if (!AllZero)
      Zp = *Z;
  }
  auto R = std::make_shared<S8Weights>(*W, Zp, Axis, Limit, Part, Chunks);
  return R->refresh() ? R : nullptr;
}

/// Emits the step that keeps Ws current before each run (its initializer
/// may change in place) and fails when it no longer fits.
void emitWeightCheck(LowerContext &C, const ir::Node &N,
                     std::shared_ptr<S8Weights> Ws) {
  std::string Where = C.describe(N);
  auto St = std::make_unique<LoopStep>([Ws, Where](Program &) {
    if (!Ws->refresh())
      fail(ErrorKind::Unsupported, "in ", Where,
           ": the weights changed since compile and w - w_zero_point no "
           "longer fits s8 (or its sums the exact range) the int8 primitive "
           "was made for; compile the graph again (it then runs on the "
           "reference kernel)");
  });
  St->Desc = "s8 weights of " + Where;
  C.B.emit(std::move(St));
}

/// The activation's zero point (input I of N, dtype T) for oneDNN: -1 when
/// absent or a constant 0, else a slot holding it as one s32 (a constant,
/// or a buffer a one-element step fills from the run-time value); nullopt
/// when it is not one value of dtype T.
std::optional<int> srcZeroPoint(LowerContext &C, const ir::Node &N, size_t I,
                                DType T) {
  if (!N.hasInput(I))
    return -1;
  const ir::Value *Z = N.input(I);
  const ValueSlot &ZS = C.slotOfValue(Z);
  if (ZS.Type != T || ZS.S.numel() != 1)
    return std::nullopt;
  if (const Tensor *K = C.constantOf(Z)) {
    int32_t V = static_cast<int32_t>(K->getFlatInt(0));
    if (V == 0)
      return -1;
    return C.B.newConstant(Tensor::fromVector<int32_t>({V}, Shape{1}));
  }
  int In = C.B.plainOf(C.slotOf(Z));
  int Out = C.B.newBuffer(DType::I32, Shape{1});
  bool U8 = T == DType::U8;
  emitLoop(C, {In}, Out, "s32 zero point of " + C.describe(N),
           [In, Out, U8](Program &P) {
             const void *Src = P.dataOf(In);
             int32_t V = U8 ? *static_cast<const uint8_t *>(Src)
                            : *static_cast<const int8_t *>(Src);
             std::memcpy(P.bufferData(Out), &V, sizeof(V));
           });
  return Out;
}

/// Elements of a scale or bias of shape S that broadcasts into Y of shape
/// YS along channel axis Axis only: 1 (one value) or YS[Axis]; 0 when S has
/// another form.
int64_t channelCount(const Shape &S, const Shape &YS, size_t Axis) {
  if (S.numel() == 1 && S.rank() <= YS.rank())
    return 1;
  if (S.rank() > YS.rank())
    return 0;
  size_t Off = YS.rank() - S.rank();
  for (size_t I = 0; I < S.rank(); ++I)
    if (S[I] != (I + Off == Axis ? YS[Axis] : 1))
      return 0;
  return YS[Axis];
}

/// The Cast -> Mul(scale) [-> Add(bias)] [-> activation] after an integer
/// product, fused into its primitive.
struct RescaleTail {
  const ir::Node *Cast = nullptr, *Mul = nullptr, *Add = nullptr;
  /// The Mul computing the scale (x_scale * w_scale) that this lowering
  /// computes itself, or null when the scale is already a value.
  const ir::Node *ScaleMul = nullptr;
  const ir::Value *Scale = nullptr, *Bias = nullptr;
  Shape ScaleShape; ///< The scale's (ScaleMul's result's) shape.
  int64_t ScaleCount = 1, BiasCount = 1;
  const ir::Node *ActNode = nullptr;
  Activation Act;
  const ir::Value *Out = nullptr; ///< The last value fused.
};

/// The other operand of binary node B, one of whose operands is V; null
/// when both are V.
const ir::Value *otherOperand(const ir::Node &B, const ir::Value *V) {
  if (B.input(0) == B.input(1))
    return nullptr;
  return B.input(0) == V ? B.input(1) : B.input(0);
}

/// True when V is an f32 value whose slot is defined already.
bool definedF32(LowerContext &C, const ir::Value *V) {
  return V && C.SlotOf.count(V) && C.isF32(V);
}

/// The fusable tail after integer product N of result shape YS, channel
/// axis Axis; nullopt when there is none (N writes its i32 result).
std::optional<RescaleTail> rescaleTailOf(LowerContext &C, const ir::Node &N,
                                         const Shape &YS, size_t Axis) {
  RescaleTail T;
  T.Cast = C.soleConsumer(N.output(0));
  if (!T.Cast || T.Cast->op() != ir::OpKind::Cast ||
      T.Cast->attrInt("to") != 1) // ONNX FLOAT
    return std::nullopt;
  const ir::Value *F = T.Cast->output(0);
  T.Mul = C.soleConsumer(F);
  if (!T.Mul || T.Mul->op() != ir::OpKind::Mul)
    return std::nullopt;
  T.Scale = otherOperand(*T.Mul, F);
  if (!T.Scale)
    return std::nullopt;
  Shape SS;
  if (definedF32(C, T.Scale)) {
    SS = C.shapeOf(T.Scale);
  } else {
    // x_scale * w_scale, not computed yet: one operand one value.
    const ir::Node *P = T.Scale->producer();
    if (!P || P->op() != ir::OpKind::Mul || P->numOutputs() != 1 ||
        !definedF32(C, P->input(0)) || !definedF32(C, P->input(1)))
      return std::nullopt;
    const Shape &A = C.shapeOf(P->input(0)), &B = C.shapeOf(P->input(1));
    if (A == B || (B.numel() == 1 && B.rank() <= A.rank()))
      SS = A;
    else if (A.numel() == 1 && A.rank() <= B.rank())
      SS = B;
    else
      return std::nullopt;
    T.ScaleMul = P;
  }
  T.ScaleShape = SS;
  T.ScaleCount = channelCount(SS, YS, Axis);
  if (T.ScaleCount == 0)
    return std::nullopt;
  T.Out = T.Mul->output(0);
  const ir::Node *U = C.soleConsumer(T.Out);
  if (U && U->op() == ir::OpKind::Add) {
    const ir::Value *B = otherOperand(*U, T.Out);
    int64_t Count =
        definedF32(C, B) ? channelCount(C.shapeOf(B), YS, Axis) : 0;
    if (Count > 0) {
      T.Add = U;
      T.Bias = B;
      T.BiasCount = Count;
      T.Out = U->output(0);
      U = C.soleConsumer(T.Out);
    }
  }
  if (U && U->input(0) == T.Out) {
    Activation A = standaloneActivation(C, *U);
    if (A.Ok) {
      T.Act = A;
      T.ActNode = U;
      T.Out = U->output(0);
    }
  }
  return T;
}

/// The slot of the tail's scale: its own, or a buffer a step fills with
/// x_scale * w_scale (the reference's float product) now.
int scaleSlot(LowerContext &C, const RescaleTail &T) {
  if (!T.ScaleMul)
    return C.B.plainOf(C.slotOf(T.Scale));
  const ir::Node &P = *T.ScaleMul;
  int A = C.B.plainOf(C.slotOf(P.input(0)));
  int B = C.B.plainOf(C.slotOf(P.input(1)));
  int64_t NA = C.slot(A).S.numel(), NB = C.slot(B).S.numel();
  C.PendingTypes[T.Scale] = {DType::F32, T.ScaleShape};
  int Out = C.defineBuffer(T.Scale);
  int64_t Count = T.ScaleShape.numel();
  emitLoop(C, {A, B}, Out, C.describe(P) + " (for " + C.describe(*T.Mul) + ")",
           [A, B, Out, NA, NB, Count](Program &Pr) {
             const auto *PA = static_cast<const float *>(Pr.dataOf(A));
             const auto *PB = static_cast<const float *>(Pr.dataOf(B));
             auto *PO = reinterpret_cast<float *>(Pr.bufferData(Out));
             for (int64_t I = 0; I < Count; ++I)
               PO[I] = PA[NA == 1 ? 0 : I] * PB[NB == 1 ? 0 : I];
           });
  C.Done.insert(&P);
  ++C.program().Stats.FusedNodes;
  return Out;
}

/// The post-op operand dims of a per-channel (or single) value of Count
/// elements for a primitive whose destination has Rank dims and channel
/// dim Axis.
memory::dims channelDims(int64_t Count, size_t Rank, size_t Axis) {
  memory::dims D(Rank, 1);
  D[Axis] = Count;
  return D;
}

/// Appends T's post-ops to Ops and their operands to Args / Reads (the
/// destination has Rank dims, channels at Axis).
void appendTail(LowerContext &C, const RescaleTail &T, size_t Rank,
                size_t Axis, dnnl::post_ops &Ops,
                std::vector<PrimitiveArg> &Args, std::vector<int> &Reads) {
  auto Binary = [&](dnnl::algorithm Alg, int Slot, int64_t Count) {
    memory::desc MD = plainDesc(channelDims(Count, Rank, Axis), DT::f32);
    Args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(Ops.len()) | DNNL_ARG_SRC_1,
                    Slot, MD});
    Reads.push_back(Slot);
    Ops.append_binary(Alg, MD);
  };
  Binary(dnnl::algorithm::binary_mul, scaleSlot(C, T), T.ScaleCount);
  if (T.Add)
    Binary(dnnl::algorithm::binary_add, C.B.plainOf(C.slotOf(T.Bias)),
           T.BiasCount);
  T.Act.appendTo(Ops);
}

/// Marks T's nodes done after the primitive's step (and runs an activation
/// oneDNN cannot do as an own loop over the destination Out).
void finishTail(LowerContext &C, const ir::Node &N, const RescaleTail &T,
                int Out) {
  if (T.Act.needsOwnLoop())
    emitEpilogue(C, Out, T.Act.Own, C.describe(N) + " activation");
  for (const ir::Node *F : {T.Cast, T.Mul, T.Add, T.ActNode})
    if (F) {
      C.Done.insert(F);
      ++C.program().Stats.FusedNodes;
    }
}

/// The primitive attributes: the source zero point (run-time), post-ops, a
/// user scratchpad.
dnnl::primitive_attr integerAttr(bool SrcZp, const dnnl::post_ops &Ops) {
  dnnl::primitive_attr A;
  if (SrcZp)
    A.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (Ops.len() > 0)
    A.set_post_ops(Ops);
  A.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return A;
}

/// ConvInteger N (group 1, 4-d) with a tail of at most a Relu whose
/// weights' float sums pass 2^24: Splits input-channel groups as the groups
/// of two grouped int8 convolutions (the high and the low s8 part of
/// w - zp, the second adding the first's result) writing Splits * M f32
/// channels, each an exact integer below 2^24; then an own loop adds a
/// position's groups in 64-bit integers and computes the reference's
/// float tail: f32(acc) * scale [+ bias] [Relu].
bool lowerSplitConvInteger(LowerContext &C, const ir::Node &N,
                           const RescaleTail &T,
                           const std::shared_ptr<S8Weights> &High,
                           const std::shared_ptr<S8Weights> &Low,
                           int64_t Splits, int Zp) {
  const ir::Value *X = N.input(0);
  DType XT = C.slotOfValue(X).Type;
  const Tensor &Wt = *C.constantOf(N.input(1));
  const Shape XS = C.shapeOf(X);
  const Shape &YS = C.shapeOf(N.output(0));
  int64_t M = Wt.size(0), Cin = Wt.size(1), KH = Wt.size(2), KW = Wt.size(3);
  int64_t Part = Cin / Splits;
  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(
      KC, XS, std::vector<int64_t>{KH, KW});
  auto [Strides, Dil, PadL, PadR] = dnnlWindow(Win);
  memory::dims Wei = {Splits, M, Part, KH, KW};
  // The packed [M, Cin, KH, KW] weights seen as the groups' weights.
  memory::desc WeiView(Wei, DT::s8,
                       memory::dims{Part * KH * KW, Cin * KH * KW, KH * KW,
                                    KW, 1});
  memory::dims Partial = {YS[0], Splits * M, YS[2], YS[3]};
  memory::desc PartialMD(Partial, DT::f32, memory::format_tag::nhwc);
  using ConvPD = dnnl::convolution_forward::primitive_desc;
  auto Make = [&](const memory::desc &SrcMD, bool Sum) {
    dnnl::post_ops Ops;
    if (Sum)
      Ops.append_sum(1.0f);
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        SrcMD, memory::desc(Wei, DT::s8, memory::format_tag::any),
        memory::desc(), PartialMD, Strides, Dil, PadL, PadR);
    return build<dnnl::convolution_forward>(D, integerAttr(Zp >= 0, Ops));
  };
  const ValueSlot &XSlot = C.slotOfValue(X);
  memory::desc SrcMD = XSlot.Blocked
                           ? XSlot.MD
                           : memory::desc(dimsOf(XS), *dnnlType(XT),
                                          memory::format_tag::nhwc);
  auto HighMade = Make(SrcMD, false);
  if (!HighMade || !isVectorized(HighMade->Desc))
    HighMade = Make(memory::desc(dimsOf(XS), *dnnlType(XT),
                                 memory::format_tag::any),
                    false);
  if (!HighMade)
    return false;
  auto LowMade = Make(HighMade->Desc.src_desc(), true);
  if (!LowMade || LowMade->Desc.src_desc() != HighMade->Desc.src_desc() ||
      LowMade->Desc.dst_desc() != PartialMD ||
      HighMade->Desc.dst_desc() != PartialMD)
    return false;
  emitWeightCheck(C, N, High);
  emitWeightCheck(C, N, Low);
  int ScaleSl = scaleSlot(C, T);
  int BiasSl = T.Add ? C.B.plainOf(C.slotOf(T.Bias)) : -1;
  int XSl = C.B.inLayout(C.slotOf(X), HighMade->Desc.src_desc());
  int PartSl = C.B.newBuffer(
      DType::U8, Shape{static_cast<int64_t>(PartialMD.get_size())});
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, XSl,
                                     HighMade->Desc.src_desc()},
                                    {DNNL_ARG_DST, PartSl, PartialMD}};
  std::vector<int> Reads = {XSl};
  if (Zp >= 0) {
    Args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, Zp,
                    plainDesc({1}, DT::s32)});
    Reads.push_back(Zp);
  }
  emitPrimitive(C, N, HighMade->P, HighMade->Desc, Args, Reads, PartSl,
                {{High->Packed, WeiView}});
  C.program().Steps.back()->Desc += " (w - zp: its high s8 part, in " +
                                    std::to_string(Splits) + " groups of " +
                                    std::to_string(Part) + " channels)";
  Reads.push_back(PartSl);
  emitPrimitive(C, N, LowMade->P, LowMade->Desc, Args, Reads, PartSl,
                {{Low->Packed, WeiView}});
  nameImplementation(C, LowMade->Desc);
  C.program().Steps.back()->Desc += " (w - zp: its low s8 part, plus the high)";

  C.PendingTypes[T.Out] = {DType::F32, YS};
  int Out = C.defineBuffer(
      T.Out, memory::desc(dimsOf(YS), DT::f32, memory::format_tag::nhwc));
  int64_t Pixels = YS[0] * YS[2] * YS[3], SC = T.ScaleCount,
          BC = T.BiasCount;
  bool Relu = T.ActNode != nullptr;
  std::vector<int> LoopReads = {PartSl, ScaleSl};
  if (BiasSl >= 0)
    LoopReads.push_back(BiasSl);
  emitLoop(
      C, LoopReads, Out,
      "the " + std::to_string(Splits) + " groups' sums and the rescale of " +
          C.describe(N),
      [=](Program &P) {
        const auto *Acc = static_cast<const float *>(P.dataOf(PartSl));
        const auto *S = static_cast<const float *>(P.dataOf(ScaleSl));
        const auto *B =
            BiasSl >= 0 ? static_cast<const float *>(P.dataOf(BiasSl))
                        : nullptr;
        auto *Y = reinterpret_cast<float *>(P.bufferData(Out));
        parallelFor(0, Pixels, 64, [&](int64_t Begin, int64_t End) {
          for (int64_t Px = Begin; Px < End; ++Px) {
            const float *A = Acc + Px * Splits * M;
            float *YP = Y + Px * M;
            for (int64_t Ch = 0; Ch < M; ++Ch) {
              int64_t Sum = 0;
              for (int64_t G = 0; G < Splits; ++G)
                Sum += static_cast<int64_t>(A[G * M + Ch]);
              // The Cast (an i32 to f32, rounding to nearest), the Mul, the
              // Add and the Relu, as the reference's kernels compute them.
              float V = static_cast<float>(static_cast<int32_t>(Sum));
              V = V * S[SC == 1 ? 0 : Ch];
              if (B)
                V = V + B[BC == 1 ? 0 : Ch];
              if (Relu)
                V = V < 0 ? 0.0f : V;
              YP[Ch] = V;
            }
          }
        });
      });
  for (const ir::Node *F : {T.Cast, T.Mul, T.Add, T.ActNode})
    if (F) {
      C.Done.insert(F);
      ++C.program().Stats.FusedNodes;
    }
  return true;
}

} // namespace

bool lowerConvInteger(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  DType XT = C.slotOfValue(X).Type;
  const Tensor *Wt = C.constantOf(N.input(1));
  if ((XT != DType::U8 && XT != DType::I8) || !Wt)
    return false;
  const Shape XS = C.shapeOf(X);
  if (XS.rank() != 4 || Wt->rank() != 4 || XS.numel() == 0)
    return false;
  int64_t M = Wt->size(0), Group = N.attrInt("group");
  if (Group <= 0 || M % Group != 0 || XS[1] != Wt->size(1) * Group)
    return false;
  std::vector<int64_t> Kernel(Wt->shape().begin() + 2, Wt->shape().end());
  std::vector<int64_t> KS = N.attrInts("kernel_shape");
  if (!KS.empty() && KS != Kernel)
    return false;
  const Shape &YS = C.shapeOf(N.output(0));
  std::optional<RescaleTail> Tail = rescaleTailOf(C, N, YS, 1);
  std::shared_ptr<S8Weights> Ws =
      s8WeightsOf(C, N, 0, Tail ? MaxI32 : ExactI32);
  // u8 weights far from their zero point: two primitives, one per s8 part
  // of w - zp, the second adding the first's float result (a sum post-op)
  // before the tail. Exact where each float accumulator and their sum are
  // below 2^24 whatever the activations.
  // Where a whole channel's sum may pass 2^24, the input channels split
  // into Splits groups whose sums do not, each group a group of one
  // grouped convolution writing all outputs, and an own loop adds the
  // groups' results exactly and computes the tail (lowerSplitTail).
  std::shared_ptr<S8Weights> WLow;
  int64_t Splits = 1, Cin = Wt->size(1);
  if (!Ws && Tail) {
    bool LoopTail = !Tail->ActNode || Tail->ActNode->op() == ir::OpKind::Relu;
    for (int64_t G = 1; G <= std::min<int64_t>(Cin, 64) && !WLow; ++G) {
      if (Cin % G != 0 || (G > 1 && (Group != 1 || !LoopTail)))
        continue;
      Ws = s8WeightsOf(C, N, 0, ExactI32, S8Part::High, G);
      WLow = Ws ? s8WeightsOf(C, N, 0, ExactI32, S8Part::Low, G) : nullptr;
      Splits = G;
    }
    if (!WLow)
      return false;
  }
  if (!Ws)
    return false;
  std::optional<int> Zp = srcZeroPoint(C, N, 2, XT);
  if (!Zp)
    return false;
  if (Splits > 1)
    return lowerSplitConvInteger(C, N, *Tail, Ws, WLow, Splits, *Zp);

  KernelContext KC{N, {}, {}, {}, {}};
  reference::Window Win = reference::forwardWindow(KC, XS, Kernel);
  memory::dims Src = dimsOf(XS), Dst = dimsOf(YS), Wei = dimsOf(Wt->shape());
  memory::dims WeiPlain = Wei;
  if (Group > 1) {
    Wei[0] /= Group;
    Wei.insert(Wei.begin(), Group);
    WeiPlain = Wei;
  }
  auto [Strides, Dil, PadL, PadR] = dnnlWindow(Win);

  std::vector<PrimitiveArg> TailArgs;
  std::vector<int> TailReads;
  dnnl::post_ops Ops;
  if (WLow)
    Ops.append_sum(1.0f); // The high part's result, then the tail.
  if (Tail)
    appendTail(C, *Tail, 4, 1, Ops, TailArgs, TailReads);
  dnnl::primitive_attr Attr = integerAttr(*Zp >= 0, Ops);
  DT YDT = Tail ? DT::f32 : DT::s32;
  using ConvPD = dnnl::convolution_forward::primitive_desc;
  auto Make = [&](const memory::desc &SrcMD, const memory::desc &DstMD,
                  const dnnl::primitive_attr &A) {
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        SrcMD, memory::desc(Wei, DT::s8, memory::format_tag::any),
        memory::desc(), DstMD, Strides, Dil, PadL, PadR);
    return build<dnnl::convolution_forward>(D, A);
  };
  memory::desc AnyDst(Dst, YDT, memory::format_tag::any);
  // The producer's layout when a vectorized kernel takes it (a
  // DynamicQuantizeLinear in the previous convolution's layout: no
  // reorder), else the one the primitive prefers.
  const ValueSlot &XSlot = C.slotOfValue(X);
  std::optional<Built<ConvPD, dnnl::convolution_forward>> Made;
  if (XSlot.Blocked) {
    try {
      Made = Make(XSlot.MD, AnyDst, Attr);
      if (Made && !isVectorized(Made->Desc))
        Made.reset();
    } catch (const dnnl::error &) {
    }
  }
  if (!Made)
    Made = Make(memory::desc(Src, *dnnlType(XT), memory::format_tag::any),
                AnyDst, Attr);
  if (!Made)
    return false;
  const ConvPD &P = Made->Desc;
  // The high part's primitive: the same layouts, no post-ops.
  std::optional<Built<ConvPD, dnnl::convolution_forward>> MadeHigh;
  if (WLow) {
    MadeHigh = Make(P.src_desc(), P.dst_desc(),
                    integerAttr(*Zp >= 0, dnnl::post_ops()));
    if (!MadeHigh || MadeHigh->Desc.src_desc() != P.src_desc() ||
        MadeHigh->Desc.dst_desc() != P.dst_desc())
      return false;
  }
  emitWeightCheck(C, N, Ws);
  if (WLow)
    emitWeightCheck(C, N, WLow);

  int XSl = C.B.inLayout(C.slotOf(X), P.src_desc());
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, XSl, P.src_desc()}};
  std::vector<int> Reads = {XSl};
  if (*Zp >= 0) {
    Args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, *Zp,
                    plainDesc({1}, DT::s32)});
    Reads.push_back(*Zp);
  }
  // The destination: f32 in the primitive's layout, or the i32 result,
  // which slots hold plain: through a scratch buffer and a reorder when
  // the primitive writes another layout.
  int Out, Written;
  memory::desc DstMD = P.dst_desc();
  memory::desc PlainI32 = plainDesc(Dst, DT::s32);
  if (Tail) {
    C.PendingTypes[Tail->Out] = {DType::F32, YS};
    Out = Written = C.defineBuffer(Tail->Out, DstMD);
  } else {
    Out = C.defineBuffer(N.output(0));
    Written = DstMD == PlainI32
                  ? Out
                  : C.B.newBuffer(DType::U8,
                                  Shape{static_cast<int64_t>(DstMD.get_size())});
  }
  Args.push_back({DNNL_ARG_DST, Written, DstMD});
  if (WLow) {
    emitPrimitive(C, N, MadeHigh->P, MadeHigh->Desc, Args, Reads, Written,
                  {{Ws->Packed, plainDesc(WeiPlain, DT::s8)}});
    C.program().Steps.back()->Desc += " (w - zp: its high s8 part)";
    Reads.push_back(Written); // The sum post-op reads it.
  }
  Args.insert(Args.end(), TailArgs.begin(), TailArgs.end());
  Reads.insert(Reads.end(), TailReads.begin(), TailReads.end());
  emitPrimitive(C, N, Made->P, P, std::move(Args), Reads, Written,
                {{(WLow ? WLow : Ws)->Packed, plainDesc(WeiPlain, DT::s8)}});
  nameImplementation(C, P);
  if (WLow)
    C.program().Steps.back()->Desc += " (w - zp: its low s8 part, plus the high)";
  if (Written != Out) {
    C.B.reads(Written);
    C.B.writes(Out);
    C.B.emit(makeReorderStep(Written, DstMD, Out, PlainI32));
    C.program().Steps.back()->Desc =
        "reorder of %" + N.output(0)->name() + " to the plain layout";
    ++C.program().Stats.Reorders;
  }
  if (Tail)
    finishTail(C, N, *Tail, Out);
  return true;
}

bool lowerMatMulInteger(LowerContext &C, const ir::Node &N) {
  const ir::Value *A = N.input(0);
  DType AT = C.slotOfValue(A).Type;
  const Tensor *Bt = C.constantOf(N.input(1));
  if ((AT != DType::U8 && AT != DType::I8) || !Bt || Bt->rank() != 2)
    return false; // Run-time or batched B: the reference kernel.
  const Shape AS = C.shapeOf(A);
  const Shape &YS = C.shapeOf(N.output(0));
  if (AS.rank() < 2 || AS.numel() == 0 || Bt->numel() == 0)
    return false;
  int64_t K = AS[AS.rank() - 1], NOut = Bt->size(1);
  if (Bt->size(0) != K)
    return false;
  std::optional<RescaleTail> Tail = rescaleTailOf(C, N, YS, YS.rank() - 1);
  std::shared_ptr<S8Weights> Ws =
      s8WeightsOf(C, N, 1, Tail ? MaxI32 : ExactI32);
  if (!Ws)
    return false;
  std::optional<int> Zp = srcZeroPoint(C, N, 2, AT);
  if (!Zp)
    return false;

  int64_t Rows = AS.numel() / K;
  memory::dims AD = {Rows, K}, BD = {K, NOut}, YD = {Rows, NOut};
  std::vector<PrimitiveArg> Args;
  std::vector<int> Reads;
  dnnl::post_ops Ops;
  if (Tail)
    appendTail(C, *Tail, 2, 1, Ops, Args, Reads);
  DT YDT = Tail ? DT::f32 : DT::s32;
  memory::desc SrcMD = plainDesc(AD, *dnnlType(AT)), DstMD = plainDesc(YD, YDT);
  dnnl::matmul::desc D(SrcMD, memory::desc(BD, DT::s8, memory::format_tag::any),
                       DstMD);
  auto Mm = build<dnnl::matmul>(D, integerAttr(*Zp >= 0, Ops));
  if (!Mm)
    return false;
  const dnnl::matmul::primitive_desc &PD = Mm->Desc;
  emitWeightCheck(C, N, Ws);

  int In = C.B.plainOf(C.slotOf(A));
  Reads.push_back(In);
  Args.push_back({DNNL_ARG_SRC, In, SrcMD});
  if (*Zp >= 0) {
    Args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, *Zp,
                    plainDesc({1}, DT::s32)});
    Reads.push_back(*Zp);
  }
  int Out;
  if (Tail) {
    C.PendingTypes[Tail->Out] = {DType::F32, YS};
    Out = C.defineBuffer(Tail->Out);
  } else {
    Out = C.defineBuffer(N.output(0));
  }
  Args.push_back({DNNL_ARG_DST, Out, DstMD});
  emitPrimitive(C, N, Mm->P, PD, std::move(Args), Reads, Out,
                {{Ws->Packed, plainDesc(BD, DT::s8)}});
  nameImplementation(C, PD);
  if (Tail)
    finishTail(C, N, *Tail, Out);
  return true;
}

} // namespace nng::backends::cpu
