//===- InferConstant.cpp - Inference for shape queries and constants -----===//
//
// Shape and type inference for the ops that make shape-like or constant
// tensors: Shape (with start/end), Size, ConstantOfShape, Constant (value,
// value_float(s), value_int(s)) and Range. ConstantOfShape's and Range's
// extents come from their input values: exact when known, unknown otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>
#include <cmath>

namespace nng::ir {

using namespace infer;

/// Shape(data, start, end): i64[max(0, end - start)], with negative bounds
/// counted from the end and clamped to [0, rank].
void inferShapeOp(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, unknownDims(DType::I64, 1));
    return;
  }
  int64_t R = X.rank();
  auto Clamp = [R](int64_t V) {
    if (V < 0)
      V += R;
    return std::clamp<int64_t>(V, 0, R);
  };
  int64_t Start = Clamp(C.attrInt("start"));
  int64_t End = C.hasAttr("end") ? Clamp(C.attrInt("end")) : R;
  C.setOutputType(
      0, TensorType(DType::I64, {Dim(std::max<int64_t>(0, End - Start))}));
}

/// Size(data): an i64 scalar.
void inferSize(InferContext &C) {
  C.inputType(0);
  C.setOutputType(0, TensorType(DType::I64, std::vector<Dim>{}));
}

/// ConstantOfShape(input): the shape given by input's value, with the dtype
/// of the one-element 'value' tensor (f32 when absent).
void inferConstantOfShape(InferContext &C) {
  checkDType(C, 0, DType::I64, "(the shape)");
  requireRank(C, 0, 1, "(the shape)");
  DType T = DType::F32;
  if (C.hasAttr("value")) {
    const Tensor &V = C.attr("value").t();
    if (V.numel() != 1)
      C.fail("attribute value must hold one element, got ",
             dtypeName(V.dtype()), V.shape().toString());
    T = V.dtype();
  }
  auto Shape = inputInts(C, 0);
  if (!Shape) {
    auto Len = staticLength(C.inputType(0));
    C.setOutputType(0, Len ? unknownDims(T, *Len) : TensorType(T));
    return;
  }
  std::vector<Dim> Dims;
  for (int64_t V : *Shape) {
    if (V < 0)
      C.fail("shape ", intsToString(*Shape), " has negative extent ", V);
    Dims.push_back(Dim(V));
  }
  C.setOutputType(0, TensorType(T, std::move(Dims)));
}

/// Constant: the type of whichever one value attribute is set.
void inferConstant(InferContext &C) {
  static constexpr AnyAttrName Names[] = {
      "value",      "value_float",  "value_floats", "value_int",
      "value_ints", "value_string", "value_strings"};
  const AnyAttrName *SetName = nullptr;
  int Count = 0;
  for (const AnyAttrName &N : Names)
    if (C.hasAttr(N)) {
      SetName = &N;
      ++Count;
    }
  if (Count != 1)
    C.fail("exactly one of the attributes value, value_float, value_floats, "
           "value_int, value_ints, value_string, value_strings must be set, "
           "got ",
           Count);
  std::string_view Set = SetName->str();
  if (Set == "value") {
    const Tensor &V = C.attr("value").t();
    C.setOutputType(0, TensorType(V.dtype(), V.shape()));
  } else if (Set == "value_float") {
    C.setOutputType(0, TensorType(DType::F32, std::vector<Dim>{}));
  } else if (Set == "value_floats") {
    int64_t N = static_cast<int64_t>(C.attr(*SetName).floats().size());
    C.setOutputType(0, TensorType(DType::F32, {Dim(N)}));
  } else if (Set == "value_int") {
    C.setOutputType(0, TensorType(DType::I64, std::vector<Dim>{}));
  } else if (Set == "value_ints") {
    int64_t N = static_cast<int64_t>(C.attr(*SetName).ints().size());
    C.setOutputType(0, TensorType(DType::I64, {Dim(N)}));
  } else if (Set == "value_string") {
    C.setOutputType(0, TensorType(DType::String, std::vector<Dim>{}));
  } else {
    int64_t N = static_cast<int64_t>(C.attr(*SetName).strings().size());
    C.setOutputType(0, TensorType(DType::String, {Dim(N)}));
  }
}

/// The element count of Range(Start, Limit, Delta) computed in dtype T:
/// max(ceil((limit - start) / delta), 0).
static int64_t rangeCount(const InferContext &C, DType T, const Tensor &S,
                          const Tensor &L, const Tensor &D) {
  if (isIntegral(T)) {
    int64_t Start = S.getFlatInt(0), Limit = L.getFlatInt(0),
            Delta = D.getFlatInt(0);
    if (Delta == 0)
      C.fail("delta is 0");
    int64_t Diff = Limit - Start;
    int64_t N = Diff / Delta;
    if (Diff % Delta != 0 && ((Diff > 0) == (Delta > 0)))
      ++N;
    return std::max<int64_t>(N, 0);
  }
  double Start = S.getFlat(0), Limit = L.getFlat(0), Delta = D.getFlat(0);
  if (Delta == 0)
    C.fail("delta is 0");
  // As ONNX Runtime does: subtract in the element type, divide in double.
  double Diff =
      T == DType::F32
          ? static_cast<double>(static_cast<float>(static_cast<float>(Limit) -
                                                   static_cast<float>(Start)))
          : Limit - Start;
  double N = std::ceil(Diff / Delta);
  if (!std::isfinite(N))
    C.fail("the element count of range(", Start, ", ", Limit, ", ", Delta,
           ") is not finite");
  return std::max<int64_t>(static_cast<int64_t>(N), 0);
}

/// Range(start, limit, delta): scalars of one numeric dtype; a 1-D result.
void inferRange(InferContext &C) {
  checkSameDType(C, 0, 1);
  checkSameDType(C, 0, 2);
  for (size_t I = 0; I < 3; ++I) {
    requireRank(C, I, 0, "(a scalar)");
    if (C.inputType(I).dtype() == DType::Bool)
      C.fail("operand ", operandName(C, I), " must be numeric, got bool");
  }
  DType T = C.inputType(0).dtype();
  const Tensor *S = C.inputValue(0), *L = C.inputValue(1),
                    *D = C.inputValue(2);
  if (!S || !L || !D) {
    C.setOutputType(0, unknownDims(T, 1));
    return;
  }
  C.setOutputType(0, TensorType(T, {Dim(rangeCount(C, T, *S, *L, *D))}));
}

} // namespace nng::ir
