//===- InferGrad.cpp - Inference for the nng gradient ops ---------------===//
//
// nng.ConvGradWeight gives a weight-shaped result [M, C/group, k...] from
// the forward input X[N, C, D...] and the output gradient dY[N, M, O...].
// nng.MaxPoolGrad and nng.AveragePoolGrad give X's type; both check that dY
// has the shape the forward pool of X would produce.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

void inferPool(InferContext &C);

/// ConvGradWeight(X[N, C, D...], dY[N, M, O...]) -> dW[M, C/group, k...].
void inferConvGradWeight(InferContext &C) {
  const TensorType &X = C.inputType(0), &DY = C.inputType(1);
  infer::checkFloatDType(C, 0);
  infer::checkSameDType(C, 0, 1);
  infer::requireMinRank(C, 0, 3, "([N, C, D1, ...])");
  infer::requireMinRank(C, 1, 3, "([N, M, O1, ...])");
  std::vector<int64_t> K = C.attrInts("kernel_shape");
  int64_t Group = C.attrInt("group");
  if (Group < 1)
    C.fail("attribute group = ", Group, " must be positive");
  if (X.hasRank() && static_cast<int64_t>(K.size()) != X.rank() - 2)
    C.fail("kernel_shape has ", K.size(), " entries but X ", X.toString(),
           " has ", X.rank() - 2, " spatial axes");
  if (X.hasRank() && DY.hasRank() && X.rank() != DY.rank())
    C.fail("X ", X.toString(), " and dY ", DY.toString(),
           " must have the same rank");
  Dim M = DY.hasRank() ? DY.dim(1) : Dim::unknown();
  Dim CPerGroup = Dim::unknown();
  if (X.hasRank() && X.dim(1).isStatic()) {
    if (X.dim(1).value() % Group != 0)
      C.fail("X ", X.toString(), " has ", X.dim(1).value(),
             " channels, not divisible by group = ", Group);
    CPerGroup = Dim(X.dim(1).value() / Group);
  }
  if (M.isStatic() && M.value() % Group != 0)
    C.fail("dY ", DY.toString(), " has ", M.value(),
           " channels, not divisible by group = ", Group);
  std::vector<Dim> Out{M, CPerGroup};
  for (int64_t V : K)
    Out.push_back(Dim(V));
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// MaxPoolGrad / AveragePoolGrad(X, dY) -> dX with X's type.
void inferPoolGrad(InferContext &C) {
  const TensorType &X = C.inputType(0), &DY = C.inputType(1);
  infer::checkFloatDType(C, 0);
  infer::checkSameDType(C, 0, 1);
  inferPool(C);
  auto Expected = C.outputTypes()[0].staticShape();
  auto Got = DY.staticShape();
  if (Expected && Got && *Expected != *Got)
    C.fail("dY ", DY.toString(), " does not have the pooled shape ",
           C.outputTypes()[0].toString(), " of X ", X.toString());
  C.setOutputType(0, X);
}

} // namespace nng::ir
