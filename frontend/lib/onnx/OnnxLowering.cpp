//===- OnnxLowering.cpp - Making a graph expressible in ONNX -------------===//
//
// Before export, a copy of the graph is rewritten so that every node is a
// default-domain ONNX op whose semantics hold at the target opset:
// - "nng" ops expand into standard ops (nng.Gelu -> Erf-based chain, or the
//   Tanh-based chain for approximate='tanh'; nng.FusedConv / nng.FusedGemm
//   -> Conv / Gemm followed by their activation as a standard op;
//   nng.FusedMatMul -> MatMul, its bias and residual Adds and activation;
//   nng.Attention -> MatMul(Q, K^T), Mul(scale), Add(mask), Softmax, MatMul),
//   except
//   nng.ModuleCall (a leaf module), which stays for the custom domain, and
//   nng.FusedRegion, which becomes its body's nodes;
// - a value that is a graph output twice gets an Identity copy (ONNX names
//   outputs by value);
// - ops whose table semantics are newer than the target opset are kept
//   when the older version means the same for this node (e.g. Reshape-14
//   with allowzero=0 is Reshape-13), rewritten when that is trivial
//   (CastLike -> Cast, HardSwish -> HardSigmoid * x) and refused otherwise
//   with a message naming the node.
// Regions (If's branches, Loop's and Scan's bodies) are lowered the same
// way, innermost first.
//
//===----------------------------------------------------------------------===//

#include "OnnxLowering.h"
#include "OnnxSequences.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/FusedRegion.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>

namespace nng::frontend::onnxio {
namespace {

using ir::OpKind;

/// Inserts nodes before a given node, naming values and nodes after it.
class Builder {
public:
  Builder(ir::Graph &G, ir::Node *Before, std::string Base)
      : G(G), Before(Before), Base(std::move(Base)) {}

  /// A scalar constant of dtype T.
  ir::Value *constant(double V, DType T, const char *Tag) {
    rt::Tensor C = rt::Tensor::empty(Shape{}, T);
    C.setFlat(0, V);
    ir::AttrMap A;
    A.set("value", ir::Attribute(C));
    return add(OpKind::Constant, {}, Tag, std::move(A),
               ir::TensorType(T, Shape{}));
  }

  /// A node with one output typed Ty.
  ir::Value *add(OpKind K, std::vector<ir::Value *> Ins, const char *Tag,
                 ir::AttrMap Attrs, ir::TensorType Ty) {
    ir::Node *N = G.addNode(K, std::move(Ins), {G.uniqueName(Base + "." + Tag)},
                            std::move(Attrs), Before);
    N->setName(Before->name().empty() ? "" : Before->name() + "/" + Tag);
    N->setScope(Before->scope());
    N->output()->setType(std::move(Ty));
    return N->output();
  }

private:
  ir::Graph &G;
  ir::Node *Before;
  std::string Base;
};

/// Replaces N's single output with V: uses move over, N goes, V takes the
/// output's name.
void replaceNode(ir::Graph &G, ir::Node *N, ir::Value *V) {
  ir::Value *Old = N->output();
  std::string Name = Old->name();
  ir::TensorType Ty = Old->type();
  G.replaceAllUsesWith(Old, V);
  G.eraseNode(N);
  G.rename(V, Name);
  V->setType(Ty);
}

std::string baseName(const ir::Node *N) { return N->output()->name(); }

/// nng.Gelu: 0.5*x*(1+erf(x/sqrt(2))), or for approximate='tanh'
/// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).
void expandGelu(ir::Graph &G, ir::Node *N) {
  ir::Value *X = N->input(0);
  const ir::TensorType &Ty = N->output()->type();
  DType T = X->type().dtype();
  if (!isFloatingPoint(T))
    fail(ErrorKind::Unsupported, N->describe(), ": cannot export nng.Gelu of ",
         dtypeName(T), " (floating-point only)");
  const std::string &Approx = N->attrString("approximate");
  Builder B(G, N, baseName(N));
  ir::Value *Inner;
  if (Approx == "tanh") {
    ir::Value *X2 = B.add(OpKind::Mul, {X, X}, "x2", {}, Ty);
    ir::Value *X3 = B.add(OpKind::Mul, {X2, X}, "x3", {}, Ty);
    ir::Value *C = B.constant(ir::GeluTanhCubic, T, "c");
    ir::Value *CX3 = B.add(OpKind::Mul, {X3, C}, "cx3", {}, Ty);
    ir::Value *Sum = B.add(OpKind::Add, {X, CX3}, "inner", {}, Ty);
    ir::Value *K = B.constant(ir::GeluTanhScale, T, "k");
    ir::Value *Scaled = B.add(OpKind::Mul, {Sum, K}, "scaled", {}, Ty);
    Inner = B.add(OpKind::Tanh, {Scaled}, "tanh", {}, Ty);
  } else if (Approx == "none") {
    ir::Value *R2 = B.constant(ir::GeluSqrt2, T, "sqrt2");
    ir::Value *Div = B.add(OpKind::Div, {X, R2}, "div", {}, Ty);
    Inner = B.add(OpKind::Erf, {Div}, "erf", {}, Ty);
  } else {
    fail(ErrorKind::InvalidArgument, N->describe(),
         ": approximate must be 'none' or 'tanh', not '", Approx, "'");
  }
  ir::Value *One = B.constant(1.0, T, "one");
  ir::Value *Plus = B.add(OpKind::Add, {Inner, One}, "plus1", {}, Ty);
  ir::Value *XP = B.add(OpKind::Mul, {X, Plus}, "mul", {}, Ty);
  ir::Value *Half = B.constant(0.5, T, "half");
  ir::Value *Y = B.add(OpKind::Mul, {XP, Half}, "out", {}, Ty);
  replaceNode(G, N, Y);
}

/// nng.Attention(Q, K, V, mask?) -> MatMul(Q, Transpose(K)) [no Transpose
/// when k_transposed] -> Mul(scale) -> [Add(mask)] -> Softmax(axis -1) ->
/// MatMul(P, V): the graph fuse-attention recognized, for any ONNX runtime
/// to run (and fuse again its own way).
void expandAttention(ir::Graph &G, ir::Node *N) {
  ir::Value *Q = N->input(0), *K = N->input(1), *V = N->input(2);
  const ir::TensorType &Ty = N->output()->type();
  DType T = Q->type().dtype();
  Builder B(G, N, baseName(N));
  // The scores' type: Y's with N (K's key count) as the last extent.
  ir::TensorType STy(T);
  bool KT = N->attrInt("k_transposed") != 0;
  if (Ty.hasRank() && K->type().hasRank()) {
    std::vector<ir::Dim> D = Ty.dims();
    const ir::TensorType &KTy = K->type();
    D.back() = KTy.dim(KTy.rank() - (KT ? 1 : 2));
    STy = ir::TensorType(T, std::move(D));
  }
  ir::Value *Kt = K;
  if (!KT) {
    if (!K->type().hasRank())
      fail(ErrorKind::Unsupported, N->describe(),
           ": cannot export nng.Attention whose K has an unknown rank (the "
           "Transpose of its last two axes needs it); run shape-infer first");
    int64_t R = K->type().rank();
    std::vector<int64_t> Perm(R);
    for (int64_t I = 0; I < R; ++I)
      Perm[I] = I < R - 2 ? I : 2 * R - 3 - I;
    ir::AttrMap A;
    A.set("perm", ir::Attribute(Perm));
    std::vector<ir::Dim> KD = K->type().dims();
    std::swap(KD[R - 2], KD[R - 1]);
    Kt = B.add(OpKind::Transpose, {K}, "kt", std::move(A),
               ir::TensorType(T, std::move(KD)));
  }
  ir::Value *S = B.add(OpKind::MatMul, {Q, Kt}, "scores", {}, STy);
  ir::Value *Scale = B.constant(N->attrFloat("scale"), T, "scale");
  S = B.add(OpKind::Mul, {S, Scale}, "scaled", {}, STy);
  if (N->hasInput(3))
    S = B.add(OpKind::Add, {S, N->input(3)}, "masked", {}, STy);
  ir::AttrMap SA;
  SA.set("axis", ir::Attribute(int64_t(-1)));
  ir::Value *P = B.add(OpKind::Softmax, {S}, "probs", std::move(SA), STy);
  ir::Value *Y = B.add(OpKind::MatMul, {P, V}, "out", {}, Ty);
  replaceNode(G, N, Y);
}

/// nng.FusedConv / nng.FusedGemm -> Conv / Gemm (keeping the node's name),
/// nng.FusedMatMul -> MatMul (of a Transpose of B when transB) and an Add of
/// its Bias; then an Add of the residual Sum when there is one, then the
/// activation's standalone op (none for Identity): parameters become its
/// attributes, or for Clip constant min/max inputs (an infinite bound is
/// left out); GELU goes through nng.Gelu, which is then expanded.
void expandFused(ir::Graph &G, ir::Node *N) {
  const std::string &Name = N->attrString("activation");
  const ir::FusedActivationInfo *A = ir::lookupFusedActivation(Name);
  if (!A)
    fail(ErrorKind::InvalidArgument, N->describe(), ": unknown activation '",
         Name, "'; expected one of ", ir::fusedActivationNames());
  std::vector<float> Given;
  if (N->attrs().has("activation_params"))
    Given = N->attr("activation_params").floats();
  if (Given.size() > A->Params.size())
    fail(ErrorKind::InvalidArgument, N->describe(), ": activation ", Name,
         " takes ", A->Params.size(), " parameter(s), got ", Given.size());
  std::vector<float> P = ir::fusedActivationParams(*A, Given);
  const ir::TensorType &Ty = N->output()->type();
  DType T = Ty.dtype();
  bool IsConv = N->op() == OpKind::FusedConv;
  bool IsMatMul = N->op() == OpKind::FusedMatMul;
  ir::AttrMap Attrs = N->attrs();
  Attrs.erase("activation");
  Attrs.erase("activation_params");
  Builder B(G, N, baseName(N));
  std::vector<ir::Value *> Operands = N->inputs();
  ir::Value *Sum = (IsConv || IsMatMul) && N->hasInput(3) ? N->input(3)
                                                          : nullptr;
  ir::Value *Y = nullptr;
  if (IsMatMul) {
    // MatMul (of B transposed when transB), then the Bias's Add.
    ir::Value *W = N->input(1);
    if (N->attrInt("transB") != 0) {
      const ir::TensorType &WT = W->type();
      if (!WT.hasRank())
        fail(ErrorKind::InvalidArgument, N->describe(),
             ": transB needs B of known rank");
      std::vector<int64_t> Perm(WT.rank());
      for (size_t I = 0; I < Perm.size(); ++I)
        Perm[I] = static_cast<int64_t>(I);
      std::swap(Perm[Perm.size() - 1], Perm[Perm.size() - 2]);
      std::vector<ir::Dim> D = WT.dims();
      std::swap(D[D.size() - 1], D[D.size() - 2]);
      ir::AttrMap TA;
      TA.set("perm", ir::Attribute(Perm));
      W = B.add(OpKind::Transpose, {W}, "weight_t", std::move(TA),
                ir::TensorType(WT.dtype(), std::move(D)));
    }
    Y = B.add(OpKind::MatMul, {N->input(0), W}, "matmul", {}, Ty);
    Y->producer()->setName(N->name());
    if (N->hasInput(2))
      Y = B.add(OpKind::Add, {Y, N->input(2)}, "bias", {}, Ty);
  } else {
    Operands.resize(std::min<size_t>(Operands.size(), 3));
    while (!Operands.empty() && !Operands.back())
      Operands.pop_back();
    Y = B.add(IsConv ? OpKind::Conv : OpKind::Gemm, Operands,
              IsConv ? "conv" : "gemm", std::move(Attrs), Ty);
    Y->producer()->setName(N->name());
  }
  if (Sum)
    Y = B.add(OpKind::Add, {Y, Sum}, "sum", {}, Ty);
  if (A->Op == OpKind::Identity) {
    replaceNode(G, N, Y);
    return;
  }
  std::vector<ir::Value *> Ins{Y};
  ir::AttrMap ActAttrs;
  for (size_t I = 0; I < P.size(); ++I) {
    std::string PName(A->Params[I].Name);
    if (!A->ParamsAreInputs)
      ActAttrs.setByName(PName, ir::Attribute(P[I]));
    else
      Ins.push_back(std::isinf(P[I]) ? nullptr
                                     : B.constant(P[I], T, PName.c_str()));
  }
  while (Ins.size() > 1 && !Ins.back())
    Ins.pop_back();
  if (!A->GeluApproximate.empty())
    ActAttrs.set("approximate", ir::Attribute(std::string(A->GeluApproximate)));
  ir::Value *Out = B.add(A->Op, std::move(Ins), "act", std::move(ActAttrs), Ty);
  ir::Node *Act = Out->producer();
  replaceNode(G, N, Out);
  if (Act->op() == OpKind::Gelu)
    expandGelu(G, Act);
}

/// CastLike -> Cast(to = the target's dtype).
void lowerCastLike(ir::Graph &G, ir::Node *N) {
  ir::AttrMap A;
  A.set("to", ir::Attribute(static_cast<int64_t>(
                  dtypeToOnnx(N->input(1)->type().dtype()))));
  Builder B(G, N, baseName(N));
  ir::Value *Y = B.add(OpKind::Cast, {N->input(0)}, "cast", std::move(A),
                       N->output()->type());
  replaceNode(G, N, Y);
}

/// HardSwish -> x * HardSigmoid(x, alpha=1/6, beta=0.5).
void lowerHardSwish(ir::Graph &G, ir::Node *N) {
  ir::AttrMap A;
  A.set("alpha", ir::Attribute(1.0f / 6.0f));
  A.set("beta", ir::Attribute(0.5f));
  Builder B(G, N, baseName(N));
  const ir::TensorType &Ty = N->output()->type();
  ir::Value *HS = B.add(OpKind::HardSigmoid, {N->input(0)}, "hardsigmoid",
                        std::move(A), Ty);
  ir::Value *Y = B.add(OpKind::Mul, {N->input(0), HS}, "mul", {}, Ty);
  replaceNode(G, N, Y);
}

bool inputIs(const ir::Node *N, size_t I, std::initializer_list<DType> Ts) {
  if (!N->hasInput(I))
    return false;
  DType T = N->input(I)->type().dtype();
  for (DType U : Ts)
    if (T == U)
      return true;
  return false;
}

/// Null when N (whose table semantics are newer than Opset) means the same
/// at Opset; else why not.
std::string whyNotAtOpset(const ir::Node *N, int Opset) {
  switch (N->op()) {
  case OpKind::Relu: // 14 added the signed integer types.
    if (!isFloatingPoint(N->input(0)->type().dtype()))
      return "Relu of integers needs opset 14";
    return "";
  case OpKind::Add: // 14 added the 8- and 16-bit integer types.
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    if (inputIs(N, 0, {DType::I8, DType::U8, DType::I16, DType::U16}))
      return "8- and 16-bit integer arithmetic needs opset 14";
    return "";
  case OpKind::Identity: // 14 and 16 added sequence and optional types.
    return "";
  case OpKind::LeakyRelu: // 16 added bfloat16.
  case OpKind::PRelu:
  case OpKind::LessOrEqual:
  case OpKind::GreaterOrEqual:
    if (inputIs(N, 0, {DType::BF16}) || inputIs(N, 1, {DType::BF16}))
      return "bfloat16 needs opset 16";
    return "";
  case OpKind::Where: // 16 added bfloat16 (Where-9 takes all types).
    return "";
  case OpKind::Pow: // 15 added a bfloat16 exponent.
    if (inputIs(N, 1, {DType::BF16}))
      return "a bfloat16 exponent needs opset 15";
    return "";
  case OpKind::Shape: // 15 added start and end.
    if (N->attrs().has("end") || N->attrInt("start") != 0)
      return "Shape with start/end needs opset 15";
    return "";
  case OpKind::Reshape: // 14 added allowzero.
    if (N->attrInt("allowzero") != 0)
      return "Reshape with allowzero=1 needs opset 14";
    return "";
  case OpKind::BatchNormalization: // 14 added training_mode, 15 mixed types.
    if (Opset >= 14)
      return "";
    if (N->attrInt("training_mode") != 0 || N->numOutputs() > 1)
      return "BatchNormalization in training mode needs opset 14";
    return "";
  default:
    return "it has ONNX opset-" + std::to_string(N->schema().SinceVersion) +
           " semantics";
  }
}

} // namespace

/// ONNX names graph outputs by value name, so a value that is an output
/// twice gets an Identity copy for each repeat.
void distinctOutputs(ir::Graph &G) {
  std::vector<ir::Value *> Outs = G.outputs();
  for (size_t I = 0; I < Outs.size(); ++I) {
    if (std::find(Outs.begin(), Outs.begin() + I, Outs[I]) == Outs.begin() + I)
      continue;
    ir::Node *N =
        G.addNode(OpKind::Identity, {Outs[I]},
                  {G.uniqueName(Outs[I]->name() + ".out" + std::to_string(I))});
    N->output()->setType(Outs[I]->type());
    G.setOutput(I, N->output());
    Outs[I] = N->output();
  }
}

void lowerForOnnx(ir::Graph &G, int Opset) {
  // Regions first (If's branches, Loop's and Scan's bodies, innermost
  // first): the passes that enter them may have made nng ops there too.
  for (const auto &N : G.nodes())
    for (ir::Graph *R : N->regions())
      lowerForOnnx(*R, Opset);
  // Fused regions become their bodies' nodes again (which may be nng ops).
  std::vector<ir::Node *> Nodes;
  for (const auto &N : G.nodes())
    if (N->op() == OpKind::FusedRegion)
      Nodes.push_back(N.get());
  for (ir::Node *N : Nodes)
    ir::inlineFusedRegion(G, N);
  Nodes.clear();
  distinctOutputs(G);
  prepareSequencesForOnnx(G);
  for (const auto &N : G.nodes())
    Nodes.push_back(N.get());
  // First the nng ops, whose expansions may need opset lowering in turn.
  for (ir::Node *N : Nodes) {
    const ir::OpSchema &S = N->schema();
    if (S.Domain != "nng")
      continue;
    switch (N->op()) {
    case OpKind::Gelu:
      expandGelu(G, N);
      continue;
    case OpKind::FusedConv:
    case OpKind::FusedGemm:
    case OpKind::FusedMatMul:
      expandFused(G, N);
      continue;
    case OpKind::Attention:
      expandAttention(G, N);
      continue;
    case OpKind::ModuleCall:
      // Kept: a leaf module has no standard expansion; export writes it to
      // the custom domain ai.nngraph.module, with a warning.
      continue;
    case OpKind::SequenceEmpty:
    case OpKind::SequenceConstruct:
    case OpKind::SequenceInsert:
    case OpKind::SequenceErase:
    case OpKind::SequenceAt:
    case OpKind::SequenceLength:
    case OpKind::SplitToSequence:
    case OpKind::ConcatFromSequence:
      // Kept: export writes them as the ONNX sequence operators
      // (OnnxSequences.cpp), checked and prepared above.
      continue;
    default:
      fail(ErrorKind::Unsupported, N->describe(), ": ", S.qualifiedName(),
           " has no expansion into standard ONNX ops");
    }
  }
  Nodes.clear();
  for (const auto &N : G.nodes())
    Nodes.push_back(N.get());
  for (ir::Node *N : Nodes) {
    const ir::OpSchema &S = N->schema();
    if (S.SinceVersion <= Opset)
      continue;
    if (N->op() == OpKind::CastLike) {
      lowerCastLike(G, N);
      continue;
    }
    if (N->op() == OpKind::HardSwish) {
      lowerHardSwish(G, N);
      continue;
    }
    std::string Why = whyNotAtOpset(N, Opset);
    if (!Why.empty())
      fail(ErrorKind::Unsupported, N->describe(),
           ": cannot be exported at opset ", Opset, " (", Why,
           "); export at opset ", S.SinceVersion, " or newer");
  }
}

} // namespace nng::frontend::onnxio
