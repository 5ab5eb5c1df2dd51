//===- FusionUtils.cpp - Helpers of the folding and fusion passes --------===//
//
// Implementation of FusionUtils.h.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/ir/ShapeInference.h"

#include <algorithm>
#include <cmath>

namespace nng::passes::fusion {

bool hasSingleUse(const ir::Graph &G, const ir::Value *V) {
  return V && V->uses().size() == 1 && !G.isOutput(V);
}

ir::Node *singleUser(const ir::Graph &G, const ir::Value *V) {
  return hasSingleUse(G, V) ? V->uses()[0].User : nullptr;
}

Tensor constantF64(const ir::Value *V) {
  if (!V)
    return {};
  const Tensor *T = ir::constantValue(V);
  if (!T || !T->defined() || !isFloatingPoint(T->dtype()))
    return {};
  return T->to(DType::F64);
}

std::optional<double> constantScalar(const ir::Value *V) {
  if (!V)
    return std::nullopt;
  const Tensor *T = ir::constantValue(V);
  if (!T || !T->defined() || T->numel() != 1 || T->dtype() == DType::Bool)
    return std::nullopt;
  return T->getFlat(0);
}

bool near(double A, double B, double Tol) {
  return std::fabs(A - B) <= Tol * std::max(1.0, std::fabs(B));
}

double constantTolerance(DType T) {
  switch (T) {
  case DType::F16:
    return 4e-3;
  case DType::BF16:
    return 3e-2;
  default:
    return 1e-5;
  }
}

Tensor makeTensor(const std::vector<double> &Values, const Shape &S, DType T) {
  Tensor R = Tensor::empty(S, T);
  for (size_t I = 0; I < Values.size(); ++I)
    R.setFlat(static_cast<int64_t>(I), Values[I]);
  return R;
}

std::optional<std::vector<double>> perChannel(const Tensor &C, int64_t OutRank,
                                              int64_t M) {
  int64_t Rank = static_cast<int64_t>(C.rank());
  if (Rank > OutRank || OutRank < 2)
    return std::nullopt;
  int64_t Varying = 1;
  for (int64_t I = 0; I < Rank; ++I) {
    int64_t Axis = OutRank - Rank + I, Extent = C.size(I);
    if (Extent == 1)
      continue;
    if (Axis != 1 || Extent != M)
      return std::nullopt;
    Varying = M;
  }
  Tensor F = C.to(DType::F64);
  std::vector<double> Out(static_cast<size_t>(M));
  for (int64_t I = 0; I < M; ++I)
    Out[I] = F.getFlat(Varying == 1 ? 0 : I);
  return Out;
}

ir::Value *foldedConstant(PatternRewriter &R, ir::Value *Old,
                          const ir::Node &User, Tensor Data,
                          std::string_view Base) {
  ir::Graph &G = R.graph();
  if (Old && Old->isInitializer() && !G.isOutput(Old) &&
      Old->data().defined() && Old->data().shape() == Data.shape() &&
      Old->data().dtype() == Data.dtype()) {
    bool OnlyUser = true;
    for (const ir::Use &U : Old->uses())
      OnlyUser = OnlyUser && U.User == &User;
    if (OnlyUser) {
      Old->setData(std::move(Data));
      return Old;
    }
  }
  // A computed operand (a constant subgraph) only User reads: the data
  // takes its name and the subgraph dies.
  if (Old && Old->producer() && !G.isOutput(Old) && Old->uses().size() == 1 &&
      Old->uses().front().User == &User)
    return R.replaceWithInitializer(Old, std::move(Data));
  return R.addConstant(Base, std::move(Data));
}

std::string biasNameFor(const ir::Value *W) {
  const std::string &N = W->name();
  const std::string Suffix = ".weight";
  if (N.size() > Suffix.size() &&
      N.compare(N.size() - Suffix.size(), Suffix.size(), Suffix) == 0)
    return N.substr(0, N.size() - Suffix.size()) + ".bias";
  return N + ".bias";
}

std::optional<size_t> operandProducedBy(const ir::Node &N, ir::OpKind K) {
  for (size_t I = 0; I < 2 && I < N.numInputs(); ++I) {
    const ir::Node *P = N.input(I) ? N.input(I)->producer() : nullptr;
    if (P && P->op() == K)
      return I;
  }
  return std::nullopt;
}

ir::Value *otherOperand(const ir::Node &N, const ir::Value *V) {
  if (N.numInputs() != 2)
    return nullptr;
  if (N.input(0) == V)
    return N.input(1);
  if (N.input(1) == V)
    return N.input(0);
  return nullptr;
}

ir::Value *matchScalarOp(const ir::Value *V, ir::OpKind K, double Want) {
  const ir::Node *N = V ? V->producer() : nullptr;
  if (!N || N->op() != K || N->numInputs() != 2)
    return nullptr;
  double Tol = constantTolerance(V->type().dtype());
  bool Commutes = K == ir::OpKind::Add || K == ir::OpKind::Mul;
  for (size_t C = Commutes ? 0 : 1; C < 2; ++C) {
    auto S = constantScalar(N->input(C));
    if (S && near(*S, Want, Tol))
      return N->input(1 - C);
  }
  return nullptr;
}

ir::Node *consumerWithScalar(const ir::Graph &G, const ir::Value *V,
                             ir::OpKind K, double Want) {
  ir::Node *U = singleUser(G, V);
  if (!U || U->op() != K || U->numInputs() != 2)
    return nullptr;
  if (K == ir::OpKind::Div && U->input(0) != V)
    return nullptr;
  ir::Value *C = otherOperand(*U, V);
  std::optional<double> S = constantScalar(C);
  double Tol = constantTolerance(V->type().dtype());
  return S && near(*S, Want, Tol) ? U : nullptr;
}

std::optional<MatchedActivation> matchActivation(const ir::Node &N,
                                                 std::string &Why) {
  const ir::FusedActivationInfo *Info = nullptr;
  for (const ir::FusedActivationInfo &A : ir::fusedActivations())
    if (A.Op == N.op() && (A.GeluApproximate.empty() ||
                           A.GeluApproximate == N.attrString("approximate")))
      Info = &A;
  // Identity is the table's row for a FusedConv with no activation, not an
  // activation worth fusing.
  if (!Info || Info->Op == ir::OpKind::Identity) {
    Why = N.schema().qualifiedName() + " is not a fusable activation";
    return std::nullopt;
  }
  if (N.numInputs() == 0 || !N.input(0) ||
      !isFloatingPoint(N.input(0)->type().dtype())) {
    Why = "the activation's operand is not floating point";
    return std::nullopt;
  }
  MatchedActivation M{std::string(Info->Name), {}};
  for (size_t I = 0; I < Info->Params.size(); ++I) {
    double V = Info->Params[I].Default;
    if (Info->ParamsAreInputs) {
      if (N.hasInput(I + 1)) {
        auto S = constantScalar(N.input(I + 1));
        if (!S) {
          Why = "Clip's " + std::string(Info->Params[I].Name) +
                " is not a constant scalar";
          return std::nullopt;
        }
        if (static_cast<double>(static_cast<float>(*S)) != *S) {
          Why = "Clip's " + std::string(Info->Params[I].Name) +
                " is not exactly representable as f32";
          return std::nullopt;
        }
        V = *S;
      }
    } else {
      V = N.attrByName(Info->Params[I].Name).f();
    }
    M.Params.push_back(static_cast<float>(V));
  }
  // Trailing defaults are implied.
  while (!M.Params.empty() &&
         M.Params.back() == Info->Params[M.Params.size() - 1].Default)
    M.Params.pop_back();
  return M;
}

bool fuseWithActivation(ir::Node &P, ir::OpKind FusedOp, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  ir::Value *Y = P.output(0);
  if (G.isOutput(Y))
    return R.decline(P, "result is a graph output");
  if (Y->uses().size() != 1)
    return R.decline(P, Y->hasUses() ? "result has several consumers"
                                     : "result is unused");
  ir::Node *Act = Y->uses()[0].User;
  if (Act->input(0) != Y)
    return R.decline(P, "result is not the consumer's data operand");
  std::string Why;
  std::optional<MatchedActivation> M = matchActivation(*Act, Why);
  if (!M)
    return R.decline(P, Why);
  ir::AttrMap Attrs = P.attrs();
  Attrs.set("activation", ir::Attribute(M->Name));
  if (!M->Params.empty())
    Attrs.set("activation_params", ir::Attribute(M->Params));
  ir::Node *F =
      R.create(FusedOp, P.inputs(),
               {G.uniqueName(Act->output()->name() + ".fused")}, Attrs, Act);
  F->setName(P.name());
  F->setScope(P.scope());
  R.replaceWithNewValue(Act->output(), F->output());
  R.eraseNode(Act);
  R.eraseNode(&P);
  R.owner().bumpStatistic("fused-" + M->Name);
  return true;
}

MatchAndRewriteFn fuseActivationInto(ir::OpKind FusedOp) {
  return [FusedOp](ir::Node &N, PatternRewriter &R) {
    return fuseWithActivation(N, FusedOp, R);
  };
}

} // namespace nng::passes::fusion
