//===- Regions.cpp - Subgraphs owned by nodes (If, Loop) -----------------===//
//
// Typing regions (joining branch and iteration types, instantiating a region
// for its node's input types), binding captures to implicit inputs, and
// lifting a region into a standalone graph for a backend to compile.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Regions.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

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

void inferRegionTypes(Node &N) {
  for (Graph *R : N.regions()) {
    for (Value *C : R->captures())
      if (C->captureIndex() < N.numInputs() && N.input(C->captureIndex()))
        C->setType(N.input(C->captureIndex())->type());
    if (N.op() == OpKind::Loop && R->inputs().size() >= 2) {
      R->inputs()[0]->setType(TensorType(DType::I64, std::vector<Dim>{}));
      R->inputs()[1]->setType(TensorType(DType::Bool, std::vector<Dim>{}));
      // A loop-carried argument the region leaves untyped (or types with
      // another dtype) takes its initial value's dtype and rank.
      for (size_t J = 2; J < R->inputs().size(); ++J) {
        Value *Arg = R->inputs()[J];
        if (J >= N.numExplicitInputs() || !N.input(J))
          break;
        const TensorType &Init = N.input(J)->type();
        const TensorType &Decl = Arg->type();
        if (Decl.hasRank() && Decl.dtype() == Init.dtype())
          continue;
        Arg->setType(Init.hasRank()
                         ? TensorType(Init.dtype(),
                                      std::vector<Dim>(Init.rank()))
                         : TensorType(Init.dtype()));
      }
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
