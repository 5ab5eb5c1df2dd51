//===- Creation.cpp - Making new tensors ------------------------------------===//
//
// zeros, ones, full, arange, linspace, eye, the random creators fed by the
// global generator, *_like, tensor() from values, and the helpers of
// EagerInternal.h that make constant operands. Created tensors are leaves
// built directly as data (no op is dispatched), like PyTorch's factories.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
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

/// New zero-filled data of shape Sh with O's dtype on O's device (no memory
/// on the meta device).
rt::Tensor newData(const Shape &Sh, const TensorOptions &O) {
  return rt::Tensor::empty(Sh, O.Type, O.Dev);
}

/// Fills a contiguous tensor from Gen(I) (a double per flat index); a meta
/// tensor has nothing to fill (and random creators draw nothing for it).
template <typename Fn> void fillWith(rt::Tensor &D, Fn Gen) {
  if (D.device().isMeta())
    return;
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
/// A layer constructor's dtype= / device= (FactoryDefaultsScope), and this
/// thread's default device.
thread_local std::optional<DType> ScopedDType;
thread_local std::optional<Device> ScopedDevice;
thread_local Device DefaultDevice = Device::cpu();
} // namespace

DType get_default_dtype() {
  if (ScopedDType)
    return *ScopedDType;
  return DefaultDType.load(std::memory_order_relaxed);
}

Device get_default_device() {
  return ScopedDevice ? *ScopedDevice : DefaultDevice;
}

void set_default_device(Device D) {
  if (D.isCUDA())
    fail(ErrorKind::Unsupported, "set_default_device(", D.toString(),
         "): eager tensors live on the cpu in this build (or on the meta "
         "device); compile the model (nng::compile) to run it elsewhere");
  DefaultDevice = D;
}

namespace detail {
FactoryDefaultsScope::FactoryDefaultsScope(std::optional<Device> D,
                                           std::optional<DType> T)
    : PrevDevice(ScopedDevice), PrevDType(ScopedDType),
      SetDevice(D.has_value()), SetDType(T.has_value()) {
  if (D && D->isCUDA())
    fail(ErrorKind::Unsupported, "device=", D->toString(),
         ": layers are built on the cpu or the meta device in this build; "
         "compile the model (nng::compile) to run it elsewhere");
  if (T && !isFloatingPoint(*T))
    fail(ErrorKind::InvalidArgument, "dtype=", dtypeName(*T),
         ": a layer's parameters must have a floating-point dtype (f16, bf16, "
         "f32, f64)");
  if (SetDevice)
    ScopedDevice = D;
  if (SetDType)
    ScopedDType = T;
}
FactoryDefaultsScope::~FactoryDefaultsScope() {
  if (SetDevice)
    ScopedDevice = PrevDevice;
  if (SetDType)
    ScopedDType = PrevDType;
}
} // namespace detail

void set_default_dtype(DType T) {
  if (T != DType::F16 && T != DType::BF16 && T != DType::F32 && T != DType::F64)
    fail(ErrorKind::InvalidArgument, "set_default_dtype: only floating-point "
         "dtypes (f16, bf16, f32, f64) can be the default, got ",
         dtypeName(T));
  DefaultDType.store(T, std::memory_order_relaxed);
}

Tensor empty(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return finish(newData(checkedShape(Sizes, "empty"), O), O);
}

Tensor zeros(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return finish(newData(checkedShape(Sizes, "zeros"), O), O);
}

Tensor ones(const std::vector<int64_t> &Sizes, TensorOptions O) {
  return full(Sizes, 1.0, O);
}

Tensor full(const std::vector<int64_t> &Sizes, Scalar V, TensorOptions O) {
  rt::Tensor D = newData(checkedShape(Sizes, "full"), O);
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
  rt::Tensor D = newData(Shape{N}, O);
  fillWith(D, [&](int64_t I) { return Start + Step * static_cast<double>(I); });
  return finish(std::move(D), O);
}

Tensor sym_arange(const SymInt &Start, const SymInt &End) {
  if (!Start.isSymbolic() && !End.isSymbolic())
    return arange(Start.example(), End.example());
  if (End.example() < Start.example())
    fail(ErrorKind::InvalidArgument, "sym_arange: end ", End,
         " is below start ", Start, " (with the trace's example extents)");
  // Range takes 0-d operands; the shape operand of a size is 1-D [1].
  auto Scalar0d = [](const SymInt &S) {
    return squeeze(detail::symShapeTensor({S}), 0);
  };
  return dispatch::call1(ir::OpKind::Range,
                         {Scalar0d(Start), Scalar0d(End),
                          detail::scalarOf(DType::I64, 1)});
}

Tensor linspace(Scalar Start, Scalar End, int64_t Steps, TensorOptions O) {
  if (Steps < 0)
    fail(ErrorKind::InvalidArgument, "linspace: number of steps must be "
                                     "non-negative, got ",
         Steps);
  rt::Tensor D = newData(Shape{Steps}, O);
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
  rt::Tensor D = newData(checkedShape({N, N}, "eye"), O);
  fillWith(D, [&](int64_t I) { return I / N == I % N ? 1.0 : 0.0; });
  return finish(std::move(D), O);
}

Tensor rand(const std::vector<int64_t> &Sizes, TensorOptions O) {
  rt::Tensor D = newData(checkedShape(Sizes, "rand"), O);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return G.uniform(); });
  return finish(std::move(D), O);
}

Tensor randn(const std::vector<int64_t> &Sizes, TensorOptions O) {
  rt::Tensor D = newData(checkedShape(Sizes, "randn"), O);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return G.normal(); });
  return finish(std::move(D), O);
}

Tensor randint(int64_t Low, int64_t High, const std::vector<int64_t> &Sizes,
               TensorOptions O) {
  if (High <= Low)
    fail(ErrorKind::InvalidArgument, "randint: high (", High,
         ") must be greater than low (", Low, ")");
  rt::Tensor D = newData(checkedShape(Sizes, "randint"), O);
  Generator &G = defaultGenerator();
  fillWith(D, [&](int64_t) { return static_cast<double>(G.integer(Low, High)); });
  return finish(std::move(D), O);
}

Tensor randperm(int64_t N, TensorOptions O) {
  if (N < 0)
    fail(ErrorKind::InvalidArgument, "randperm: n must be non-negative, got ",
         N);
  rt::Tensor D = newData(Shape{N}, O);
  if (D.device().isMeta())
    return finish(std::move(D), O);
  std::vector<int64_t> P(static_cast<size_t>(N));
  std::iota(P.begin(), P.end(), 0);
  Generator &G = defaultGenerator();
  for (int64_t I = N - 1; I > 0; --I)
    std::swap(P[I], P[G.integer(0, I + 1)]);
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

/// *_like's options: T's device, and D or T's dtype.
TensorOptions likeOptions(const Tensor &T,
                          std::optional<DType> D = std::nullopt) {
  return TensorOptions(D.value_or(T.dtype())).device(T.device());
}
} // namespace

Tensor zeros_like(const Tensor &T, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, 0.0, D.value_or(T.dtype()), R))
    return R;
  return zeros(T.sizes(), likeOptions(T, D));
}

Tensor ones_like(const Tensor &T, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, 1.0, D.value_or(T.dtype()), R))
    return R;
  return ones(T.sizes(), likeOptions(T, D));
}

Tensor full_like(const Tensor &T, Scalar V, std::optional<DType> D) {
  Tensor R;
  if (fillLikeProxy(T, V, D.value_or(T.dtype()), R))
    return R;
  return full(T.sizes(), V, likeOptions(T, D));
}

Tensor rand_like(const Tensor &T) { return rand(T.sizes(), likeOptions(T)); }
Tensor randn_like(const Tensor &T) {
  return randn(T.sizes(), likeOptions(T));
}

Tensor tensor(const std::vector<double> &Values,
              std::optional<std::vector<int64_t>> Sizes, TensorOptions O) {
  std::vector<int64_t> Sz =
      Sizes ? *Sizes : std::vector<int64_t>{static_cast<int64_t>(Values.size())};
  Shape Sh = checkedShape(Sz, "tensor");
  if (Sh.numel() != static_cast<int64_t>(Values.size()))
    fail(ErrorKind::ShapeMismatch, "tensor: ", Values.size(),
         " values do not fill shape ", Sh.toString(), " (", Sh.numel(),
         " elements)");
  rt::Tensor D = newData(Sh, O);
  fillWith(D, [&](int64_t I) { return Values[I]; });
  return finish(std::move(D), O);
}

Tensor tensor(std::initializer_list<double> Values, TensorOptions O) {
  return tensor(std::vector<double>(Values), std::nullopt, O);
}

Tensor scalar_tensor(Scalar V, TensorOptions O) {
  rt::Tensor D = newData(Shape{}, O);
  if (!D.device().isMeta())
    D.setFlat(0, V);
  return finish(std::move(D), O);
}

namespace detail {

Tensor i64Tensor(const std::vector<int64_t> &Values) {
  return Tensor(rt::Tensor::fromVector<int64_t>(
      Values, Shape{static_cast<int64_t>(Values.size())}));
}

// Operands made from numbers live on the cpu whatever the default device
// (PyTorch's wrapped numbers mix with tensors of any device).
Tensor scalarOf(DType T, Scalar V) {
  return scalar_tensor(V, TensorOptions(T).device(Device::cpu()));
}

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
