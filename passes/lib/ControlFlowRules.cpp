//===- ControlFlowRules.cpp - canonicalize's control-flow rules -----------===//
//
// If with a constant condition is replaced by the nodes of the branch it
// takes, placed where the If was: the branch's captures become the outer
// values they stand for, its initializers the graph's, its nodes copies
// (regions of nested nodes copied too, their captures renamed after the new
// outer values), and the If's results keep their names. Declines when a
// result would merge two graph outputs or rename one, or when the branch
// holds an elided initializer.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"

#include "nngraph/ir/ShapeInference.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::passes::detail {
namespace {

bool inlineConstantIf(ir::Node &N, PatternRewriter &R) {
  const Tensor *Cond = ir::constantValue(N.input(0));
  if (!Cond)
    return false;
  if (Cond->numel() != 1)
    return R.decline(N, "the condition does not hold one element");
  const ir::Graph &B = Cond->getFlat(0) != 0
                           ? N.attrs().find("then_branch")->g()
                           : N.attrs().find("else_branch")->g();
  ir::Graph &G = R.graph();
  std::unordered_set<const ir::Value *> Seen;
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    const ir::Value *Src = B.outputs()[I];
    if (!Seen.insert(Src).second)
      return R.decline(N, "the branch gives one value for two results");
    if (Src->isCapture()) {
      if (const char *Why = replaceBlocker(G, N.output(I),
                                           N.input(Src->captureIndex())))
        return R.decline(N, Why);
    }
  }
  for (const ir::Value *V : B.initializers())
    if (!V->data().defined())
      return R.decline(N, "the branch holds an elided initializer");

  std::unordered_map<const ir::Value *, ir::Value *> Map;
  for (const ir::Value *C : B.captures())
    Map[C] = N.input(C->captureIndex());
  for (const ir::Value *V : B.initializers())
    Map[V] = R.addConstant(V->name(), V->data());
  for (const auto &BN : B.nodes()) {
    std::vector<ir::Value *> Ins;
    for (const ir::Value *V : BN->inputs())
      Ins.push_back(V ? Map.at(V) : nullptr);
    std::vector<std::string> Names;
    for (const ir::Value *O : BN->outputs())
      Names.push_back(O->name());
    ir::AttrMap Attrs;
    for (const auto &[Name, A] : BN->attrs())
      Attrs.setByName(Name, A.type() == ir::AttrType::Graph
                          ? ir::Attribute(std::shared_ptr<ir::Graph>(
                                A.g().clone()))
                          : A);
    ir::Node *C = R.create(BN->op(), Ins, Names, std::move(Attrs), &N);
    C->setName(BN->name());
    C->setScope(BN->scope());
    C->setNumImplicitInputs(BN->numImplicitInputs());
    // Rebinding renames the copied regions' captures after the new values.
    for (size_t I = C->numExplicitInputs(); I < C->numInputs(); ++I)
      C->setInput(I, C->input(I));
    for (size_t I = 0; I < BN->numOutputs(); ++I)
      Map[BN->output(I)] = C->output(I);
  }
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    const ir::Value *Src = B.outputs()[I];
    if (Src->isCapture())
      R.replaceValue(N.output(I), Map.at(Src));
    else
      R.replaceWithNewValue(N.output(I), Map.at(Src));
  }
  R.eraseNode(&N);
  return true;
}

} // namespace

RewritePatternList controlFlowRules() {
  return {
      // If(constant c) -> the nodes of the branch c takes
      {ir::OpKind::If, "inline-constant-if", inlineConstantIf},
  };
}

} // namespace nng::passes::detail
