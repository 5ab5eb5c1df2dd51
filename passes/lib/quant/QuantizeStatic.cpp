//===- QuantizeStatic.cpp - Static PTQ: Q/DQ around quantizable ops -------===//
//
// The plan walks the graph in order and decides, from the op table's
// traits, which nodes run quantized:
//  - a `quantizable` node (Conv, MatMul, Gemm, Add, pooling, Concat) whose
//    float activations and output are quantized: each activation input
//    reads a DequantizeLinear(QuantizeLinear(x)); its output (or, when the
//    output's only reader is a Relu or Clip, that activation's output: the
//    int8 kernel fuses it) gets a Q/DQ pair that every reader then uses;
//    constant weights become s8 initializers read through a
//    DequantizeLinear (per output channel: Conv axis 0, MatMul axis 1, Gemm
//    axis 0 or 1 by transB), and a constant 1-D bias of Conv (or of Gemm
//    with alpha = beta = 1) an i32 initializer at scale s_x * s_w;
//  - a `value_preserving` node (reshapes, MaxPool, ...) whose data input
//    is already quantized passes it on: its outputs get Q/DQ with the same
//    scale and zero point, exact since it only moves values.
// Nodes matching a KeepFloat pattern, and nodes whose operands do not fit
// (non-float, a non-constant Conv weight, a constant Add operand), stay
// float; the report says why.
//
//===----------------------------------------------------------------------===//

#include "QuantMath.h"

#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::passes::quant {

namespace {

using ir::Node;
using ir::OpKind;
using ir::Value;

bool isF32(const Value *V) { return V && V->type().dtype() == DType::F32; }

bool isConstant(const Value *V) { return ir::constantValue(V) != nullptr; }

/// The operand roles of a quantizable node.
struct NodePlan {
  Node *N = nullptr;
  std::vector<size_t> Activations; ///< Input indices quantized per tensor.
  int WeightInput = -1;            ///< Constant weight input, or -1.
  int64_t WeightAxis = 0;          ///< Its output-channel axis.
  int BiasInput = -1;              ///< Constant 1-D bias quantized to i32.
  Value *Tail = nullptr;           ///< The output that gets Q/DQ.
};

/// The value whose Q/DQ ends node N's quantized computation: its output,
/// or the output of a Relu/Clip that is the only reader.
Value *tailOf(const ir::Graph &G, Node &N) {
  Value *Y = N.output(0);
  if (Y->uses().size() != 1 || G.isOutput(Y))
    return Y;
  Node *U = Y->uses()[0].User;
  if ((U->op() == OpKind::Relu || U->op() == OpKind::Clip) &&
      U->input(0) == Y && isF32(U->output(0)))
    return U->output(0);
  return Y;
}

/// Plans node N, or returns why it stays float.
std::optional<NodePlan> planNode(const ir::Graph &G, Node &N,
                                 std::string &Why) {
  NodePlan P;
  P.N = &N;
  if (N.numOutputs() < 1 || !isF32(N.output(0))) {
    Why = "output is not f32";
    return std::nullopt;
  }
  auto Activation = [&](size_t I) -> bool {
    if (!N.hasInput(I) || !isF32(N.input(I)) || isConstant(N.input(I)))
      return false;
    P.Activations.push_back(I);
    return true;
  };
  switch (N.op()) {
  case OpKind::Conv: {
    if (!Activation(0)) {
      Why = "input X is not an f32 activation";
      return std::nullopt;
    }
    const rt::Tensor *W = ir::constantValue(N.input(1));
    if (!W || W->dtype() != DType::F32 || W->rank() < 3) {
      Why = "weight W is not an f32 constant";
      return std::nullopt;
    }
    P.WeightInput = 1;
    P.WeightAxis = 0;
    if (N.hasInput(2)) {
      const rt::Tensor *B = ir::constantValue(N.input(2));
      if (!B || B->dtype() != DType::F32 || B->rank() != 1) {
        Why = "bias is not a 1-D f32 constant";
        return std::nullopt;
      }
      P.BiasInput = 2;
    }
    break;
  }
  case OpKind::MatMul: {
    if (!Activation(0)) {
      Why = "input A is not an f32 activation";
      return std::nullopt;
    }
    const rt::Tensor *B = ir::constantValue(N.input(1));
    if (B) {
      if (B->dtype() != DType::F32 || B->rank() != 2) {
        Why = "constant B is not a 2-D f32 matrix";
        return std::nullopt;
      }
      P.WeightInput = 1;
      P.WeightAxis = 1;
    } else {
      // Both operands computed (attention's scores and context): int8
      // kernels want constant weights, so these stay float.
      Why = "both operands are activations (attention products stay float)";
      return std::nullopt;
    }
    break;
  }
  case OpKind::Gemm: {
    if (N.attrInt("transA") != 0) {
      Why = "transA is set";
      return std::nullopt;
    }
    if (!Activation(0)) {
      Why = "input A is not an f32 activation";
      return std::nullopt;
    }
    const rt::Tensor *B = ir::constantValue(N.input(1));
    if (!B || B->dtype() != DType::F32 || B->rank() != 2) {
      Why = "weight B is not a 2-D f32 constant";
      return std::nullopt;
    }
    P.WeightInput = 1;
    P.WeightAxis = N.attrInt("transB") != 0 ? 0 : 1;
    if (N.hasInput(2)) {
      const rt::Tensor *C = ir::constantValue(N.input(2));
      int64_t Cols = B->size(P.WeightAxis);
      if (C && C->dtype() == DType::F32 && C->rank() == 1 &&
          C->size(0) == Cols && N.attrFloat("alpha") == 1.f &&
          N.attrFloat("beta") == 1.f)
        P.BiasInput = 2; // Otherwise C stays float.
    }
    break;
  }
  case OpKind::Add:
  case OpKind::Concat: {
    for (size_t I = 0; I < N.numInputs(); ++I)
      if (!Activation(I)) {
        Why = "an operand is constant or not f32";
        return std::nullopt;
      }
    break;
  }
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
    if (!Activation(0)) {
      Why = "input is not an f32 activation";
      return std::nullopt;
    }
    break;
  default:
    Why = "no quantization rule for this op";
    return std::nullopt;
  }
  P.Tail = tailOf(G, N);
  return P;
}

std::string nodeLabel(const Node &N) {
  if (!N.name().empty())
    return N.name();
  return N.numOutputs() ? N.output(0)->name() : std::string("?");
}

/// The plan of a whole graph.
struct GraphPlan {
  std::vector<NodePlan> Nodes;
  std::vector<QuantizeReport::NodeEntry> Entries;
};

GraphPlan planGraph(const ir::Graph &G, const QuantizeOptions &O) {
  checkPatternsMatch(G, O.KeepFloat, "quantize: keep-float pattern");
  GraphPlan GP;
  for (const auto &NP : G.nodes()) {
    Node &N = *NP;
    if (!ir::hasTrait(N.op(), ir::OpTrait::Quantizable) ||
        N.numOutputs() < 1 || !isF32(N.output(0)))
      continue; // Not a float computation (shape arithmetic, ...).
    QuantizeReport::NodeEntry E{nodeLabel(N),
                                std::string(N.schema().Name), false, ""};
    if (matchesNodePattern(N, O.KeepFloat)) {
      E.Reason = "kept float (--keep-float)";
    } else if (auto P = planNode(G, N, E.Reason)) {
      GP.Nodes.push_back(*P);
      E.Quantized = true;
    }
    GP.Entries.push_back(std::move(E));
  }
  return GP;
}

/// Inserts the Q/DQ pairs of a plan.
class Inserter {
public:
  Inserter(ir::Graph &G, const RangeMap &Ranges, const QuantizeOptions &O)
      : G(G), Ranges(Ranges), O(O) {}

  void apply(const NodePlan &P, QuantizeReport::NodeEntry &E,
             QuantizeReport &Rep) {
    Node &N = *P.N;
    for (size_t I : P.Activations) {
      Value *X = N.input(I);
      if (!Dequantized.count(X)) // Else already read through a DQ.
        N.setInput(I, pairFor(X, paramsFor(X), /*AllReaders=*/false));
      E.Inputs.push_back(FloatName.at(N.input(I)));
    }
    if (P.WeightInput >= 0)
      quantizeWeight(P, Rep);
    Value *T = P.Tail;
    E.Output = T->name();
    pairFor(T, paramsFor(T), /*AllReaders=*/true);
    Rep.QuantizedNodes++;
  }

  /// Records the float -> dequantized value names (after renames).
  void finish(QuantizeReport &Rep) const {
    for (const auto &[D, Name] : FloatName)
      Rep.Dequantized[Name] = D->name();
  }

  /// Value-preserving N with a quantized data input passes it on.
  void passThrough(Node &N) {
    if (N.numInputs() < 1 || matchesNodePattern(N, O.KeepFloat))
      return;
    auto It = Dequantized.find(N.input(0));
    if (It == Dequantized.end())
      return;
    const QInfo Info = It->second;
    if (N.op() == OpKind::MaxPool && N.numOutputs() > 1 && N.output(1) &&
        N.output(1)->hasUses())
      return; // Indices are not values.
    for (Value *Y : N.outputs())
      if (Y && isF32(Y) && (Y->hasUses() || G.isOutput(Y)))
        pairFor(Y, Info.P, /*AllReaders=*/true, &Info);
  }

private:
  /// A dequantized value's parameters and the initializers holding them.
  struct QInfo {
    QParams P;
    Value *Scale = nullptr, *ZeroPoint = nullptr;
  };

  QParams paramsFor(const Value *V) {
    auto It = Ranges.find(V->name());
    NNG_CHECK(It != Ranges.end(), "quantize: no calibrated range for '",
              V->name(), "'; calibrate the graph being quantized");
    return activationParams(It->second, O.SignedActivations);
  }

  /// X -> QuantizeLinear -> DequantizeLinear. AllReaders: every reader of
  /// X (and the graph output X) switches to the DQ result; otherwise the
  /// caller points its own operand at the returned value. Same: reuse its
  /// scale and zero-point initializers (a value-preserving op's output).
  Value *pairFor(Value *X, const QParams &P, bool AllReaders,
                 const QInfo *Same = nullptr) {
    if (auto It = Pairs.find(X); It != Pairs.end())
      return It->second;
    std::vector<ir::Use> Readers = X->uses();
    std::string Base = X->name();
    Value *S = Same ? Same->Scale
                    : G.addInitializer(G.uniqueName(Base + "_scale"),
                                       scaleTensor({P.Scale}, false));
    Value *Z = Same ? Same->ZeroPoint
                    : G.addInitializer(
                          G.uniqueName(Base + "_zero_point"),
                          zeroPointTensor(P.ZeroPoint, P.Type, 1, false));
    Node *Q = G.addNode(OpKind::QuantizeLinear, {X, S, Z},
                        {G.uniqueName(Base + "_quantized")});
    Node *DQ = G.addNode(OpKind::DequantizeLinear, {Q->output(0), S, Z},
                         {G.uniqueName(Base + "_dequantized")});
    Q->output(0)->setType(X->type().hasRank()
                              ? ir::TensorType(P.Type, X->type().dims())
                              : ir::TensorType(P.Type));
    DQ->output(0)->setType(X->type());
    Value *D = DQ->output(0);
    if (AllReaders) {
      for (const ir::Use &U : Readers)
        U.User->setInput(U.Index, D);
      for (size_t I = 0; I < G.outputs().size(); ++I)
        if (G.outputs()[I] == X) {
          // The graph output keeps its name on the dequantized value.
          G.rename(X, G.uniqueName(Base + "_float"));
          G.rename(D, Base);
          G.setOutput(I, D);
        }
    }
    Pairs[X] = D;
    Dequantized[D] = QInfo{P, S, Z};
    FloatName[D] = Base;
    return D;
  }

  void quantizeWeight(const NodePlan &P, QuantizeReport &Rep) {
    Node &N = *P.N;
    Value *W = N.input(P.WeightInput);
    auto Cached = Weights.find(W);
    if (Cached == Weights.end()) {
      const rt::Tensor &Data = *ir::constantValue(W);
      QuantizedWeights QW = quantizeWeights(Data, P.WeightAxis, O.PerChannel);
      bool Vector = O.PerChannel;
      int64_t Count = static_cast<int64_t>(QW.Scales.size());
      std::string Base = W->name();
      Value *Q = G.addInitializer(G.uniqueName(Base + "_quantized"), QW.Values);
      Value *S = G.addInitializer(G.uniqueName(Base + "_scale"),
                                  scaleTensor(QW.Scales, Vector));
      Value *Z = G.addInitializer(G.uniqueName(Base + "_zero_point"),
                                  zeroPointTensor(0, DType::I8, Count, Vector));
      ir::AttrMap A;
      if (Vector)
        A.set("axis", ir::Attribute(P.WeightAxis));
      Node *DQ = G.addNode(OpKind::DequantizeLinear, {Q, S, Z},
                           {G.uniqueName(Base + "_dequantized")}, std::move(A));
      DQ->output(0)->setType(W->type());
      Rep.WeightBytesBefore += Data.numel() * 4;
      Rep.WeightBytesAfter += Data.numel();
      Cached = Weights.emplace(W, WeightEntry{DQ->output(0), QW.Scales}).first;
    }
    N.setInput(P.WeightInput, Cached->second.Dequantized);
    if (P.BiasInput < 0)
      return;
    Value *B = N.input(P.BiasInput);
    auto X = Dequantized.find(N.input(P.Activations.at(0)));
    NNG_CHECK(X != Dequantized.end(), "quantize: internal: ", nodeLabel(N),
              "'s input is not quantized");
    const std::vector<float> &Sw = Cached->second.Scales;
    float Sx = X->second.P.Scale;
    rt::Tensor Bq = quantizeBias(*ir::constantValue(B), Sx, Sw);
    std::vector<float> Sb(Sw.size());
    for (size_t I = 0; I < Sw.size(); ++I)
      Sb[I] = Sx * Sw[I];
    bool Vector = Sb.size() > 1;
    std::string Base = B->name();
    Value *Q = G.addInitializer(G.uniqueName(Base + "_quantized"), Bq);
    Value *S = G.addInitializer(G.uniqueName(Base + "_scale"),
                                scaleTensor(Sb, Vector));
    ir::AttrMap A;
    if (Vector)
      A.set("axis", ir::Attribute(int64_t(0)));
    Node *DQ = G.addNode(OpKind::DequantizeLinear, {Q, S}, // zero point 0
                         {G.uniqueName(Base + "_dequantized")}, std::move(A));
    DQ->output(0)->setType(B->type());
    N.setInput(P.BiasInput, DQ->output(0));
  }

  struct WeightEntry {
    Value *Dequantized;
    std::vector<float> Scales;
  };

  ir::Graph &G;
  const RangeMap &Ranges;
  const QuantizeOptions &O;
  std::unordered_map<Value *, Value *> Pairs;         ///< x -> DQ(Q(x)).
  std::unordered_map<const Value *, QInfo> Dequantized; ///< DQ results.
  /// DQ results -> the float value's name in the float graph.
  std::unordered_map<const Value *, std::string> FloatName;
  std::unordered_map<Value *, WeightEntry> Weights;
};

} // namespace

std::vector<std::string> activationsToCalibrate(const ir::Graph &G,
                                                const QuantizeOptions &O) {
  GraphPlan GP = planGraph(G, O);
  std::vector<std::string> Names;
  std::unordered_set<std::string> Seen;
  auto Add = [&](const Value *V) {
    if (Seen.insert(V->name()).second)
      Names.push_back(V->name());
  };
  for (const NodePlan &P : GP.Nodes) {
    for (size_t I : P.Activations)
      Add(P.N->input(I));
    Add(P.Tail);
  }
  return Names;
}

void quantizeStatic(ir::Graph &G, const RangeMap &Ranges,
                    const QuantizeOptions &O, QuantizeReport *Report) {
  QuantizeReport Local;
  QuantizeReport &Rep = Report ? *Report : Local;
  GraphPlan GP = planGraph(G, O);
  Rep.Nodes = GP.Entries;
  for (const auto &E : GP.Entries)
    if (!E.Quantized)
      Rep.FloatNodes++;
  NNG_CHECK(!GP.Nodes.empty(), "quantize: nothing in graph '", G.name(),
            "' is quantizable (no Conv, MatMul, Gemm, Add, pooling or Concat "
            "with f32 activations", O.KeepFloat.empty() ? "" : " outside --keep-float",
            ")");
  std::unordered_map<const Node *, const NodePlan *> ByNode;
  std::unordered_map<const Node *, size_t> EntryOf;
  for (const NodePlan &P : GP.Nodes)
    ByNode[P.N] = &P;
  for (size_t I = 0, J = 0; I < GP.Entries.size(); ++I)
    if (GP.Entries[I].Quantized)
      EntryOf[GP.Nodes[J++].N] = I;
  std::vector<Node *> Order;
  for (const auto &NP : G.nodes())
    Order.push_back(NP.get());
  Inserter Ins(G, Ranges, O);
  for (Node *N : Order) {
    if (auto It = ByNode.find(N); It != ByNode.end())
      Ins.apply(*It->second, Rep.Nodes[EntryOf.at(N)], Rep);
    else if (ir::hasTrait(N->op(), ir::OpTrait::ValuePreserving))
      Ins.passThrough(*N);
  }
  Ins.finish(Rep);
  G.topologicalSort();
  createDeadCodeEliminationPass()->run(G); // The float weights.
  ir::inferTypes(G);
}

} // namespace nng::passes::quant
