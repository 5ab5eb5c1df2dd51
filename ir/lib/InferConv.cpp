//===- InferConv.cpp - Inference for convolution and pooling -------------===//
//
// Shape and type inference for Conv, ConvTranspose, MaxPool, AveragePool,
// LpPool and the global pools. The sliding-window attributes (kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode, output_padding,
// output_shape) follow ONNX opset 17; ceil_mode drops a last window that
// would start inside the end padding, as PyTorch and ONNX Runtime do.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

namespace {

/// The sliding-window attributes of one node, defaults filled in for
/// NSpatial spatial axes.
struct Window {
  std::vector<int64_t> Kernel, Strides, Dilations, Pads;
  std::string AutoPad;
};

/// Reads an ints attribute of length N (default Fill when absent) and
/// checks that every entry is at least Min.
std::vector<int64_t> readInts(const InferContext &C, std::string_view Name,
                              size_t N, int64_t Fill, int64_t Min) {
  std::vector<int64_t> V = C.attrInts(Name);
  if (V.empty())
    V.assign(N, Fill);
  if (V.size() != N)
    C.fail("attribute ", Name, " ", intsToString(V), " has ", V.size(),
           " entries; expected ", N);
  for (int64_t X : V)
    if (X < Min)
      C.fail("attribute ", Name, " ", intsToString(V), " has entry ", X,
             "; entries must be >= ", Min);
  return V;
}

/// Reads the window attributes. Kernel is the kernel extents when known
/// (from kernel_shape or the weight), else empty.
Window readWindow(const InferContext &C, size_t NSpatial,
                  std::vector<int64_t> Kernel) {
  Window W;
  W.Kernel = std::move(Kernel);
  W.Strides = readInts(C, "strides", NSpatial, 1, 1);
  W.Dilations = readInts(C, "dilations", NSpatial, 1, 1);
  W.AutoPad = C.attrString("auto_pad");
  if (W.AutoPad != "NOTSET" && W.AutoPad != "SAME_UPPER" &&
      W.AutoPad != "SAME_LOWER" && W.AutoPad != "VALID")
    C.fail("attribute auto_pad is '", W.AutoPad,
           "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  W.Pads = W.AutoPad == "NOTSET" ? readInts(C, "pads", 2 * NSpatial, 0, 0)
                                 : std::vector<int64_t>(2 * NSpatial, 0);
  return W;
}

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

/// The output extent of spatial axis I of a convolution or pool.
Dim windowOutDim(const InferContext &C, const TensorType &X, size_t I,
                 const Window &W, bool CeilMode) {
  const Dim &In = X.dim(2 + I);
  if (!In.isStatic() || W.Kernel.empty())
    return Dim::unknown();
  int64_t N = In.value(), S = W.Strides[I];
  if (W.AutoPad == "SAME_UPPER" || W.AutoPad == "SAME_LOWER")
    return Dim(ceilDiv(N, S));
  int64_t Eff = (W.Kernel[I] - 1) * W.Dilations[I] + 1;
  int64_t PadBegin = W.Pads[I],
          PadSum = W.Pads[I] + W.Pads[I + W.Kernel.size()];
  int64_t Span = N + PadSum - Eff;
  if (Span < 0)
    C.fail("spatial axis ", 2 + I, " of X ", X.toString(), " has extent ", N,
           " (", N + PadSum, " with pads) but the kernel spans ", Eff,
           " (kernel ", W.Kernel[I], ", dilation ", W.Dilations[I],
           "); pad the input or use a smaller kernel");
  int64_t Out = (CeilMode ? ceilDiv(Span, S) : Span / S) + 1;
  if (CeilMode && (Out - 1) * S >= N + PadBegin)
    --Out;
  return Dim(Out);
}

/// Kernel extents from kernel_shape or, failing that, W's static spatial
/// dims; checks the two agree. Empty when unknown.
std::vector<int64_t> convKernel(const InferContext &C, const TensorType &Wt,
                                size_t NSpatial) {
  std::vector<int64_t> K = C.attrInts("kernel_shape");
  if (!K.empty()) {
    K = readInts(C, "kernel_shape", NSpatial, 1, 1);
    if (Wt.hasRank())
      for (size_t I = 0; I < NSpatial; ++I)
        if (!dimsCompatible(Wt.dim(2 + I), Dim(K[I])))
          C.fail("kernel_shape ", intsToString(K), " disagrees with W ",
                 Wt.toString());
    return K;
  }
  if (!Wt.hasRank())
    return {};
  for (size_t I = 0; I < NSpatial; ++I) {
    if (!Wt.dim(2 + I).isStatic())
      return {};
    K.push_back(Wt.dim(2 + I).value());
  }
  return K;
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
  Window Win = readWindow(C, NSpatial, convKernel(C, W, NSpatial));
  std::vector<Dim> Out{X.hasRank() ? X.dim(0) : Dim::unknown(), M};
  for (int64_t I = 0; I < NSpatial; ++I)
    Out.push_back(X.hasRank() ? windowOutDim(C, X, I, Win, false)
                              : Dim::unknown());
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
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
  Window Win = readWindow(C, NSpatial, convKernel(C, W, NSpatial));
  std::vector<int64_t> OutPad = readInts(C, "output_padding", NSpatial, 0, 0);
  std::vector<int64_t> OutShape = C.attrInts("output_shape");
  if (!OutShape.empty()) {
    if (OutShape.size() == static_cast<size_t>(NSpatial) + 2)
      OutShape.erase(OutShape.begin(), OutShape.begin() + 2);
    if (OutShape.size() != static_cast<size_t>(NSpatial))
      C.fail("attribute output_shape ",
             intsToString(C.attrInts("output_shape")),
             " must have one entry per spatial axis (", NSpatial, ")");
  }
  std::vector<Dim> Out{X.hasRank() ? X.dim(0) : Dim::unknown(), M};
  for (int64_t I = 0; I < NSpatial; ++I) {
    if (!OutShape.empty()) {
      Out.push_back(Dim(OutShape[I]));
      continue;
    }
    if (!X.hasRank() || !X.dim(2 + I).isStatic() || Win.Kernel.empty()) {
      Out.push_back(Dim::unknown());
      continue;
    }
    int64_t In = X.dim(2 + I).value(), S = Win.Strides[I];
    if (Win.AutoPad == "SAME_UPPER" || Win.AutoPad == "SAME_LOWER") {
      Out.push_back(Dim(In * S));
      continue;
    }
    int64_t O = S * (In - 1) + OutPad[I] +
                (Win.Kernel[I] - 1) * Win.Dilations[I] + 1 - Win.Pads[I] -
                Win.Pads[I + NSpatial];
    if (O < 0)
      C.fail("spatial axis ", 2 + I, " of the output would have extent ", O,
             " (X ", X.toString(), ", pads ", intsToString(Win.Pads), ")");
    Out.push_back(Dim(O));
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// MaxPool, AveragePool, LpPool: X[N, C, D...] -> Y[N, C, O...]; MaxPool's
/// optional Indices output is i64 of Y's shape.
void inferPool(InferContext &C) {
  const TensorType &X = C.inputType(0);
  requireMinRank(C, 0, 3, "([N, C, D1, ...])");
  if (!C.hasAttr("kernel_shape"))
    C.fail("attribute 'kernel_shape' is required");
  std::vector<int64_t> K = C.attrInts("kernel_shape");
  size_t NSpatial = X.hasRank() ? X.rank() - 2 : K.size();
  K = readInts(C, "kernel_shape", NSpatial, 1, 1);
  Window Win = readWindow(C, NSpatial, K);
  bool Ceil = C.schema().findAttr("ceil_mode") && C.attrInt("ceil_mode") != 0;
  if (C.schema().findAttr("storage_order")) {
    int64_t SO = C.attrInt("storage_order");
    if (SO != 0 && SO != 1)
      C.fail("attribute storage_order = ", SO, " must be 0 or 1");
  }
  TensorType Y(X.dtype());
  if (X.hasRank()) {
    std::vector<Dim> Out{X.dim(0), X.dim(1)};
    for (size_t I = 0; I < NSpatial; ++I)
      Out.push_back(windowOutDim(C, X, I, Win, Ceil));
    Y = TensorType(X.dtype(), std::move(Out));
  }
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
