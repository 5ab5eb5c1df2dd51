//===- ChannelPruning.cpp - Channel groups and which channels go ----------===//
//
// The analysis and decision of structured channel pruning
// (ChannelPruning.h), as Torch-Pruning's DepGraph does it, on the graph:
//
// 1. Dependency analysis. Every activation with a channel axis (axis 1 of a
//    4-d NCHW tensor, the features of a 2-d [N, F] one) has a channel
//    space; ops tie spaces together: BatchNormalization, activations,
//    pooling, a depthwise Conv (group = channels) and elementwise ops
//    (residual Adds: all branches share indices; an SE block's channel
//    Mul) join their operands' spaces with their result's; a Conv or a
//    Gemm/MatMul with constant weights produces a fresh space (its weight
//    rows) and consumes its input's (its weight columns; through a Flatten,
//    or a Reshape to [N, C*H*W] as traced flattens are, each channel is H*W
//    consecutive features); a channel Concat's result
//    keeps its inputs' kept channels at their offsets. Spaces joined this
//    way form a group whose channels must go together. A Shape read only
//    for the batch dim (a traced flatten's target shape) does not matter.
// 2. A group is left alone, with the reason counted and shown under
//    --debug-only=prune-channels, when anything reads one of its values
//    that the analysis does not understand (Reshape, a grouped Conv, a
//    graph output, ...): never pruned wrong.
// 3. Importance per channel, summed over the group's producers: L1 or L2
//    norm of the weight rows, BatchNorm |scale|, or random. Each group keeps
//    the most important (1 - ratio) of its channels (or, with global, the
//    weakest ratio of all channels go, ranked by importance relative to
//    their group's mean), rounded up to a multiple of `round` (default 8,
//    so blocked kernels stay efficient).
// 4. The plan lists, per group that loses channels, the kept indices and
//    every weight, bias, BatchNorm parameter and per-channel constant to
//    slice; the pass (PruneChannels.cpp) and the module pruner
//    (nn::utils::prune_channels) apply it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/ChannelPruning.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

namespace nng::passes {
namespace {

using ir::Node;
using ir::OpKind;
using ir::Value;

/// V's constant data, looking through Identity (torch's exporter shares
/// equal initializers that way); null when V is not constant.
const rt::Tensor *constantOf(const Value *V) {
  V = channelConstantSource(V);
  return V ? ir::constantValue(V) : nullptr;
}

using Slice = ChannelSlice;

/// A channel space and, at its root, the group's members.
struct Space {
  int Parent;
  int64_t Channels;
  std::string Blocked; ///< Why the group is left alone ("" when it is not).
  std::vector<Slice> Slices;
  std::vector<Node *> Producers; ///< Their weight rows are the channels.
  std::vector<Slice> ProducerW;  ///< The producers' weights, channel axis.
  std::vector<Node *> BatchNorms;
  std::vector<Node *> Depthwise; ///< Their 'group' follows the channels.
  int Concats = 0; ///< Concat results in the group (channels derived).
  std::vector<Node *> Reshapes; ///< Reshapes acting as Flatten(axis=1).
};

/// A channel Concat: its result's channels are its inputs', at offsets.
struct ConcatInfo {
  int Out;
  std::vector<std::pair<int, int64_t>> Ins; ///< (space, channels) in order.
};

class ChannelGraph {
public:
  explicit ChannelGraph(ir::Graph &G) : G(G) {}

  void analyze() {
    for (Value *In : G.inputs())
      if (int S = spaceOf(In); S >= 0)
        block(S, "a graph input");
    for (const auto &NP : G.nodes())
      visit(*NP);
    for (Value *Out : G.outputs())
      if (int S = spaceOf(Out); S >= 0)
        block(S, "a graph output");
    for (auto &[V, F] : Flattened)
      if (F.Readers != F.UnderstoodReaders)
        block(F.From, "a Flatten read by something else than a Gemm");
    // A Concat's result follows its inputs' choices: it must not choose
    // channels itself (producers) nor follow two Concats at once.
    for (const ConcatInfo &C : Concats) {
      const Space &R = Spaces[find(C.Out)];
      std::string Why = !R.Blocked.empty()     ? R.Blocked
                        : !R.Producers.empty() ? "a Concat joined with a layer"
                        : R.Concats > 1        ? "two Concats joined"
                                               : "";
      if (!Why.empty())
        for (const auto &In : C.Ins)
          block(In.first, "concatenated into a tensor left alone: " + Why);
    }
  }

  std::vector<ConcatInfo> Concats;

  int find(int S) {
    while (Spaces[S].Parent != S)
      S = Spaces[S].Parent = Spaces[Spaces[S].Parent].Parent;
    return S;
  }

  std::vector<Space> Spaces;

private:
  struct FlattenInfo {
    int From;
    int64_t Multiplier;
    int Readers = 0, UnderstoodReaders = 0;
  };

  /// V's channel space, created on first sight; -1 when V has none.
  int spaceOf(const Value *V) {
    if (!V)
      return -1;
    if (auto It = SpaceOf.find(V); It != SpaceOf.end())
      return It->second;
    const ir::TensorType &T = V->type();
    if (V->isInitializer() || !T.hasRank() ||
        (T.rank() != 4 && T.rank() != 2) || !T.dim(1).isStatic() ||
        Flattened.count(V))
      return -1;
    int S = static_cast<int>(Spaces.size());
    Spaces.push_back({S, T.dim(1).value(), "", {}, {}, {}, {}, {}, 0, {}});
    SpaceOf[V] = S;
    return S;
  }

  void block(int S, const std::string &Why) {
    if (S < 0)
      return;
    Space &R = Spaces[find(S)];
    if (R.Blocked.empty())
      R.Blocked = Why;
  }

  void join(int A, int B) {
    if (A < 0 || B < 0)
      return block(A < 0 ? B : A, "joined with a tensor without channels");
    A = find(A);
    B = find(B);
    if (A == B)
      return;
    Space &X = Spaces[A], &Y = Spaces[B];
    if (X.Channels != Y.Channels) {
      block(A, "channel counts differ across an elementwise op");
      block(B, "channel counts differ across an elementwise op");
    }
    Y.Parent = A;
    if (X.Blocked.empty())
      X.Blocked = Y.Blocked;
    auto Move = [](auto &To, auto &From) {
      To.insert(To.end(), From.begin(), From.end());
      From.clear();
    };
    Move(X.Slices, Y.Slices);
    Move(X.Producers, Y.Producers);
    Move(X.ProducerW, Y.ProducerW);
    Move(X.BatchNorms, Y.BatchNorms);
    Move(X.Depthwise, Y.Depthwise);
    Move(X.Reshapes, Y.Reshapes);
    X.Concats += Y.Concats;
  }

  /// Operand I of N when it is an f32 constant, or null.
  Value *constWeight(const Node &N, size_t I) {
    if (!N.hasInput(I))
      return nullptr;
    Value *W = N.input(I);
    const rt::Tensor *T = constantOf(W);
    return T && T->dtype() == DType::F32 ? W : nullptr;
  }

  void addSlice(int S, Node &N, size_t I, int64_t Axis, int64_t Mult = 1) {
    if (S >= 0)
      Spaces[find(S)].Slices.push_back({&N, I, Axis, Mult});
  }

  void addProducer(int S, Node &N, int64_t Axis) {
    Space &R = Spaces[find(S)];
    R.Producers.push_back(&N);
    R.ProducerW.push_back({&N, 1, Axis, 1});
  }

  void blockAll(const Node &N, const std::string &Why) {
    for (const Value *V : N.inputs())
      block(spaceOf(V), Why);
    for (const Value *V : N.outputs())
      block(spaceOf(V), Why);
  }

  /// The channel space a 2-d features input A carries, through a Flatten
  /// (with its multiplier); -1 and Mult 1 when none.
  int featureSpace(const Value *A, int64_t &Mult) {
    Mult = 1;
    if (auto It = Flattened.find(A); It != Flattened.end()) {
      It->second.UnderstoodReaders++;
      Mult = It->second.Multiplier;
      return It->second.From;
    }
    return spaceOf(A);
  }

  void visitConv(Node &N) {
    Value *X = N.input(0), *Y = N.output(0);
    Value *W = constWeight(N, 1);
    Value *B = constWeight(N, 2);
    int SX = spaceOf(X), SY = spaceOf(Y);
    if (!W || W->type().rank() != 4 || (N.hasInput(2) && !B))
      return blockAll(N, "a Conv without constant f32 weights");
    if (!X->type().hasRank() || X->type().rank() != 4)
      return blockAll(N, "a Conv that is not 2-d");
    int64_t Group = N.attrInt("group");
    int64_t Cin = X->type().dim(1).value(), Cout = W->type().dim(0).value();
    if (Group == 1) {
      addSlice(SX, N, 1, 1);
      addProducer(SY, N, 0);
      addSlice(SY, N, 1, 0);
      if (B)
        addSlice(SY, N, 2, 0);
    } else if (Group == Cin && Cout == Cin) {
      join(SX, SY); // Depthwise: each channel filters itself.
      addSlice(SY, N, 1, 0);
      if (B)
        addSlice(SY, N, 2, 0);
      Spaces[find(SY)].Depthwise.push_back(&N);
    } else {
      blockAll(N, "a grouped Conv");
    }
  }

  void visitProduct(Node &N) {
    bool Gemm = N.op() == OpKind::Gemm;
    bool Fused = N.op() == OpKind::FusedMatMul; // cpu-fuse-epilogues'.
    Value *A = N.input(0), *Y = N.output(0);
    Value *W = constWeight(N, 1);
    if (!W || W->type().rank() != 2 || !A->type().hasRank() ||
        A->type().rank() != 2 || (Gemm && N.attrInt("transA") != 0))
      return blockAll(N, "a product without its own constant 2-d weights");
    bool TransB = (Gemm || Fused) && N.attrInt("transB") != 0;
    int64_t Mult = 1;
    int SA = featureSpace(A, Mult);
    int SY = spaceOf(Y);
    addSlice(SA, N, 1, TransB ? 1 : 0, Mult);
    addProducer(SY, N, TransB ? 0 : 1);
    addSlice(SY, N, 1, TransB ? 0 : 1);
    if (Gemm && N.hasInput(2)) {
      Value *C = constWeight(N, 2);
      if (C && C->type().rank() == 1)
        addSlice(SY, N, 2, 0);
      else if (!(C && C->type().staticNumel() == std::optional<int64_t>(1)))
        block(SY, "a Gemm bias that is not a [N] constant");
    }
    if (Fused && N.hasInput(2)) {
      Value *C = constWeight(N, 2);
      if (C && C->type().rank() == 1)
        addSlice(SY, N, 2, 0);
      else
        block(SY, "a FusedMatMul bias that is not a [N] constant");
    }
    if (Fused && N.hasInput(3)) // The residual: the result's channels.
      join(SY, spaceOf(N.input(3)));
  }

  /// Whether Reshape N of a 4-d X acts as Flatten(axis=1): its result is
  /// 2-d with C*H*W features (so its first dim is N's batch). The traced
  /// torch.flatten is one, with a computed shape.
  static bool isFlatteningReshape(const Node &N) {
    const ir::TensorType &T = N.input(0)->type(), &Y = N.output(0)->type();
    if (N.op() != OpKind::Reshape || !T.hasRank() || T.rank() != 4 ||
        !Y.hasRank() || Y.rank() != 2 || !Y.dim(1).isStatic())
      return false;
    int64_t Features = 1;
    for (int64_t D = 1; D < 4; ++D) {
      if (!T.dim(D).isStatic())
        return false;
      Features *= T.dim(D).value();
    }
    return Y.dim(1).value() == Features;
  }

  void visitFlatten(Node &N) {
    Value *X = N.input(0), *Y = N.output(0);
    const ir::TensorType &T = X->type();
    bool Reshape = isFlatteningReshape(N);
    if ((!Reshape && (N.op() != OpKind::Flatten || N.attrInt("axis") != 1)) ||
        !T.hasRank() || T.rank() != 4 || !T.dim(2).isStatic() ||
        !T.dim(3).isStatic())
      return blockAll(N, "a reshape the analysis does not follow");
    int SX = spaceOf(X);
    // Its shape operand would go stale: the pass makes it a Flatten.
    if (Reshape && SX >= 0)
      Spaces[find(SX)].Reshapes.push_back(&N);
    int64_t K = T.dim(2).value() * T.dim(3).value();
    if (K == 1)
      return join(SX, spaceOf(Y));
    Flattened[Y] = {SX, K};
    for (const ir::Use &U : Y->uses()) {
      (void)U;
      Flattened[Y].Readers++;
    }
    if (G.isOutput(Y))
      block(SX, "a graph output");
  }

  void visitConcat(Node &N) {
    Value *Y = N.output(0);
    int SY = spaceOf(Y);
    int64_t Rank = Y->type().hasRank() ? Y->type().rank() : 0;
    int64_t Axis = N.attrInt("axis");
    if (SY < 0 || (Axis != 1 && Axis != 1 - Rank))
      return blockAll(N, "a Concat along another axis");
    ConcatInfo C{SY, {}};
    for (Value *V : N.inputs()) {
      int S = spaceOf(V);
      if (S < 0)
        return blockAll(N, "a Concat of a tensor without channels");
      C.Ins.push_back({S, V->type().dim(1).value()});
    }
    Spaces[find(SY)].Concats++;
    Concats.push_back(std::move(C));
  }

  void visitElementwise(Node &N) {
    Value *Y = N.output(0);
    int SY = spaceOf(Y);
    if (SY < 0)
      return blockAll(N, "an elementwise op without a channel axis");
    const ir::TensorType &YT = Y->type();
    for (size_t I = 0; I < N.numInputs(); ++I) {
      Value *V = N.input(I);
      if (!V)
        continue;
      const ir::TensorType &T = V->type();
      std::optional<int64_t> Numel = T.staticNumel();
      if (constantOf(V)) {
        if (Numel == std::optional<int64_t>(1))
          continue; // A scalar applies to every channel.
        // A per-channel constant: [C, 1, 1] / [1, C, 1, 1] (or [C] of a
        // 2-d tensor), sliced with the channels.
        if (T.hasRank() && Numel == std::optional<int64_t>(YT.dim(1).value())) {
          int64_t Axis = T.rank() - (YT.rank() - 1);
          if (Axis >= 0 && T.dim(Axis).isStatic() &&
              T.dim(Axis).value() == YT.dim(1).value()) {
            addSlice(SY, N, I, Axis);
            continue;
          }
        }
        return blockAll(N, "a constant operand that is not per channel");
      }
      if (!T.hasRank() || T.rank() != YT.rank() || !T.dim(1).isStatic() ||
          T.dim(1).value() != YT.dim(1).value())
        return blockAll(N, "operands with different channel axes");
      join(spaceOf(V), SY); // Residual Add, SE Mul, activations.
    }
  }

  /// Whether Shape node N is only read for the batch dim (Gathers of index
  /// 0, as a traced flatten computes its target shape): channels may go.
  static bool readsBatchDimOnly(const Node &N) {
    if (N.attrInt("start") != 0 || !N.output(0)->hasUses())
      return false;
    for (const ir::Use &U : N.output(0)->uses()) {
      const Node &G = *U.User;
      if (G.op() != OpKind::Gather || U.Index != 0 || G.attrInt("axis") != 0)
        return false;
      const rt::Tensor *I = constantOf(G.input(1));
      if (!I || I->numel() != 1 || I->getFlat(0) != 0)
        return false;
    }
    return true;
  }

  void visit(Node &N) {
    switch (N.op()) {
    case OpKind::Shape:
      if (readsBatchDimOnly(N))
        return;
      break;
    case OpKind::Conv:
      return visitConv(N);
    case OpKind::Gemm:
    case OpKind::MatMul:
    case OpKind::FusedMatMul:
      return visitProduct(N);
    case OpKind::Flatten:
    case OpKind::Reshape:
      return visitFlatten(N);
    case OpKind::Concat:
      return visitConcat(N);
    case OpKind::BatchNormalization: {
      bool Own = N.numOutputs() == 1;
      for (size_t I = 1; I < 5 && Own; ++I)
        Own = constWeight(N, I) && N.input(I)->type().rank() == 1;
      if (!Own)
        return blockAll(N, "a BatchNormalization without constant parameters");
      int S = spaceOf(N.input(0));
      join(S, spaceOf(N.output(0)));
      for (size_t I = 1; I < 5; ++I)
        addSlice(S, N, I, 0);
      if (S >= 0)
        Spaces[find(S)].BatchNorms.push_back(&N);
      return;
    }
    case OpKind::MaxPool:
    case OpKind::AveragePool:
    case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool:
    case OpKind::Dropout:
      if (N.numOutputs() > 1 && N.output(1) && N.output(1)->hasUses())
        return blockAll(N, "pooling indices or a dropout mask are read");
      return join(spaceOf(N.input(0)), spaceOf(N.output(0)));
    default:
      break;
    }
    if (ir::hasTrait(N.op(), ir::OpTrait::Elementwise) && N.numOutputs() == 1)
      return visitElementwise(N);
    blockAll(N, "read by " + std::string(N.schema().Name));
  }

  ir::Graph &G;
  std::unordered_map<const Value *, int> SpaceOf;
  std::unordered_map<const Value *, FlattenInfo> Flattened;
};

/// Per-channel importance of group S under criterion Crit.
std::vector<double> importance(const Space &S, const std::string &Crit,
                               std::mt19937 &Rng) {
  std::vector<double> Imp(static_cast<size_t>(S.Channels), 0.0);
  if (Crit == "random") {
    std::uniform_real_distribution<double> U(0, 1);
    for (double &V : Imp)
      V = U(Rng);
    return Imp;
  }
  if (Crit == "bn" && !S.BatchNorms.empty()) {
    for (const Node *BN : S.BatchNorms) {
      const rt::Tensor &Gamma = *constantOf(BN->input(1));
      for (int64_t C = 0; C < S.Channels; ++C)
        Imp[C] += std::fabs(Gamma.getFlat(C));
    }
    return Imp;
  }
  for (const Slice &P : S.ProducerW) {
    const rt::Tensor W = constantOf(P.User->input(P.Input))->contiguous();
    int64_t Axis = P.Axis;
    int64_t Inner = 1;
    for (int64_t D = Axis + 1; D < static_cast<int64_t>(W.rank()); ++D)
      Inner *= W.size(D);
    const float *X = W.data<float>();
    for (int64_t I = 0, N = W.numel(); I < N; ++I) {
      int64_t C = (I / Inner) % S.Channels;
      Imp[C] += Crit == "l2" ? double(X[I]) * X[I] : std::fabs(X[I]);
    }
  }
  if (Crit == "l2")
    for (double &V : Imp)
      V = std::sqrt(V);
  return Imp;
}

} // namespace

const ir::Value *channelConstantSource(const ir::Value *V) {
  while (V && V->producer() && V->producer()->op() == OpKind::Identity)
    V = V->producer()->input(0);
  return V;
}

ChannelPruningPlan planChannelPruning(ir::Graph &G,
                                      const ChannelPruningOptions &O) {
  const double Ratio = O.Ratio;
  NNG_CHECK(Ratio >= 0 && Ratio < 1, "prune-channels: ratio ", Ratio,
            " is outside [0, 1)");
  static const char *Criteria[] = {"l1", "l2", "bn", "random"};
  if (std::find(std::begin(Criteria), std::end(Criteria), O.Criterion) ==
      std::end(Criteria))
    fail(ErrorKind::InvalidArgument, "prune-channels: criterion '", O.Criterion,
         "' is not one of l1, l2, bn, random");
  const int64_t Round = std::max<int64_t>(1, O.Round);
  checkPatternsMatch(G, O.Exclude, "prune-channels: exclude pattern");
  ir::inferTypes(G);
  ChannelGraph CG(G);
  CG.analyze();
  const bool Debug = debugEnabled("prune-channels");
  std::mt19937 Rng(static_cast<uint32_t>(O.Seed));
  ChannelPruningPlan Plan;
  std::map<std::string, int64_t> &Left = Plan.LeftAlone;
  auto LabelOf = [](const Space &S) {
    if (S.Producers.empty())
      return std::string("(no producer)");
    const Node *P = S.Producers.front();
    return P->name().empty() ? P->output(0)->name() : P->name();
  };
  auto RoundUp = [&](int64_t Keep, int64_t C) {
    Keep = std::max<int64_t>(Keep, 1);
    return std::min(C, (Keep + Round - 1) / Round * Round);
  };

  // 1. Which groups may lose channels, and their importance.
  std::vector<int> Eligible;
  std::map<int, std::vector<double>> Imp;
  for (size_t I = 0; I < CG.Spaces.size(); ++I) {
    Space &S = CG.Spaces[I];
    if (S.Parent != static_cast<int>(I) || S.Concats > 0)
      continue; // Joined elsewhere, or follows its Concat's inputs.
    std::string Why = S.Blocked;
    if (Why.empty() && S.Producers.empty())
      Why = "no convolution or linear layer makes these channels";
    for (const Node *P : S.Producers)
      if (Why.empty() && matchesNodePattern(*P, O.Exclude))
        Why = "excluded";
    if (Why.empty() &&
        RoundUp(S.Channels - static_cast<int64_t>(
                                 std::floor(Ratio * double(S.Channels))),
                S.Channels) >= S.Channels &&
        !O.Global)
      Why = "too few channels to remove any at this ratio and rounding";
    if (!Why.empty()) {
      ++Left[Why];
      if (Debug)
        debugStream() << "prune-channels: group of " << LabelOf(S) << " ("
                      << S.Channels << " channels) left alone: " << Why << "\n";
      continue;
    }
    Eligible.push_back(static_cast<int>(I));
    Imp[static_cast<int>(I)] = importance(S, O.Criterion, Rng);
  }

  // 2. How many channels each keeps: its own share, or (global) the
  // channels below the global cut of importance relative to the group's
  // mean.
  std::map<int, int64_t> KeepCount;
  if (O.Global) {
    std::vector<std::pair<double, int>> All;
    int64_t Total = 0;
    for (int G0 : Eligible) {
      const std::vector<double> &V = Imp[G0];
      double Mean = std::accumulate(V.begin(), V.end(), 0.0) / V.size();
      for (double X : V)
        All.push_back({Mean > 0 ? X / Mean : 0.0, G0});
      Total += static_cast<int64_t>(V.size());
    }
    std::stable_sort(All.begin(), All.end());
    std::map<int, int64_t> Removed;
    auto Cut = static_cast<size_t>(std::floor(Ratio * double(Total)));
    for (size_t I = 0; I < Cut && I < All.size(); ++I)
      ++Removed[All[I].second];
    for (int G0 : Eligible)
      KeepCount[G0] =
          RoundUp(CG.Spaces[G0].Channels - Removed[G0], CG.Spaces[G0].Channels);
  } else {
    for (int G0 : Eligible) {
      int64_t C = CG.Spaces[G0].Channels;
      KeepCount[G0] =
          RoundUp(C - static_cast<int64_t>(std::floor(Ratio * double(C))), C);
    }
  }
  std::map<int, std::vector<int64_t>> Kept; ///< Group root -> kept indices.
  for (int G0 : Eligible) {
    const Space &S = CG.Spaces[G0];
    if (KeepCount[G0] >= S.Channels) {
      ++Left["too few channels to remove any at this ratio and rounding"];
      continue;
    }
    const std::vector<double> &V = Imp[G0];
    std::vector<int64_t> Order(static_cast<size_t>(S.Channels));
    std::iota(Order.begin(), Order.end(), 0);
    std::stable_sort(Order.begin(), Order.end(),
                     [&](int64_t A, int64_t B) { return V[A] > V[B]; });
    Order.resize(static_cast<size_t>(KeepCount[G0]));
    std::sort(Order.begin(), Order.end());
    Kept[G0] = std::move(Order);
  }

  // 3. A Concat's result keeps its inputs' kept channels, at their offsets
  // (in graph order, so a Concat of Concats sees its inputs' choices).
  for (const ConcatInfo &C : CG.Concats) {
    int R = CG.find(C.Out);
    if (!CG.Spaces[R].Blocked.empty())
      continue;
    std::vector<int64_t> K;
    int64_t Offset = 0;
    for (const auto &[In, Channels] : C.Ins) {
      auto It = Kept.find(CG.find(In));
      for (int64_t I = 0; I < Channels; ++I)
        if (It == Kept.end() ||
            std::binary_search(It->second.begin(), It->second.end(), I))
          K.push_back(Offset + I);
      Offset += Channels;
    }
    if (static_cast<int64_t>(K.size()) < Offset)
      Kept[R] = std::move(K);
  }

  // 4. The plan: every member of every group that loses channels.
  for (auto &[R, K] : Kept) {
    const Space &S = CG.Spaces[R];
    ChannelGroupPlan P;
    P.Label = LabelOf(S);
    P.Channels = S.Channels;
    P.Kept = std::move(K);
    P.Slices = S.Slices;
    P.Depthwise = S.Depthwise;
    P.Reshapes = S.Reshapes;
    P.FromConcat = S.Concats > 0;
    if (Debug)
      debugStream() << "prune-channels: group of " << P.Label << " ("
                    << S.Producers.size() << " producer(s)"
                    << (P.FromConcat ? ", a Concat's result" : "")
                    << "): " << S.Channels << " -> " << P.Kept.size()
                    << " channels\n";
    Plan.Groups.push_back(std::move(P));
  }
  if (Plan.Groups.empty() && Ratio > 0) {
    std::ostringstream Msg;
    Msg << "prune-channels: no channel group of graph '" << G.name()
        << "' can be pruned";
    for (const auto &[Why, Count] : Left)
      Msg << "; " << Count << " left alone: " << Why;
    Msg << " (see --debug-only=prune-channels)";
    fail(ErrorKind::InvalidArgument, Msg.str());
  }
  return Plan;
}

/// T with only the entries Keep of axis Axis (each Mult consecutive ones).
rt::Tensor gatherChannels(const rt::Tensor &T, int64_t Axis,
                          const std::vector<int64_t> &Keep, int64_t Mult) {
  rt::Tensor C = T.isContiguous() ? T : T.contiguous();
  std::vector<int64_t> Dims(C.shape().begin(), C.shape().end());
  int64_t Outer = 1, Inner = static_cast<int64_t>(dtypeSize(C.dtype()));
  for (int64_t D = 0; D < Axis; ++D)
    Outer *= Dims[D];
  for (size_t D = Axis + 1; D < Dims.size(); ++D)
    Inner *= Dims[D];
  int64_t Len = Dims[Axis];
  Dims[Axis] = static_cast<int64_t>(Keep.size()) * Mult;
  rt::Tensor Out = rt::Tensor::empty(Shape(Dims), C.dtype());
  const char *Src = static_cast<const char *>(C.rawData());
  char *Dst = static_cast<char *>(Out.rawData());
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t K : Keep) {
      std::memcpy(Dst, Src + (O * Len + K * Mult) * Inner,
                  static_cast<size_t>(Mult * Inner));
      Dst += Mult * Inner;
    }
  return Out;
}

} // namespace nng::passes
