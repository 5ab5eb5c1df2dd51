//===- InferReduce.cpp - Inference for reductions ------------------------===//
//
// Shape and type inference for the Reduce* ops (ReduceSum takes its axes as
// an optional input, the others as an attribute; empty axes reduce every
// axis unless noop_with_empty_axes) and ArgMax/ArgMin (one axis, i64
// result). keepdims keeps reduced axes as extent 1.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

/// The type of X reduced over Axes (normalized), keeping them as 1 when
/// KeepDims.
static TensorType reduceType(const TensorType &X,
                             const std::vector<int64_t> &Axes, bool KeepDims,
                             DType T) {
  std::vector<bool> Reduced(X.rank());
  for (int64_t A : Axes)
    Reduced[A] = true;
  std::vector<Dim> Out;
  for (int64_t I = 0; I < X.rank(); ++I) {
    if (!Reduced[I])
      Out.push_back(X.dim(I));
    else if (KeepDims)
      Out.push_back(Dim(1));
  }
  return TensorType(T, std::move(Out));
}

/// ReduceSum, ReduceMean, ...: reduce over 'axes' (ReduceSum: the optional
/// axes input); no axes means every axis, or none with
/// noop_with_empty_axes.
void inferReduce(InferContext &C) {
  const TensorType &X = C.inputType(0);
  bool KeepDims = C.attrInt("keepdims") != 0;
  bool Noop = C.schema().findAttr("noop_with_empty_axes") &&
              C.attrInt("noop_with_empty_axes") != 0;
  std::optional<std::vector<int64_t>> Axes;
  bool AxesUnknown = false;
  if (C.schema().Inputs.size() > 1) {
    if (C.hasInput(1)) {
      checkDType(C, 1, DType::I64, "(the axes)");
      requireRank(C, 1, 1, "(the axes)");
      Axes = inputInts(C, 1);
      if (!Axes && staticLength(C.inputType(1)) == 0)
        Axes.emplace(); // Known to be empty.
      AxesUnknown = !Axes;
    }
  } else if (C.hasAttr("axes")) {
    Axes = C.attrInts("axes");
  }
  if (X.dtype() == DType::Bool)
    C.fail("data ", X.toString(), " must be numeric, not bool");
  if (!X.hasRank()) {
    C.setOutputType(0, X);
    return;
  }
  if (AxesUnknown) {
    // Which axes is unknown; the rank is known only with keepdims.
    auto Len = staticLength(C.inputType(1));
    if (KeepDims)
      C.setOutputType(0, unknownDims(X.dtype(), X.rank()));
    else if (Len && *Len > 0 && *Len <= X.rank())
      C.setOutputType(0, unknownDims(X.dtype(), X.rank() - *Len));
    else
      C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  std::vector<int64_t> Norm;
  if (!Axes || Axes->empty()) {
    if (Noop) {
      C.setOutputType(0, X);
      return;
    }
    for (int64_t I = 0; I < X.rank(); ++I)
      Norm.push_back(I);
  } else {
    Norm = normalizeAxes(C, *Axes, X.rank());
  }
  C.setOutputType(0, reduceType(X, Norm, KeepDims, X.dtype()));
}

/// ArgMax, ArgMin: reduce over one axis; the result is i64.
void inferArgReduce(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (X.dtype() == DType::Bool)
    C.fail("data ", X.toString(), " must be numeric, not bool");
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(DType::I64));
    return;
  }
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
  C.setOutputType(
      0, reduceType(X, {Axis}, C.attrInt("keepdims") != 0, DType::I64));
}

} // namespace nng::ir
