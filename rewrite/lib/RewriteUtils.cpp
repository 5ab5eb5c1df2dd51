//===- RewriteUtils.cpp - Helpers shared by the simplification passes -----===//
//
// Implements the queries of RewriteUtils.h: constant data access, axis and
// permutation arithmetic, orphaned initializers.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"

#include <algorithm>

namespace nng::passes::detail {

std::optional<std::vector<int64_t>> constantInts(const ir::Value *V) {
  if (!V)
    return std::nullopt;
  const Tensor *T = ir::constantValue(V);
  if (!T || !isIntegral(T->dtype()))
    return std::nullopt;
  return T->toIntVector();
}

Tensor constantNodeTensor(const ir::Node &N) {
  const ir::AttrMap &A = N.attrs();
  if (const ir::Attribute *V = A.find("value"))
    return V->t();
  if (const ir::Attribute *V = A.find("value_float"))
    return Tensor::scalar<float>(V->f());
  if (const ir::Attribute *V = A.find("value_floats"))
    return Tensor::fromVector<float>(
        V->floats(), Shape{static_cast<int64_t>(V->floats().size())});
  if (const ir::Attribute *V = A.find("value_int"))
    return Tensor::scalar<int64_t>(V->i());
  if (const ir::Attribute *V = A.find("value_ints"))
    return Tensor::fromVector<int64_t>(
        V->ints(), Shape{static_cast<int64_t>(V->ints().size())});
  return Tensor();
}

bool isSplat(const Tensor &T, double Scalar) {
  if (T.numel() == 0)
    return false;
  for (int64_t I = 0, E = T.numel(); I < E; ++I)
    if (T.getFlat(I) != Scalar)
      return false;
  return true;
}

std::optional<std::vector<int64_t>> normalizeAxes(std::vector<int64_t> Axes,
                                                  int64_t Rank) {
  for (int64_t &A : Axes) {
    if (A < -Rank || A >= Rank)
      return std::nullopt;
    if (A < 0)
      A += Rank;
  }
  std::sort(Axes.begin(), Axes.end());
  if (std::adjacent_find(Axes.begin(), Axes.end()) != Axes.end())
    return std::nullopt;
  return Axes;
}

std::optional<std::vector<int64_t>> transposePerm(const ir::Node &N) {
  if (const ir::Attribute *P = N.attrs().find("perm"))
    return P->ints();
  const ir::TensorType &T = N.input(0)->type();
  if (!T.hasRank())
    return std::nullopt;
  std::vector<int64_t> Perm(static_cast<size_t>(T.rank()));
  for (size_t I = 0; I < Perm.size(); ++I)
    Perm[I] = static_cast<int64_t>(Perm.size() - 1 - I);
  return Perm;
}

bool isIdentityPerm(const std::vector<int64_t> &Perm) {
  for (size_t I = 0; I < Perm.size(); ++I)
    if (Perm[I] != static_cast<int64_t>(I))
      return false;
  return true;
}

std::vector<int64_t> composePerms(const std::vector<int64_t> &Inner,
                                  const std::vector<int64_t> &Outer) {
  std::vector<int64_t> C(Outer.size());
  for (size_t I = 0; I < Outer.size(); ++I)
    C[I] = Inner[static_cast<size_t>(Outer[I])];
  return C;
}

Tensor shapeTensor(const std::vector<int64_t> &Dims) {
  return Tensor::fromVector<int64_t>(
      Dims, nng::Shape{static_cast<int64_t>(Dims.size())});
}

std::unordered_set<const ir::Value *> unusedInitializers(const ir::Graph &G) {
  std::unordered_set<const ir::Value *> S;
  for (const ir::Value *V : G.initializers())
    if (!V->hasUses() && !G.isOutput(V))
      S.insert(V);
  return S;
}

int64_t eraseNewlyUnusedInitializers(
    ir::Graph &G, const std::unordered_set<const ir::Value *> &UnusedBefore) {
  std::vector<ir::Value *> Dead;
  for (ir::Value *V : G.initializers())
    if (!V->hasUses() && !G.isOutput(V) && !UnusedBefore.count(V))
      Dead.push_back(V);
  for (ir::Value *V : Dead)
    G.eraseValue(V);
  return static_cast<int64_t>(Dead.size());
}

} // namespace nng::passes::detail
