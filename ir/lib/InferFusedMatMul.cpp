//===- InferFusedMatMul.cpp - Inference for nng.FusedMatMul ---------------===//
//
// nng.FusedMatMul has MatMul's shape (B's last two axes swapped first when
// transB): inference runs inferMatMul on those operand types, after checking
// the activation (a name of the FusedActivation table, at most as many
// parameters as it takes, a floating-point operand type); the Bias, when
// given, is a vector of the result's last extent (any leading 1s), the
// residual Sum one of the result's shape; both of the operands' dtype.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/FusedActivation.h"

namespace nng::ir {

void inferMatMul(InferContext &C);

/// nng.FusedMatMul(A, B, Bias?, Sum?).
void inferFusedMatMul(InferContext &C) {
  const std::string &Name = C.attrString("activation");
  const FusedActivationInfo *A = lookupFusedActivation(Name);
  if (!A)
    C.fail("unknown activation '", Name, "'; expected one of ",
           fusedActivationNames());
  if (C.hasAttr("activation_params") &&
      C.attr("activation_params").floats().size() > A->Params.size())
    C.fail("activation ", Name, " takes ", A->Params.size(),
           " parameter(s) but activation_params has ",
           C.attr("activation_params").floats().size());
  infer::checkFloatDType(C, 0);
  const TensorType &TA = C.inputType(0);
  TensorType TB = C.inputType(1);
  if (C.attrInt("transB") != 0 && TB.hasRank()) {
    if (TB.rank() < 2)
      C.fail("transB needs B of rank >= 2, got ", TB.toString());
    std::vector<Dim> D = TB.dims();
    std::swap(D[D.size() - 1], D[D.size() - 2]);
    TB = TensorType(TB.dtype(), std::move(D));
  }
  InferContext Product(getOpSchema(OpKind::MatMul), AttrMap(), {&TA, &TB},
                       {nullptr, nullptr}, 1, "the product of nng.FusedMatMul");
  inferMatMul(Product);
  C.setOutputType(0, Product.outputTypes()[0]);
  const TensorType &Y = C.outputTypes()[0];
  if (C.hasInput(2)) {
    infer::checkSameDType(C, 0, 2);
    const TensorType &B = C.inputType(2);
    if (B.hasRank() && Y.hasRank()) {
      bool Vector = B.rank() >= 1 && B.rank() <= Y.rank() &&
                    infer::dimsCompatible(B.dim(B.rank() - 1),
                                          Y.dim(Y.rank() - 1));
      for (int64_t D = 0; Vector && D + 1 < B.rank(); ++D)
        Vector = infer::dimsCompatible(B.dim(D), Dim(1));
      if (!Vector)
        C.fail("the Bias ", B.toString(), " is not a vector of the result's ",
               "last extent (result ", Y.toString(), ")");
    }
  }
  infer::checkResidualSum(C, 3, Y);
}

} // namespace nng::ir
