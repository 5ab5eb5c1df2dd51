//===- InferQuantizedLinalg.cpp - Inference for the integer quantized ops -===//
//
// Shape and type inference for ConvInteger, MatMulInteger (opset 10; i32
// results), QLinearConv, QLinearMatMul (opset 10; the dtype of
// y_zero_point) and DynamicQuantizeLinear (opset 11). The output shapes are
// those of Conv and MatMul: their inference functions run on copies of the
// operand types (retyped to one dtype) with the attributes those ops have,
// so the geometry (WindowGeometry.h for pads, strides, auto_pad; groups,
// batch broadcasting) has a single implementation.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/runtime/Error.h"

namespace nng::ir {

void inferConv(InferContext &C);
void inferMatMul(InferContext &C);

using namespace infer;

namespace {

/// Fails unless input I is u8 or i8.
void checkInt8(const InferContext &C, size_t I) {
  DType T = C.inputType(I).dtype();
  if (T != DType::U8 && T != DType::I8)
    C.fail("operand ", operandName(C, I), " (", C.inputType(I).toString(),
           ") must be u8 or i8");
}

/// Fails unless input I (when present) has input Of's dtype.
void checkZeroPoint(const InferContext &C, size_t I, size_t Of) {
  if (C.hasInput(I))
    checkSameDType(C, Of, I);
}

/// Fails unless input I is a float scale: a scalar or a 1-D tensor.
void checkScale(const InferContext &C, size_t I) {
  checkFloatDType(C, I);
  const TensorType &T = C.inputType(I);
  if (T.hasRank() && T.rank() > 1)
    C.fail("scale ", operandName(C, I), " ", T.toString(),
           " must be a scalar or 1-D");
}

/// Runs the inference of op K on the given inputs of C (index -1 or an
/// absent input: absent), all retyped to the dtype of the first, with those
/// of C's attributes that K has; returns the output type with dtype Out.
/// Errors are reported as C's, naming K.
TensorType inferAs(const InferContext &C, OpKind K,
                   const std::vector<int> &Inputs, DType Out) {
  const OpSchema &S = getOpSchema(K);
  AttrMap Copy = attrsFor(C, S);
  std::vector<TensorType> Types;
  Types.reserve(Inputs.size());
  std::vector<const TensorType *> Ptrs;
  DType Common = C.inputType(Inputs.at(0)).dtype();
  for (int I : Inputs) {
    if (I < 0 || !C.hasInput(I)) {
      Types.emplace_back();
      continue;
    }
    TensorType T = C.inputType(I);
    T.setDType(Common);
    Types.push_back(std::move(T));
  }
  for (size_t I = 0; I < Inputs.size(); ++I)
    Ptrs.push_back(Inputs[I] >= 0 && C.hasInput(Inputs[I]) ? &Types[I]
                                                           : nullptr);
  InferContext Sub(S, Copy, Ptrs,
                   std::vector<const Tensor *>(Inputs.size(), nullptr), 1,
                   "");
  try {
    S.Infer(Sub);
  } catch (const Error &E) {
    std::string Msg = E.message(), Prefix = S.qualifiedName() + ": ";
    if (Msg.rfind(Prefix, 0) == 0)
      Msg.erase(0, Prefix.size());
    C.fail("as ", S.Name, ": ", Msg);
  }
  TensorType T = Sub.outputTypes().at(0);
  T.setDType(Out);
  return T;
}

} // namespace

/// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> i32 with Conv's
/// shape.
void inferConvInteger(InferContext &C) {
  checkInt8(C, 0);
  checkInt8(C, 1);
  checkZeroPoint(C, 2, 0);
  checkZeroPoint(C, 3, 1);
  C.setOutputType(0, inferAs(C, OpKind::Conv, {0, 1}, DType::I32));
}

/// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> i32 with MatMul's
/// shape.
void inferMatMulInteger(InferContext &C) {
  checkInt8(C, 0);
  checkInt8(C, 1);
  checkZeroPoint(C, 2, 0);
  checkZeroPoint(C, 3, 1);
  C.setOutputType(0, inferAs(C, OpKind::MatMul, {0, 1}, DType::I32));
}

/// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) ->
/// y_zp's dtype with Conv's shape.
void inferQLinearConv(InferContext &C) {
  checkInt8(C, 0);
  checkInt8(C, 3);
  checkInt8(C, 7);
  checkZeroPoint(C, 2, 0);
  checkZeroPoint(C, 5, 3);
  for (size_t I : {1, 4, 6})
    checkScale(C, I);
  if (C.hasInput(8))
    checkDType(C, 8, DType::I32, "(the bias)");
  C.setOutputType(0,
                  inferAs(C, OpKind::Conv, {0, 3, 8}, C.inputType(7).dtype()));
}

/// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) ->
/// y_zp's dtype with MatMul's shape.
void inferQLinearMatMul(InferContext &C) {
  checkInt8(C, 0);
  checkInt8(C, 3);
  checkInt8(C, 7);
  checkZeroPoint(C, 2, 0);
  checkZeroPoint(C, 5, 3);
  for (size_t I : {1, 4, 6})
    checkScale(C, I);
  C.setOutputType(0,
                  inferAs(C, OpKind::MatMul, {0, 3}, C.inputType(7).dtype()));
}

/// DynamicQuantizeLinear(x) -> y (u8, x's shape), y_scale (f32 scalar),
/// y_zero_point (u8 scalar).
void inferDynamicQuantizeLinear(InferContext &C) {
  checkDType(C, 0, DType::F32);
  TensorType Y = C.inputType(0);
  Y.setDType(DType::U8);
  C.setOutputType(0, Y);
  C.setOutputType(1, TensorType(DType::F32, std::vector<Dim>{}));
  C.setOutputType(2, TensorType(DType::U8, std::vector<Dim>{}));
}

} // namespace nng::ir
