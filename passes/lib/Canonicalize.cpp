//===- Canonicalize.cpp - canonicalize: fold constants, drop no-ops -------===//
//
// Local simplifications driven to a fixed point by the greedy pattern
// driver: constant folding (ConstantFolding.cpp), removal of ops that do
// nothing (Identity, inference-mode Dropout, Reshape/Expand to the same
// shape, identity Transpose, Cast to the same dtype, zero Pad, one-input
// Concat, full-range Slice, Squeeze/Unsqueeze pairs that cancel) and simple
// algebra (x*1, x+0, x-0, x/1, Neg(Neg(x)), Transpose(Transpose(x))), and
// an If with a constant condition replaced by its taken branch's nodes
// (ControlFlowRules.cpp).
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

#include "nngraph/rewrite/RewriteUtils.h"
#include "TransposeRules.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"
#include "nngraph/runtime/Error.h"

#include <limits>

namespace nng::passes {
namespace {

using namespace detail;
using ir::OpKind;

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
  return R.replaceOp(N, N.input(0));
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
    R.replaceWithNewValue(Mask, Ones->output());
  }
  return R.replaceOp(N, X);
}

/// Removes N when its input and result have the same static shape.
bool removeSameShape(ir::Node &N, PatternRewriter &R) {
  std::optional<Shape> In = N.input(0)->type().staticShape();
  std::optional<Shape> Out = N.output()->type().staticShape();
  if (!In || !Out)
    return R.decline(N, "shape is not static");
  if (*In != *Out)
    return R.decline(N, "changes the shape");
  return R.replaceOp(N, N.input(0));
}

bool removeNoopCast(ir::Node &N, PatternRewriter &R) {
  if (N.input(0)->type().dtype() != N.output()->type().dtype())
    return R.decline(N, "changes the dtype");
  return R.replaceOp(N, N.input(0));
}

bool removeZeroPad(ir::Node &N, PatternRewriter &R) {
  std::optional<std::vector<int64_t>> Pads = constantInts(N.input(1));
  if (!Pads)
    return R.decline(N, "pads are not constant");
  for (int64_t P : *Pads)
    if (P != 0)
      return R.decline(N, "pads are not all zero");
  return R.replaceOp(N, N.input(0));
}

bool removeSingleConcat(ir::Node &N, PatternRewriter &R) {
  if (N.numInputs() != 1)
    return false;
  return R.replaceOp(N, N.input(0));
}

/// Expand to the same static shape, or to a shape of ones no longer than
/// the input's rank (which never changes any shape).
bool removeNoopExpand(ir::Node &N, PatternRewriter &R) {
  const ir::TensorType &In = N.input(0)->type();
  std::optional<std::vector<int64_t>> To = constantInts(N.input(1));
  if (To && In.hasRank() && static_cast<int64_t>(To->size()) <= In.rank() &&
      std::all_of(To->begin(), To->end(), [](int64_t D) { return D == 1; }))
    return R.replaceOp(N, N.input(0));
  return removeSameShape(N, R);
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
  return R.replaceOp(N, N.input(0));
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
  return R.replaceOp(N, P->input(0));
}

bool removeDoubleNeg(ir::Node &N, PatternRewriter &R) {
  ir::Node *P = N.input(0)->producer();
  if (!P || P->op() != OpKind::Neg)
    return false;
  return R.replaceOp(N, P->input(0));
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

/// The rule x op c -> x (and c op x -> x when Commutes) for a constant c
/// that is all Neutral and leaves x's dtype and shape as they are.
MatchAndRewriteFn removeNeutralOperand(double Neutral, bool Commutes) {
  return [=](ir::Node &N, PatternRewriter &R) {
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
        return R.replaceOp(N, X);
    }
    return Why ? R.decline(N, Why) : false;
  };
}

class CanonicalizePass final : public RulePass {
public:
  CanonicalizePass()
      : RulePass("canonicalize",
                 "fold constants, remove no-op nodes and simplify x*1, x+0, "
                 "...") {
    declareOption("max-folded-elements", int64_t(1) << 20,
                  "largest constant (in elements) that folding may create");
    // Folding refines types (a folded shape makes a Reshape's result
    // static), which can enable more rules: re-infer and go again.
    setRounds(4);
  }

  bool run(ir::Graph &G) override {
    if (intOption("max-folded-elements") < 0)
      fail(ErrorKind::InvalidArgument,
           "pass 'canonicalize': option 'max-folded-elements' must not be "
           "negative, got ",
           intOption("max-folded-elements"));
    return RulePass::run(G);
  }

private:
  RewritePatternList rules() const override {
    RewritePatternList Rules = {
        // Constant{value_float(s) | value_int(s)} -> Constant{value = tensor}
        {OpKind::Constant, "canonical-constant", canonicalConstant},
        // Identity(x) -> x
        {OpKind::Identity, "remove-identity", removeIdentity},
        // Dropout(x) -> x, mask -> ConstantOfShape(Shape(x), true) (inference)
        {OpKind::Dropout, "remove-dropout", removeDropout},
        // Reshape(x, s) -> x when s is x's static shape
        {OpKind::Reshape, "remove-noop-reshape", removeSameShape},
        // Cast(x, t) -> x, CastLike(x, y) -> x when x's dtype is t
        {{OpKind::Cast, OpKind::CastLike}, "remove-noop-cast", removeNoopCast},
        // Pad(x, 0) -> x
        {OpKind::Pad, "remove-zero-pad", removeZeroPad},
        // Concat(x) -> x
        {OpKind::Concat, "remove-single-concat", removeSingleConcat},
        // Expand(x, s) -> x when s changes no shape
        {OpKind::Expand, "remove-noop-expand", removeNoopExpand},
        // Slice(x, full range, step 1) -> x
        {OpKind::Slice, "remove-full-slice", removeFullSlice},
        // Unsqueeze(Squeeze(x, a), a) -> x, Squeeze(Unsqueeze(x, a), a) -> x
        {{OpKind::Squeeze, OpKind::Unsqueeze},
         "cancel-squeeze-pair",
         cancelSqueezePair},
        // Neg(Neg(x)) -> x
        {OpKind::Neg, "remove-double-neg", removeDoubleNeg},
        // x + 0 -> x, 0 + x -> x
        {OpKind::Add, "add-zero", removeNeutralOperand(0.0, true)},
        // x - 0 -> x
        {OpKind::Sub, "sub-zero", removeNeutralOperand(0.0, false)},
        // x * 1 -> x, 1 * x -> x
        {OpKind::Mul, "mul-one", removeNeutralOperand(1.0, true)},
        // x / 1 -> x
        {OpKind::Div, "div-one", removeNeutralOperand(1.0, false)},
    };
    // Transpose(Transpose(x, p), q) -> Transpose(x, p∘q); Transpose(x, id) -> x
    for (RewritePattern &P : transposeRules())
      Rules.push_back(std::move(P));
    // If(constant c) -> the taken branch's nodes (ControlFlowRules.cpp)
    for (RewritePattern &P : controlFlowRules())
      Rules.push_back(std::move(P));
    // op(constants) -> constant (ConstantFolding.cpp)
    for (RewritePattern &P :
         constantFoldingRules(intOption("max-folded-elements")))
      Rules.push_back(std::move(P));
    return Rules;
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() {
  return std::make_unique<CanonicalizePass>();
}

} // namespace nng::passes
