//===- InferConv.cpp - Inference for convolution and pooling -------------===//
//
// Shape and type inference for Conv, ConvTranspose, MaxPool, AveragePool,
// LpPool and the global pools: the operand checks here, the window geometry
// (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode,
// output_padding, output_shape) from WindowGeometry.h, the one
// implementation the kernels use too. Symbolic spatial dims give unknown
// output extents.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/WindowGeometry.h"

namespace nng::ir {

using namespace infer;

namespace {

/// The window attributes of C (see WindowGeometry.h) for NSpatial axes,
/// with the weight Wt's static spatial extents as the kernel when
/// kernel_shape is absent (none when unknown); checks that kernel_shape
/// agrees with Wt.
WindowAttrs convWindowAttrs(const InferContext &C, const TensorType &Wt,
                            size_t NSpatial) {
  std::vector<int64_t> WK;
  if (Wt.hasRank())
    for (size_t I = 0; I < NSpatial && Wt.dim(2 + I).isStatic(); ++I)
      WK.push_back(Wt.dim(2 + I).value());
  if (WK.size() != NSpatial)
    WK.clear();
  WindowAttrs A =
      readWindowAttrs(C.schema(), attrsFor(C, C.schema()), NSpatial, WK);
  if (!A.ok())
    C.fail(A.Error);
  if (C.hasAttr("kernel_shape") && Wt.hasRank())
    for (size_t I = 0; I < NSpatial; ++I)
      if (!dimsCompatible(Wt.dim(2 + I), Dim(A.Kernel[I])))
        C.fail("kernel_shape ", intsToString(A.Kernel), " disagrees with W ",
               Wt.toString());
  return A;
}

/// Output dims [N, Channels, Win.Out...] (unknown where Win.Out is).
std::vector<Dim> windowOutDims(const TensorType &X, const Dim &Channels,
                               const WindowGeometry &Win) {
  std::vector<Dim> Out{X.hasRank() ? X.dim(0) : Dim::unknown(), Channels};
  for (int64_t O : Win.Out)
    Out.push_back(O == UnknownExtent ? Dim::unknown() : Dim(O));
  return Out;
}

/// Common checks of Conv and ConvTranspose: dtypes, ranks, group, bias.
/// Returns the number of spatial axes, or -1 when X's rank is unknown.
int64_t checkConvOperands(const InferContext &C, const Dim &OutChannels) {
  checkSameDType(C, 0, 1);
  if (C.hasInput(2))
    checkSameDType(C, 0, 2);
  requireMinRank(C, 0, 3, "([N, C, D1, ...])");
  requireMinRank(C, 1, 3, "([M, C/group, k1, ...])");
  const TensorType &X = C.inputType(0), &W = C.inputType(1);
  if (X.hasRank() && W.hasRank() && X.rank() != W.rank())
    C.fail("X ", X.toString(), " and W ", W.toString(),
           " must have the same rank");
  if (C.attrInt("group") < 1)
    C.fail("attribute group = ", C.attrInt("group"), " must be >= 1");
  if (C.hasInput(2)) {
    requireRank(C, 2, 1, "([M])");
    const TensorType &B = C.inputType(2);
    if (B.hasRank() && !dimsCompatible(B.dim(0), OutChannels))
      C.fail("bias B ", B.toString(),
             " must have one entry per output "
             "channel (",
             OutChannels.toString(), ")");
  }
  if (X.hasRank())
    return X.rank() - 2;
  return W.hasRank() ? W.rank() - 2 : -1;
}

} // namespace

/// Conv(X[N, C, D...], W[M, C/group, k...], B[M]?) -> Y[N, M, O...].
void inferConv(InferContext &C) {
  const TensorType &X = C.inputType(0), &W = C.inputType(1);
  int64_t Group = C.attrInt("group");
  Dim M = W.hasRank() && W.rank() > 0 ? W.dim(0) : Dim::unknown();
  int64_t NSpatial = checkConvOperands(C, M);
  if (NSpatial < 0) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  if (X.hasRank() && W.hasRank() && X.dim(1).isStatic() &&
      W.dim(1).isStatic() && X.dim(1).value() != W.dim(1).value() * Group)
    C.fail("X ", X.toString(), " has ", X.dim(1).value(), " channels but W ",
           W.toString(), " expects ", W.dim(1).value(), " per group x ", Group,
           " groups = ", W.dim(1).value() * Group);
  if (M.isStatic() && M.value() % Group != 0)
    C.fail("W ", W.toString(), " has ", M.value(),
           " output channels, not divisible by group = ", Group);
  WindowGeometry Win = forwardWindow(convWindowAttrs(C, W, NSpatial),
                                     spatialExtents(X, NSpatial));
  if (!Win.ok())
    C.fail(Win.Error, " (X ", X.toString(), ")");
  C.setOutputType(0, TensorType(X.dtype(), windowOutDims(X, M, Win)));
}

/// ConvTranspose(X[N, C, D...], W[C, M/group, k...], B[M]?) -> Y[N, M, O...]
/// with O = output_shape when given, in * stride for SAME_*, else
/// stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads.
void inferConvTranspose(InferContext &C) {
  const TensorType &X = C.inputType(0), &W = C.inputType(1);
  int64_t Group = C.attrInt("group");
  Dim M = Dim::unknown();
  if (W.hasRank() && W.rank() > 1 && W.dim(1).isStatic())
    M = Dim(W.dim(1).value() * Group);
  else if (W.hasRank() && W.rank() > 1 && Group == 1)
    M = W.dim(1);
  int64_t NSpatial = checkConvOperands(C, M);
  if (NSpatial < 0) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  if (X.hasRank() && W.hasRank() && !dimsCompatible(X.dim(1), W.dim(0)))
    C.fail("X ", X.toString(), " has ", X.dim(1).toString(), " channels but W ",
           W.toString(), " expects ", W.dim(0).toString(),
           " (W is [C, M/group, k...])");
  WindowGeometry Win = transposedWindow(convWindowAttrs(C, W, NSpatial),
                                        spatialExtents(X, NSpatial));
  if (!Win.ok())
    C.fail(Win.Error, " (X ", X.toString(), ")");
  C.setOutputType(0, TensorType(X.dtype(), windowOutDims(X, M, Win)));
}

/// MaxPool, AveragePool, LpPool: X[N, C, D...] -> Y[N, C, O...]; MaxPool's
/// optional Indices output is i64 of Y's shape.
void inferPool(InferContext &C) {
  const TensorType &X = C.inputType(0);
  requireMinRank(C, 0, 3, "([N, C, D1, ...])");
  if (!C.hasAttr("kernel_shape"))
    C.fail("attribute 'kernel_shape' is required");
  size_t NSpatial =
      X.hasRank() ? X.rank() - 2 : C.attrInts("kernel_shape").size();
  WindowAttrs A =
      readWindowAttrs(C.schema(), attrsFor(C, C.schema()), NSpatial);
  if (!A.ok())
    C.fail(A.Error);
  WindowGeometry Win = forwardWindow(A, spatialExtents(X, NSpatial));
  if (!Win.ok())
    C.fail(Win.Error, " (X ", X.toString(), ")");
  if (C.schema().findAttr("storage_order")) {
    int64_t SO = C.attrInt("storage_order");
    if (SO != 0 && SO != 1)
      C.fail("attribute storage_order = ", SO, " must be 0 or 1");
  }
  TensorType Y(X.dtype());
  if (X.hasRank())
    Y = TensorType(X.dtype(), windowOutDims(X, X.dim(1), Win));
  C.setOutputType(0, Y);
  if (C.numOutputs() > 1) {
    Y.setDType(DType::I64);
    C.setOutputType(1, Y);
  }
}

/// GlobalAveragePool, GlobalMaxPool: X[N, C, D...] -> Y[N, C, 1, ...].
void inferGlobalPool(InferContext &C) {
  const TensorType &X = C.inputType(0);
  requireMinRank(C, 0, 2, "([N, C, D1, ...])");
  if (!X.hasRank()) {
    C.setOutputType(0, X);
    return;
  }
  std::vector<Dim> Out(X.rank(), Dim(1));
  Out[0] = X.dim(0);
  Out[1] = X.dim(1);
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

} // namespace nng::ir
