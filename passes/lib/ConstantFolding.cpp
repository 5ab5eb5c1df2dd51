//===- ConstantFolding.cpp - canonicalize's constant-folding patterns -----===//
//
// Folds nodes whose results are known before the graph runs into
// initializers: any node all of whose inputs are constants (initializers with
// data or Constant outputs) is evaluated on the reference backend, so folding
// never re-implements an op; Shape and Size of a value with a fully static
// type, and Gather of static entries of a Shape, are constants even when the
// value itself is not. A folded result keeps the name of the value it
// replaces. Declines (counted, and explained under --debug-only=canonicalize):
// results larger than max-folded-elements, random ops, leaf-module calls
// (nng.ModuleCall), nodes with regions (If, Loop: a loop may not end),
// elided input data and evaluation failures. One rule,
// rooted at any op, does the general folding.
//
//===----------------------------------------------------------------------===//

#include "ConstantCone.h"
#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/Debug.h"

#include <algorithm>

namespace nng::passes::detail {
namespace {

/// ONNX Shape-15's [start, end) window over a rank-Rank shape.
std::pair<int64_t, int64_t> shapeWindow(const ir::Node &N, int64_t Rank) {
  auto Clamp = [&](int64_t V) {
    if (V < 0)
      V += Rank;
    return std::clamp<int64_t>(V, 0, Rank);
  };
  int64_t Start = Clamp(N.attrInt("start"));
  int64_t End = N.attrs().has("end") ? Clamp(N.attrInt("end")) : Rank;
  return {Start, std::max(Start, End)};
}

/// Shape(x) where x's type is fully static (x itself need not be constant).
bool foldShape(ir::Node &N, PatternRewriter &R) {
  std::optional<Shape> S = N.input(0)->type().staticShape();
  if (!S)
    return R.decline(N, "input shape is not static");
  auto [Start, End] = shapeWindow(N, static_cast<int64_t>(S->rank()));
  std::vector<int64_t> Dims(S->begin() + Start, S->begin() + End);
  R.replaceWithInitializer(N.output(), shapeTensor(Dims));
  R.eraseNode(&N);
  return true;
}

/// Size(x) where x's element count is static.
bool foldSize(ir::Node &N, PatternRewriter &R) {
  std::optional<int64_t> Numel = N.input(0)->type().staticNumel();
  if (!Numel)
    return R.decline(N, "input shape is not static");
  R.replaceWithInitializer(N.output(), Tensor::scalar<int64_t>(*Numel));
  R.eraseNode(&N);
  return true;
}

/// Gather(Shape(x), constant indices) along axis 0 where every selected dim
/// of x is static, even when other dims of x are not ("x.shape[1]").
bool foldShapeGather(ir::Node &N, PatternRewriter &R) {
  ir::Node *Sh = N.input(0)->producer();
  if (!Sh || Sh->op() != ir::OpKind::Shape ||
      ir::constantValue(N.input(1)) == nullptr)
    return false;
  const ir::TensorType &T = Sh->input(0)->type();
  if (!T.hasRank())
    return R.decline(N, "rank of the shaped value is unknown");
  auto [Start, End] = shapeWindow(*Sh, T.rank());
  const Tensor &Idx = *ir::constantValue(N.input(1));
  std::vector<int64_t> Dims;
  int64_t Len = End - Start;
  for (int64_t I : Idx.toIntVector()) {
    if (I < -Len || I >= Len)
      return R.decline(N, "index out of range");
    const ir::Dim &D = T.dim(Start + (I < 0 ? I + Len : I));
    if (!D.isStatic())
      return R.decline(N, "a selected dim is not static");
    Dims.push_back(D.value());
  }
  Tensor Data = shapeTensor(Dims).reshape(Idx.shape());
  R.replaceWithInitializer(N.output(), Data);
  R.eraseNode(&N);
  return true;
}

/// Any node (but Constant) whose inputs are all constants.
bool foldConstant(ir::Node &N, PatternRewriter &R, int64_t MaxElements) {
  if (N.op() == ir::OpKind::Constant)
    return false; // Already folded (canonical-constant's).
  if (N.hasRegions())
    return R.decline(N, "a node with regions (a loop may not end)");
  bool Elided = false;
  for (ir::Value *V : N.inputs()) {
    if (!V || ir::constantValue(V))
      continue;
    if (!V->isInitializer())
      return false; // Not a candidate: a runtime input.
    Elided = true;
  }
  if (Elided)
    return R.decline(N, "input data is elided");
  // A leaf module's callback may be impure (and may not exist yet); a
  // random op's value is a draw, not a constant.
  if (!N.isPure()) {
    const ir::OpSchema &S = N.schema();
    if (S.has(ir::OpTrait::Impure))
      return R.decline(N, "impure op (" + S.qualifiedName() +
                              " calls back into C++)");
    if (S.has(ir::OpTrait::RandomInTraining))
      return R.decline(N, "random op (" + std::string(S.Name) +
                              " in training mode)");
    return R.decline(N, "random op");
  }
  for (ir::Value *O : N.outputs()) {
    std::optional<int64_t> Numel = O->type().staticNumel();
    if (Numel && *Numel > MaxElements)
      return R.decline(N, "result larger than max-folded-elements");
  }
  std::vector<Tensor> Results;
  try {
    // Run N alone on the reference backend with its constant inputs.
    Results = evaluateNodes({&N}, std::vector<const ir::Value *>(
                                      N.outputs().begin(), N.outputs().end()));
  } catch (const std::exception &E) {
    if (debugEnabled(R.owner().name()))
      debugStream() << "[" << R.owner().name() << "] evaluating "
                    << N.describe() << " failed: " << E.what() << "\n";
    return R.decline(N, "evaluation failed");
  }
  for (size_t I = 0; I < Results.size(); ++I) {
    const ir::TensorType &Declared = N.output(I)->type();
    if (Results[I].numel() > MaxElements)
      return R.decline(N, "result larger than max-folded-elements");
    if (!ir::mergeTypes(Declared,
                        ir::TensorType(Results[I].dtype(), Results[I].shape())))
      return R.decline(N, "result contradicts the declared type");
  }
  for (size_t I = 0; I < Results.size(); ++I) {
    ir::Value *O = N.output(I);
    if (O->hasUses() || R.graph().isOutput(O))
      R.replaceWithInitializer(O, Results[I].contiguous());
  }
  R.eraseNode(&N);
  return true;
}

} // namespace

RewritePatternList constantFoldingRules(int64_t MaxElements) {
  return {
      // Shape(x) -> constant when x's type is static
      {ir::OpKind::Shape, "fold-shape", foldShape},
      // Size(x) -> constant when x's element count is static
      {ir::OpKind::Size, "fold-size", foldSize},
      // Gather(Shape(x), constant i) -> constant when x's dims i are static
      {ir::OpKind::Gather, "fold-shape-gather", foldShapeGather},
      // op(constants) -> constant, evaluated on the reference backend
      {RootOps::any(), "fold-constant",
       [MaxElements](ir::Node &N, PatternRewriter &R) {
         return foldConstant(N, R, MaxElements);
       }},
  };
}

} // namespace nng::passes::detail
