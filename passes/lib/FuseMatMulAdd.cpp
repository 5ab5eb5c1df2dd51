//===- FuseMatMulAdd.cpp - fuse-matmul-add: MatMul + Add -> Gemm ---------===//
//
// Add(MatMul(A, B), C) with a 2-D A, a constant 2-D B and a C that
// broadcasts to the [M, N] result without changing it (a [N] bias, [1, N],
// [M, 1], [M, N] or a scalar) is Gemm(A, B, C). Either Add operand order
// works. The pass declines, counting why, for an A of another rank (batched
// MatMuls are not Gemms), a non-constant B, a C that is not broadcastable
// that way (or of unknown shape), and a MatMul result with other consumers.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// True when a value of type C broadcasts to Out ([M, N]) unchanged: rank
/// at most 2 and every dim, right-aligned, a static 1 or equal to Out's.
bool broadcastsTo(const ir::TensorType &C, const ir::TensorType &Out) {
  if (!C.hasRank() || C.rank() > 2 || !Out.hasRank() || Out.rank() != 2)
    return false;
  for (int64_t I = 0; I < C.rank(); ++I) {
    const ir::Dim &D = C.dim(I), &O = Out.dim(2 - C.rank() + I);
    if (D.isStatic() && D.value() == 1)
      continue;
    if (D.isUnknown() || !(D == O))
      return false;
  }
  return true;
}

/// The rule at an Add one of whose operands is a single-use MatMul.
bool fuseMatMulAdd(ir::Node &Add, PatternRewriter &R) {
  ir::Graph &G = R.graph();
  std::optional<size_t> MMIdx = operandProducedBy(Add, OpKind::MatMul);
  if (!MMIdx)
    return R.decline(Add, "no operand is produced by a MatMul");
  ir::Value *Y = Add.input(*MMIdx), *C = Add.input(1 - *MMIdx);
  ir::Node &MM = *Y->producer();
  if (!hasSingleUse(G, Y))
    return R.decline(Add, "MatMul result has other consumers");
  const ir::TensorType &TA = MM.input(0)->type();
  if (!TA.hasRank() || TA.rank() != 2)
    return R.decline(Add, "MatMul input A is not 2-D");
  const ir::TensorType &TB = MM.input(1)->type();
  if (!ir::constantValue(MM.input(1)) || !TB.hasRank() || TB.rank() != 2)
    return R.decline(Add, "MatMul input B is not a 2-D constant");
  if (!isFloatingPoint(Y->type().dtype()))
    return R.decline(Add, "not floating point");
  if (!broadcastsTo(C->type(), Y->type()) ||
      !(Add.output()->type() == Y->type()))
    return R.decline(Add, "bias does not broadcast to the [M, N] result");
  ir::Node *Gemm =
      R.create(OpKind::Gemm, {MM.input(0), MM.input(1), C},
               {G.uniqueName(Add.output()->name() + ".gemm")}, {}, &Add);
  Gemm->setName(MM.name());
  Gemm->setScope(MM.scope());
  R.replaceWithNewValue(Add.output(), Gemm->output());
  R.eraseNode(&Add);
  R.eraseNode(&MM);
  return true;
}

} // namespace

std::unique_ptr<Pass> createFuseMatMulAddPass() {
  return std::make_unique<RulePass>(
      "fuse-matmul-add", "turn MatMul(2-D A, constant B) + bias into Gemm",
      RewritePatternList{
          // Add(MatMul(A, B), C) -> Gemm(A, B, C), A 2-D, B a 2-D constant
          {OpKind::Add, "fuse-matmul-add", fuseMatMulAdd},
      });
}

} // namespace nng::passes
