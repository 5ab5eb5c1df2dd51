//===- Reductions.cpp - sum, mean, var, max, argmax, softmax ----------------===//
//
// The reductions of TensorOps.h on the ONNX Reduce* ops (ReduceSum takes
// its axes as an input at opset 13, the others as an attribute), ArgMax and
// ArgMin, Softmax and LogSoftmax. var, std and logsumexp are compositions,
// so their gradients come from the parts. max/min along a dim gather the
// value at the argmax, so the gradient goes to that one element like
// PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/GradMode.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>

namespace nng {

using detail::describe;
using ir::OpKind;

namespace {

void checkDefined(const char *Op, const Tensor &A) {
  if (!A.defined())
    fail(ErrorKind::InvalidArgument, Op, ": the input is undefined");
}

/// Normalized, sorted, duplicate-free axes; empty stays empty (all axes).
std::vector<int64_t> normAxes(const std::vector<int64_t> &Dims, int64_t Rank,
                              const char *Op) {
  std::vector<int64_t> R;
  for (int64_t D : Dims) {
    int64_t N = detail::normDim(D, Rank, Op);
    if (std::find(R.begin(), R.end(), N) != R.end())
      fail(ErrorKind::InvalidArgument, Op, ": dim ", N,
           " appears multiple times in the list of dims");
    R.push_back(N);
  }
  std::sort(R.begin(), R.end());
  // A 0-d tensor reduced over dim 0 or -1 is a no-op reduction over all.
  if (Rank == 0)
    R.clear();
  return R;
}

/// Number of elements reduced by Axes (all when empty).
int64_t reducedCount(const Tensor &A, const std::vector<int64_t> &Axes) {
  if (Axes.empty())
    return A.numel();
  int64_t N = 1;
  for (int64_t D : Axes)
    N *= A.size(D);
  return N;
}

/// A reduction with an `axes` attribute (ReduceMean, ReduceMax, ...).
Tensor reduceAttr(OpKind Op, const char *Name, const Tensor &A,
                  const std::vector<int64_t> &Dims, bool KeepDim) {
  checkDefined(Name, A);
  std::vector<int64_t> Axes = normAxes(Dims, A.dim(), Name);
  if (A.dim() == 0)
    return A.clone();
  ir::AttrMap M = dispatch::attrs({{"keepdims", KeepDim ? 1 : 0}});
  if (!Axes.empty())
    M.set("axes", Axes);
  return dispatch::call1(Op, {A}, M);
}

Tensor floatInput(const Tensor &A, const char *Op) {
  if (!A.is_floating_point())
    fail(ErrorKind::InvalidArgument, Op,
         ": could not infer output dtype; the input ", describe(A),
         " is not floating point: cast it with .to(DType::F32)");
  return A;
}

Tensor argReduce(OpKind Op, const char *Name, const Tensor &A,
                 std::optional<int64_t> Dim, bool KeepDim) {
  checkDefined(Name, A);
  if (A.numel() == 0)
    fail(ErrorKind::InvalidArgument, Name,
         ": expected a non-empty tensor, got ", describe(A));
  if (!Dim) {
    Tensor Flat = reshape(A, {A.numel()});
    Tensor R = dispatch::call1(Op, {Flat},
                               dispatch::attrs({{"axis", int64_t(0)},
                                                {"keepdims", int64_t(0)}}));
    if (KeepDim)
      return reshape(R, std::vector<int64_t>(A.dim(), 1));
    return R;
  }
  int64_t D = detail::normDim(*Dim, A.dim(), Name);
  if (A.dim() == 0)
    return zeros({}, DType::I64);
  return dispatch::call1(
      Op, {A}, dispatch::attrs({{"axis", D}, {"keepdims", KeepDim ? 1 : 0}}));
}

/// values/indices along Dim: the value is gathered at the index.
std::pair<Tensor, Tensor> valuesAndIndices(OpKind ArgOp, const char *Name,
                                           const Tensor &A, int64_t Dim,
                                           bool KeepDim) {
  checkDefined(Name, A);
  if (A.dim() == 0)
    return {A.clone(), zeros({}, DType::I64)};
  int64_t D = detail::normDim(Dim, A.dim(), Name);
  Tensor Idx = argReduce(ArgOp, Name, A, D, /*KeepDim=*/true);
  Tensor Vals = gather(A, D, Idx);
  if (!KeepDim) {
    Vals = squeeze(Vals, D);
    Idx = squeeze(Idx, D);
  }
  return {Vals, Idx};
}

} // namespace

Tensor sum(const Tensor &A, std::vector<int64_t> Dims, bool KeepDim) {
  checkDefined("sum", A);
  std::vector<int64_t> Axes = normAxes(Dims, A.dim(), "sum");
  // Integral and bool sums accumulate in i64, like PyTorch.
  Tensor X = A.is_floating_point() ? A : A.to(DType::I64);
  if (A.dim() == 0)
    return X.is_same(A) ? A.clone() : X;
  ir::AttrMap M = dispatch::attrs({{"keepdims", KeepDim ? 1 : 0}});
  return dispatch::call1(OpKind::ReduceSum,
                         {X, Axes.empty() ? Tensor() : detail::i64Tensor(Axes)},
                         M);
}

Tensor mean(const Tensor &A, std::vector<int64_t> Dims, bool KeepDim) {
  checkDefined("mean", A);
  floatInput(A, "mean");
  return reduceAttr(OpKind::ReduceMean, "mean", A, Dims, KeepDim);
}

Tensor var(const Tensor &A, std::vector<int64_t> Dims, bool Unbiased,
           bool KeepDim) {
  checkDefined("var", A);
  floatInput(A, "var");
  std::vector<int64_t> Axes = normAxes(Dims, A.dim(), "var");
  int64_t N = reducedCount(A, Axes);
  Tensor M = mean(A, Axes, /*KeepDim=*/true);
  Tensor D = A - M;
  Tensor S = sum(D * D, Axes, KeepDim);
  double Denom = static_cast<double>(Unbiased ? N - 1 : N);
  // PyTorch gives nan (inf * 0) for one element with Bessel's correction.
  return S / (Denom > 0 ? Denom : 0.0);
}

Tensor std(const Tensor &A, std::vector<int64_t> Dims, bool Unbiased,
           bool KeepDim) {
  return sqrt(var(A, std::move(Dims), Unbiased, KeepDim));
}

Tensor amax(const Tensor &A, std::vector<int64_t> Dims, bool KeepDim) {
  checkDefined("amax", A);
  if (A.numel() == 0)
    fail(ErrorKind::InvalidArgument,
         "amax: expected a non-empty tensor, got ", describe(A));
  return reduceAttr(OpKind::ReduceMax, "amax", A, Dims, KeepDim);
}

Tensor amin(const Tensor &A, std::vector<int64_t> Dims, bool KeepDim) {
  checkDefined("amin", A);
  if (A.numel() == 0)
    fail(ErrorKind::InvalidArgument,
         "amin: expected a non-empty tensor, got ", describe(A));
  return reduceAttr(OpKind::ReduceMin, "amin", A, Dims, KeepDim);
}

Tensor max(const Tensor &A) { return amax(A, {}, false); }
Tensor min(const Tensor &A) { return amin(A, {}, false); }

std::pair<Tensor, Tensor> max(const Tensor &A, int64_t Dim, bool KeepDim) {
  return valuesAndIndices(OpKind::ArgMax, "max", A, Dim, KeepDim);
}

std::pair<Tensor, Tensor> min(const Tensor &A, int64_t Dim, bool KeepDim) {
  return valuesAndIndices(OpKind::ArgMin, "min", A, Dim, KeepDim);
}

Tensor argmax(const Tensor &A, std::optional<int64_t> Dim, bool KeepDim) {
  return argReduce(OpKind::ArgMax, "argmax", A, Dim, KeepDim);
}

Tensor argmin(const Tensor &A, std::optional<int64_t> Dim, bool KeepDim) {
  return argReduce(OpKind::ArgMin, "argmin", A, Dim, KeepDim);
}

Tensor logsumexp(const Tensor &A, std::vector<int64_t> Dims, bool KeepDim) {
  checkDefined("logsumexp", A);
  floatInput(A, "logsumexp");
  std::vector<int64_t> Axes = normAxes(Dims, A.dim(), "logsumexp");
  // Shift by the (constant) maximum; infinite maxima shift by 0 so that
  // all -inf rows give -inf rather than nan.
  Tensor M;
  {
    NoGradGuard NoGrad;
    M = amax(A.detach(), Axes, /*KeepDim=*/true).contiguous().clone();
    rt::Tensor D = detail::isTracing() ? rt::Tensor() : M.data();
    for (int64_t I = 0, N = D.defined() ? D.numel() : 0; I < N; ++I)
      if (!std::isfinite(D.getFlat(I)))
        D.setFlat(I, 0.0);
  }
  Tensor R = log(sum(exp(A - M), Axes, /*KeepDim=*/true)) + M;
  if (!KeepDim)
    R = Axes.empty() ? reshape(R, {}) : detail::squeezeDims(R, Axes);
  return R;
}

Tensor softmax(const Tensor &A, int64_t Dim) {
  checkDefined("softmax", A);
  floatInput(A, "softmax");
  if (A.dim() == 0)
    return A * 0.0 + 1.0;
  int64_t D = detail::normDim(Dim, A.dim(), "softmax");
  return dispatch::call1(OpKind::Softmax, {A}, dispatch::attrs({{"axis", D}}));
}

Tensor log_softmax(const Tensor &A, int64_t Dim) {
  checkDefined("log_softmax", A);
  floatInput(A, "log_softmax");
  if (A.dim() == 0)
    return A * 0.0;
  int64_t D = detail::normDim(Dim, A.dim(), "log_softmax");
  return dispatch::call1(OpKind::LogSoftmax, {A},
                         dispatch::attrs({{"axis", D}}));
}

} // namespace nng
