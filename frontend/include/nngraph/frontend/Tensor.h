//===- Tensor.h - The eager tensor of model code -----------------*- C++ -*-===//
//
// nng::Tensor is what model code computes with, like torch::Tensor: a
// shared handle to a TensorImpl that holds the data (an rt::Tensor) and the
// autograd state (requires_grad, grad, grad_fn, hooks). Copies of a Tensor
// share the impl. Every operation on it goes through the dispatcher
// (Dispatch.h), so the same code runs eagerly, records a backward graph, or
// is traced into the IR (fx/Trace.h): then the tensor is a proxy whose
// TraceValue names its IR value, size(i) may be a symbolic SymInt, and
// reading its data (item(), to_vector(), data_ptr(), printing) throws
// fx::TraceError. The operators and methods here are thin wrappers over
// the free functions of TensorOps.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/SymInt.h"
#include "nngraph/runtime/Tensor.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nng {

namespace autograd {
class Node;
class AccumulateGrad;
} // namespace autograd

class Tensor;
class RegisteredTensor;

namespace detail {
/// Throws fx::TraceError: What (item(), to_vector(), ...) reads the data of
/// a proxy during a trace.
[[noreturn]] void failProxyData(const Tensor &T, const char *What);
/// size(D) of a proxy: concrete for a static dim, else symbolic.
SymInt traceSize(const Tensor &T, int64_t D);
} // namespace detail

/// A hook on a tensor's gradient: may return a replacement (a defined
/// tensor) or an undefined Tensor to keep the gradient.
using TensorHook = std::function<Tensor(const Tensor &)>;

/// The state behind a Tensor handle.
struct TensorImpl {
  rt::Tensor Data;
  bool RequiresGrad = false;
  /// Keep .grad() of a non-leaf after backward.
  bool RetainsGrad = false;
  std::shared_ptr<TensorImpl> Grad;
  /// The node that produced this tensor (null for leaves).
  std::shared_ptr<autograd::Node> GradFn;
  /// Which output of GradFn this tensor is.
  uint32_t OutputNr = 0;
  /// A leaf's gradient accumulator, created on first use.
  std::weak_ptr<autograd::AccumulateGrad> Accumulator;
  /// Hooks of a leaf (non-leaf hooks live on GradFn); null entries removed.
  std::vector<std::pair<int, TensorHook>> LeafHooks;
  /// Bumped by every in-place change.
  uint64_t Version = 0;
  /// Seam for the trace mode: the IR value this tensor stands for (an
  /// opaque pointer owned by the tracer), null when eager.
  void *TraceValue = nullptr;
};

/// A scalar operand of mixed tensor/number arithmetic.
using Scalar = double;

/// The eager tensor.
class Tensor {
public:
  /// An undefined tensor (absent optional input, no gradient yet).
  Tensor() = default;
  /// Wraps Data as a leaf.
  explicit Tensor(rt::Tensor Data, bool RequiresGrad = false);
  explicit Tensor(std::shared_ptr<TensorImpl> Impl) : Impl(std::move(Impl)) {}
  /// Takes the tensor of a registration and tells the registering owner
  /// where this handle lives (see RegisteredTensor):
  ///   Tensor scale = register_parameter("scale", ones({3}));
  Tensor(RegisteredTensor &&R);
  Tensor &operator=(RegisteredTensor &&R);

  bool defined() const { return Impl != nullptr; }
  /// The underlying data tensor (a strided view; no autograd).
  const rt::Tensor &data() const;
  /// The impl, for the dispatcher and autograd.
  const std::shared_ptr<TensorImpl> &impl() const { return Impl; }
  /// True when both handles share one impl.
  bool is_same(const Tensor &O) const { return Impl == O.Impl; }

  // --- Metadata ---------------------------------------------------------------
  DType dtype() const { return data().dtype(); }
  Device device() const { return data().device(); }
  /// On the meta device: a shape and a dtype, no data (PyTorch's is_meta).
  bool is_meta() const { return data().device().isMeta(); }
  /// The extents; throws fx::TraceError for a proxy with a dynamic dim
  /// (use sym_sizes()).
  std::vector<int64_t> sizes() const;
  /// The extents as SymInts (symbolic for a proxy's dynamic dims).
  std::vector<SymInt> sym_sizes() const;
  /// The (example) shape of the data.
  const Shape &shape() const { return data().shape(); }
  /// Extent of axis D (negative counts from the end); symbolic for a
  /// proxy's dynamic dim during a trace.
  SymInt size(int64_t D) const {
    const rt::Tensor &T = data();
    if (!Impl->TraceValue)
      return SymInt(T.size(D));
    return detail::traceSize(*this, D);
  }
  /// True when this tensor is a proxy of a trace.
  bool is_proxy() const { return Impl && Impl->TraceValue; }
  int64_t dim() const { return static_cast<int64_t>(data().rank()); }
  int64_t numel() const { return data().numel(); }
  bool is_floating_point() const { return isFloatingPoint(dtype()); }
  bool is_contiguous() const { return data().isContiguous(); }
  /// The single element converted to T; throws unless numel() == 1.
  template <typename T> T item() const;
  /// Typed pointer to the first element (the dtype must be T).
  template <typename T> T *data_ptr() {
    if (is_proxy())
      detail::failProxyData(*this, "data_ptr()");
    return Impl->Data.data<T>();
  }
  template <typename T> const T *data_ptr() const {
    if (is_proxy())
      detail::failProxyData(*this, "data_ptr()");
    return data().data<T>();
  }
  /// Every element, row-major, converted to T.
  template <typename T> std::vector<T> to_vector() const;

  // --- Autograd ---------------------------------------------------------------
  bool requires_grad() const { return Impl && Impl->RequiresGrad; }
  /// Marks a leaf as requiring a gradient; throws on a non-leaf.
  Tensor &requires_grad_(bool R = true);
  /// The accumulated gradient (undefined when none).
  Tensor grad() const;
  /// Replaces the accumulated gradient (undefined clears it).
  void set_grad(const Tensor &G);
  /// The node that made this tensor; null for leaves.
  const std::shared_ptr<autograd::Node> &grad_fn() const { return Impl->GradFn; }
  bool is_leaf() const { return !Impl->GradFn; }
  /// Also keep the gradient of this non-leaf after backward.
  void retain_grad();
  bool retains_grad() const { return Impl->RetainsGrad; }
  /// Computes gradients of this tensor with respect to the leaves; Grad
  /// defaults to ones for a one-element tensor.
  void backward(const Tensor &Grad = Tensor(), bool RetainGraph = false) const;
  /// A tensor sharing the data with no autograd history.
  Tensor detach() const;
  /// Registers a gradient hook; returns an id for remove_hook.
  int register_hook(TensorHook H);
  void remove_hook(int Id);
  /// The in-place version counter.
  uint64_t version() const { return Impl->Version; }

  // --- Conversion and copies --------------------------------------------------
  Tensor to(DType T) const;
  /// To the cpu or the meta device. cpu -> meta keeps shape and dtype and
  /// drops the data; meta -> cpu is an error (there is no data to copy: make
  /// new tensors, e.g. nn::Module::to_empty). Other devices: an error in
  /// this build.
  Tensor to(Device D) const;
  Tensor cpu() const { return to(Device::cpu()); }
  Tensor contiguous() const;
  Tensor clone() const;

  // --- In-place (no autograd history; refused on leaves needing grad
  // while grad mode is on) ---------------------------------------------------
  Tensor &copy_(const Tensor &Src);
  Tensor &zero_();
  Tensor &fill_(Scalar V);
  Tensor &add_(const Tensor &O, Scalar Alpha = 1.0);
  Tensor &add_(Scalar V);
  Tensor &sub_(const Tensor &O, Scalar Alpha = 1.0);
  Tensor &mul_(const Tensor &O);
  Tensor &mul_(Scalar V);
  Tensor &div_(const Tensor &O);
  Tensor &div_(Scalar V);
  Tensor &clamp_(std::optional<Scalar> Min, std::optional<Scalar> Max);
  Tensor &uniform_(double From = 0.0, double To = 1.0);
  Tensor &normal_(double Mean = 0.0, double Std = 1.0);

  // --- Methods forwarding to TensorOps.h --------------------------------------
  Tensor view(const SymIntList &Shape) const;
  Tensor reshape(const SymIntList &Shape) const;
  Tensor flatten(int64_t StartDim = 0, int64_t EndDim = -1) const;
  Tensor transpose(int64_t D0, int64_t D1) const;
  Tensor t() const;
  Tensor permute(const std::vector<int64_t> &Dims) const;
  Tensor unsqueeze(int64_t D) const;
  Tensor squeeze(std::optional<int64_t> D = std::nullopt) const;
  Tensor expand(const SymIntList &Sizes) const;
  Tensor slice(int64_t D, int64_t Start, int64_t End, int64_t Step = 1) const;
  Tensor select(int64_t D, int64_t Index) const;
  /// t[i] along axis 0.
  Tensor operator[](int64_t Index) const { return select(0, Index); }
  Tensor sum(std::vector<int64_t> Dims = {}, bool KeepDim = false) const;
  Tensor mean(std::vector<int64_t> Dims = {}, bool KeepDim = false) const;
  Tensor max() const;
  Tensor argmax(std::optional<int64_t> D = std::nullopt,
                bool KeepDim = false) const;
  Tensor matmul(const Tensor &O) const;
  Tensor pow(Scalar E) const;
  Tensor sqrt() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor softmax(int64_t D) const;
  Tensor log_softmax(int64_t D) const;

  /// PyTorch-style text: tensor([[1., 2.]], requires_grad=True).
  std::string toString() const;

private:
  std::shared_ptr<TensorImpl> Impl;
};

/// What a registration returns (nn::ModuleBase::register_parameter,
/// register_buffer, replace_parameter, replace_buffer): the registered
/// tensor, plus a note to the owner. A Tensor handle initialised or
/// assigned from it (from the rvalue; copies of it are plain Tensors)
/// calls Notify(Owner, Name, &handle), which is how a module learns which
/// of its data members holds each slot (nn's member bindings, Module.h).
/// Otherwise it is the Tensor it holds. Use it at once: it must not
/// outlive its owner.
class RegisteredTensor : public Tensor {
public:
  using NotifyFn = void (*)(void *Owner, const std::string &Name,
                            Tensor *Handle);
  RegisteredTensor(Tensor T, void *Owner, std::string Name, NotifyFn Notify)
      : Tensor(std::move(T)), Owner(Owner), Name(std::move(Name)),
        Notify(Notify) {}

private:
  friend class Tensor;
  void *Owner;
  std::string Name;
  NotifyFn Notify;
};

// --- Operators (broadcasting, ONNX semantics; mixed dtypes promote) ----------
Tensor operator+(const Tensor &A, const Tensor &B);
Tensor operator-(const Tensor &A, const Tensor &B);
Tensor operator*(const Tensor &A, const Tensor &B);
Tensor operator/(const Tensor &A, const Tensor &B);
Tensor operator+(const Tensor &A, Scalar B);
Tensor operator-(const Tensor &A, Scalar B);
Tensor operator*(const Tensor &A, Scalar B);
Tensor operator/(const Tensor &A, Scalar B);
Tensor operator+(Scalar A, const Tensor &B);
Tensor operator-(Scalar A, const Tensor &B);
Tensor operator*(Scalar A, const Tensor &B);
Tensor operator/(Scalar A, const Tensor &B);
Tensor operator-(const Tensor &A);
/// Elementwise comparisons give bool tensors.
Tensor operator==(const Tensor &A, const Tensor &B);
Tensor operator<(const Tensor &A, const Tensor &B);
Tensor operator>(const Tensor &A, const Tensor &B);
Tensor operator==(const Tensor &A, Scalar B);
Tensor operator<(const Tensor &A, Scalar B);
Tensor operator>(const Tensor &A, Scalar B);
Tensor &operator+=(Tensor &A, const Tensor &B);
Tensor &operator-=(Tensor &A, const Tensor &B);
Tensor &operator*=(Tensor &A, const Tensor &B);
Tensor &operator+=(Tensor &A, Scalar B);
Tensor &operator*=(Tensor &A, Scalar B);

/// Prints like PyTorch.
std::ostream &operator<<(std::ostream &OS, const Tensor &T);

template <typename T> T Tensor::item() const {
  if (is_proxy())
    detail::failProxyData(*this, "item()");
  const rt::Tensor &D = data();
  NNG_CHECK(D.numel() == 1, "item(): the tensor has ", D.numel(),
            " elements (shape ", D.shape().toString(),
            "); item() needs exactly one");
  if constexpr (std::is_same_v<T, bool>)
    return D.getFlat(0) != 0;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(D.getFlatInt(0));
  else
    return static_cast<T>(D.getFlat(0));
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  if (is_proxy())
    detail::failProxyData(*this, "to_vector()");
  std::vector<double> V = data().toDoubleVector();
  return std::vector<T>(V.begin(), V.end());
}

} // namespace nng
