//===- Creation.cpp - Making new tensors ------------------------------------===//
//
// zeros, ones, full, arange, linspace, eye, the random creators fed by the
// global generator, *_like, tensor() from values, and the helpers of
// EagerInternal.h that make constant operands. Created tensors are leaves
// built directly as data (no op is dispatched), like PyTorch's factories.
//
//===----------------------------------------------------------------------===//

#include "EagerInternal.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

namespace nng {

namespace {

Shape checkedShape(const std::vector<int64_t> &Sizes, const char *Op) {
  for (int64_t S : Sizes)
    if (S < 0)
      fail(ErrorKind::InvalidArgument, Op, ": negative extent ", S,
           " in size ", Shape(Sizes).toString());
  Shape Sh(Sizes);
  Sh.validate();
  return Sh;
}

/// Wraps freshly made data as a leaf with the options' requires_grad.
Tensor finish(rt::Tensor D, const TensorOptions &O) {
  return Tensor(std::move(D), O.RequiresGrad);
}

/// Fills a contiguous tensor from Gen(I) (a double per flat index).
template <typename Fn> void fillWith(rt::Tensor &D, Fn Gen) {
  visitDType(D.dtype(), [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    T *P = D.data<T>();
    for (int64_t I = 0, N = D.numel(); I < N; ++I)
      P[I] = fromDouble<T>(Gen(I));
  });
}

} // namespace

namespace {
std::atomic<DType> DefaultDType{DType::F32};
} // namespace

DType get_default_dtype() { return DefaultDType.load(std::memory_order_relaxed); }

void set_default_dtype(DType T) {
  if (T != DType::F16 && T != DType::BF16 && T != DType::F32 && T != DType::F64)
    fail(ErrorKind::InvalidArgument, "set_default_dtype: only floating-point "
         "dtypes (f16, bf16, f32, f64) can be the default, got ",
         dtypeName(T));
  DefaultDType.store(T, std::memory_order_relaxed);
}

Tensor empty(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return finish(rt::Tensor::empty(checkedShape(Sizes, "empty"), O.Type), O);
}

Tensor zeros(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return finish(rt::Tensor::empty(checkedShape(Sizes, "zeros"), O.Type), O);
}

Tensor ones(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return full(Sizes, 1.0, O);
}

Tensor full(const std::vector<int64_t> &Sizes, Scalar V, TensorOptions O) {
  rt::Tensor D = rt::Tensor::empty(checkedShape(Sizes, "full"), O.Type);
  if (V != 0.0)
    fillWith(D, [&](int64_t) { return V; });
  return finish(std::move(D), O);
}

Tensor arange(Scalar End, TensorOptions O) { return arange(0, End, 1, O); }

Tensor arange(Scalar Start, Scalar End, Scalar Step, TensorOptions O) {
  if (Step == 0)
    fail(ErrorKind::InvalidArgument, "arange: step must be nonzero");
  if ((End - Start) / Step < 0)
    fail(ErrorKind::InvalidArgument, "arange: upper bound ", End,
         " and lower bound ", Start, " inconsistent with step sign ", Step);
  auto N = static_cast<int64_t>(std::ceil((End - Start) / Step));
  rt::Tensor D = rt::Tensor::empty(Shape{N}, O.Type);
  fillWith(D, [&](int64_t I) { return Start + Step * static_cast<double>(I); });
  return finish(std::move(D), O);
}

Tensor linspace(Scalar Start, Scalar End, int64_t Steps, TensorOptions O) {
  if (Steps < 0)
    fail(ErrorKind::InvalidArgument, "linspace: number of steps must be "
                                     "non-negative, got ",
         Steps);
  rt::Tensor D = rt::Tensor::empty(Shape{Steps}, O.Type);
  double Delta = Steps > 1 ? (End - Start) / static_cast<double>(Steps - 1) : 0;
  // PyTorch fills the second half from the end, so End is exact.
  fillWith(D, [&](int64_t I) {
    if (Steps == 1)
      return static_cast<double>(Start);
    return I < Steps / 2 ? Start + Delta * static_cast<double>(I)
                         : End - Delta * static_cast<double>(Steps - 1 - I);
  });
  return finish(std::move(D), O);
}

Tensor eye(int64_t N, TensorOptions O) {
  rt::Tensor D = rt::Tensor::empty(checkedShape({N, N}, "eye"), O.Type);
  fillWith(D, [&](int64_t I) { return I / N == I % N ? 1.0 : 0.0; });
  return finish(std::move(D), O);
}

Tensor rand(const std::vector<int64_t> &Sizes, TensorOptions O) {
  rt::Tensor D = rt::Tensor::empty(checkedShape(Sizes, "rand"), O.Type);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return G.uniform(); });
  return finish(std::move(D), O);
}

Tensor randn(const std::vector<int64_t> &Sizes, TensorOptions O) {
  rt::Tensor D = rt::Tensor::empty(checkedShape(Sizes, "randn"), O.Type);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return G.normal(); });
  return finish(std::move(D), O);
}

Tensor randint(int64_t Low, int64_t High, const std::vector<int64_t> &Sizes,
               TensorOptions O) {
  if (High <= Low)
    fail(ErrorKind::InvalidArgument, "randint: high (", High,
         ") must be greater than low (", Low, ")");
  rt::Tensor D = rt::Tensor::empty(checkedShape(Sizes, "randint"), O.Type);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return static_cast<double>(G.integer(Low, High)); });
  return finish(std::move(D), O);
}

Tensor randperm(int64_t N, TensorOptions O) {
  if (N < 0)
    fail(ErrorKind::InvalidArgument, "randperm: n must be non-negative, got ",
         N);
  std::vector<int64_t> P(static_cast<size_t>(N));
  std::iota(P.begin(), P.end(), 0);
  Generator &G = defaultGenerator();
  for (int64_t I = N - 1; I > 0; --I)
    std::swap(P[I], P[G.integer(0, I + 1)]);
  rt::Tensor D = rt::Tensor::empty(Shape{N}, O.Type);
  fillWith(D, [&](int64_t I) { return static_cast<double>(P[I]); });
  return finish(std::move(D), O);
}

namespace {
/// During a trace, a proxy with a dynamic dim: V expanded to its symbolic
/// shape (recorded), rather than a constant of the example shape.
bool fillLikeProxy(const Tensor &T, Scalar V, DType D, Tensor &Out) {
  if (!T.is_proxy())
    return false;
  std::vector<SymInt> S = T.sym_sizes();
  bool Dynamic = false;
  for (const SymInt &X : S)
    Dynamic |= X.isSymbolic();
  if (!Dynamic)
    return false;
  Out = expand(scalar_tensor(V, D), std::move(S));
  return true;
}
} // namespace

Tensor zeros_like(const Tensor &T, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, 0.0, D.value_or(T.dtype()), R))
    return R;
  return zeros(T.sizes(), D.value_or(T.dtype()));
}

Tensor ones_like(const Tensor &T, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, 1.0, D.value_or(T.dtype()), R))
    return R;
  return ones(T.sizes(), D.value_or(T.dtype()));
}

Tensor full_like(const Tensor &T, Scalar V, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, V, D.value_or(T.dtype()), R))
    return R;
  return full(T.sizes(), V, D.value_or(T.dtype()));
}

Tensor rand_like(const Tensor &T) { return rand(T.sizes(), T.dtype()); }
Tensor randn_like(const Tensor &T) { return randn(T.sizes(), T.dtype()); }

Tensor tensor(const std::vector<double> &Values,
              std::optional<std::vector<int64_t>> Sizes, TensorOptions O) {
  std::vector<int64_t> Sz =
      Sizes ? *Sizes : std::vector<int64_t>{static_cast<int64_t>(Values.size())};
  Shape Sh = checkedShape(Sz, "tensor");
  if (Sh.numel() != static_cast<int64_t>(Values.size()))
    fail(ErrorKind::ShapeMismatch, "tensor: ", Values.size(),
         " values do not fill shape ", Sh.toString(), " (", Sh.numel(),
         " elements)");
  rt::Tensor D = rt::Tensor::empty(Sh, O.Type);
  fillWith(D, [&](int64_t I) { return Values[I]; });
  return finish(std::move(D), O);
}

Tensor tensor(std::initializer_list<double> Values, TensorOptions O) {
  return tensor(std::vector<double>(Values), std::nullopt, O);
}

Tensor scalar_tensor(Scalar V, TensorOptions O) {
  rt::Tensor D = rt::Tensor::empty(Shape{}, O.Type);
  D.setFlat(0, V);
  return finish(std::move(D), O);
}

namespace detail {

Tensor i64Tensor(const std::vector<int64_t> &Values) {
  return Tensor(rt::Tensor::fromVector<int64_t>(
      Values, Shape{static_cast<int64_t>(Values.size())}));
}

Tensor scalarOf(DType T, Scalar V) { return scalar_tensor(V, T); }

Tensor scalarLike(const Tensor &A, Scalar V) {
  DType T = A.dtype();
  if (isFloatingPoint(T))
    return scalarOf(T, V);
  bool IntegralValue = std::isfinite(V) && std::floor(V) == V;
  if (!IntegralValue)
    return scalarOf(DType::F32, V);
  if (T == DType::Bool)
    return scalarOf(V == 0.0 || V == 1.0 ? DType::Bool : DType::I64, V);
  return scalarOf(T, V);
}

int64_t normDim(int64_t D, int64_t Rank, const char *Op) {
  int64_t R = std::max<int64_t>(Rank, 1);
  if (D < -R || D >= R)
    fail(ErrorKind::InvalidArgument, Op, ": dimension out of range (expected "
                                         "to be in range of [",
         -R, ", ", R - 1, "], but got ", D, ")");
  return D < 0 ? D + R : D;
}

std::string describe(const Tensor &T) {
  if (!T.defined())
    return "undefined";
  return std::string(dtypeName(T.dtype())) + T.shape().toString();
}

Tensor castTo(const Tensor &T, DType D) { return T.to(D); }

Tensor sumToShape(const Tensor &G, const Shape &S) {
  if (G.shape() == S)
    return G;
  int64_t Lead = G.dim() - static_cast<int64_t>(S.rank());
  if (Lead < 0)
    fail(ErrorKind::Internal, "sumToShape: gradient ", describe(G),
         " has fewer axes than the target shape ", S.toString());
  std::vector<int64_t> Axes;
  for (int64_t I = 0; I < G.dim(); ++I)
    if (I < Lead || (S[I - Lead] == 1 && G.size(I) != 1))
      Axes.push_back(I);
  Tensor R = Axes.empty() ? G : sum(G, Axes, /*KeepDim=*/true);
  return R.shape() == S ? R : reshape(R, S.dims());
}

} // namespace detail

} // namespace nng
