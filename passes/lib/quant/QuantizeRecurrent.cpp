//===- QuantizeRecurrent.cpp - Dynamic quantization of LSTM and GRU -------===//
//
// LSTM (layout 0, constant f32 W and R, contrib ops allowed) becomes, as
// ONNX Runtime's quantize_dynamic writes it:
//
//   Y, Y_h, Y_c = com.microsoft.DynamicQuantizeLSTM(X, W_q, R_q, B,
//       sequence_lens, initial_h, initial_c, P, W_scale, W_zero_point,
//       R_scale, R_zero_point)
//
// with W_q [dirs, input, 4*hidden] and R_q [dirs, hidden, 4*hidden] s8
// (transposed from ONNX's [dirs, 4*hidden, K]), symmetric in [-127, 127],
// scales per output column ([dirs, 4*hidden]) or per direction ([dirs]:
// --per-tensor, ORT's per-tensor choice for a stacked weight) and zero
// points 0 of the same shape. hidden_size is set (ORT's kernel needs it).
//
// GRU, and LSTM without contrib ops or with layout 1, keep their float op:
// W and R become s8 initializers of the same shape read through
// DequantizeLinear (per output row: axis 1 for one direction; for two, the
// weight is stored [2 * rows, K] with axis 0 and reshaped back), so the
// file holds int8 weights but the recurrence computes in float.
//
//===----------------------------------------------------------------------===//

#include "QuantizeRecurrent.h"
#include "QuantMath.h"

#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

namespace nng::passes::quant {

namespace {

using ir::Node;
using ir::OpKind;
using ir::Value;

/// W or R [dirs, Rows, K] quantized direction by direction: s8 values of
/// W's shape and Rows scales per direction (per channel) or one.
struct DirectionWeights {
  rt::Tensor Values;
  std::vector<float> Scales; ///< dirs * Rows entries, or dirs.
};

DirectionWeights quantizePerDirection(const rt::Tensor &W, bool PerChannel) {
  const rt::Tensor C = W.isContiguous() ? W : W.contiguous();
  int64_t D = C.size(0), Rows = C.size(1), K = C.size(2);
  DirectionWeights Out;
  Out.Values = rt::Tensor::empty(C.shape(), DType::I8);
  for (int64_t Dd = 0; Dd < D; ++Dd) {
    rt::Tensor Slice = C.slice(0, Dd, Dd + 1).reshape(Shape{Rows, K});
    QuantizedWeights Q = quantizeWeights(Slice, 0, PerChannel);
    std::copy_n(Q.Values.data<int8_t>(), Rows * K,
                Out.Values.data<int8_t>() + Dd * Rows * K);
    Out.Scales.insert(Out.Scales.end(), Q.Scales.begin(), Q.Scales.end());
  }
  return Out;
}

bool isConstantF32Rank3(const Value *V) {
  const rt::Tensor *T = V ? ir::constantValue(V) : nullptr;
  return T && T->dtype() == DType::F32 && T->rank() == 3;
}

/// Whether N becomes DynamicQuantizeLSTM (else weight-only).
bool usesContribLstm(const Node &N, const QuantizeOptions &O) {
  return N.op() == OpKind::LSTM && O.ContribOps && N.attrInt("layout") == 0;
}

void nameLike(Node &New, const Node &Old, const std::string &Suffix) {
  New.setScope(Old.scope());
  if (!Old.name().empty())
    New.setName(Old.name() + Suffix);
}

/// ONNX's W or R input I of N replaced by DequantizeLinear of s8 values.
void weightOnly(ir::Graph &G, Node &N, size_t I, const QuantizeOptions &O,
                QuantizeReport &Rep) {
  Value *WV = N.input(I);
  const rt::Tensor &W = *ir::constantValue(WV);
  int64_t D = W.size(0), Rows = W.size(1), K = W.size(2);
  DirectionWeights Q = quantizePerDirection(W, O.PerChannel);
  // One DequantizeLinear axis: rows of one direction (axis 1), directions
  // (axis 0, per tensor), or rows of both directions flattened (axis 0).
  bool Flatten = O.PerChannel && D > 1;
  bool Vector = O.PerChannel || D > 1;
  int64_t Axis = O.PerChannel && D == 1 ? 1 : 0;
  rt::Tensor Values = Flatten ? Q.Values.reshape(Shape{D * Rows, K}) : Q.Values;
  std::string Base = WV->name();
  Value *Wq = G.addInitializer(G.uniqueName(Base + "_quantized"), Values);
  Value *Ws = G.addInitializer(G.uniqueName(Base + "_scale"),
                               scaleTensor(Q.Scales, Vector));
  Value *Wz = G.addInitializer(
      G.uniqueName(Base + "_zero_point"),
      zeroPointTensor(0, DType::I8, static_cast<int64_t>(Q.Scales.size()),
                      Vector));
  ir::AttrMap A;
  if (Vector)
    A.set("axis", ir::Attribute(Axis));
  const char *Role = I == 1 ? "/dequantize_W" : "/dequantize_R";
  Node *Dq = G.addNode(OpKind::DequantizeLinear, {Wq, Ws, Wz},
                       {G.uniqueName(Base + "_dequantized")}, std::move(A), &N);
  nameLike(*Dq, N, Role);
  Value *Result = Dq->output(0);
  if (Flatten) {
    Value *ShapeV = G.addInitializer(
        G.uniqueName(Base + "_shape"),
        rt::Tensor::fromVector<int64_t>({D, Rows, K}, Shape{3}));
    Node *Re = G.addNode(OpKind::Reshape, {Result, ShapeV},
                         {G.uniqueName(Base + "_reshaped")}, {}, &N);
    nameLike(*Re, N, I == 1 ? "/reshape_W" : "/reshape_R");
    Result = Re->output(0);
  }
  N.setInput(I, Result);
  Rep.WeightBytesBefore += W.numel() * 4;
  Rep.WeightBytesAfter += W.numel();
}

/// N (an LSTM) replaced by DynamicQuantizeLSTM.
void contribLstm(ir::Graph &G, Node &N, const QuantizeOptions &O,
                 QuantizeReport &Rep) {
  std::vector<Value *> Ins(12, nullptr);
  for (size_t I = 0; I < N.numInputs() && I < 8; ++I)
    Ins[I] = N.input(I);
  int64_t Hidden = 0;
  for (size_t I : {size_t(1), size_t(2)}) {
    Value *WV = N.input(I);
    const rt::Tensor &W = *ir::constantValue(WV);
    int64_t D = W.size(0), Rows = W.size(1);
    Hidden = Rows / 4;
    DirectionWeights Q = quantizePerDirection(W, O.PerChannel);
    // ORT's layout: [dirs, K, 4 * hidden].
    rt::Tensor T = Q.Values.permute({0, 2, 1}).contiguous();
    Shape ParamShape = O.PerChannel ? Shape{D, Rows} : Shape{D};
    rt::Tensor Scales = rt::Tensor::fromVector<float>(Q.Scales, ParamShape);
    rt::Tensor Zeros = zeroPointTensor(
        0, DType::I8, static_cast<int64_t>(Q.Scales.size()), true);
    std::string Base = WV->name();
    Ins[I] = G.addInitializer(G.uniqueName(Base + "_quantized"), T);
    Ins[I == 1 ? 8 : 10] =
        G.addInitializer(G.uniqueName(Base + "_scale"), Scales);
    Ins[I == 1 ? 9 : 11] = G.addInitializer(G.uniqueName(Base + "_zero_point"),
                                            Zeros.reshape(ParamShape));
    Rep.WeightBytesBefore += W.numel() * 4;
    Rep.WeightBytesAfter += W.numel();
  }
  ir::AttrMap Attrs = N.attrs();
  Attrs.erase("layout"); // 0 here; DynamicQuantizeLSTM has none.
  if (!Attrs.has("hidden_size"))
    Attrs.set("hidden_size", ir::Attribute(Hidden));
  std::vector<std::string> Names;
  for (const Value *Out : N.outputs())
    Names.push_back(G.uniqueName(Out->name() + "_quantized"));
  Node *Q =
      G.addNode(OpKind::DynamicQuantizeLSTM, Ins, Names, std::move(Attrs), &N);
  Q->setScope(N.scope());
  if (!N.name().empty())
    Q->setName(N.name() + "_quant"); // As ORT names it.
  std::vector<std::string> Old;
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    Old.push_back(N.output(I)->name());
    Q->output(I)->setType(N.output(I)->type());
    G.replaceAllUsesWith(N.output(I), Q->output(I));
  }
  G.eraseNode(&N);
  for (size_t I = 0; I < Old.size(); ++I)
    G.rename(Q->output(I), Old[I]);
}

} // namespace

bool isQuantizableRecurrent(const Node &N) {
  return N.op() == OpKind::LSTM || N.op() == OpKind::GRU;
}

std::string rejectRecurrent(const Node &N) {
  const Value *X = N.input(0);
  if (X->type().dtype() != DType::F32 || ir::constantValue(X))
    return "input X is not an f32 activation";
  if (!isConstantF32Rank3(N.input(1)))
    return "weight W is not a constant f32 tensor (dynamic quantization "
           "quantizes constant weights only)";
  if (!isConstantF32Rank3(N.input(2)))
    return "recurrence weight R is not a constant f32 tensor (dynamic "
           "quantization quantizes constant weights only)";
  return "";
}

std::string quantizeRecurrent(ir::Graph &G, Node &N, const QuantizeOptions &O,
                              QuantizeReport &Rep) {
  if (usesContribLstm(N, O)) {
    contribLstm(G, N, O, Rep);
    return "";
  }
  weightOnly(G, N, 1, O, Rep);
  weightOnly(G, N, 2, O, Rep);
  std::string Why = N.op() == OpKind::GRU ? "ONNX Runtime has no quantized GRU"
                    : !O.ContribOps       ? "contrib ops are off"
                                    : "layout 1 has no DynamicQuantizeLSTM";
  return "weight-only: s8 W and R through DequantizeLinear, the " +
         std::string(N.schema().Name) + " computes in float (" + Why + ")";
}

} // namespace nng::passes::quant
