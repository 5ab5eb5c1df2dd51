//===- FuseEpilogues.cpp - Conv + residual Add + activation -> FusedConv --===//
//
// The cpu backend's convolution epilogue rule (FusionRules.h): a Conv, the
// residual Add that is its result's only reader, and the activation after
// that become one nng.FusedConv, its Sum input the residual. The lowering
// (backends/lib/cpu/LowerConv.cpp) makes the node one oneDNN convolution
// with a sum post-op and the activation's eltwise post-ops, or the own loop
// after it for a clamp that must keep NaN; what depends on run-time facts
// (value bounds, speculated clamps, layouts) stays there. Everything here
// is a graph fact: single readers, graph outputs, node order, dtypes and
// symbolic shapes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/ShapeInference.h"

#include <unordered_map>

namespace nng::backends::cpu {

namespace {

/// An activation as FusedConv's attributes.
struct MatchedActivation {
  std::string Name;
  std::vector<float> Params;
};

/// The activation node Act as a fused activation the lowering computes as
/// the reference does (LowerActivation.cpp: Sigmoid and HardSigmoid are
/// not fused); nullopt with Why set when it is none.
std::optional<MatchedActivation> matchActivation(const ir::Node &Act,
                                                 std::string &Why) {
  const ir::FusedActivationInfo *Info = nullptr;
  for (const ir::FusedActivationInfo &A : ir::fusedActivations())
    if (A.Op == Act.op() && A.Op != ir::OpKind::Identity &&
        (A.GeluApproximate.empty() ||
         A.GeluApproximate == Act.attrString("approximate")))
      Info = &A;
  if (!Info || Info->Op == ir::OpKind::Sigmoid ||
      Info->Op == ir::OpKind::HardSigmoid) {
    Why = Act.schema().qualifiedName() + " is not an activation it fuses";
    return std::nullopt;
  }
  MatchedActivation M{std::string(Info->Name), {}};
  for (size_t I = 0; I < Info->Params.size(); ++I) {
    const ir::FusedActivationParam &P = Info->Params[I];
    if (!Info->ParamsAreInputs) {
      M.Params.push_back(Act.attrFloat(P.Name));
      continue;
    }
    if (!Act.hasInput(I + 1)) {
      M.Params.push_back(P.Default);
      continue;
    }
    const rt::Tensor *T = ir::constantValue(Act.input(I + 1));
    if (!T || T->dtype() != DType::F32 || T->numel() != 1) {
      Why = "Clip's " + std::string(P.Name) + " is not a constant f32 scalar";
      return std::nullopt;
    }
    M.Params.push_back(static_cast<float>(T->getFlat(0)));
  }
  // Trailing defaults are implied.
  while (!M.Params.empty() &&
         M.Params.back() == Info->Params[M.Params.size() - 1].Default)
    M.Params.pop_back();
  return M;
}

/// True when A may have B's shape: equal ranks and, where both dims are
/// known (static or symbolic), equal ones. An unknown dim (a length
/// inference could not name) is taken on trust: the lowering checks the
/// concrete shapes and declines otherwise, and the reference kernel
/// broadcasts the residual as the Add did.
bool sameShape(const ir::TensorType &A, const ir::TensorType &B) {
  if (!A.hasRank() || !B.hasRank() || A.rank() != B.rank())
    return false;
  for (int64_t D = 0; D < A.rank(); ++D)
    if (!A.dim(D).isUnknown() && !B.dim(D).isUnknown() &&
        !(A.dim(D) == B.dim(D)))
      return false;
  return true;
}

class EpilogueRule {
public:
  EpilogueRule(const FusionDeclineFn &Declined) : Declined(Declined) {}

  void run(ir::Graph &G) {
    std::unordered_map<const ir::Node *, size_t> Pos;
    std::vector<ir::Node *> Convs;
    for (const auto &N : G.nodes()) {
      Pos.emplace(N.get(), Pos.size());
      if (N->op() == ir::OpKind::Conv)
        Convs.push_back(N.get());
      if (N->op() != ir::OpKind::FusedRegion)
        for (ir::Graph *R : N->regions())
          run(*R);
    }
    for (ir::Node *N : Convs)
      rewrite(G, *N, Pos);
  }

  EpilogueFusionCounts Counts;

private:
  const FusionDeclineFn &Declined;
  std::unordered_map<const ir::Value *, bool> Known;

  bool decline(const ir::Node &N, std::string_view Stat, std::string Why) {
    if (Declined)
      Declined(N, Stat, Why);
    return false;
  }

  /// True when V's values are known when the cpu backend compiles: an
  /// initializer, or computed from such by pure nodes (it folds them).
  bool knownAtCompileTime(const ir::Value *V) {
    if (!V)
      return false;
    auto It = Known.find(V);
    if (It != Known.end())
      return It->second;
    bool K = V->isInitializer();
    if (const ir::Node *P = V->producer()) {
      K = P->isPure() && P->regions().empty();
      for (size_t I = 0; K && I < P->numInputs(); ++I)
        K = !P->hasInput(I) || knownAtCompileTime(P->input(I));
    }
    Known.emplace(V, K);
    return K;
  }

  /// True when the lowering makes Conv N one oneDNN primitive (LowerConv.cpp
  /// declines the rest, or runs them on its own loop).
  bool lowersToPrimitive(const ir::Node &N) {
    const ir::TensorType &X = N.input(0)->type(), &W = N.input(1)->type();
    if (X.dtype() != DType::F32 || !X.hasRank() ||
        (X.rank() != 3 && X.rank() != 4))
      return decline(N, "declined-input", "its input is not f32 of rank 3 or 4");
    if (!knownAtCompileTime(N.input(1)) || W.dtype() != DType::F32 ||
        !W.hasRank() || W.rank() != X.rank())
      return decline(N, "declined-weights",
                     "its weights are not f32 of the input's rank, known "
                     "at compile time");
    if (N.hasInput(2) && N.input(2)->type().dtype() != DType::F32)
      return decline(N, "declined-bias", "its bias is not f32");
    // A 1-d depthwise convolution runs on the backend's own loop, which
    // fuses nothing.
    if (X.rank() == 3 && N.attrInt("group") > 1 &&
        !(X.dim(1).isStatic() && W.dim(0).isStatic() &&
          N.attrInt("group") != X.dim(1).value()))
      return decline(N, "declined-depthwise-1d",
                     "it is (or may be) a 1-d depthwise convolution");
    return true;
  }

  /// The only reader of V, when V has one use and is no graph output.
  static ir::Node *soleReader(const ir::Graph &G, const ir::Value *V) {
    if (V->uses().size() != 1 || G.isOutput(V))
      return nullptr;
    return V->uses()[0].User;
  }

  /// Why V has no sole reader, for a decline.
  static std::pair<std::string_view, std::string>
  whyNoSoleReader(const ir::Graph &G, const ir::Value *V) {
    if (G.isOutput(V))
      return {"declined-graph-output", "%" + V->name() + " is a graph output"};
    if (V->uses().size() > 1)
      return {"declined-two-consumers",
              "%" + V->name() + " has " + std::to_string(V->uses().size()) +
                  " readers"};
    return {"declined-no-consumer", "%" + V->name() + " is not read"};
  }

  bool rewrite(ir::Graph &G, ir::Node &N,
               std::unordered_map<const ir::Node *, size_t> &Pos) {
    if (!lowersToPrimitive(N))
      return false;
    ir::Value *Y = N.output(0);
    ir::Node *U = soleReader(G, Y);
    if (!U) {
      auto [Stat, Why] = whyNoSoleReader(G, Y);
      return decline(N, Stat, Why);
    }
    // The residual Add.
    ir::Node *Sum = nullptr;
    ir::Value *Residual = nullptr, *Out = Y;
    if (U->op() == ir::OpKind::Add) {
      ir::Value *R = U->input(0) == Y ? U->input(1) : U->input(0);
      std::string Why;
      const char *Stat = nullptr;
      if (U->input(0) == U->input(1)) {
        Stat = "declined-sum-of-itself";
        Why = "the Add adds the result to itself";
      } else if (R->producer() && (!Pos.count(R->producer()) ||
                                   Pos.at(R->producer()) > Pos.at(&N))) {
        Stat = "declined-residual-after";
        Why = "the residual %" + R->name() + " is defined after the Conv";
      } else if (R->type().dtype() != DType::F32) {
        Stat = "declined-residual-dtype";
        Why = "the residual %" + R->name() + " is not f32";
      } else if (!sameShape(R->type(), Y->type())) {
        Stat = "declined-shape-mismatch";
        Why = "the residual %" + R->name() + " " + R->type().toString() +
              " is not of the result's shape " + Y->type().toString();
      }
      if (Stat) {
        decline(N, Stat, Why);
        // An activation on the Conv's result alone still fuses; an Add
        // does not.
        return false;
      }
      Sum = U;
      Residual = R;
      Out = U->output(0);
      U = soleReader(G, Out);
    }
    // The activation.
    ir::Node *Act = nullptr;
    std::optional<MatchedActivation> M;
    if (U && U->input(0) == Out) {
      std::string Why;
      M = matchActivation(*U, Why);
      if (M)
        Act = U;
      else if (!Sum)
        return decline(N, "declined-activation", Why);
    } else if (!Sum) {
      if (U)
        return decline(N, "declined-not-data-operand",
                       "the result is not its reader's data operand");
      auto [Stat, Why] = whyNoSoleReader(G, Out);
      return decline(N, Stat, Why);
    }
    if (Act)
      Out = Act->output(0);

    ir::AttrMap Attrs = N.attrs();
    Attrs.set("activation", ir::Attribute(M ? M->Name : std::string("Identity")));
    if (M && !M->Params.empty())
      Attrs.set("activation_params", ir::Attribute(M->Params));
    std::vector<ir::Value *> Ins = {N.input(0), N.input(1),
                                    N.hasInput(2) ? N.input(2) : nullptr};
    if (Residual)
      Ins.push_back(Residual);
    else if (!Ins.back())
      Ins.pop_back();
    std::string Name = Out->name();
    ir::Node *F = G.addNode(ir::OpKind::FusedConv, std::move(Ins),
                            {G.uniqueName(Name + ".fused")}, std::move(Attrs),
                            &N);
    F->setName(N.name());
    F->setScope(N.scope());
    F->output(0)->setType(Out->type());
    Pos[F] = Pos.at(&N);
    G.replaceAllUsesWith(Out, F->output(0));
    for (ir::Node *Dead : {Act, Sum, &N})
      if (Dead)
        G.eraseNode(Dead);
    G.rename(F->output(0), Name);
    ++Counts.Fused;
    Counts.Sums += Sum != nullptr;
    Counts.Activations += Act != nullptr;
    return true;
  }
};

} // namespace

EpilogueFusionCounts fuseConvEpilogues(ir::Graph &G,
                                       const FusionDeclineFn &Declined) {
  EpilogueRule R(Declined);
  R.run(G);
  return R.Counts;
}

} // namespace nng::backends::cpu
