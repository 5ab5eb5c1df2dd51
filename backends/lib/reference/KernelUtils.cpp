//===- KernelUtils.cpp - Helpers shared by the reference kernels ---------===//
//
// Broadcasting, input checks, and ir's window geometry of Conv and the
// pools read from a kernel's node.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

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

namespace {
/// C's node's window over XShape, forward or transposed; fails with the
/// node on error.
Window resolveWindow(const KernelContext &C, const Shape &XShape,
                     const std::vector<int64_t> &Kernel, bool Transposed) {
  if (XShape.rank() < 2)
    C.fail("input must have shape (N, C, spatial...), got ", XShape.toString());
  std::vector<int64_t> In(XShape.begin() + 2, XShape.end());
  ir::WindowAttrs A =
      ir::readWindowAttrs(C.N.schema(), C.N.attrs(), In.size(), Kernel);
  Window W =
      Transposed ? ir::transposedWindow(A, In) : ir::forwardWindow(A, In);
  if (!W.ok())
    C.fail(W.Error, " (X ", XShape.toString(), ")");
  return W;
}
} // namespace

Window forwardWindow(const KernelContext &C, const Shape &XShape,
                     const std::vector<int64_t> &Kernel) {
  return resolveWindow(C, XShape, Kernel, false);
}

Window transposedWindow(const KernelContext &C, const Shape &XShape,
                        const std::vector<int64_t> &Kernel) {
  return resolveWindow(C, XShape, Kernel, true);
}

} // namespace nng::backends::reference
