//===- Canonicalize.cpp - canonicalize: fold constants, drop no-ops -------===//
//
// Local simplifications driven to a fixed point by the greedy pattern
// driver: constant folding (ConstantFolding.cpp), removal of ops that do
// nothing (Identity, inference-mode Dropout, Reshape/Expand to the same
// shape, identity Transpose, Cast to the same dtype, zero Pad, one-input
// Concat, full-range Slice, Squeeze/Unsqueeze pairs that cancel) and simple
// algebra (x*1, x+0, x-0, x/1, Neg(Neg(x)), Transpose(Transpose(x))).
// Constant nodes are written in their 'value' tensor form.
//
// A pattern whose root does not have the shape it looks for (no constant
// operand, no Neg producer) simply does not apply; one whose shape matches
// but whose precondition fails declines with a reason, counted as
// "declined: PATTERN: REASON" and printed under --debug-only=canonicalize.
// x+0 -> x keeps x's sign where x is -0.0 (IEEE gives +0.0), as graph
// optimizers do; every other rewrite is exact. Between rounds of the driver,
// types are re-inferred so that folded shapes make later no-ops visible.
// Initializers that only folded nodes used are erased; graph outputs keep
// their names.
//
//===----------------------------------------------------------------------===//

#include "RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <limits>
#include <unordered_set>

namespace nng::passes {
namespace {

using namespace detail;
using ir::OpKind;
using PatternList = std::vector<std::unique_ptr<RewritePattern>>;

/// Replaces N's result Out by To and erases N, unless that would change the
/// graph's interface.
bool forward(ir::Node &N, ir::Value *Out, ir::Value *To, PatternRewriter &R) {
  if (const char *Why = replaceBlocker(R.graph(), Out, To))
    return R.decline(N, Why);
  R.replaceValue(Out, To);
  R.eraseNode(&N);
  return true;
}

/// A pattern given as a function (most patterns are a few lines).
class FnPattern final : public RewritePattern {
public:
  using Fn = bool (*)(ir::Node &, PatternRewriter &);
  FnPattern(OpKind Root, std::string Name, Fn F)
      : RewritePattern(Root, std::move(Name)), F(F) {}
  bool matchAndRewrite(ir::Node &N, PatternRewriter &R) const override {
    return F(N, R);
  }

private:
  Fn F;
};

/// Constant {value_float | value_floats | value_int | value_ints} ->
/// Constant {value = tensor}, the form constant folding understands.
bool canonicalConstant(ir::Node &N, PatternRewriter &R) {
  if (N.attrs().has("value"))
    return false;
  Tensor T = constantNodeTensor(N);
  if (!T.defined())
    return R.decline(N, "string constant");
  N.attrs() = ir::AttrMap();
  N.setAttr("value", std::move(T));
  return true;
}

bool removeIdentity(ir::Node &N, PatternRewriter &R) {
  return forward(N, N.output(), N.input(0), R);
}

/// Dropout without training_mode, or with a constant false one, is the
/// identity; its mask (when used) is all true, built from x's shape.
bool removeDropout(ir::Node &N, PatternRewriter &R) {
  if (N.hasInput(2)) {
    const Tensor *Mode = ir::constantValue(N.input(2));
    if (!Mode)
      return R.decline(N, "training_mode is not a constant");
    if (Mode->getFlat(0) != 0)
      return R.decline(N, "training mode");
  }
  ir::Graph &G = R.graph();
  ir::Value *X = N.input(0);
  ir::Value *Mask = N.numOutputs() > 1 ? N.output(1) : nullptr;
  bool MaskUsed = Mask && (Mask->hasUses() || G.isOutput(Mask));
  if (const char *Why = replaceBlocker(G, N.output(), X))
    return R.decline(N, Why);
  if (MaskUsed) {
    ir::Node *Sh =
        R.create(OpKind::Shape, {X}, {Mask->name() + ".shape"}, {}, &N);
    ir::AttrMap A;
    A.set("value", Tensor::fromVector<bool>({true}, Shape{1}));
    ir::Node *Ones = R.create(OpKind::ConstantOfShape, {Sh->output()},
                              {Mask->name()}, std::move(A), &N);
    replaceWithNewValue(R, Mask, Ones->output());
  }
  R.replaceValue(N.output(), X);
  R.eraseNode(&N);
  return true;
}

bool removeNoopReshape(ir::Node &N, PatternRewriter &R) {
  std::optional<Shape> In = N.input(0)->type().staticShape();
  std::optional<Shape> Out = N.output()->type().staticShape();
  if (!In || !Out)
    return R.decline(N, "shape is not static");
  if (*In != *Out)
    return R.decline(N, "changes the shape");
  return forward(N, N.output(), N.input(0), R);
}

bool removeIdentityTranspose(ir::Node &N, PatternRewriter &R) {
  std::optional<std::vector<int64_t>> Perm = transposePerm(N);
  if (!Perm)
    return R.decline(N, "rank unknown");
  if (!isIdentityPerm(*Perm))
    return R.decline(N, "perm is not the identity");
  return forward(N, N.output(), N.input(0), R);
}

/// Transpose(Transpose(x, p), q) -> Transpose(x, p∘q), or x.
bool composeTransposes(ir::Node &N, PatternRewriter &R) {
  ir::Node *P = N.input(0)->producer();
  if (!P || P->op() != OpKind::Transpose)
    return false;
  std::optional<std::vector<int64_t>> Inner = transposePerm(*P);
  std::optional<std::vector<int64_t>> Outer = transposePerm(N);
  if (!Inner || !Outer)
    return R.decline(N, "rank unknown");
  if (Inner->size() != Outer->size())
    return R.decline(N, "permutations of different ranks");
  std::vector<int64_t> Perm = composePerms(*Inner, *Outer);
  if (isIdentityPerm(Perm))
    return forward(N, N.output(), P->input(0), R);
  ir::AttrMap A;
  A.set("perm", Perm);
  ir::Node *T = R.create(OpKind::Transpose, {P->input(0)}, {N.output()->name()},
                         std::move(A), &N);
  T->setScope(N.scope());
  replaceWithNewValue(R, N.output(), T->output());
  R.eraseNode(&N);
  return true;
}

bool removeNoopCast(ir::Node &N, PatternRewriter &R) {
  if (N.input(0)->type().dtype() != N.output()->type().dtype())
    return R.decline(N, "changes the dtype");
  return forward(N, N.output(), N.input(0), R);
}

bool removeZeroPad(ir::Node &N, PatternRewriter &R) {
  std::optional<std::vector<int64_t>> Pads = constantInts(N.input(1));
  if (!Pads)
    return R.decline(N, "pads are not constant");
  for (int64_t P : *Pads)
    if (P != 0)
      return R.decline(N, "pads are not all zero");
  return forward(N, N.output(), N.input(0), R);
}

bool removeSingleConcat(ir::Node &N, PatternRewriter &R) {
  if (N.numInputs() != 1)
    return false;
  return forward(N, N.output(), N.input(0), R);
}

/// Expand to the same static shape, or to a shape of ones no longer than
/// the input's rank (which never changes any shape).
bool removeNoopExpand(ir::Node &N, PatternRewriter &R) {
  const ir::TensorType &In = N.input(0)->type();
  std::optional<std::vector<int64_t>> To = constantInts(N.input(1));
  if (To && In.hasRank() && static_cast<int64_t>(To->size()) <= In.rank() &&
      std::all_of(To->begin(), To->end(), [](int64_t D) { return D == 1; }))
    return forward(N, N.output(), N.input(0), R);
  std::optional<Shape> InS = In.staticShape();
  std::optional<Shape> OutS = N.output()->type().staticShape();
  if (!InS || !OutS)
    return R.decline(N, "shape is not static");
  if (*InS != *OutS)
    return R.decline(N, "changes the shape");
  return forward(N, N.output(), N.input(0), R);
}

/// Slice whose every sliced axis runs with step 1 from its start to its end.
bool removeFullSlice(ir::Node &N, PatternRewriter &R) {
  const ir::TensorType &T = N.input(0)->type();
  std::optional<std::vector<int64_t>> Starts = constantInts(N.input(1));
  std::optional<std::vector<int64_t>> Ends = constantInts(N.input(2));
  std::optional<std::vector<int64_t>> Axes, Steps;
  if (N.hasInput(3))
    Axes = constantInts(N.input(3));
  if (N.hasInput(4))
    Steps = constantInts(N.input(4));
  if (!Starts || !Ends || (N.hasInput(3) && !Axes) || (N.hasInput(4) && !Steps))
    return R.decline(N, "slice parameters are not constant");
  if (!T.hasRank())
    return R.decline(N, "rank unknown");
  for (size_t I = 0; I < Starts->size() && I < Ends->size(); ++I) {
    int64_t Axis = Axes && I < Axes->size() ? (*Axes)[I] : int64_t(I);
    if (Axis < 0)
      Axis += T.rank();
    if (Axis < 0 || Axis >= T.rank())
      return R.decline(N, "axis out of range");
    if (Steps && I < Steps->size() && (*Steps)[I] != 1)
      return R.decline(N, "step is not 1");
    const ir::Dim &D = T.dim(Axis);
    int64_t Start = (*Starts)[I], End = (*Ends)[I];
    bool FromStart = Start == 0 || (D.isStatic() && Start <= -D.value());
    bool ToEnd = End == std::numeric_limits<int64_t>::max() ||
                 (D.isStatic() && End >= D.value());
    if (!FromStart || !ToEnd)
      return R.decline(N, "not the full range");
  }
  return forward(N, N.output(), N.input(0), R);
}

/// The axes a Squeeze node removes, normalized against its input rank.
std::optional<std::vector<int64_t>> squeezedAxes(const ir::Node &Sq) {
  const ir::TensorType &T = Sq.input(0)->type();
  if (!T.hasRank())
    return std::nullopt;
  if (Sq.hasInput(1)) {
    std::optional<std::vector<int64_t>> A = constantInts(Sq.input(1));
    return A ? normalizeAxes(*A, T.rank()) : std::nullopt;
  }
  // No axes: every dim of extent 1, which must then all be known.
  std::vector<int64_t> Axes;
  for (int64_t I = 0; I < T.rank(); ++I) {
    if (!T.dim(I).isStatic())
      return std::nullopt;
    if (T.dim(I).value() == 1)
      Axes.push_back(I);
  }
  return Axes;
}

/// The axes an Unsqueeze node inserts, normalized against its output rank.
std::optional<std::vector<int64_t>> unsqueezedAxes(const ir::Node &Un) {
  const ir::TensorType &T = Un.input(0)->type();
  std::optional<std::vector<int64_t>> A = constantInts(Un.input(1));
  if (!T.hasRank() || !A)
    return std::nullopt;
  return normalizeAxes(*A, T.rank() + static_cast<int64_t>(A->size()));
}

/// Unsqueeze(Squeeze(x, a), a) -> x and Squeeze(Unsqueeze(x, a), a) -> x.
bool cancelSqueezePair(ir::Node &N, PatternRewriter &R) {
  bool RootIsSqueeze = N.op() == OpKind::Squeeze;
  OpKind Inner = RootIsSqueeze ? OpKind::Unsqueeze : OpKind::Squeeze;
  ir::Node *P = N.input(0)->producer();
  if (!P || P->op() != Inner)
    return false;
  std::optional<std::vector<int64_t>> Removed =
      RootIsSqueeze ? squeezedAxes(N) : squeezedAxes(*P);
  std::optional<std::vector<int64_t>> Inserted =
      RootIsSqueeze ? unsqueezedAxes(*P) : unsqueezedAxes(N);
  if (!Removed || !Inserted)
    return R.decline(N, "axes or rank unknown");
  if (*Removed != *Inserted)
    return R.decline(N, "axes differ");
  return forward(N, N.output(), P->input(0), R);
}

bool removeDoubleNeg(ir::Node &N, PatternRewriter &R) {
  ir::Node *P = N.input(0)->producer();
  if (!P || P->op() != OpKind::Neg)
    return false;
  return forward(N, N.output(), P->input(0), R);
}

/// True when broadcasting X's type against shape C gives X's shape.
bool broadcastKeepsShape(const ir::TensorType &X, const Shape &C) {
  if (!X.hasRank() || static_cast<int64_t>(C.rank()) > X.rank())
    return false;
  size_t Off = static_cast<size_t>(X.rank()) - C.rank();
  for (size_t I = 0; I < C.rank(); ++I) {
    const ir::Dim &D = X.dim(static_cast<int64_t>(Off + I));
    if (C[I] != 1 && !(D.isStatic() && D.value() == C[I]))
      return false;
  }
  return true;
}

/// x op c -> x (and c op x -> x when Commutes) when c is all Neutral.
class NeutralOperandPattern final : public RewritePattern {
public:
  NeutralOperandPattern(OpKind Op, std::string Name, double Neutral,
                        bool Commutes)
      : RewritePattern(Op, std::move(Name)), Neutral(Neutral),
        Commutes(Commutes) {}
  bool matchAndRewrite(ir::Node &N, PatternRewriter &R) const override {
    const char *Why = nullptr;
    for (int Side : {1, 0}) {
      if (Side == 0 && !Commutes)
        break;
      const Tensor *C = ir::constantValue(N.input(Side));
      ir::Value *X = N.input(1 - Side);
      if (!C)
        continue;
      if (!isSplat(*C, Neutral))
        Why = Neutral == 0 ? "constant is not all zeros"
                           : "constant is not all ones";
      else if (X->type().dtype() != N.output()->type().dtype())
        Why = "changes the dtype";
      else if (!broadcastKeepsShape(X->type(), C->shape()))
        Why = "broadcasting changes the shape";
      else
        return forward(N, N.output(), X, R);
    }
    return Why ? R.decline(N, Why) : false;
  }

private:
  double Neutral;
  bool Commutes;
};

class CanonicalizePass final : public Pass {
public:
  std::string_view name() const override { return "canonicalize"; }
  std::string_view summary() const override {
    return "fold constants, remove no-op nodes and simplify x*1, x+0, ...";
  }

  CanonicalizePass() {
    declareOption("max-folded-elements", int64_t(1) << 20,
                  "largest constant (in elements) that folding may create");
  }

  bool run(ir::Graph &G) override {
    if (intOption("max-folded-elements") < 0)
      fail(ErrorKind::InvalidArgument,
           "pass 'canonicalize': option 'max-folded-elements' must not be "
           "negative, got ",
           intOption("max-folded-elements"));
    std::unordered_set<const ir::Value *> UnusedBefore;
    for (ir::Value *V : G.initializers())
      if (!V->hasUses() && !G.isOutput(V))
        UnusedBefore.insert(V);
    PatternList Patterns = buildPatterns();
    bool Changed = false;
    // Folding refines types (a folded shape makes a Reshape's result static),
    // which can enable more patterns: re-infer and go again.
    for (int Round = 0; Round < 4; ++Round) {
      if (!applyPatternsGreedily(G, Patterns, *this))
        break;
      Changed = true;
      ir::inferTypes(G);
    }
    std::vector<ir::Value *> Dead;
    for (ir::Value *V : G.initializers())
      if (!V->hasUses() && !G.isOutput(V) && !UnusedBefore.count(V))
        Dead.push_back(V);
    for (ir::Value *V : Dead)
      G.eraseValue(V);
    bumpStatistic("initializers-erased", static_cast<int64_t>(Dead.size()));
    return Changed || !Dead.empty();
  }

private:
  PatternList buildPatterns() const {
    PatternList P;
    auto Add = [&](OpKind Op, const char *Name, FnPattern::Fn F) {
      P.push_back(std::make_unique<FnPattern>(Op, Name, F));
    };
    Add(OpKind::Constant, "canonical-constant", canonicalConstant);
    Add(OpKind::Identity, "remove-identity", removeIdentity);
    Add(OpKind::Dropout, "remove-dropout", removeDropout);
    Add(OpKind::Reshape, "remove-noop-reshape", removeNoopReshape);
    Add(OpKind::Transpose, "compose-transposes", composeTransposes);
    Add(OpKind::Transpose, "remove-identity-transpose",
        removeIdentityTranspose);
    Add(OpKind::Cast, "remove-noop-cast", removeNoopCast);
    Add(OpKind::CastLike, "remove-noop-cast", removeNoopCast);
    Add(OpKind::Pad, "remove-zero-pad", removeZeroPad);
    Add(OpKind::Concat, "remove-single-concat", removeSingleConcat);
    Add(OpKind::Expand, "remove-noop-expand", removeNoopExpand);
    Add(OpKind::Slice, "remove-full-slice", removeFullSlice);
    Add(OpKind::Squeeze, "cancel-squeeze-pair", cancelSqueezePair);
    Add(OpKind::Unsqueeze, "cancel-squeeze-pair", cancelSqueezePair);
    Add(OpKind::Neg, "remove-double-neg", removeDoubleNeg);
    auto Algebra = [&](OpKind Op, const char *Name, double V, bool Commutes) {
      P.push_back(
          std::make_unique<NeutralOperandPattern>(Op, Name, V, Commutes));
    };
    Algebra(OpKind::Add, "add-zero", 0.0, true);
    Algebra(OpKind::Sub, "sub-zero", 0.0, false);
    Algebra(OpKind::Mul, "mul-one", 1.0, true);
    Algebra(OpKind::Div, "div-one", 1.0, false);
    populateConstantFoldingPatterns(P, intOption("max-folded-elements"));
    return P;
  }

};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() {
  return std::make_unique<CanonicalizePass>();
}

} // namespace nng::passes
