//===- LowerControlFlow.cpp - If nodes whose branch is known at compile ---===//
//
// Exported models branch on shapes: torch's Squeeze of a dim that may be 1
// becomes `If(Equal(Gather(Shape(x), k), 1))`, an LSTM's state handling
// `If(Not(Equal(Size(Shape(h)), 2)))`. At one compile's concrete shapes the
// condition is a constant (specializeNode folds the Shape arithmetic), so
// the If is lowered as the nodes of the branch it takes, in place: the
// branch's captures are the outer values they are bound to, its
// initializers constants, its nodes lowered like the graph's (nested Ifs
// the same way), and the If's results are the branch's. Its branches
// otherwise join into a type of unknown shape and the whole graph would
// run node by node. A Program that chose a branch is not reshaped to other
// shapes (they may choose the other one): a new shape compiles. An If whose
// condition is known only at run time keeps its node kernel, which runs
// each branch as an executable of its own, compiled once.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/runtime/Error.h"

namespace nng::backends::cpu {

void numberNodes(LowerContext &C, const ir::Graph &G) {
  for (const auto &NP : G.nodes()) {
    if (NP->op() == ir::OpKind::If)
      for (const ir::Graph *R : NP->regions())
        numberNodes(C, *R);
    C.Order.emplace(NP.get(), C.Order.size());
  }
}

std::optional<bool> lowerChosenBranch(LowerContext &C, const ir::Node &N) {
  const ValueSlot &Cond = C.slotOfValue(N.input(0));
  if (Cond.Kind != SlotKind::Constant || Cond.Const.numel() != 1)
    return std::nullopt;
  bool Then = C.constantOf(N.input(0))->getFlat(0) != 0;
  const ir::Attribute *A =
      Then ? N.attrs().find("then_branch") : N.attrs().find("else_branch");
  if (!A || !A->graphPtr())
    return std::nullopt; // The node kernel reports it.
  const ir::Graph &B = A->g();
  // Each result must be a value the branch computes, once: a capture or a
  // constant passed through would make the If's result share an outer
  // value's slot, which a later in-place step could overwrite.
  if (B.outputs().size() != N.numOutputs())
    return std::nullopt;
  std::unordered_set<const ir::Value *> Seen;
  for (const ir::Value *O : B.outputs())
    if (!O->producer() || !Seen.insert(O).second)
      return std::nullopt;
  for (const ir::Value *V : B.initializers())
    if (!V->data().defined())
      return std::nullopt;

  for (const ir::Value *Cap : B.captures())
    C.SlotOf[Cap] = C.slotOf(N.input(Cap->captureIndex()));
  for (const ir::Value *V : B.initializers())
    C.SlotOf[V] = C.B.newConstant(V->data(), V->name(), V);
  for (const ir::Value *O : B.outputs())
    C.BranchResults.insert(O);
  for (const auto &BN : B.nodes())
    if (!C.Done.count(BN.get()) && !lowerNode(C, *BN))
      return false;
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    const ir::Value *O = B.outputs()[I];
    const ValueSlot &S = C.slotOfValue(O);
    const ir::TensorType &Declared = N.output(I)->type();
    if (Declared.dtype() != S.Type)
      fail(ErrorKind::ShapeMismatch, C.describe(N), ": its ",
           Then ? "then" : "else", " branch gives %", O->name(), " of dtype ",
           dtypeName(S.Type), " for result ", I, " declared ",
           dtypeName(Declared.dtype()));
    C.SlotOf[N.output(I)] = C.slotOf(O);
  }
  ++C.program().ChosenBranches;
  return true;
}

} // namespace nng::backends::cpu
