//===- KernelUtils.cpp - Helpers shared by the reference kernels ---------===//
//
// Broadcasting, input checks and the window geometry of Conv and the pools.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>

namespace nng::backends::reference {

std::vector<Strides> BroadcastViews::strides() const {
  std::vector<Strides> S;
  S.reserve(Views.size());
  for (const Tensor &V : Views)
    S.push_back(V.strides());
  return S;
}

BroadcastViews broadcastInputs(const std::vector<Tensor> &Ins) {
  BroadcastViews BV;
  BV.Out = Ins.at(0).shape();
  for (size_t I = 1; I < Ins.size(); ++I)
    BV.Out = broadcastShapes(BV.Out, Ins[I].shape());
  for (const Tensor &T : Ins)
    BV.Views.push_back(T.broadcastTo(BV.Out));
  return BV;
}

Tensor toF64(const Tensor &X) { return X.to(DType::F64); }

void requireFloat(const KernelContext &C, const Tensor &X, const char *What) {
  if (!isFloatingPoint(X.dtype()))
    C.fail(What,
           " must have a floating-point dtype (f16, bf16, f32, f64), got ",
           dtypeName(X.dtype()));
}

void requireSameDType(const KernelContext &C, const Tensor &X, const Tensor &Y,
                      const char *WhatX, const char *WhatY) {
  if (X.dtype() != Y.dtype())
    C.fail(WhatX, " (", dtypeName(X.dtype()), ") and ", WhatY, " (",
           dtypeName(Y.dtype()), ") must have the same dtype");
}

void requireRank(const KernelContext &C, const Tensor &X, size_t R,
                 const char *What) {
  if (X.rank() != R)
    C.fail(What, " must have rank ", R, ", got shape ", X.shape().toString());
}

int64_t normAxis(const KernelContext &C, int64_t Axis, int64_t Rank,
                 const char *What) {
  if (Axis < -Rank || Axis >= Rank)
    C.fail(What, " ", Axis, " is out of range for rank ", Rank, " (valid: [",
           -Rank, ", ", Rank - 1, "])");
  return Axis < 0 ? Axis + Rank : Axis;
}

std::vector<int64_t> intsOf(const KernelContext &C, const Tensor &X,
                            const char *What) {
  if (X.rank() > 1)
    C.fail(What, " must be a 1-D tensor, got shape ", X.shape().toString());
  if (!isIntegral(X.dtype()))
    C.fail(What, " must have an integer dtype, got ", dtypeName(X.dtype()));
  return X.toIntVector();
}

std::vector<int64_t> inversePerm(const std::vector<int64_t> &P) {
  std::vector<int64_t> Inv(P.size());
  for (size_t I = 0; I < P.size(); ++I)
    Inv[P[I]] = static_cast<int64_t>(I);
  return Inv;
}

void unflatten(int64_t I, const std::vector<int64_t> &Dims, int64_t *Idx) {
  for (size_t D = Dims.size(); D-- > 0;) {
    Idx[D] = I % Dims[D];
    I /= Dims[D];
  }
}

int64_t Window::outNumel() const {
  int64_t N = 1;
  for (int64_t O : Out)
    N *= O;
  return N;
}

int64_t Window::kernelNumel() const {
  int64_t N = 1;
  for (int64_t K : Kernel)
    N *= K;
  return N;
}

namespace {
/// Reads an ints attribute of length R, or Default repeated when absent.
std::vector<int64_t> spatialAttr(const KernelContext &C, const char *Name,
                                 size_t R, int64_t Default, size_t Mult = 1) {
  std::vector<int64_t> V = C.attrInts(Name);
  if (V.empty())
    return std::vector<int64_t>(R * Mult, Default);
  if (V.size() != R * Mult)
    C.fail("attribute '", Name, "' has ", V.size(), " values ", intsToString(V),
           " but the input has ", R, " spatial axes (expected ", R * Mult, ")");
  return V;
}

int64_t floorDiv(int64_t A, int64_t B) {
  int64_t Q = A / B;
  return (A % B != 0 && (A < 0) != (B < 0)) ? Q - 1 : Q;
}
} // namespace

Window forwardWindow(const KernelContext &C, const Shape &XShape,
                     const std::vector<int64_t> &Kernel, bool HasDilations,
                     bool CeilMode) {
  if (XShape.rank() < 2)
    C.fail("input must have shape (N, C, spatial...), got ", XShape.toString());
  Window W;
  size_t R = XShape.rank() - 2;
  W.In.assign(XShape.begin() + 2, XShape.end());
  W.Kernel = Kernel;
  if (Kernel.size() != R)
    C.fail("kernel has ", Kernel.size(), " spatial axes ", intsToString(Kernel),
           " but the input ", XShape.toString(), " has ", R);
  for (int64_t K : Kernel)
    if (K <= 0)
      C.fail("kernel extents must be positive, got ", intsToString(Kernel));
  W.Strides = spatialAttr(C, "strides", R, 1);
  W.Dilations = HasDilations ? spatialAttr(C, "dilations", R, 1)
                             : std::vector<int64_t>(R, 1);
  for (size_t I = 0; I < R; ++I)
    if (W.Strides[I] <= 0 || W.Dilations[I] <= 0)
      C.fail("strides ", intsToString(W.Strides), " and dilations ",
             intsToString(W.Dilations), " must be positive");
  std::vector<int64_t> Pads = spatialAttr(C, "pads", R, 0, 2);
  const std::string &AutoPad = C.attrString("auto_pad");
  W.PadBegin.assign(R, 0);
  W.PadEnd.assign(R, 0);
  W.Out.assign(R, 0);
  for (size_t I = 0; I < R; ++I) {
    int64_t EffK = (W.Kernel[I] - 1) * W.Dilations[I] + 1;
    int64_t In = W.In[I], S = W.Strides[I];
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
      W.Out[I] = (In + S - 1) / S;
      int64_t Total = std::max<int64_t>(0, (W.Out[I] - 1) * S + EffK - In);
      int64_t Small = Total / 2;
      W.PadBegin[I] = AutoPad == "SAME_UPPER" ? Small : Total - Small;
      W.PadEnd[I] = Total - W.PadBegin[I];
      continue;
    }
    if (AutoPad == "NOTSET") {
      W.PadBegin[I] = Pads[I];
      W.PadEnd[I] = Pads[I + R];
      if (W.PadBegin[I] < 0 || W.PadEnd[I] < 0)
        C.fail("pads must be non-negative, got ", intsToString(Pads));
    } else if (AutoPad != "VALID") {
      C.fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '",
             AutoPad, "'");
    }
    int64_t Span = In + W.PadBegin[I] + W.PadEnd[I] - EffK;
    if (Span < 0)
      C.fail("spatial axis ", I, ": the kernel (extent ", EffK,
             " with dilation) is larger than the padded input (", In, " + ",
             W.PadBegin[I], " + ", W.PadEnd[I], ")");
    W.Out[I] = (CeilMode ? floorDiv(Span + S - 1, S) : floorDiv(Span, S)) + 1;
    // With ceil_mode, a window that would start in the end padding is
    // dropped (as PyTorch and ONNX do).
    if (CeilMode && (W.Out[I] - 1) * S >= In + W.PadBegin[I])
      --W.Out[I];
  }
  return W;
}

} // namespace nng::backends::reference
