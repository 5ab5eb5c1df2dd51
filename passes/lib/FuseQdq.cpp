//===- FuseQdq.cpp - fuse-qdq: Q/DQ around Conv, MatMul -> QLinear ops ---===//
//
// The QDQ form a quantizer writes says "this Conv runs on int8" with float
// ops between DequantizeLinear and QuantizeLinear. This pass turns
//
//   QuantizeLinear(Conv(DQ(x_q), DQ(w_q), DQ(b_q)), y_s, y_zp)
//   QuantizeLinear(MatMul(DQ(a_q), DQ(b_q)), y_s, y_zp)
//
// into QLinearConv and QLinearMatMul, which backends run with int8
// kernels (a Gemm, which has no QLinear op, becomes a 1x1 QLinearConv
// between two Reshapes), and QuantizeLinear(MaxPool(DQ(x_q))) (any
// value-preserving op, same scale and zero point on both sides) into
// MaxPool(x_q), exactly. A Relu or Clip (ReLU6) between the product and the Q
// is absorbed when the Q saturates at its bounds anyway (Q is monotone:
// Q(clamp(y, lo, hi)) = clamp(Q(y), Q(lo), Q(hi)), which is Q(y) when Q(lo) <=
// qmin and Q(hi) >= qmax), as it is for ranges calibrated after the activation.
// Requirements, each a counted decline: activations per tensor (a one-element
// scale), Conv weights with a constant all-zero zero point quantized per tensor
// or along axis 0, a bias that is an i32 DequantizeLinear at scale x_s * w_s
// (rel. 1e-6) with zero point 0, and no other reader of the float result.
// The result differs from the QDQ graph's only by rounding order: integer
// accumulation is exact, and the requantization multiplies by
// x_s * w_s / y_s once instead of rounding through float (at most one
// quantization step).
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

#include <cmath>

namespace nng::passes {
namespace {

using namespace fusion;
using ir::Node;
using ir::OpKind;
using ir::Value;

/// The DequantizeLinear producing V, or null.
Node *dequantizer(const Value *V) {
  Node *P = V ? V->producer() : nullptr;
  return P && P->op() == OpKind::DequantizeLinear ? P : nullptr;
}

/// The zero-point operand of a Q/DQ node, or null when absent.
Value *zeroPoint(const Node &N) { return N.hasInput(2) ? N.input(2) : nullptr; }

/// A 0-d zero of T (u8 or i8).
rt::Tensor zeroOf(DType T) {
  return T == DType::I8 ? rt::Tensor::scalar<int8_t>(0)
                        : rt::Tensor::scalar<uint8_t>(0);
}

/// True when V is a constant with one element (a per-tensor parameter).
bool oneElementConstant(const Value *V) {
  const rt::Tensor *T = ir::constantValue(V);
  return T && T->numel() == 1;
}

/// True when V is absent or a constant holding only zeros.
bool zeroConstant(const Value *V) {
  if (!V)
    return true;
  const rt::Tensor *T = ir::constantValue(V);
  if (!T)
    return false;
  for (int64_t I = 0, N = T->numel(); I < N; ++I)
    if (T->getFlat(I) != 0)
      return false;
  return true;
}

/// True when Q(clamp(y, lo, hi)) == Q(y) for every y: Q is monotone, so
/// Q(clamp(y, lo, hi)) = clamp(Q(y), Q(lo), Q(hi)), which is Q(y) when
/// Q(lo) and Q(hi) lie at or beyond the type's ends. A Relu is a Clip with
/// lo = 0 and no upper bound (ReLU6 is Clip(0, 6)).
bool saturationCovers(const Node &Q, const Node &Act) {
  DType T = Q.output(0)->type().dtype();
  if (T != DType::U8 && T != DType::I8)
    return false;
  double QMin = T == DType::U8 ? 0 : -128, QMax = T == DType::U8 ? 255 : 127;
  double S = ir::constantValue(Q.input(1))->getFlat(0);
  double Z = zeroPoint(Q) ? ir::constantValue(zeroPoint(Q))->getFlat(0) : 0;
  auto Quantized = [&](double X) { return std::nearbyint(X / S) + Z; };
  double Lo = 0, Hi = INFINITY;
  if (Act.op() == OpKind::Clip) {
    Lo = -INFINITY;
    for (size_t I = 1; I < 3; ++I) {
      if (!Act.hasInput(I))
        continue;
      if (!oneElementConstant(Act.input(I)))
        return false;
      (I == 1 ? Lo : Hi) = ir::constantValue(Act.input(I))->getFlat(0);
    }
  }
  return Quantized(Lo) <= QMin && Quantized(Hi) >= QMax;
}

/// The i32 bias of Conv P when its DequantizeLinear has zero point 0
/// and scale x_s * w_s; else null.
Value *biasOperand(const Node &P, const Node &DX, const Node &DW) {
  Node *DB = dequantizer(P.input(2));
  if (!DB || DB->input(0)->type().dtype() != DType::I32 ||
      !ir::constantValue(DB->input(0)) || !zeroConstant(zeroPoint(*DB)))
    return nullptr;
  const rt::Tensor *Sb = ir::constantValue(DB->input(1));
  const rt::Tensor *Sx = ir::constantValue(DX.input(1));
  const rt::Tensor *Sw = ir::constantValue(DW.input(1));
  if (!Sb || !Sx || !Sw)
    return nullptr;
  int64_t N = Sb->numel();
  if (Sw->numel() != N && Sw->numel() != 1)
    return nullptr;
  double X = Sx->getFlat(0);
  for (int64_t I = 0; I < N; ++I) {
    double Want = X * Sw->getFlat(Sw->numel() == 1 ? 0 : I);
    if (!(std::fabs(Sb->getFlat(I) - Want) <= 1e-6 * std::fabs(Want)))
      return nullptr;
  }
  return DB->input(0);
}

/// Q(Gemm(DQ(a_q), DQ(B_q), DQ(b_q))) has no QLinear op of its own; it
/// is a 1x1 QLinearConv over [N, K, 1, 1] (B as [M, K, 1, 1], per output
/// channel scales, the i32 bias), reshaped back to [N, M]: the same
/// integer arithmetic and requantization as a QLinearMatMul with bias.
bool gemmAsConv(Node &Q, Node &P, Node *Act, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  if (P.attrInt("transA") != 0 || P.attrFloat("alpha") != 1.f ||
      P.attrFloat("beta") != 1.f)
    return R.decline(Q, "a Gemm with transA, alpha or beta");
  Node *DA = dequantizer(P.input(0)), *DB = dequantizer(P.input(1));
  const rt::Tensor *Bq = DB ? ir::constantValue(DB->input(0)) : nullptr;
  if (!DA || !DB || !Bq || Bq->rank() != 2 ||
      !oneElementConstant(DA->input(1)) ||
      (zeroPoint(*DA) && !oneElementConstant(zeroPoint(*DA))) ||
      !zeroConstant(zeroPoint(*DB)) || Bq->dtype() != DType::I8)
    return R.decline(Q, "Gemm operands are not per-tensor a and constant "
                        "s8 B with zero point 0");
  const ir::TensorType &AT = P.input(0)->type();
  if (!AT.hasRank() || AT.rank() != 2)
    return R.decline(Q, "Gemm input A is not 2-D");
  bool TransB = P.attrInt("transB") != 0;
  int64_t M = Bq->size(TransB ? 0 : 1), K = Bq->size(TransB ? 1 : 0);
  if (!oneElementConstant(DB->input(1)) &&
      DB->attrInt("axis") != (TransB ? 0 : 1))
    return R.decline(Q, "Gemm weights are not quantized per output column");
  Value *Bias = nullptr;
  if (P.hasInput(2) && !(Bias = biasOperand(P, *DA, *DB)))
    return R.decline(Q, "the bias is not i32 at scale x_s * w_s");
  // W[m, k, 0, 0] = B[k, m] (or B[m, k] with transB).
  rt::Tensor W = rt::Tensor::empty(Shape{M, K, 1, 1}, DType::I8);
  const rt::Tensor B = Bq->contiguous();
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < K; ++J)
      W.data<int8_t>()[I * K + J] =
          B.data<int8_t>()[TransB ? I * K + J : J * M + I];
  Value *WV = R.addConstant(DB->input(0)->name() + "_conv", W);
  Value *Wz = R.addConstant(DB->input(0)->name() + "_conv_zero_point",
                            zeroOf(DType::I8));
  Value *In4 =
      R.addConstant(P.output(0)->name() + "_nchw",
                    rt::Tensor::fromVector<int64_t>({0, K, 1, 1}, Shape{4}));
  Value *Out2 =
      R.addConstant(P.output(0)->name() + "_nc",
                    rt::Tensor::fromVector<int64_t>({0, M}, Shape{2}));
  Value *Az = zeroPoint(*DA)
                  ? zeroPoint(*DA)
                  : R.addConstant(DA->input(0)->name() + "_zero_point",
                                  zeroOf(DA->input(0)->type().dtype()));
  Value *Yz = zeroPoint(Q) ? zeroPoint(Q)
                           : R.addConstant(Q.output(0)->name() + "_zero_point",
                                           zeroOf(DType::U8));
  std::string Base = Q.output(0)->name();
  Node *A4 = R.create(OpKind::Reshape, {DA->input(0), In4},
                      {G.uniqueName(Base + ".nchw")}, {}, &Q);
  // A weight scale vector along axis 0 of W: DB's scale as it is.
  std::vector<Value *> In = {A4->output(0), DA->input(1), Az,         WV,
                             DB->input(1),  Wz,           Q.input(1), Yz};
  if (Bias)
    In.push_back(Bias);
  Node *Conv = R.create(OpKind::QLinearConv, In,
                        {G.uniqueName(Base + ".qconv")}, {}, &Q);
  Conv->setName(P.name());
  Conv->setScope(P.scope());
  Node *Y = R.create(OpKind::Reshape, {Conv->output(0), Out2},
                     {G.uniqueName(Base + ".qgemm")}, {}, &Q);
  R.replaceWithNewValue(Q.output(0), Y->output(0));
  R.eraseNode(&Q);
  if (Act)
    R.eraseNode(Act);
  R.eraseNode(&P);
  return true;
}

/// Q(Conv(DQ(x_q), DQ(w_q), DQ(b_q))) or Q(MatMul(DQ(a_q), DQ(b_q))), with a
/// Relu or Clip the Q saturates at in between, as one QLinear op.
bool fuseQdq(Node &Q, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  if (!oneElementConstant(Q.input(1)) ||
      (zeroPoint(Q) && !oneElementConstant(zeroPoint(Q))))
    return R.decline(Q, "output scale or zero point is not one constant");
  Value *Y = Q.input(0);
  Node *P = Y->producer();
  Node *Relu = nullptr; // A Relu or Clip the Q's saturation absorbs.
  if (P && (P->op() == OpKind::Relu || P->op() == OpKind::Clip)) {
    if (!saturationCovers(Q, *P))
      return R.decline(Q, "a Relu or Clip whose bounds the Q does not "
                          "saturate at");
    if (!hasSingleUse(G, Y))
      return R.decline(Q, "the Relu or Clip result has other readers");
    Relu = P;
    Y = P->input(0);
    P = Y->producer();
  }
  if (P && P->op() == OpKind::Gemm && hasSingleUse(G, Y))
    return gemmAsConv(Q, *P, Relu, R);
  if (!P || (P->op() != OpKind::Conv && P->op() != OpKind::MatMul))
    return Relu ? R.decline(Q, "the Relu or Clip does not follow a Conv or "
                               "MatMul")
                : false; // Not this pattern's.
  if (!hasSingleUse(G, Y))
    return R.decline(Q, "the float result has other readers");
  Node *DX = dequantizer(P->input(0)), *DW = dequantizer(P->input(1));
  if (!DX || !DW)
    return R.decline(Q, "an operand is not dequantized");
  if (!oneElementConstant(DX->input(1)) ||
      (zeroPoint(*DX) && !oneElementConstant(zeroPoint(*DX))))
    return R.decline(Q, "the input is not quantized per tensor");
  bool Conv = P->op() == OpKind::Conv;
  const ir::TensorType &WT = DW->input(0)->type();
  if (Conv) {
    if (!ir::constantValue(DW->input(0)) || !zeroConstant(zeroPoint(*DW)))
      return R.decline(Q, "Conv weights are not constant with zero point 0");
    if (!oneElementConstant(DW->input(1)) && DW->attrInt("axis") != 0)
      return R.decline(Q, "Conv weights are not quantized along axis 0");
  } else if (!oneElementConstant(DW->input(1))) {
    int64_t Axis = DW->attrInt("axis");
    if (!WT.hasRank() || WT.rank() != 2 || (Axis != 1 && Axis != -1))
      return R.decline(Q, "B is not quantized per tensor or per column");
    if (zeroPoint(*DW) && !ir::constantValue(zeroPoint(*DW)))
      return R.decline(Q, "B's zero point is not constant");
  }
  Value *Bias = nullptr;
  if (Conv && P->hasInput(2) && !(Bias = biasOperand(*P, *DX, *DW)))
    return R.decline(Q, "the bias is not i32 at scale x_s * w_s");

  std::vector<Value *> In;
  auto Operands = [&](Node &D) {
    In.push_back(D.input(0));
    In.push_back(D.input(1));
    Value *Z = zeroPoint(D);
    if (!Z) // ONNX's default zero point: 0 of the quantized type.
      Z = R.addConstant(D.input(0)->name() + "_zero_point",
                        zeroOf(D.input(0)->type().dtype()));
    In.push_back(Z);
  };
  Operands(*DX);
  Operands(*DW);
  In.push_back(Q.input(1));
  In.push_back(zeroPoint(Q) ? zeroPoint(Q)
                            : R.addConstant(Q.output(0)->name() + "_zero_point",
                                            zeroOf(DType::U8)));
  if (Bias)
    In.push_back(Bias);
  Node *Fused =
      Conv ? R.create(OpKind::QLinearConv, In,
                      {G.uniqueName(Q.output(0)->name() + ".qconv")},
                      P->attrs(), &Q)
           : R.create(OpKind::QLinearMatMul, In,
                      {G.uniqueName(Q.output(0)->name() + ".qmatmul")}, {}, &Q);
  Fused->setName(P->name());
  Fused->setScope(P->scope());
  R.replaceWithNewValue(Q.output(0), Fused->output(0));
  R.eraseNode(&Q);
  if (Relu)
    R.eraseNode(Relu);
  R.eraseNode(P);
  return true;
}

/// True when A and B are the same value or equal one-element constants.
bool sameParameter(const Value *A, const Value *B) {
  if (A == B)
    return true;
  if (!A || !B)
    return false;
  const rt::Tensor *X = ir::constantValue(A), *Y = ir::constantValue(B);
  return X && Y && X->numel() == 1 && Y->numel() == 1 &&
         X->dtype() == Y->dtype() && X->getFlat(0) == Y->getFlat(0);
}

/// Q(Op(DQ(x_q))) with the same scale and zero point on both sides is
/// Op(x_q) for an op that only moves or selects values (the
/// value_preserving trait) and takes 8-bit data: exact, and the int8
/// tensor flows on without a round trip through float.
bool passThroughQdq(Node &Q, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  Node *P = Q.input(0)->producer();
  if (!P || !ir::hasTrait(P->op(), ir::OpTrait::ValuePreserving) ||
      P->numOutputs() != 1 || P->op() == OpKind::GlobalMaxPool)
    return false; // Not this pattern's (GlobalMaxPool is float only).
  Node *D = dequantizer(P->input(0));
  if (!D)
    return R.decline(Q, "the moved value is not dequantized");
  if (!oneElementConstant(D->input(1)) ||
      !sameParameter(D->input(1), Q.input(1)) ||
      !sameParameter(zeroPoint(*D), zeroPoint(Q)) ||
      D->input(0)->type().dtype() != Q.output(0)->type().dtype())
    return R.decline(Q, "scale, zero point or type differ across the op");
  if (!hasSingleUse(G, P->output(0)))
    return R.decline(Q, "the moved float value has other readers");
  std::vector<Value *> In = P->inputs();
  In[0] = D->input(0);
  Node *M = R.create(P->op(), In, {G.uniqueName(Q.output(0)->name() + ".q")},
                     P->attrs(), &Q);
  M->setName(P->name());
  M->setScope(P->scope());
  R.replaceWithNewValue(Q.output(0), M->output(0));
  R.eraseNode(&Q);
  R.eraseNode(P);
  return true;
}

} // namespace

std::unique_ptr<Pass> createFuseQdqPass() {
  return std::make_unique<RulePass>(
      "fuse-qdq",
      "turn Q/DQ around Conv and MatMul into QLinearConv and "
      "QLinearMatMul (int8 kernels)",
      RewritePatternList{
          // Q(Conv(DQ(x), DQ(w), DQ(b))) -> QLinearConv(x, w, b); likewise
          // MatMul -> QLinearMatMul, Gemm -> Reshape(QLinearConv(Reshape))
          {OpKind::QuantizeLinear, "fuse-qdq", fuseQdq},
          // Q(op(DQ(x_q))) -> op(x_q), op value-preserving, same scale and zp
          {OpKind::QuantizeLinear, "fuse-qdq-pass-through", passThroughQdq},
      });
}

} // namespace nng::passes
