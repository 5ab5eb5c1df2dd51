//===- InferElementwise.cpp - Inference for elementwise ops --------------===//
//
// Shape and type inference for the elementwise ops of the op table: unary
// math and activations, numpy-broadcasting binary and variadic ops,
// comparisons and logical ops (bool results), Where, Pow, and the casts.
// Broadcasting follows InferUtils.h: static extents win, symbols propagate.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

/// Output 0 has input 0's type. Every other present input (Clip's bounds,
/// InstanceNormalization's scale and bias) must share its dtype; an 'axis'
/// attribute (Softmax, LogSoftmax, Hardmax) must fit the rank.
void inferUnary(InferContext &C) {
  const TensorType &X = C.inputType(0);
  for (size_t I = 1; I < C.numInputs(); ++I)
    if (C.hasInput(I))
      checkSameDType(C, 0, I);
  if (C.schema().findAttr("axis") && X.hasRank() && X.rank() > 0)
    normalizeAxis(C, C.attrInt("axis"), X.rank());
  if (C.schema().findAttr("approximate")) {
    const std::string &A = C.attrString("approximate");
    if (A != "none" && A != "tanh")
      C.fail("attribute approximate is '", A, "'; expected 'none' or 'tanh'");
  }
  C.setOutputType(0, X);
}

/// Binary numpy broadcasting with equal dtypes (Add, Sub, Mul, Div, Mod,
/// PRelu, BitShift).
void inferBroadcast(InferContext &C) {
  checkSameDType(C, 0, 1);
  const TensorType &A = C.inputType(0), &B = C.inputType(1);
  TensorType Out = broadcastTypes(C, A, B);
  std::string_view Name = C.schema().Name;
  if (Name == "PRelu") {
    // slope broadcasts to X's shape (unidirectionally): Y has X's type.
    if (Out.hasRank() && A.hasRank() && Out.rank() != A.rank())
      C.fail("slope ", B.toString(), " must broadcast to X ", A.toString());
    if (Out.hasRank() && A.hasRank())
      for (int64_t I = 0; I < A.rank(); ++I)
        if (A.dim(I).isStatic() && Out.dim(I).isStatic() &&
            A.dim(I).value() != Out.dim(I).value())
          C.fail("slope ", B.toString(), " must broadcast to X ", A.toString());
    Out = A;
  } else if (Name == "BitShift") {
    if (!isIntegral(A.dtype()) || isSigned(A.dtype()))
      C.fail("operands must be unsigned integers, got ", A.toString());
    const std::string &Dir = C.attrString("direction");
    if (Dir != "LEFT" && Dir != "RIGHT")
      C.fail("attribute direction is '", Dir, "'; expected LEFT or RIGHT");
  } else if (Name == "Mod") {
    if (isFloatingPoint(A.dtype()) && C.attrInt("fmod") == 0)
      C.fail("floating-point operands (", A.toString(),
             ") need attribute fmod=1");
  }
  C.setOutputType(0, Out);
}

/// Max, Min, Sum, Mean: one or more inputs of one dtype, all broadcast.
void inferVariadic(InferContext &C) {
  for (size_t I = 1; I < C.numInputs(); ++I)
    checkSameDType(C, 0, I);
  C.setOutputType(0, broadcastInputs(C));
}

/// Equal, Less, ...: equal dtypes, broadcast shape, bool result.
void inferCompare(InferContext &C) {
  checkSameDType(C, 0, 1);
  TensorType Out = broadcastTypes(C, C.inputType(0), C.inputType(1));
  Out.setDType(DType::Bool);
  C.setOutputType(0, Out);
}

/// And, Or, Xor: bool operands, broadcast shape, bool result.
void inferLogical(InferContext &C) {
  checkDType(C, 0, DType::Bool);
  checkDType(C, 1, DType::Bool);
  C.setOutputType(0, broadcastTypes(C, C.inputType(0), C.inputType(1)));
}

/// Not: a bool operand.
void inferLogicalNot(InferContext &C) {
  checkDType(C, 0, DType::Bool);
  C.setOutputType(0, C.inputType(0));
}

/// IsNaN, IsInf: a floating-point operand, a bool result of its shape.
void inferToBool(InferContext &C) {
  checkFloatDType(C, 0);
  TensorType Out = C.inputType(0);
  Out.setDType(DType::Bool);
  C.setOutputType(0, Out);
}

/// Where(condition, X, Y): bool condition, X and Y of one dtype, all three
/// broadcast.
void inferWhere(InferContext &C) {
  checkDType(C, 0, DType::Bool);
  checkSameDType(C, 1, 2);
  TensorType Out = broadcastTypes(C, C.inputType(1), C.inputType(2));
  Out = broadcastTypes(C, Out, C.inputType(0));
  Out.setDType(C.inputType(1).dtype());
  C.setOutputType(0, Out);
}

/// Pow(X, Y): the exponent may have another numeric dtype (opset 15); the
/// result has X's dtype.
void inferPow(InferContext &C) {
  const TensorType &X = C.inputType(0), &Y = C.inputType(1);
  if (X.dtype() == DType::Bool || Y.dtype() == DType::Bool)
    C.fail("operands must be numeric, got ", X.toString(), " and ",
           Y.toString());
  TensorType Out = broadcastTypes(C, X, Y);
  Out.setDType(X.dtype());
  C.setOutputType(0, Out);
}

/// Cast: the input's shape with dtype 'to' (an ONNX TensorProto number).
void inferCast(InferContext &C) {
  int64_t To = C.attrInt("to");
  auto T = dtypeFromOnnx(static_cast<int>(To));
  if (!T)
    C.fail("attribute to = ", To,
           " is not a supported ONNX element type number (e.g. 1 = f32, "
           "7 = i64, 9 = bool)");
  TensorType Out = C.inputType(0);
  Out.setDType(*T);
  C.setOutputType(0, Out);
}

/// CastLike: the input's shape with target_type's dtype.
void inferCastLike(InferContext &C) {
  TensorType Out = C.inputType(0);
  Out.setDType(C.inputType(1).dtype());
  C.setOutputType(0, Out);
}

} // namespace nng::ir
