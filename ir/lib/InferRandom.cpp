//===- InferRandom.cpp - Types of ONNX's random generators ----------------===//
//
// RandomUniform / RandomNormal (the shape attribute, a float dtype),
// their -Like forms and Bernoulli (the input's shape; the dtype attribute
// or the input's), and Multinomial ([batch, sample_size] of i32 or i64).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

namespace {

/// The dtype attribute as nngraph's dtype; Float requires a floating one.
DType dtypeAttr(const InferContext &C, bool Float) {
  int64_t T = C.attrInt("dtype");
  std::optional<DType> D = dtypeFromOnnx(static_cast<int>(T));
  if (!D || !isNumeric(*D) || (Float && !isFloatingPoint(*D)))
    C.fail("attribute dtype = ", T, " is not ",
           Float ? "a floating-point" : "a numeric",
           " ONNX element type nngraph supports (e.g. 1 = f32, 11 = f64)");
  return *D;
}

} // namespace

/// RandomUniform / RandomNormal: dtype[shape].
void inferRandom(InferContext &C) {
  std::vector<Dim> Dims;
  for (int64_t D : C.attrInts("shape")) {
    if (D < 0)
      C.fail("shape ", D, " has a negative extent");
    Dims.push_back(Dim(D));
  }
  C.setOutputType(0, TensorType(dtypeAttr(C, true), Dims));
}

/// RandomUniformLike / RandomNormalLike / Bernoulli: the input's shape, the
/// dtype attribute's element type or the input's (Bernoulli's may be any
/// numeric or bool; the others' floating-point).
void inferRandomLike(InferContext &C) {
  TensorType Out = C.inputType(0);
  bool Bernoulli = C.schema().Kind == OpKind::Bernoulli;
  if (Bernoulli)
    checkFloatDType(C, 0);
  if (C.hasAttr("dtype"))
    Out.setDType(dtypeAttr(C, !Bernoulli));
  else if (!Bernoulli && !isFloatingPoint(Out.dtype()))
    C.fail("input of dtype ", dtypeName(Out.dtype()),
           " needs a floating-point dtype attribute");
  C.setOutputType(0, Out);
}

/// Multinomial(input [batch, classes]): [batch, sample_size] of dtype (i32
/// or i64).
void inferMultinomial(InferContext &C) {
  checkFloatDType(C, 0);
  requireRank(C, 0, 2, "([batch, classes] of log-probabilities)");
  DType T = dtypeAttr(C, false);
  if (T != DType::I32 && T != DType::I64)
    C.fail("attribute dtype must be 6 (i32) or 7 (i64), got ",
           C.attrInt("dtype"));
  int64_t S = C.attrInt("sample_size");
  if (S < 0)
    C.fail("sample_size ", S, " is negative");
  const TensorType &X = C.inputType(0);
  std::vector<Dim> Dims = {X.hasRank() ? X.dim(0) : Dim(), Dim(S)};
  C.setOutputType(0, TensorType(T, Dims));
}

} // namespace nng::ir
