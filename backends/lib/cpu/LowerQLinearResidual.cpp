//===- LowerQLinearResidual.cpp - QDQ residual joins in QLinearConv ------===//
//
// A QDQ-quantized ResNet block ends in a residual join that stays float
// after fuse-qdq:
//
//   y_q = QLinearConv(...)                 (scale s_y, zero point z_y)
//   a   = DequantizeLinear(y_q, s_y, z_y)
//   b   = DequantizeLinear(r_q, s_r, z_r)  (r_q: the block's input)
//   s   = Add(a, b)                        (either order)
//   t   = Relu(s)                          (optional)
//   o_q = QuantizeLinear(t, s_o, z_o)
//
// which would be four own loops over the tensor. Here the whole join becomes
// post-ops of the convolution's oneDNN int8 primitive, whose destination o_q
// starts as r_q (r_q's own bytes when r_q dies at the join in the
// destination's layout, else a copy): after the output scales x_s * w_s[c]
// / s_y (LowerQLinear.cpp),
//
//   eltwise_round         round(v), half to even (the reference's y_q - z_y
//                         before saturation)
//   eltwise_clip          to [lo - z_y, hi - z_y]: y_q's saturation, so the
//                         value is now y_q - z_y, an exact integer
//   eltwise_linear(s_y)   fl((y_q - z_y) * s_y) = a, as the reference
//   sum(s_r, z_r)         + (r_q - z_r) * s_r
//   eltwise_relu          (when the join has one)
//   binary_div(s_o)       a scalar operand: fl(t / s_o), as the reference
//   eltwise_round         (with z_o != 0; oneDNN adds its destination zero
//                         point z_o after the post-ops, then saturates)
//
// Every step is the reference's float operation but the sum: oneDNN's jit
// kernels compute it as one fused multiply-add, fl(a + (r_q - z_r) * s_r),
// where the reference rounds the product first, fl(a + fl((r_q - z_r) *
// s_r)). The two differ by at most an ulp of s, so o_q can differ by one
// step only where t / s_o lies within an ulp or two of a rounding boundary
// (k + 1/2): in practice where the exact real result is a tie. With
// arbitrary (calibrated) scales that is rare: measured 1 element in 1.7
// million over the random joins of CpuInt8ResidualTest.cpp (a QDQ
// ResNet-50 from nngraph-quantize gives the unfused program's logits, batch
// 1 and 8); decimal scales (0.03, 0.021, 0.04) make exact ties common: 3 to
// 14 elements in 10^4 then differ by one step. With a sum scale of 1, or
// products exact in float (power-of-two scales), the sum is exact too. Two
// details shape the chain: oneDNN 2.6's brgemm convolutions compute a
// second eltwise_linear of another alpha in one chain wrongly (measured),
// so the division is a binary post-op (which is also exact, where a
// multiplication by 1 / s_o is not); and a oneDNN implementation that is
// not vectorized makes the join decline (the reference convolution with
// post-ops is slower than the loops).
//
// The residual's DequantizeLinear often comes before the convolution in the
// graph (a block's input is dequantized where it is made): planQLinearJoins
// defers it until the convolution is lowered, and the walk lowers it right
// after when the join did not fuse. Declined (the unfused lowering):
// non-constant or per-axis parameters, a zero point of the DequantizeLinear
// of y_q other than the convolution's, r_q of another dtype than o_q or of
// another shape than y_q (no broadcasting), values of the join read
// elsewhere, oneDNN rejecting the post-ops.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include <cmath>

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

/// The only node reading V (one use, not a graph output), or null.
const ir::Node *onlyReader(const LowerContext &C, const ir::Value *V) {
  if (V->uses().size() != 1 || C.isOutput(V))
    return nullptr;
  return V->uses()[0].User;
}

/// The per-tensor constant scale and zero point of the QuantizeLinear or
/// DequantizeLinear node N whose int8 side has dtype T (an absent zero
/// point is 0); nullopt unless the scale is one positive finite f32 and the
/// zero point one value of dtype T.
std::optional<std::pair<float, int32_t>>
perTensorParams(const LowerContext &C, const ir::Node &N, DType T) {
  const Tensor *S = C.constantOf(N.input(1));
  if (!S || S->dtype() != DType::F32 || S->numel() != 1 || S->rank() > 1)
    return std::nullopt;
  double Scale = S->getFlat(0);
  if (!(Scale > 0) || !std::isfinite(Scale))
    return std::nullopt;
  int32_t Zp = 0;
  if (N.hasInput(2)) {
    const Tensor *Z = C.constantOf(N.input(2));
    if (!Z || Z->dtype() != T || Z->numel() != 1 || Z->rank() > 1)
      return std::nullopt;
    Zp = static_cast<int32_t>(Z->getFlatInt(0));
  } else if (N.op() == ir::OpKind::QuantizeLinear && T != DType::U8) {
    return std::nullopt; // Without a zero point the result is u8.
  }
  return std::pair{static_cast<float>(Scale), Zp};
}

/// The range of the int8 dtype T.
std::pair<int32_t, int32_t> rangeOf(DType T) {
  return T == DType::U8 ? std::pair{0, 255} : std::pair{-128, 127};
}

/// The position of the division in the chain appendTailPostOps makes.
int divisionIndex(const QLinearTail &T) { return T.J.Relu ? 5 : 4; }

} // namespace

void planQLinearJoins(LowerContext &C) {
  using ir::OpKind;
  for (const auto &NP : C.G.nodes()) {
    const ir::Node &Add = *NP;
    if (Add.op() != OpKind::Add || Add.numInputs() != 2 || !Add.hasInput(0) ||
        !Add.hasInput(1) || Add.input(0) == Add.input(1))
      continue;
    // Both operands dequantized for this Add alone.
    const ir::Node *Dq[2];
    bool Ok = true;
    for (int I = 0; I < 2; ++I) {
      const ir::Value *V = Add.input(I);
      Dq[I] = V->producer();
      Ok = Ok && Dq[I] && Dq[I]->op() == OpKind::DequantizeLinear &&
           onlyReader(C, V) == &Add;
    }
    if (!Ok)
      continue;
    // Then an optional Relu and the QuantizeLinear, each the sole reader.
    const ir::Value *S = Add.output(0);
    const ir::Node *Relu = nullptr, *Q = onlyReader(C, S);
    if (Q && Q->op() == OpKind::Relu) {
      Relu = Q;
      S = Relu->output(0);
      Q = onlyReader(C, S);
    }
    if (!Q || Q->op() != OpKind::QuantizeLinear || Q->input(0) != S)
      continue;
    // The convolution: of the operands computed by a QLinearConv for this
    // join alone, the later one whose other operand exists by then.
    const ir::Node *Best = nullptr;
    QLinearJoin J;
    for (int I = 0; I < 2; ++I) {
      const ir::Value *Y = Dq[I]->input(0);
      const ir::Node *Conv = Y->producer();
      if (!Conv || Conv->op() != OpKind::QLinearConv ||
          onlyReader(C, Y) != Dq[I])
        continue;
      const ir::Node *RP = Dq[1 - I]->input(0)->producer();
      if ((RP && C.Order.at(RP) > C.Order.at(Conv)) ||
          (Best && C.Order.at(Best) > C.Order.at(Conv)))
        continue;
      Best = Conv;
      J = QLinearJoin{Dq[I], Dq[1 - I], &Add, Relu, Q};
    }
    if (!Best)
      continue;
    C.Joins[Best] = J;
    if (C.Order.at(J.DqR) < C.Order.at(Best))
      C.Deferred[J.DqR] = Best;
  }
}

std::optional<QLinearTail> qlinearTailOf(LowerContext &C, const ir::Node &Conv,
                                         DType YType, int32_t ZpY,
                                         const Shape &YS) {
  auto It = C.Joins.find(&Conv);
  if (It == C.Joins.end())
    return std::nullopt;
  QLinearTail T;
  T.J = It->second;
  for (const ir::Node *F : {T.J.DqY, T.J.DqR, T.J.Add, T.J.Relu, T.J.Q})
    if (F && C.Done.count(F))
      return std::nullopt;
  T.Residual = T.J.DqR->input(0);
  T.Out = T.J.Q->output(0);
  if (!C.SlotOf.count(T.Residual) || C.shapeOf(T.Residual) != YS)
    return std::nullopt;
  DType RType = C.slotOfValue(T.Residual).Type;
  T.OutType = T.J.Q->hasInput(2) && C.constantOf(T.J.Q->input(2))
                  ? C.constantOf(T.J.Q->input(2))->dtype()
                  : DType::U8;
  // The sum reads the destination in its own dtype.
  if ((RType != DType::U8 && RType != DType::I8) || RType != T.OutType)
    return std::nullopt;
  auto PY = perTensorParams(C, *T.J.DqY, YType);
  auto PR = perTensorParams(C, *T.J.DqR, RType);
  auto PO = perTensorParams(C, *T.J.Q, T.OutType);
  if (!PY || !PR || !PO || PY->second != ZpY)
    return std::nullopt;
  std::tie(T.ScaleY, T.ZpY) = *PY;
  std::tie(T.ScaleR, T.ZpR) = *PR;
  std::tie(T.ScaleO, T.ZpO) = *PO;
  std::tie(T.LoY, T.HiY) = rangeOf(YType);
  return T;
}

void appendTailPostOps(const QLinearTail &T, dnnl::post_ops &Ops) {
  using A = dnnl::algorithm;
  Ops.append_eltwise(1.0f, A::eltwise_round, 0.0f, 0.0f);
  Ops.append_eltwise(1.0f, A::eltwise_clip, static_cast<float>(T.LoY - T.ZpY),
                     static_cast<float>(T.HiY - T.ZpY));
  Ops.append_eltwise(1.0f, A::eltwise_linear, T.ScaleY, 0.0f);
  if (T.ZpR != 0)
    Ops.append_sum(T.ScaleR, T.ZpR);
  else
    Ops.append_sum(T.ScaleR);
  if (T.J.Relu)
    Ops.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f);
  Ops.append_binary(A::binary_div, plainDesc({1, 1, 1, 1}));
  if (T.ZpO != 0)
    Ops.append_eltwise(1.0f, A::eltwise_round, 0.0f, 0.0f);
}

int defineTailDestination(LowerContext &C, const ir::Node &Conv,
                          const QLinearTail &T, const memory::desc &Dst,
                          std::vector<PrimitiveArg> &Args) {
  int R = C.slotOf(T.Residual);
  const ValueSlot &RS = C.slot(R);
  memory::desc RMD = C.program().layoutOf(R);
  int Out;
  if (RS.Kind == SlotKind::Buffer && RMD == Dst &&
      C.diesAt(T.Residual, Conv, T.J.DqR)) {
    // o_q takes over r_q's bytes.
    ValueSlot Same = RS;
    Same.Name = T.Out->name();
    Same.PlainTwin = -1;
    C.program().Slots.push_back(Same);
    Out = static_cast<int>(C.program().Slots.size()) - 1;
    C.SlotOf[T.Out] = Out;
  } else {
    C.PendingTypes[T.Out] = {T.OutType, RS.S};
    Out = C.defineBuffer(T.Out, Dst);
    C.B.reads(R);
    C.B.writes(Out);
    C.B.emit(makeReorderStep(R, RMD, Out, Dst));
    C.program().Steps.back()->Desc =
        "copy of %" + RS.Name + " as the start of " + Conv.describe();
    ++C.program().Stats.DnnlSteps;
  }
  int S =
      C.B.newConstant(Tensor::fromVector<float>({T.ScaleO}, Shape{1, 1, 1, 1}),
                      T.Out->name() + ".scale");
  Args.push_back(
      {DNNL_ARG_ATTR_MULTIPLE_POST_OP(divisionIndex(T)) | DNNL_ARG_SRC_1, S,
       plainDesc({1, 1, 1, 1})});
  return Out;
}

void finishTail(LowerContext &C, const QLinearTail &T) {
  std::string Desc = " + residual join with %" + T.Residual->name();
  for (const ir::Node *F : {T.J.DqY, T.J.DqR, T.J.Add, T.J.Relu, T.J.Q})
    if (F) {
      C.Done.insert(F);
      ++C.program().Stats.FusedNodes;
    }
  Desc += T.J.Relu ? ", Relu" : "";
  Desc += " -> %" + T.Out->name();
  C.program().Steps.back()->Desc += Desc;
}

} // namespace nng::backends::cpu
