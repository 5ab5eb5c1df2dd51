//===- Regions.cpp - Subgraphs owned by nodes (If, Loop, Scan) -----------===//
//
// Typing regions (joining branch and iteration types, instantiating a region
// for its node's input types), binding captures to implicit inputs, and
// lifting a region into a standalone graph for a backend to compile.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Regions.h"
#include "TypedRegions.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <optional>

namespace nng::ir {

TensorType joinTypes(const TensorType &A, const TensorType &B) {
  if (!A.hasRank() || !B.hasRank() || A.rank() != B.rank())
    return TensorType(A.dtype());
  std::vector<Dim> Dims;
  for (int64_t I = 0; I < A.rank(); ++I)
    Dims.push_back(A.dim(I) == B.dim(I) ? A.dim(I) : Dim::unknown());
  return TensorType(A.dtype(), std::move(Dims));
}

std::unique_ptr<Graph>
instantiateRegion(const Graph &Region,
                  const std::vector<const TensorType *> &InTypes,
                  const std::vector<TensorType> *ArgTypes,
                  const std::string &Where) {
  RegionCopyScope Copy;
  if (!RegionCopyScope::another())
    fail(ErrorKind::ShapeMismatch, Where, ": typing region '", Region.name(),
         "' needs more than ", RegionCopyScope::MaxCopies,
         " typed copies of regions (loops nested too deep whose carried "
         "types change at every level)");
  std::unique_ptr<Graph> R = Region.clone();
  for (Value *C : R->captures())
    if (C->captureIndex() < InTypes.size() && InTypes[C->captureIndex()])
      C->setType(*InTypes[C->captureIndex()]);
  if (ArgTypes) {
    if (ArgTypes->size() != R->inputs().size())
      fail(ErrorKind::ShapeMismatch, Where, ": region '", R->name(),
           "' takes ", R->inputs().size(), " block arguments, not ",
           ArgTypes->size());
    for (size_t I = 0; I < ArgTypes->size(); ++I)
      R->inputs()[I]->setType((*ArgTypes)[I]);
  }
  // Every node again, without the types of the previous instantiation.
  for (const auto &N : R->nodes())
    for (Value *O : N->outputs())
      O->setType(TensorType());
  try {
    inferTypes(*R);
  } catch (Error &E) {
    E.addContext("in region '" + R->name() + "' of " + Where);
    throw;
  }
  return R;
}

namespace {

/// T's dtype and rank (less Drop dims) with unknown dims.
TensorType generic(const TensorType &T, int64_t Drop = 0) {
  if (!T.hasRank() || T.rank() < Drop)
    return TensorType(T.dtype());
  return TensorType(T.dtype(), std::vector<Dim>(T.rank() - Drop));
}

/// What block argument J of N's region takes from N's inputs when the
/// region leaves it untyped (Loop's loop-carried values, Scan's states and
/// slices), or nullopt.
std::optional<TensorType> argFromInputs(const Node &N, size_t J) {
  size_t Explicit = N.numExplicitInputs();
  if (N.op() == OpKind::Loop && J >= 2 && J < Explicit && N.input(J))
    return generic(N.input(J)->type());
  if (N.op() == OpKind::Scan && J < Explicit && N.input(J)) {
    int64_t Scanned = N.attrs().has("num_scan_inputs")
                          ? N.attrInt("num_scan_inputs")
                          : 0;
    bool IsSlice = static_cast<int64_t>(J) >=
                   static_cast<int64_t>(Explicit) - Scanned;
    return generic(N.input(J)->type(), IsSlice ? 1 : 0);
  }
  return std::nullopt;
}

} // namespace

void inferRegionTypes(Node &N) {
  for (Graph *R : N.regions()) {
    for (Value *C : R->captures())
      if (C->captureIndex() < N.numInputs() && N.input(C->captureIndex()))
        C->setType(N.input(C->captureIndex())->type());
    if (N.op() == OpKind::Loop && R->inputs().size() >= 2) {
      R->inputs()[0]->setType(TensorType(DType::I64, std::vector<Dim>{}));
      R->inputs()[1]->setType(TensorType(DType::Bool, std::vector<Dim>{}));
    }
    // A block argument the region leaves untyped (or types with another
    // dtype) takes its dtype and rank from the node's inputs.
    for (size_t J = 0; J < R->inputs().size(); ++J) {
      std::optional<TensorType> From = argFromInputs(N, J);
      const TensorType &Decl = R->inputs()[J]->type();
      if (From && !(Decl.hasRank() && Decl.dtype() == From->dtype()))
        R->inputs()[J]->setType(*From);
    }
    // Typed afresh: what the nodes had may contradict new capture types.
    for (const auto &BN : R->nodes())
      for (Value *O : BN->outputs())
        O->setType(TensorType());
    inferTypes(*R);
  }
}

std::unique_ptr<Graph> liftRegion(const Graph &Region) {
  std::unique_ptr<Graph> G = Region.clone();
  G->liftCaptures();
  // One executable serves every iteration and every shape of the outer
  // graph: inputs keep their dtype and rank only, nodes are typed again.
  for (Value *In : G->inputs())
    if (In->type().hasRank())
      In->setType(TensorType(In->type().dtype(),
                             std::vector<Dim>(In->type().rank())));
  for (const auto &N : G->nodes())
    for (Value *O : N->outputs())
      O->setType(TensorType());
  inferTypes(*G);
  return G;
}

Value *captureValue(Node &Owner, Graph &Region, Value *Outer) {
  for (Value *C : Region.captures())
    if (Owner.input(C->captureIndex()) == Outer)
      return C;
  unsigned Index = 0;
  bool Found = false;
  for (size_t I = Owner.numExplicitInputs(); I < Owner.numInputs(); ++I)
    if (Owner.input(I) == Outer) {
      Index = static_cast<unsigned>(I);
      Found = true;
    }
  if (!Found)
    Index = Owner.addImplicitInput(Outer);
  if (Value *Local = Region.lookup(Outer->name()))
    Region.rename(Local, Region.uniqueName(Outer->name()));
  return Region.addCapture(Outer->name(), Outer->type(), Index);
}

} // namespace nng::ir
