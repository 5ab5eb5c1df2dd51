//===- RewriteUtils.cpp - Helpers shared by the simplification passes -----===//
//
// Implements the queries of RewriteUtils.h: graph-interface safety of value
// replacement, constant data access, axis and permutation arithmetic.
//
//===----------------------------------------------------------------------===//

#include "RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"

#include <algorithm>

namespace nng::passes::detail {

const char *replaceBlocker(const ir::Graph &G, const ir::Value *From,
                           const ir::Value *To) {
  if (!G.isOutput(From))
    return nullptr;
  // PatternRewriter::replaceValue hands From's name to To, which works only
  // when To is a node output that is not a graph output itself.
  if (G.isOutput(To))
    return "two graph outputs would merge";
  if (!To->producer())
    return "graph output would be renamed to an input or initializer";
  return nullptr;
}

ir::Value *replaceWithInitializer(PatternRewriter &R, ir::Value *Old,
                                  Tensor Data) {
  ir::Graph &G = R.graph();
  std::string Name = Old->name();
  G.rename(Old, G.uniqueName(Name + ".folded"));
  ir::Value *Init = G.addInitializer(Name, std::move(Data));
  G.replaceAllUsesWith(Old, Init);
  return Init;
}

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

void replaceWithNewValue(PatternRewriter &R, ir::Value *Old, ir::Value *New) {
  ir::Graph &G = R.graph();
  std::string Name = Old->name();
  // Keep what the old type knew (a symbolic dim the new node's inference
  // cannot see, for instance).
  if (std::optional<ir::TensorType> T =
          ir::mergeTypes(New->type(), Old->type()))
    New->setType(*T);
  // replaceValue already hands a graph output's name over; do the same for
  // any other value.
  R.replaceValue(Old, New);
  if (New->name() != Name) {
    G.rename(Old, G.uniqueName(Name + ".old"));
    G.rename(New, Name);
  }
}

} // namespace nng::passes::detail
