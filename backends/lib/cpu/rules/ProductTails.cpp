//===- ProductTails.cpp - What the lowering takes after quantized products -===//
//
// The nodes after a product that the cpu lowering folds into the product's
// primitive itself (the float epilogues of f32 products are nodes already:
// FuseEpilogues.cpp, FuseProducts.cpp): after an integer product
// (ConvInteger, MatMulInteger) its Cast to f32, the Mul by the scale, the
// Add of a bias and an activation (LowerInteger.cpp's rescale tail); after
// a QLinearConv the Add of two DequantizeLinear results and the Relu after
// it (LowerQLinearResidual.cpp's join). Structure only: the lowering checks
// scales, shapes and constants and runs a node as its own step when they do
// not fit. form-fused-regions asks here, so that no region takes them.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"

namespace nng::backends::cpu {
namespace {

using ir::OpKind;

/// The producer of input I of N when N is that value's only reader.
const ir::Node *soleProducer(const ir::Graph &G, const ir::Node &N, size_t I) {
  if (!N.hasInput(I))
    return nullptr;
  const ir::Value *V = N.input(I);
  return rules::soleReader(G, V) == &N ? V->producer() : nullptr;
}

/// True when Pred holds for the producer of an input of N that N alone reads.
template <typename Fn>
bool readsSoleResultOf(const ir::Graph &G, const ir::Node &N, Fn Pred) {
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (const ir::Node *P = soleProducer(G, N, I); P && Pred(*P))
      return true;
  return false;
}

bool isIntegerProduct(const ir::Node &N) {
  return N.op() == OpKind::ConvInteger || N.op() == OpKind::MatMulInteger;
}

/// Cast to f32 of an integer product's result.
bool isRescaleCast(const ir::Graph &G, const ir::Node &N) {
  if (N.op() != OpKind::Cast || N.attrInt("to") != 1) // ONNX FLOAT
    return false;
  const ir::Node *P = soleProducer(G, N, 0);
  return P && isIntegerProduct(*P);
}

/// The Mul by the scale after that Cast.
bool isRescaleMul(const ir::Graph &G, const ir::Node &N) {
  return N.op() == OpKind::Mul &&
         readsSoleResultOf(G, N, [&](const ir::Node &P) {
           return isRescaleCast(G, P);
         });
}

/// The Add of a bias after that Mul.
bool isRescaleAdd(const ir::Graph &G, const ir::Node &N) {
  return N.op() == OpKind::Add &&
         readsSoleResultOf(G, N, [&](const ir::Node &P) {
           return isRescaleMul(G, P);
         });
}

/// The Add of two DequantizeLinear results, each read only by it, one of a
/// QLinearConv's result.
bool isQLinearJoin(const ir::Graph &G, const ir::Node &N) {
  if (N.op() != OpKind::Add || N.numInputs() != 2 ||
      N.input(0) == N.input(1))
    return false;
  bool OfConv = false;
  for (size_t I = 0; I < 2; ++I) {
    const ir::Node *Dq = soleProducer(G, N, I);
    if (!Dq || Dq->op() != OpKind::DequantizeLinear)
      return false;
    const ir::Node *C = Dq->hasInput(0) ? Dq->input(0)->producer() : nullptr;
    OfConv = OfConv || (C && C->op() == OpKind::QLinearConv);
  }
  return OfConv;
}

} // namespace

bool loweringTakesIntoProduct(const ir::Graph &G, const ir::Node &N) {
  if (isRescaleCast(G, N) || isRescaleMul(G, N) || isRescaleAdd(G, N) ||
      isQLinearJoin(G, N))
    return true;
  // An activation after the rescale, or the Relu after the join.
  const ir::Node *P = soleProducer(G, N, 0);
  if (!P || !ir::hasTrait(N.op(), ir::OpTrait::Elementwise))
    return false;
  if (N.op() == OpKind::Relu && isQLinearJoin(G, *P))
    return true;
  return isRescaleMul(G, *P) || isRescaleAdd(G, *P);
}

} // namespace nng::backends::cpu
