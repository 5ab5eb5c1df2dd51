//===- RuleUtils.cpp - What the cpu backend's fusion rules share ----------===//
//
// The graph facts of RuleUtils.h: activations the lowering fuses, single
// readers, shapes, compile-time values.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/ShapeInference.h"

namespace nng::backends::cpu::rules {

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
      M.Params.push_back(Act.attrByName(P.Name).f());
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

std::optional<std::pair<std::string_view, std::string>>
residualDecline(const ir::Node &Add, const ir::Value *R, const ir::Value *Y,
                const ir::Node &N, const NodePositions &Pos,
                std::string_view What) {
  if (Add.input(0) == Add.input(1))
    return std::pair{std::string_view("declined-sum-of-itself"),
                     std::string("the Add adds the result to itself")};
  if (R->producer() &&
      (!Pos.count(R->producer()) || Pos.at(R->producer()) > Pos.at(&N)))
    return std::pair{std::string_view("declined-residual-after"),
                     "the residual %" + R->name() + " is defined after the " +
                         std::string(What)};
  if (R->type().dtype() != DType::F32)
    return std::pair{std::string_view("declined-residual-dtype"),
                     "the residual %" + R->name() + " is not f32"};
  if (!sameShape(R->type(), Y->type()))
    return std::pair{std::string_view("declined-shape-mismatch"),
                     "the residual %" + R->name() + " " +
                         R->type().toString() +
                         " is not of the result's shape " +
                         Y->type().toString()};
  return std::nullopt;
}

ActivationTail matchActivationTail(const ir::Graph &G, ir::Node *U,
                                   const ir::Value *Out, bool FusedBefore) {
  ActivationTail T;
  if (U && U->input(0) == Out) {
    std::string Why;
    T.M = matchActivation(*U, Why);
    if (T.M)
      T.Act = U;
    else if (!FusedBefore)
      T.Decline = std::pair{std::string_view("declined-activation"), Why};
  } else if (!FusedBefore) {
    T.Decline = U ? std::pair{std::string_view("declined-not-data-operand"),
                              std::string("the result is not its reader's "
                                          "data operand")}
                  : whyNoSoleReader(G, Out);
  }
  return T;
}

void setActivationAttrs(ir::AttrMap &A,
                        const std::optional<MatchedActivation> &M) {
  A.set("activation", ir::Attribute(M ? M->Name : std::string("Identity")));
  if (M && !M->Params.empty())
    A.set("activation_params", ir::Attribute(M->Params));
}

std::vector<ir::Value *> fusedInputs(ir::Value *X, ir::Value *W,
                                     ir::Value *Bias, ir::Value *Residual) {
  std::vector<ir::Value *> Ins = {X, W, Bias};
  if (Residual)
    Ins.push_back(Residual);
  else if (!Bias)
    Ins.pop_back();
  return Ins;
}

ir::Node *replaceByFused(ir::Graph &G, ir::OpKind Op, ir::Node &N,
                         std::vector<ir::Value *> Ins, ir::AttrMap Attrs,
                         ir::Value *Out,
                         std::initializer_list<ir::Node *> Fused,
                         NodePositions &Pos) {
  std::string Name = Out->name();
  ir::Node *F = G.addNode(Op, std::move(Ins), {G.uniqueName(Name + ".fused")},
                          std::move(Attrs), &N);
  F->setName(N.name());
  F->setScope(N.scope());
  F->output(0)->setType(Out->type());
  Pos[F] = Pos.at(&N);
  G.replaceAllUsesWith(Out, F->output(0));
  for (ir::Node *Dead : Fused)
    if (Dead)
      G.eraseNode(Dead);
  G.eraseNode(&N);
  G.rename(F->output(0), Name);
  return F;
}

void rewriteCandidates(
    ir::Graph &G, const std::function<bool(const ir::Node &)> &IsCandidate,
    const std::function<void(ir::Graph &, ir::Node &, NodePositions &)>
        &Rewrite) {
  NodePositions Pos;
  std::vector<ir::Node *> Candidates;
  for (const auto &N : G.nodes()) {
    Pos.emplace(N.get(), Pos.size());
    if (IsCandidate(*N))
      Candidates.push_back(N.get());
    if (N->op() != ir::OpKind::FusedRegion)
      for (ir::Graph *R : N->regions())
        rewriteCandidates(*R, IsCandidate, Rewrite);
  }
  for (ir::Node *N : Candidates)
    Rewrite(G, *N, Pos);
}

bool declineFusion(const FusionDeclineFn &Declined, const ir::Node &N,
                   std::string_view Stat, const std::string &Why) {
  if (Declined)
    Declined(N, Stat, Why);
  return false;
}

bool sameShape(const ir::TensorType &A, const ir::TensorType &B) {
  if (!A.hasRank() || !B.hasRank() || A.rank() != B.rank())
    return false;
  for (int64_t D = 0; D < A.rank(); ++D)
    if (!A.dim(D).isUnknown() && !B.dim(D).isUnknown() &&
        !(A.dim(D) == B.dim(D)))
      return false;
  return true;
}

ir::Node *soleReader(const ir::Graph &G, const ir::Value *V) {
  if (V->uses().size() != 1 || G.isOutput(V))
    return nullptr;
  return V->uses()[0].User;
}

std::pair<std::string_view, std::string> whyNoSoleReader(const ir::Graph &G,
                                                         const ir::Value *V) {
  if (G.isOutput(V))
    return {"declined-graph-output", "%" + V->name() + " is a graph output"};
  if (V->uses().size() > 1)
    return {"declined-two-consumers", "%" + V->name() + " has " +
                                          std::to_string(V->uses().size()) +
                                          " readers"};
  return {"declined-no-consumer", "%" + V->name() + " is not read"};
}

bool CompileTimeValues::known(const ir::Value *V) {
  if (!V)
    return false;
  auto It = Known.find(V);
  if (It != Known.end())
    return It->second;
  bool K = V->isInitializer();
  if (const ir::Node *P = V->producer()) {
    K = P->isPure() && P->regions().empty();
    for (size_t I = 0; K && I < P->numInputs(); ++I)
      K = !P->hasInput(I) || known(P->input(I));
  }
  Known.emplace(V, K);
  return K;
}

} // namespace nng::backends::cpu::rules
