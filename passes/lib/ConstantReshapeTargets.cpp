//===- ConstantReshapeTargets.cpp - constant-reshape-targets
//---------------===//
//
// Exporters write a view of dynamic size as shape arithmetic: torch's
// x.view(N, S * 6, 64) becomes Reshape(x, Concat(Unsqueeze(Gather(Shape(y),
// 0)), Unsqueeze(Mul(Gather(Shape(y), 1), 6)), [64])). Its target then
// changes with every input shape, so an engine computes it again per shape
// (a dozen tiny nodes per view). Shape inference knows the symbols of y's
// dims; this pass reads the target's elements through Shape, Gather,
// Unsqueeze, Squeeze, Concat, Slice and Cast as constants, symbols or
// unknowns, and gives the Reshape a constant target when ONNX's rules make
// one equivalent: an element that is the same symbol as the Reshape
// input's dim at that position becomes 0 (copy that dim), and the one
// element left unknown, if only one, becomes -1 (inferred from the total).
// The shape arithmetic left unused is erased by dce.
//
// Symbols name equal extents (the IR's rule, from ONNX's dim_param): S at
// two places is one run-time value. A target with a zero element, or a
// Reshape with allowzero set, is left alone (0 would then mean zero). At a
// zero-size input a -1 cannot be inferred (the Reshape then fails, as ONNX
// Runtime's does), where the computed target gave the size.
//
// A Reshape whose target keeps more than one unknown element still gets
// the elements' symbols as its result's dims, so the next layer's shapes
// have them (types are inferred again between rounds). When those elements
// are the whole shape of a value the arithmetic reads through a Shape
// (torch's attention: the projection's result reshaped back to [S, N,
// 384], read from Shape of the layer's [S, N, 384] input), the target
// becomes that value's Shape: one node instead of a chain of six.
//
// Statistics: "constant-reshape-target" (Reshapes rewritten or refined),
// of which "refined-reshape-type" (results given symbols) and
// "reshape-target-as-shape" (targets made one Shape); declines,
// under --debug-only=constant-reshape-targets: "more than one element
// unknown", "zero-size dim".
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace nng::passes {
namespace {

using namespace detail;

/// One element of an integer shape vector: a constant, the extent a
/// symbol names, or unknown.
struct ShapeElem {
  enum Kind { Const, Sym, Unknown } K = Unknown;
  int64_t C = 0;
  std::string S;
};
using ShapeElems = std::vector<ShapeElem>;

/// Longest shape vector read, and deepest chain of nodes followed.
constexpr size_t MaxElems = 16;
constexpr int MaxDepth = 32;

using Sources = std::vector<const ir::Value *>;
std::optional<ShapeElems> elemsOf(const ir::Value *V, int Depth,
                                  Sources *Read = nullptr);

/// The elements of a constant integer value, or nullopt.
std::optional<ShapeElems> constantElems(const ir::Value *V) {
  std::optional<std::vector<int64_t>> Ints = constantInts(V);
  if (!Ints || Ints->size() > MaxElems)
    return std::nullopt;
  ShapeElems E;
  for (int64_t X : *Ints)
    E.push_back({ShapeElem::Const, X, {}});
  return E;
}

/// The elements of V's data (a rank-0 or rank-1 integer value whose length
/// is known) as its producer computes them; elements nothing tells are
/// Unknown; nullopt when even the length is not known. Read, when given,
/// collects the values whose Shape the arithmetic reads.
std::optional<ShapeElems> elemsOf(const ir::Value *V, int Depth,
                                  Sources *Read) {
  if (!V)
    return std::nullopt;
  if (std::optional<ShapeElems> C = constantElems(V))
    return C;
  const ir::TensorType &T = V->type();
  if (!T.hasRank() || T.rank() > 1 || !isIntegral(T.dtype()))
    return std::nullopt;
  std::optional<int64_t> Len = T.staticNumel();
  if (!Len || *Len > static_cast<int64_t>(MaxElems))
    return std::nullopt;
  ShapeElems Unknowns(static_cast<size_t>(*Len));
  const ir::Node *P = V->producer();
  if (!P || Depth > MaxDepth)
    return Unknowns;
  switch (P->op()) {
  case ir::OpKind::Shape: {
    const ir::TensorType &In = P->input(0)->type();
    if (!In.hasRank())
      return Unknowns;
    if (Read)
      Read->push_back(P->input(0));
    int64_t R = In.rank();
    int64_t Start = P->attrInt("start");
    int64_t End = P->attrs().has("end") ? P->attrInt("end") : R;
    Start = std::clamp(Start < 0 ? Start + R : Start, int64_t(0), R);
    End = std::clamp(End < 0 ? End + R : End, int64_t(0), R);
    ShapeElems E;
    for (int64_t I = Start; I < End; ++I) {
      const ir::Dim &D = In.dim(I);
      if (D.isStatic())
        E.push_back({ShapeElem::Const, D.value(), {}});
      else if (D.isSymbolic())
        E.push_back({ShapeElem::Sym, 0, D.symbol()});
      else
        E.push_back({});
    }
    if (E.size() != Unknowns.size())
      return Unknowns;
    return E;
  }
  case ir::OpKind::Gather: {
    std::optional<ShapeElems> Data = elemsOf(P->input(0), Depth + 1, Read);
    std::optional<std::vector<int64_t>> Idx = constantInts(P->input(1));
    if (!Data || !Idx || P->attrInt("axis") != 0)
      return Unknowns;
    ShapeElems E;
    int64_t N = static_cast<int64_t>(Data->size());
    for (int64_t I : *Idx) {
      if (I < -N || I >= N)
        return Unknowns;
      E.push_back((*Data)[static_cast<size_t>(I < 0 ? I + N : I)]);
    }
    if (E.size() != Unknowns.size())
      return Unknowns;
    return E;
  }
  case ir::OpKind::Unsqueeze:
  case ir::OpKind::Squeeze:
  case ir::OpKind::Cast:
  case ir::OpKind::Identity: {
    // Same elements, another rank (0 <-> 1) or integer dtype.
    if (P->op() == ir::OpKind::Cast && !isIntegral(P->input(0)->type().dtype()))
      return Unknowns;
    std::optional<ShapeElems> E = elemsOf(P->input(0), Depth + 1, Read);
    if (!E || E->size() != Unknowns.size())
      return Unknowns;
    return E;
  }
  case ir::OpKind::Concat: {
    ShapeElems E;
    for (const ir::Value *In : P->inputs()) {
      std::optional<ShapeElems> Part = elemsOf(In, Depth + 1, Read);
      if (!Part)
        return Unknowns;
      E.insert(E.end(), Part->begin(), Part->end());
    }
    if (E.size() != Unknowns.size())
      return Unknowns;
    return E;
  }
  default:
    return Unknowns;
  }
}

/// True when V's type has exactly the dims E names: its symbols where E has
/// symbols, its static extents where E has constants.
bool hasDims(const ir::Value *V, const ShapeElems &E) {
  const ir::TensorType &T = V->type();
  if (!T.hasRank() || static_cast<size_t>(T.rank()) != E.size())
    return false;
  for (size_t I = 0; I < E.size(); ++I) {
    const ir::Dim &D = T.dim(I);
    const ShapeElem &X = E[I];
    if (!(X.K == ShapeElem::Sym ? D.isSymbolic() && D.symbol() == X.S
                                : X.K == ShapeElem::Const && X.C > 0 &&
                                      D.isStatic() && D.value() == X.C))
      return false;
  }
  return true;
}

/// True when Target is Shape(Y) of the whole of Y.
bool isWholeShapeOf(const ir::Value *Target, const ir::Value *Y) {
  const ir::Node *P = Target->producer();
  return P && P->op() == ir::OpKind::Shape && P->input(0) == Y &&
         P->attrInt("start") == 0 && !P->attrs().has("end");
}

/// The rule at a Reshape (see the file comment).
bool constantReshapeTarget(ir::Node &N, PatternRewriter &R) {
  if (constantInts(N.input(1)) || N.attrInt("allowzero") != 0)
    return false; // Constant already, or 0 means zero.
  Sources Read;   // The values whose Shape the target reads.
  std::optional<ShapeElems> E = elemsOf(N.input(1), 0, &Read);
  if (!E)
    return false;
  const ir::TensorType &In = N.input(0)->type();
  std::vector<int64_t> Target;
  int Open = 0; // Elements left to -1.
  bool Learned = false;
  for (size_t I = 0; I < E->size(); ++I) {
    const ShapeElem &X = (*E)[I];
    if (X.K == ShapeElem::Const) {
      if (X.C == 0)
        return R.decline(N, "zero-size dim");
      Open += X.C == -1;
      Target.push_back(X.C);
      continue;
    }
    Learned = true;
    if (X.K == ShapeElem::Sym && In.hasRank() &&
        static_cast<int64_t>(I) < In.rank() && In.dim(I).isSymbolic() &&
        In.dim(I).symbol() == X.S) {
      Target.push_back(0); // The input's dim I, copied.
      continue;
    }
    ++Open;
    Target.push_back(-1);
  }
  if (!Learned)
    return false; // Canonicalize folds an all-constant target.
  if (Open > 1) {
    // No constant target. When the elements are the whole shape of a value
    // the arithmetic reads, the target is that value's Shape: one node, not
    // a chain to compute again at each new shape.
    auto Whole =
        std::find_if(Read.begin(), Read.end(),
                     [&](const ir::Value *Y) { return hasDims(Y, *E); });
    const ir::Value *Y = Whole == Read.end() ? nullptr : *Whole;
    if (Y && !isWholeShapeOf(N.input(1), Y)) {
      ir::Node *Sh = R.create(ir::OpKind::Shape, {const_cast<ir::Value *>(Y)},
                              {N.output()->name() + ".shape"}, {}, &N);
      ir::Node *Re = R.create(ir::OpKind::Reshape, {N.input(0), Sh->output()},
                              {N.output()->name()}, {}, &N);
      Sh->setScope(N.scope());
      Re->setScope(N.scope());
      R.replaceWithNewValue(N.output(), Re->output());
      R.eraseNode(&N);
      R.owner().bumpStatistic("reshape-target-as-shape");
      return true;
    }
    // The result's dims are the elements' symbols (the next layer's
    // Reshapes read them).
    std::vector<ir::Dim> Dims;
    for (const ShapeElem &X : *E)
      Dims.push_back(X.K == ShapeElem::Sym               ? ir::Dim::symbol(X.S)
                     : X.K == ShapeElem::Const && X.C > 0 ? ir::Dim(X.C)
                                                         : ir::Dim());
    const ir::TensorType &Out = N.output()->type();
    std::optional<ir::TensorType> M =
        ir::mergeTypes(Out, ir::TensorType(Out.dtype(), std::move(Dims)));
    if (M && !(*M == Out)) {
      N.output()->setType(*M);
      R.owner().bumpStatistic("refined-reshape-type");
      return true;
    }
    return R.decline(N, "more than one element unknown");
  }
  ir::Value *ShapeV =
      R.addConstant(N.output()->name() + ".shape", shapeTensor(Target));
  ir::Node *Re = R.create(ir::OpKind::Reshape, {N.input(0), ShapeV},
                          {N.output()->name()}, {}, &N);
  Re->setScope(N.scope());
  R.replaceWithNewValue(N.output(), Re->output());
  R.eraseNode(&N);
  return true;
}

/// The rule, run again after types are inferred anew (a refined result
/// gives the next layer's shapes their symbols).
class ConstantReshapeTargetsPass final : public RulePass {
public:
  ConstantReshapeTargetsPass()
      : RulePass("constant-reshape-targets",
                 "give a Reshape whose target is computed from shapes a "
                 "constant one (0: keep the input's dim, -1: the rest) where "
                 "the symbolic dims prove it",
                 RewritePatternList{
                     // Reshape(x, Concat(.. Gather(Shape(y), i) ..))
                     //   -> Reshape(x, [0, -1, 64])
                     {{ir::OpKind::Reshape},
                      "constant-reshape-target",
                      constantReshapeTarget},
                 }) {
    setRounds(16);
  }
};

} // namespace

std::unique_ptr<Pass> createConstantReshapeTargetsPass() {
  return std::make_unique<ConstantReshapeTargetsPass>();
}

} // namespace nng::passes
