// TEMPORARY stubs (replaced by the real inference functions).
#include "nngraph/ir/ShapeInference.h"
namespace nng::ir {
void inferArgReduce(InferContext &C) { C.fail("inferArgReduce: not implemented"); }
void inferBatchNorm(InferContext &C) { C.fail("inferBatchNorm: not implemented"); }
void inferBroadcast(InferContext &C) { C.fail("inferBroadcast: not implemented"); }
void inferCast(InferContext &C) { C.fail("inferCast: not implemented"); }
void inferCastLike(InferContext &C) { C.fail("inferCastLike: not implemented"); }
void inferCompare(InferContext &C) { C.fail("inferCompare: not implemented"); }
void inferConcat(InferContext &C) { C.fail("inferConcat: not implemented"); }
void inferConstant(InferContext &C) { C.fail("inferConstant: not implemented"); }
void inferConstantOfShape(InferContext &C) { C.fail("inferConstantOfShape: not implemented"); }
void inferConv(InferContext &C) { C.fail("inferConv: not implemented"); }
void inferConvTranspose(InferContext &C) { C.fail("inferConvTranspose: not implemented"); }
void inferDequantize(InferContext &C) { C.fail("inferDequantize: not implemented"); }
void inferDropout(InferContext &C) { C.fail("inferDropout: not implemented"); }
void inferExpand(InferContext &C) { C.fail("inferExpand: not implemented"); }
void inferFlatten(InferContext &C) { C.fail("inferFlatten: not implemented"); }
void inferGather(InferContext &C) { C.fail("inferGather: not implemented"); }
void inferGatherElements(InferContext &C) { C.fail("inferGatherElements: not implemented"); }
void inferGemm(InferContext &C) { C.fail("inferGemm: not implemented"); }
void inferGlobalPool(InferContext &C) { C.fail("inferGlobalPool: not implemented"); }
void inferLayerNorm(InferContext &C) { C.fail("inferLayerNorm: not implemented"); }
void inferLogical(InferContext &C) { C.fail("inferLogical: not implemented"); }
void inferLogicalNot(InferContext &C) { C.fail("inferLogicalNot: not implemented"); }
void inferMatMul(InferContext &C) { C.fail("inferMatMul: not implemented"); }
void inferPad(InferContext &C) { C.fail("inferPad: not implemented"); }
void inferPool(InferContext &C) { C.fail("inferPool: not implemented"); }
void inferPow(InferContext &C) { C.fail("inferPow: not implemented"); }
void inferQuantize(InferContext &C) { C.fail("inferQuantize: not implemented"); }
void inferRange(InferContext &C) { C.fail("inferRange: not implemented"); }
void inferReduce(InferContext &C) { C.fail("inferReduce: not implemented"); }
void inferReshape(InferContext &C) { C.fail("inferReshape: not implemented"); }
void inferShapeOp(InferContext &C) { C.fail("inferShapeOp: not implemented"); }
void inferSize(InferContext &C) { C.fail("inferSize: not implemented"); }
void inferSlice(InferContext &C) { C.fail("inferSlice: not implemented"); }
void inferSplit(InferContext &C) { C.fail("inferSplit: not implemented"); }
void inferSqueeze(InferContext &C) { C.fail("inferSqueeze: not implemented"); }
void inferTile(InferContext &C) { C.fail("inferTile: not implemented"); }
void inferToBool(InferContext &C) { C.fail("inferToBool: not implemented"); }
void inferTranspose(InferContext &C) { C.fail("inferTranspose: not implemented"); }
void inferUnary(InferContext &C) { C.fail("inferUnary: not implemented"); }
void inferUnsqueeze(InferContext &C) { C.fail("inferUnsqueeze: not implemented"); }
void inferVariadic(InferContext &C) { C.fail("inferVariadic: not implemented"); }
void inferWhere(InferContext &C) { C.fail("inferWhere: not implemented"); }
}
