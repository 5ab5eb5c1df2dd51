//===- QuantizeDynamic.cpp - Dynamic quantization of MatMul and Gemm ------===//
//
// A MatMul or Gemm whose weight B is a constant 2-D f32 matrix becomes, in
// standard ONNX ops (as ONNX Runtime's quantize_dynamic writes it):
//
//   a_q, a_s, a_zp = DynamicQuantizeLinear(A)        u8, at run time
//   acc  = MatMulInteger(a_q, B_q, a_zp, B_zp)        i32
//   Y    = Cast<f32>(acc) * (a_s * B_s)  [+ beta * C]
//
// B_q is s8 [K, N] (Gemm's transB is applied to the constant), symmetric,
// per output column by default; Gemm's alpha is folded into B_s. LSTM and
// GRU nodes are handed to QuantizeRecurrent.cpp.
//
//===----------------------------------------------------------------------===//

#include "QuantMath.h"
#include "QuantizeRecurrent.h"

#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>

namespace nng::passes::quant {

namespace {

using ir::Node;
using ir::OpKind;
using ir::Value;

/// B as [K, N] f32 (transposed when TransB).
rt::Tensor weightKN(const rt::Tensor &B, bool TransB) {
  const rt::Tensor C = B.isContiguous() ? B : B.contiguous();
  if (!TransB)
    return C;
  int64_t N = C.size(0), K = C.size(1);
  rt::Tensor T = rt::Tensor::empty(Shape{K, N}, DType::F32);
  const float *X = C.data<float>();
  float *Y = T.data<float>();
  for (int64_t I = 0; I < N; ++I)
    for (int64_t J = 0; J < K; ++J)
      Y[J * N + I] = X[I * K + J];
  return T;
}

/// Why N is not dynamically quantizable, or "" when it is.
std::string reject(const Node &N) {
  if (N.op() != OpKind::MatMul && N.op() != OpKind::Gemm)
    return "dynamic quantization covers MatMul and Gemm only";
  const Value *A = N.input(0);
  if (A->type().dtype() != DType::F32 || ir::constantValue(A))
    return "input A is not an f32 activation";
  const rt::Tensor *B = ir::constantValue(N.input(1));
  if (!B || B->dtype() != DType::F32 || B->rank() != 2)
    return "weight B is not a 2-D f32 constant";
  if (N.op() == OpKind::Gemm) {
    if (N.attrInt("transA") != 0)
      return "transA is set";
    if (!A->type().hasRank() || A->type().rank() != 2)
      return "input A is not 2-D";
  }
  return "";
}

/// DynamicQuantizeLinear of each activation, shared by its readers.
using QuantizedInputs = std::unordered_map<Value *, Node *>;

void rewrite(ir::Graph &G, Node &N, const QuantizeOptions &O,
             QuantizeReport &Rep, QuantizedInputs &Shared) {
  bool Gemm = N.op() == OpKind::Gemm;
  bool TransB = Gemm && N.attrInt("transB") != 0;
  float Alpha = Gemm ? N.attrFloat("alpha") : 1.f;
  float Beta = Gemm ? N.attrFloat("beta") : 1.f;
  Value *BVal = N.input(1);
  const rt::Tensor &B = *ir::constantValue(BVal);
  QuantizedWeights QW = quantizeWeights(weightKN(B, TransB), 1, O.PerChannel);
  std::vector<float> Scales = QW.Scales;
  for (float &S : Scales)
    S *= Alpha;
  bool Vector = O.PerChannel;
  int64_t Count = static_cast<int64_t>(Scales.size());
  std::string Base = BVal->name();
  Value *Bq = G.addInitializer(G.uniqueName(Base + "_quantized"), QW.Values);
  Value *Bs = G.addInitializer(G.uniqueName(Base + "_scale"),
                               scaleTensor(Scales, Vector));
  Value *Bz = G.addInitializer(G.uniqueName(Base + "_zero_point"),
                               zeroPointTensor(0, DType::I8, Count, Vector));
  Rep.WeightBytesBefore += B.numel() * 4;
  Rep.WeightBytesAfter += B.numel();

  Value *Y = N.output(0);
  std::string Out = Y->name();
  Value *A = N.input(0);
  Node *&Dq = Shared[A];
  if (!Dq) {
    Dq = G.addNode(OpKind::DynamicQuantizeLinear, {A},
                   {G.uniqueName(A->name() + "_quantized"),
                    G.uniqueName(A->name() + "_scale"),
                    G.uniqueName(A->name() + "_zero_point")},
                   {}, &N);
    Dq->setScope(N.scope());
    if (!N.name().empty())
      Dq->setName(N.name() + "/quantize_input");
  }
  Node *Mm = G.addNode(OpKind::MatMulInteger,
                       {Dq->output(0), Bq, Dq->output(2), Bz},
                       {G.uniqueName(Out + "_i32")}, {}, &N);
  ir::AttrMap CastAttrs;
  CastAttrs.set("to", ir::Attribute(int64_t(1))); // ONNX FLOAT
  Node *Cast = G.addNode(OpKind::Cast, {Mm->output(0)},
                         {G.uniqueName(Out + "_f32")}, std::move(CastAttrs), &N);
  Node *Scale = G.addNode(OpKind::Mul, {Dq->output(1), Bs},
                          {G.uniqueName(Out + "_scale")}, {}, &N);
  Node *Rescale = G.addNode(OpKind::Mul, {Cast->output(0), Scale->output(0)},
                            {G.uniqueName(Out + "_scaled")}, {}, &N);
  Node *Result = Rescale, *Bias = nullptr;
  if (Gemm && N.hasInput(2)) {
    Value *C = N.input(2);
    if (Beta != 1.f) {
      Value *BetaV = G.addInitializer(G.uniqueName(Out + "_beta"),
                                      rt::Tensor::scalar<float>(Beta));
      C = G.addNode(OpKind::Mul, {C, BetaV}, {G.uniqueName(Out + "_c")}, {}, &N)
              ->output(0);
    }
    Result = Bias = G.addNode(OpKind::Add, {Rescale->output(0), C},
                              {G.uniqueName(Out + "_biased")}, {}, &N);
  }
  std::pair<Node *, const char *> Roles[] = {{Mm, "/matmul_integer"},
                                             {Cast, "/cast"},
                                             {Scale, "/scale"},
                                             {Rescale, "/rescale"},
                                             {Bias, "/bias"}};
  for (auto [M, Role] : Roles) {
    if (!M)
      continue;
    M->setScope(N.scope());
    if (!N.name().empty())
      M->setName(N.name() + Role);
  }
  Value *R = Result->output(0);
  G.replaceAllUsesWith(Y, R);
  G.eraseNode(&N);
  G.rename(R, Out);
  Rep.QuantizedNodes++;
}

} // namespace

void quantizeDynamic(ir::Graph &G, const QuantizeOptions &O,
                     QuantizeReport *Report) {
  QuantizeReport Local;
  QuantizeReport &Rep = Report ? *Report : Local;
  checkPatternsMatch(G, O.KeepFloat, "quantize: keep-float pattern");
  std::vector<std::pair<Node *, size_t>> Todo; // With its report entry.
  for (const auto &NP : G.nodes()) {
    Node &N = *NP;
    bool Recurrent = isQuantizableRecurrent(N);
    if (N.op() != OpKind::MatMul && N.op() != OpKind::Gemm && !Recurrent)
      continue;
    QuantizeReport::NodeEntry E{N.name().empty() ? N.output(0)->name()
                                                 : N.name(),
                                std::string(N.schema().Name), false, ""};
    if (matchesNodePattern(N, O.KeepFloat))
      E.Reason = "kept float (--keep-float)";
    else
      E.Reason = Recurrent ? rejectRecurrent(N) : reject(N);
    E.Quantized = E.Reason.empty();
    if (E.Quantized)
      Todo.push_back({&N, Rep.Nodes.size()});
    else
      Rep.FloatNodes++;
    Rep.Nodes.push_back(std::move(E));
  }
  NNG_CHECK(!Todo.empty(), "quantize: nothing in graph '", G.name(),
            "' is dynamically quantizable (MatMul or Gemm with an f32 "
            "activation and a constant 2-D f32 weight, or LSTM or GRU with "
            "constant f32 W and R",
            O.KeepFloat.empty() ? "" : " outside --keep-float", ")");
  QuantizedInputs Shared;
  for (auto [N, Entry] : Todo) {
    if (isQuantizableRecurrent(*N)) {
      Rep.Nodes[Entry].Note = quantizeRecurrent(G, *N, O, Rep);
      Rep.QuantizedNodes++;
    } else {
      rewrite(G, *N, O, Rep, Shared);
    }
  }
  G.topologicalSort();
  createDeadCodeEliminationPass()->run(G); // The float weights.
  ir::inferTypes(G);
}

} // namespace nng::passes::quant
