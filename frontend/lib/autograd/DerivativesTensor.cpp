//===- DerivativesTensor.cpp - Backward of reductions, shapes, indexing ----===//
//
// Backward formulas of ReduceSum/Mean/Max/Min, Softmax and LogSoftmax, the
// shape ops (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand,
// Concat, Split, Pad), the indexing ops (Slice, Gather, GatherElements, Trilu)
// and MatMul/Gemm. Gradients of indexing ops scatter-add the output
// gradient into zeros of the input's shape (ScatterElements).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "Derivatives.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/ViewGeometry.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <numeric>

namespace nng::autograd {

using detail::sumToShape;
using ir::OpKind;

namespace {

using Grads = std::vector<Tensor>;

const Tensor &in(const BackwardContext &C, size_t I) { return C.Inputs[I]; }
const Tensor &out(const BackwardContext &C) { return C.Outputs[0]; }
const Tensor &gout(const BackwardContext &C) { return C.GradOutputs[0]; }

int64_t attrInt(const BackwardContext &C, ir::IntAttrName Name,
                int64_t Default) {
  const ir::Attribute *A = C.Attrs.find(Name);
  return A ? A->i() : Default;
}

/// The reduced axes of a Reduce* call (normalized, sorted; all when none).
std::vector<int64_t> reducedAxes(const BackwardContext &C) {
  int64_t R = in(C, 0).dim();
  std::vector<int64_t> Axes;
  if (C.Op == OpKind::ReduceSum) {
    if (C.Inputs.size() > 1 && in(C, 1).defined())
      Axes = in(C, 1).data().toIntVector();
  } else if (const ir::Attribute *A = C.Attrs.find("axes")) {
    Axes = A->ints();
  }
  if (Axes.empty()) {
    Axes.resize(R);
    std::iota(Axes.begin(), Axes.end(), 0);
  }
  for (int64_t &A : Axes)
    A = A < 0 ? A + R : A;
  std::sort(Axes.begin(), Axes.end());
  return Axes;
}

/// T (a reduced result) with the reduced axes restored as size 1.
Tensor keepDims(const BackwardContext &C, const Tensor &T) {
  if (attrInt(C, "keepdims", 1))
    return T;
  std::vector<int64_t> Axes = reducedAxes(C);
  return reshape(T, [&] {
    std::vector<int64_t> S = in(C, 0).sizes();
    for (int64_t A : Axes)
      S[A] = 1;
    return S;
  }());
}

Grads reduceSumBackward(const BackwardContext &C) {
  return {expand(keepDims(C, gout(C)), in(C, 0).sizes())};
}

Grads reduceMeanBackward(const BackwardContext &C) {
  int64_t N = 1;
  for (int64_t A : reducedAxes(C))
    N *= in(C, 0).size(A);
  return {expand(keepDims(C, gout(C)), in(C, 0).sizes()) /
          static_cast<double>(N)};
}

/// The gradient goes to the extreme elements, split evenly among ties.
Grads reduceExtremumBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  Tensor Y = keepDims(C, out(C));
  Tensor Mask = eq(X, Y).to(X.dtype());
  Tensor Count = sum(Mask, reducedAxes(C), /*KeepDim=*/true);
  return {Mask * keepDims(C, gout(C)) / Count};
}

int64_t softmaxAxis(const BackwardContext &C) {
  int64_t A = attrInt(C, "axis", -1);
  return A < 0 ? A + in(C, 0).dim() : A;
}

Grads softmaxBackward(const BackwardContext &C) {
  const Tensor &Y = out(C), &G = gout(C);
  int64_t A = softmaxAxis(C);
  return {Y * (G - sum(G * Y, {A}, /*KeepDim=*/true))};
}

Grads logSoftmaxBackward(const BackwardContext &C) {
  const Tensor &Y = out(C), &G = gout(C);
  int64_t A = softmaxAxis(C);
  return {G - exp(Y) * sum(G, {A}, /*KeepDim=*/true)};
}

/// Reshape, Flatten, Squeeze, Unsqueeze: the gradient takes X's shape.
Grads reshapeBackward(const BackwardContext &C) {
  return {reshape(gout(C), in(C, 0).sizes())};
}

Grads transposeBackward(const BackwardContext &C) {
  int64_t R = in(C, 0).dim();
  std::vector<int64_t> Perm(R);
  if (const ir::Attribute *A = C.Attrs.find("perm"))
    Perm = A->ints();
  else
    for (int64_t I = 0; I < R; ++I)
      Perm[I] = R - 1 - I;
  std::vector<int64_t> Inv(R);
  for (int64_t I = 0; I < R; ++I)
    Inv[Perm[I]] = I;
  return {permute(gout(C), Inv)};
}

Grads expandBackward(const BackwardContext &C) {
  return {sumToShape(gout(C), in(C, 0).shape())};
}

Grads concatBackward(const BackwardContext &C) {
  int64_t Axis = attrInt(C, "axis", 0);
  if (Axis < 0)
    Axis += in(C, 0).dim();
  Grads R(C.Inputs.size());
  int64_t Start = 0;
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    int64_t Len = in(C, I).size(Axis);
    if (C.needs(I))
      R[I] = slice(gout(C), Axis, Start, Start + Len);
    Start += Len;
  }
  return R;
}

Grads splitBackward(const BackwardContext &C) {
  int64_t Axis = attrInt(C, "axis", 0);
  if (Axis < 0)
    Axis += in(C, 0).dim();
  return {cat(C.GradOutputs, Axis)};
}

/// ScatterElements(zeros like Like, Index, Src, axis, add).
Tensor scatterAdd(const Shape &Like, DType T, const Tensor &Index,
                  const Tensor &Src, int64_t Axis) {
  return dispatch::call1(
      OpKind::ScatterElements, {zeros(Like.dims(), T), Index, Src},
      dispatch::attrs({{"axis", Axis}, {"reduction", "add"}}));
}

/// An index tensor of shape Sh with I along Axis (I given per position).
Tensor alongAxis(const std::vector<int64_t> &Values, const Shape &Sh,
                 int64_t Axis) {
  std::vector<int64_t> View(Sh.rank(), 1);
  View[Axis] = static_cast<int64_t>(Values.size());
  return expand(reshape(detail::i64Tensor(Values), View), Sh.dims());
}

Grads sliceBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  int64_t R = X.dim();
  std::vector<int64_t> Starts = in(C, 1).data().toIntVector();
  std::vector<int64_t> Axes, Steps(Starts.size(), 1);
  if (C.Inputs.size() > 3 && in(C, 3).defined())
    Axes = in(C, 3).data().toIntVector();
  else
    for (size_t I = 0; I < Starts.size(); ++I)
      Axes.push_back(static_cast<int64_t>(I));
  if (C.Inputs.size() > 4 && in(C, 4).defined())
    Steps = in(C, 4).data().toIntVector();
  Tensor G = gout(C);
  for (size_t I = 0; I < Axes.size(); ++I) {
    int64_t A = Axes[I] < 0 ? Axes[I] + R : Axes[I];
    int64_t Dim = X.size(A), S = Starts[I], Step = Steps[I];
    if (S < 0)
      S += Dim;
    S = Step > 0 ? std::clamp<int64_t>(S, 0, Dim)
                 : std::clamp<int64_t>(S, 0, Dim - 1);
    int64_t Len = G.size(A);
    std::vector<int64_t> Pos(Len);
    for (int64_t J = 0; J < Len; ++J)
      Pos[J] = S + J * Step;
    Shape Target = G.shape();
    Target[A] = Dim;
    G = scatterAdd(Target, G.dtype(), alongAxis(Pos, G.shape(), A), G, A);
  }
  return {G};
}

/// Constant: Pad with the negated pads (crops what was added, zeros
/// where it cropped). Reflect / edge: every output position scatter-adds
/// into the input position it copied, axis by axis.
Grads padBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  std::vector<int64_t> Pads = in(C, 1).data().toIntVector();
  const ir::Attribute *M = C.Attrs.find("mode");
  std::string Mode = M ? M->s() : "constant";
  if (Mode == "constant") {
    for (int64_t &P : Pads)
      P = -P;
    return {dispatch::call1(OpKind::Pad, {gout(C), detail::i64Tensor(Pads)},
                            dispatch::attrs({{"mode", "constant"}}))};
  }
  int64_t R = X.dim();
  Tensor G = gout(C);
  for (int64_t D = 0; D < R; ++D) {
    if (!Pads[D] && !Pads[D + R])
      continue;
    int64_t N = X.size(D), Out = G.size(D);
    std::vector<int64_t> Src(Out);
    for (int64_t O = 0; O < Out; ++O)
      Src[O] = ir::padSource(O, Pads[D], N,
                             Mode == "edge" ? ir::PadMode::Edge
                                            : ir::PadMode::Reflect);
    Shape Target = G.shape();
    Target[D] = N;
    G = scatterAdd(Target, G.dtype(), alongAxis(Src, G.shape(), D), G, D);
  }
  return {G};
}

Grads gatherBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  int64_t Axis = attrInt(C, "axis", 0);
  if (Axis < 0)
    Axis += X.dim();
  std::vector<int64_t> Idx = in(C, 1).data().toIntVector();
  for (int64_t &V : Idx)
    V = V < 0 ? V + static_cast<int64_t>(X.size(Axis)) : V;
  std::vector<int64_t> Flat = X.sizes();
  Flat[Axis] = static_cast<int64_t>(Idx.size());
  Tensor G = reshape(gout(C), Flat);
  return {scatterAdd(X.shape(), G.dtype(), alongAxis(Idx, G.shape(), Axis),
                     G, Axis)};
}

Grads gatherElementsBackward(const BackwardContext &C) {
  const Tensor &X = in(C, 0);
  int64_t Axis = attrInt(C, "axis", 0);
  if (Axis < 0)
    Axis += X.dim();
  Tensor Idx = in(C, 1);
  Tensor N = detail::scalarOf(Idx.dtype(), static_cast<double>(X.size(Axis)));
  Idx = where(lt(Idx, zeros({}, Idx.dtype())), Idx + N, Idx);
  return {scatterAdd(X.shape(), gout(C).dtype(), Idx, gout(C), Axis)};
}

Grads triluBackward(const BackwardContext &C) {
  std::vector<Tensor> Ins = {gout(C)};
  if (C.Inputs.size() > 1)
    Ins.push_back(in(C, 1));
  return {dispatch::call1(OpKind::Trilu, Ins, C.Attrs)};
}

Grads matmulBackward(const BackwardContext &C) {
  Tensor A = in(C, 0), B = in(C, 1), G = gout(C);
  bool A1 = A.dim() == 1, B1 = B.dim() == 1;
  if (A1) {
    A = unsqueeze(A, 0);
    G = unsqueeze(G, -2);
  }
  if (B1) {
    B = unsqueeze(B, 1);
    G = unsqueeze(G, -1);
  }
  Grads R(2);
  if (C.needs(0)) {
    Tensor D = matmul(G, transpose(B, -1, -2));
    R[0] = reshape(sumToShape(D, A.shape()), in(C, 0).sizes());
  }
  if (C.needs(1)) {
    Tensor D = matmul(transpose(A, -1, -2), G);
    R[1] = reshape(sumToShape(D, B.shape()), in(C, 1).sizes());
  }
  return R;
}

Grads gemmBackward(const BackwardContext &C) {
  const Tensor &A = in(C, 0), &B = in(C, 1), &G = gout(C);
  double Alpha = 1.0, Beta = 1.0;
  if (const ir::Attribute *X = C.Attrs.find("alpha"))
    Alpha = X->f();
  if (const ir::Attribute *X = C.Attrs.find("beta"))
    Beta = X->f();
  bool TA = attrInt(C, "transA", 0) != 0, TB = attrInt(C, "transB", 0) != 0;
  Grads R(3);
  if (A.dtype() == G.dtype() && B.dtype() == G.dtype()) {
    // Y = alpha op(A) op(B): each gradient is one Gemm with the transposes
    // as attributes (no transposed copies, no separate scaling).
    auto gemm = [&](const Tensor &L, const Tensor &Rt, bool TL, bool TR) {
      return dispatch::call1(
          OpKind::Gemm, {L, Rt},
          dispatch::attrs({{"alpha", static_cast<float>(Alpha)},
                           {"transA", int64_t(TL)},
                           {"transB", int64_t(TR)}}));
    };
    // dA = alpha G op(B)^T, or its transpose op(B) G^T when transA.
    if (C.needs(0))
      R[0] = TA ? gemm(B, G, TB, true) : gemm(G, B, false, !TB);
    // dB = alpha op(A)^T G, or its transpose G^T op(A) when transB.
    if (C.needs(1))
      R[1] = TB ? gemm(G, A, true, TA) : gemm(A, G, !TA, false);
  } else {
    Tensor OpA = TA ? A.t() : A, OpB = TB ? B.t() : B;
    if (C.needs(0)) {
      Tensor D = matmul(G, OpB.t()) * Alpha;
      R[0] = TA ? D.t() : D;
    }
    if (C.needs(1)) {
      Tensor D = matmul(OpA.t(), G) * Alpha;
      R[1] = TB ? D.t() : D;
    }
  }
  if (C.Inputs.size() > 2 && C.needs(2))
    R[2] = sumToShape(Beta == 1.0 ? G : G * Beta, in(C, 2).shape());
  return R;
}

} // namespace

void registerTensorDerivatives() {
  setBackward(OpKind::ReduceSum, reduceSumBackward);
  setBackward(OpKind::ReduceMean, reduceMeanBackward);
  setBackward(OpKind::ReduceMax, reduceExtremumBackward);
  setBackward(OpKind::ReduceMin, reduceExtremumBackward);
  setBackward(OpKind::Softmax, softmaxBackward);
  setBackward(OpKind::LogSoftmax, logSoftmaxBackward);
  setBackward(OpKind::Reshape, reshapeBackward);
  setBackward(OpKind::Flatten, reshapeBackward);
  setBackward(OpKind::Squeeze, reshapeBackward);
  setBackward(OpKind::Unsqueeze, reshapeBackward);
  setBackward(OpKind::Transpose, transposeBackward);
  setBackward(OpKind::Expand, expandBackward);
  setBackward(OpKind::Concat, concatBackward);
  setBackward(OpKind::Split, splitBackward);
  setBackward(OpKind::Slice, sliceBackward);
  setBackward(OpKind::Pad, padBackward);
  setBackward(OpKind::Gather, gatherBackward);
  setBackward(OpKind::GatherElements, gatherElementsBackward);
  setBackward(OpKind::Trilu, triluBackward);
  setBackward(OpKind::MatMul, matmulBackward);
  setBackward(OpKind::Gemm, gemmBackward);
}

} // namespace nng::autograd
