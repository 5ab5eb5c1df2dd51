//===- TensorOps.h - The tensor API of model code ----------------*- C++ -*-===//
//
// Free functions over nng::Tensor with PyTorch's names and semantics:
// creation, arithmetic with broadcasting and dtype promotion, reductions,
// shape and indexing operations, comparisons. Each one dispatches ops of
// the op table (Dispatch.h), so it runs eagerly, records autograd, or is
// traced, the same way. Axis arguments may be negative.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace nng {

/// The dtype factory functions (empty, zeros, randn, ...) and so layers'
/// parameters get when none is given: f32 unless set_default_dtype changed
/// it (torch.get_default_dtype).
DType get_default_dtype();
/// torch.set_default_dtype: a floating-point dtype (f16, bf16, f32, f64);
/// process-wide (a layer's dtype= argument overrides it for that layer).
/// Throws for another dtype.
void set_default_dtype(DType T);

/// Sets the default dtype for its lifetime, then restores the previous one.
class DefaultDTypeGuard {
public:
  explicit DefaultDTypeGuard(DType T) : Prev(get_default_dtype()) {
    set_default_dtype(T);
  }
  ~DefaultDTypeGuard() { set_default_dtype(Prev); }
  DefaultDTypeGuard(const DefaultDTypeGuard &) = delete;
  DefaultDTypeGuard &operator=(const DefaultDTypeGuard &) = delete;

private:
  DType Prev;
};

/// The device factory functions (and so layers) create tensors on when
/// none is given: the cpu unless set_default_device or a DefaultDeviceGuard
/// says otherwise (torch.get_default_device). Per thread.
Device get_default_device();
/// torch.set_default_device, for this thread: "cpu" or "meta" (shapes
/// without memory). Throws for cuda: eager tensors live on the cpu in this
/// build.
void set_default_device(Device D);

/// PyTorch 2's `with torch.device(d):` for its lifetime (this thread), then
/// restores the previous default device. Building a model under
/// DefaultDeviceGuard(Device::meta()) allocates nothing.
class DefaultDeviceGuard {
public:
  explicit DefaultDeviceGuard(Device D) : Prev(get_default_device()) {
    set_default_device(D);
  }
  ~DefaultDeviceGuard() { set_default_device(Prev); }
  DefaultDeviceGuard(const DefaultDeviceGuard &) = delete;
  DefaultDeviceGuard &operator=(const DefaultDeviceGuard &) = delete;

private:
  Device Prev;
};

namespace detail {
/// A layer constructor's device= and dtype= arguments (PyTorch's
/// factory_kwargs): for the scope's lifetime, on this thread only, the
/// tensors it creates default to Device and DType when they are set.
class FactoryDefaultsScope {
public:
  FactoryDefaultsScope(std::optional<Device> D, std::optional<DType> T);
  ~FactoryDefaultsScope();
  FactoryDefaultsScope(const FactoryDefaultsScope &) = delete;
  FactoryDefaultsScope &operator=(const FactoryDefaultsScope &) = delete;

private:
  std::optional<Device> PrevDevice;
  std::optional<DType> PrevDType;
  bool SetDevice;
  bool SetDType;
};
} // namespace detail

/// dtype, device and requires_grad of a created tensor.
struct TensorOptions {
  DType Type = get_default_dtype();
  Device Dev = get_default_device();
  bool RequiresGrad = false;
  TensorOptions() = default;
  TensorOptions(DType T) : Type(T) {}
  TensorOptions(Device D) : Dev(D) {}
  TensorOptions dtype(DType T) const {
    TensorOptions O = *this;
    O.Type = T;
    return O;
  }
  TensorOptions device(Device D) const {
    TensorOptions O = *this;
    O.Dev = D;
    return O;
  }
  TensorOptions requires_grad(bool R = true) const {
    TensorOptions O = *this;
    O.RequiresGrad = R;
    return O;
  }
};

// --- Creation -----------------------------------------------------------------
Tensor empty(const std::vector<int64_t> &Sizes, TensorOptions O = {});
Tensor zeros(const std::vector<int64_t> &Sizes, TensorOptions O = {});
Tensor ones(const std::vector<int64_t> &Sizes, TensorOptions O = {});
Tensor full(const std::vector<int64_t> &Sizes, Scalar V, TensorOptions O = {});
/// [0, End) and [Start, End) by Step; i64 unless O says otherwise.
Tensor arange(Scalar End, TensorOptions O = DType::I64);
Tensor arange(Scalar Start, Scalar End, Scalar Step = 1,
              TensorOptions O = DType::I64);
/// [Start, End) as i64, where Start and End may be sizes of a traced
/// tensor's dynamic dims (`x.size(0)`, `past.size(2) + x.size(1)`): then a
/// Range node computes it from the shapes, so the graph serves every
/// extent (arange would capture the example extents as a constant). With
/// concrete bounds it is arange(Start, End). (A name of its own: as an
/// arange overload, a call mixing a SymInt and a literal would be
/// ambiguous with arange(Scalar, Scalar).)
Tensor sym_arange(const SymInt &Start, const SymInt &End);
Tensor linspace(Scalar Start, Scalar End, int64_t Steps, TensorOptions O = {});
Tensor eye(int64_t N, TensorOptions O = {});
/// Uniform [0, 1) and standard normal, from the global generator.
Tensor rand(const std::vector<int64_t> &Sizes, TensorOptions O = {});
Tensor randn(const std::vector<int64_t> &Sizes, TensorOptions O = {});
/// Integers in [Low, High).
Tensor randint(int64_t Low, int64_t High, const std::vector<int64_t> &Sizes,
               TensorOptions O = DType::I64);
/// A random permutation of [0, N).
Tensor randperm(int64_t N, TensorOptions O = DType::I64);
Tensor zeros_like(const Tensor &T, std::optional<DType> D = std::nullopt);
Tensor ones_like(const Tensor &T, std::optional<DType> D = std::nullopt);
Tensor full_like(const Tensor &T, Scalar V,
                 std::optional<DType> D = std::nullopt);
Tensor rand_like(const Tensor &T);
Tensor randn_like(const Tensor &T);
/// A tensor from values (row-major) and a shape (default: 1-D).
Tensor tensor(const std::vector<double> &Values,
              std::optional<std::vector<int64_t>> Sizes = std::nullopt,
              TensorOptions O = {});
Tensor tensor(std::initializer_list<double> Values, TensorOptions O = {});
/// A 0-d tensor.
Tensor scalar_tensor(Scalar V, TensorOptions O = {});
/// The dtype a binary op of A and B computes in (PyTorch's promotion:
/// floating beats integral, wider beats narrower, bool lowest).
DType promote_types(DType A, DType B);

// --- Elementwise ----------------------------------------------------------------
Tensor add(const Tensor &A, const Tensor &B, Scalar Alpha = 1);
Tensor sub(const Tensor &A, const Tensor &B, Scalar Alpha = 1);
Tensor mul(const Tensor &A, const Tensor &B);
Tensor div(const Tensor &A, const Tensor &B);
Tensor neg(const Tensor &A);
Tensor pow(const Tensor &A, Scalar E);
Tensor pow(const Tensor &A, const Tensor &E);
Tensor exp(const Tensor &A);
Tensor log(const Tensor &A);
Tensor sqrt(const Tensor &A);
Tensor rsqrt(const Tensor &A);
Tensor abs(const Tensor &A);
Tensor sin(const Tensor &A);
Tensor cos(const Tensor &A);
Tensor erf(const Tensor &A);
Tensor sign(const Tensor &A);
Tensor reciprocal(const Tensor &A);
Tensor clamp(const Tensor &A, std::optional<Scalar> Min,
             std::optional<Scalar> Max);
Tensor maximum(const Tensor &A, const Tensor &B);
Tensor minimum(const Tensor &A, const Tensor &B);
Tensor where(const Tensor &Cond, const Tensor &A, const Tensor &B);
Tensor masked_fill(const Tensor &A, const Tensor &Mask, Scalar V);
Tensor eq(const Tensor &A, const Tensor &B);
Tensor ne(const Tensor &A, const Tensor &B);
Tensor lt(const Tensor &A, const Tensor &B);
Tensor le(const Tensor &A, const Tensor &B);
Tensor gt(const Tensor &A, const Tensor &B);
Tensor ge(const Tensor &A, const Tensor &B);
Tensor logical_not(const Tensor &A);
Tensor logical_and(const Tensor &A, const Tensor &B);
Tensor logical_or(const Tensor &A, const Tensor &B);
/// True when every element of A and B is within atol + rtol * |B|.
bool allclose(const Tensor &A, const Tensor &B, double Rtol = 1e-5,
              double Atol = 1e-8);
bool equal(const Tensor &A, const Tensor &B);

// --- Linear algebra ---------------------------------------------------------------
/// numpy-style matmul (batched, broadcasting, 1-D operands).
Tensor matmul(const Tensor &A, const Tensor &B);
Tensor mm(const Tensor &A, const Tensor &B);
Tensor bmm(const Tensor &A, const Tensor &B);

// --- Reductions (empty Dims: all axes) -------------------------------------------
Tensor sum(const Tensor &A, std::vector<int64_t> Dims = {},
           bool KeepDim = false);
Tensor mean(const Tensor &A, std::vector<int64_t> Dims = {},
            bool KeepDim = false);
/// Variance with Bessel's correction when Unbiased (PyTorch's default).
Tensor var(const Tensor &A, std::vector<int64_t> Dims = {},
           bool Unbiased = true, bool KeepDim = false);
Tensor std(const Tensor &A, std::vector<int64_t> Dims = {},
           bool Unbiased = true, bool KeepDim = false);
Tensor amax(const Tensor &A, std::vector<int64_t> Dims = {},
            bool KeepDim = false);
Tensor amin(const Tensor &A, std::vector<int64_t> Dims = {},
            bool KeepDim = false);
/// Max over all elements.
Tensor max(const Tensor &A);
Tensor min(const Tensor &A);
/// (values, indices) along Dim.
std::pair<Tensor, Tensor> max(const Tensor &A, int64_t Dim,
                              bool KeepDim = false);
std::pair<Tensor, Tensor> min(const Tensor &A, int64_t Dim,
                              bool KeepDim = false);
Tensor argmax(const Tensor &A, std::optional<int64_t> Dim = std::nullopt,
              bool KeepDim = false);
Tensor argmin(const Tensor &A, std::optional<int64_t> Dim = std::nullopt,
              bool KeepDim = false);
Tensor logsumexp(const Tensor &A, std::vector<int64_t> Dims,
                 bool KeepDim = false);
Tensor softmax(const Tensor &A, int64_t Dim);
Tensor log_softmax(const Tensor &A, int64_t Dim);

// --- Shape and indexing ---------------------------------------------------------------
/// One extent may be -1. Symbolic entries (a traced dynamic dim) record
/// Shape/Gather/Concat nodes for the target shape.
Tensor reshape(const Tensor &A, const SymIntList &Sizes);
Tensor view(const Tensor &A, const SymIntList &Sizes);
Tensor flatten(const Tensor &A, int64_t StartDim = 0, int64_t EndDim = -1);
Tensor transpose(const Tensor &A, int64_t D0, int64_t D1);
Tensor permute(const Tensor &A, const std::vector<int64_t> &Dims);
Tensor unsqueeze(const Tensor &A, int64_t Dim);
Tensor squeeze(const Tensor &A, std::optional<int64_t> Dim = std::nullopt);
/// -1 keeps an extent; symbolic entries as in reshape.
Tensor expand(const Tensor &A, const SymIntList &Sizes);
Tensor broadcast_to(const Tensor &A, const SymIntList &Sizes);
Tensor cat(const std::vector<Tensor> &Ts, int64_t Dim = 0);
Tensor stack(const std::vector<Tensor> &Ts, int64_t Dim = 0);
/// Pieces of SplitSize along Dim (the last may be smaller).
std::vector<Tensor> split(const Tensor &A, int64_t SplitSize, int64_t Dim = 0);
std::vector<Tensor> split(const Tensor &A, const std::vector<int64_t> &Sizes,
                          int64_t Dim = 0);
std::vector<Tensor> chunk(const Tensor &A, int64_t Chunks, int64_t Dim = 0);
std::vector<Tensor> unbind(const Tensor &A, int64_t Dim = 0);
/// [Start, End) by Step along Dim, clamped like Python slicing.
Tensor slice(const Tensor &A, int64_t Dim, int64_t Start, int64_t End,
             int64_t Step = 1);
Tensor narrow(const Tensor &A, int64_t Dim, int64_t Start, int64_t Length);
/// Index along Dim, removing the axis.
Tensor select(const Tensor &A, int64_t Dim, int64_t Index);
/// Entries Index (1-D integer tensor) along Dim.
Tensor index_select(const Tensor &A, int64_t Dim, const Tensor &Index);
/// torch.gather: out[i][j] = A[i][Index[i][j]] along Dim.
Tensor gather(const Tensor &A, int64_t Dim, const Tensor &Index);
/// Lower/upper triangle (Diagonal offset as in PyTorch).
Tensor tril(const Tensor &A, int64_t Diagonal = 0);
Tensor triu(const Tensor &A, int64_t Diagonal = 0);
Tensor one_hot(const Tensor &Index, int64_t NumClasses);

} // namespace nng
