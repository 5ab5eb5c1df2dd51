//===- Tensor.cpp - The eager tensor's own state ---------------------------===//
//
// Construction (from a registration too, which tells the registering
// module where the handle lives), autograd state (requires_grad, grad,
// retain_grad, hooks, backward, detach), conversions and the in-place
// operations, which compute out of place without recording and then write
// into the tensor's storage. The math methods forward to TensorOps.h
// (TensorMethods.cpp).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/GradMode.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Error.h"

namespace nng {

namespace {

[[noreturn]] void undefined(const char *What) {
  fail(ErrorKind::InvalidArgument, What,
       ": the tensor is undefined (default-constructed, or an absent "
       "gradient)");
}

/// In-place changes to a leaf that requires grad would corrupt the
/// gradient; PyTorch refuses them outside no_grad, and so do we.
void checkInPlace(const Tensor &T, const char *Op) {
  if (!T.defined())
    undefined(Op);
  // During a trace only proxies can change in place (functionalized: the
  // handle moves to the new value); a parameter, buffer or constant would
  // change for real while the graph records nothing.
  if (detail::isTracing() && !T.is_proxy())
    detail::failProxyData(T, Op);
  if (T.requires_grad() && autograd::isGradEnabled())
    fail(ErrorKind::InvalidArgument, Op,
         ": a leaf tensor that requires grad (or a tensor with history) "
         "cannot be changed in place while grad mode is on; use "
         "NoGradGuard (as optimizers and nn::init do) or detach() first");
}

/// Writes Result (broadcastable, any dtype) into T's storage.
Tensor &assign(Tensor &T, const Tensor &Result) {
  if (T.is_proxy()) {
    // Functionalized: T now stands for Result (cast and broadcast to T).
    Tensor R = Result.to(T.dtype());
    if (R.shape() != T.shape())
      R = expand(R, T.sym_sizes());
    T.impl()->Data = R.data();
    T.impl()->TraceValue = R.impl()->TraceValue;
    ++T.impl()->Version;
    return T;
  }
  // A meta tensor holds no values: writing into one only checks the shapes
  // (PyTorch's in-place ops on meta tensors).
  if (T.is_meta()) {
    if (Result.shape() != T.shape())
      (void)broadcastShapes(Result.shape(), T.shape());
    ++T.impl()->Version;
    return T;
  }
  rt::Tensor Src = Result.data();
  if (Src.shape() != T.shape())
    Src = Src.broadcastTo(T.shape());
  rt::Tensor Dst = T.data();
  Dst.copyFrom(Src);
  ++T.impl()->Version;
  return T;
}

} // namespace

Tensor::Tensor(rt::Tensor Data, bool RequiresGrad)
    : Impl(std::make_shared<TensorImpl>()) {
  Impl->Data = std::move(Data);
  if (RequiresGrad)
    requires_grad_(true);
}

Tensor::Tensor(RegisteredTensor &&R)
    : Impl(std::move(static_cast<Tensor &>(R).Impl)) {
  if (R.Notify)
    R.Notify(R.Owner, R.Name, this);
}

Tensor &Tensor::operator=(RegisteredTensor &&R) {
  Impl = std::move(static_cast<Tensor &>(R).Impl);
  if (R.Notify)
    R.Notify(R.Owner, R.Name, this);
  return *this;
}

const rt::Tensor &Tensor::data() const {
  if (!Impl)
    undefined("data()");
  return Impl->Data;
}

std::vector<int64_t> Tensor::sizes() const {
  if (is_proxy())
    for (int64_t D = 0, R = dim(); D < R; ++D)
      size(D).expect_int(); // Throws for a dynamic dim.
  return shape().dims();
}

std::vector<SymInt> Tensor::sym_sizes() const {
  std::vector<SymInt> R;
  R.reserve(dim());
  for (int64_t D = 0, N = dim(); D < N; ++D)
    R.push_back(size(D));
  return R;
}

Tensor &Tensor::requires_grad_(bool R) {
  if (!Impl)
    undefined("requires_grad_()");
  if (Impl->GradFn && !R)
    fail(ErrorKind::InvalidArgument,
         "requires_grad_(false) on a non-leaf tensor: use detach() instead");
  if (R && !isFloatingPoint(dtype()))
    fail(ErrorKind::InvalidArgument,
         "only floating-point tensors can require gradients, this one is ",
         dtypeName(dtype()));
  Impl->RequiresGrad = R || Impl->GradFn;
  return *this;
}

Tensor Tensor::grad() const {
  if (!Impl)
    undefined("grad()");
  return Impl->Grad ? Tensor(Impl->Grad) : Tensor();
}

void Tensor::set_grad(const Tensor &G) {
  if (!Impl)
    undefined("set_grad()");
  if (G.defined() && G.shape() != shape())
    fail(ErrorKind::ShapeMismatch, "set_grad(): gradient of shape ",
         G.shape().toString(), " for a tensor of shape ", shape().toString());
  Impl->Grad = G.defined() ? G.impl() : nullptr;
}

void Tensor::retain_grad() {
  if (!requires_grad())
    fail(ErrorKind::InvalidArgument,
         "retain_grad() on a tensor that does not require grad");
  if (!Impl->GradFn)
    return; // Leaves keep their gradient anyway.
  Impl->RetainsGrad = true;
  detail::autogradHooks("retain_grad()").RetainGrad(*Impl->GradFn,
                                                     Impl->OutputNr, Impl);
}

void Tensor::backward(const Tensor &Grad, bool RetainGraph) const {
  detail::autogradHooks("backward()").Backward({*this}, {Grad}, RetainGraph);
}

Tensor Tensor::detach() const {
  if (!Impl)
    undefined("detach()");
  auto D = std::make_shared<TensorImpl>();
  D->Data = Impl->Data;
  D->TraceValue = Impl->TraceValue;
  return Tensor(std::move(D));
}

int Tensor::register_hook(TensorHook H) {
  if (!requires_grad())
    fail(ErrorKind::InvalidArgument,
         "register_hook() on a tensor that does not require grad");
  if (Impl->GradFn)
    return detail::autogradHooks("register_hook()").AddTensorHook(
        *Impl->GradFn, Impl->OutputNr, std::move(H));
  int Id = Impl->LeafHooks.empty() ? 0 : Impl->LeafHooks.back().first + 1;
  Impl->LeafHooks.emplace_back(Id, std::move(H));
  return Id;
}

void Tensor::remove_hook(int Id) {
  if (Impl->GradFn)
    return detail::autogradHooks("remove_hook()").RemoveTensorHook(
        *Impl->GradFn, Id);
  std::erase_if(Impl->LeafHooks, [&](const auto &P) { return P.first == Id; });
}

Tensor Tensor::to(DType T) const {
  if (T == dtype())
    return *this;
  return dispatch::call1(
      ir::OpKind::Cast, {*this},
      dispatch::attrs({{"to", static_cast<int64_t>(dtypeToOnnx(T))}}));
}

Tensor Tensor::to(Device D) const {
  if (D == device())
    return *this;
  if (D.isMeta()) {
    Tensor R(rt::Tensor::empty(shape(), dtype(), D));
    return requires_grad() ? R.requires_grad_(true) : R;
  }
  if (is_meta())
    fail(ErrorKind::InvalidArgument, "to(", D.toString(),
         "): a meta tensor has no data to copy; create new tensors on the "
         "device instead (nn::Module::to_empty(device), or empty/zeros with "
         "TensorOptions().device(...))");
  fail(ErrorKind::Unsupported, "to(", D.toString(),
       "): eager tensors live on the CPU (or the meta device) in this build");
}

Tensor Tensor::contiguous() const {
  if (is_contiguous())
    return *this;
  return clone();
}

Tensor Tensor::clone() const {
  return dispatch::call1(ir::OpKind::Identity, {*this});
}

Tensor &Tensor::copy_(const Tensor &Src) {
  checkInPlace(*this, "copy_");
  return assign(*this, Src);
}

Tensor &Tensor::zero_() { return fill_(0.0); }

Tensor &Tensor::fill_(Scalar V) {
  checkInPlace(*this, "fill_");
  if (is_proxy())
    detail::failProxyData(*this, "fill_()");
  if (is_meta())
    return *this;
  rt::Tensor D = data();
  int64_t N = D.numel();
  if (D.isContiguous() && dtype() == DType::F32) {
    float *P = D.data<float>();
    std::fill(P, P + N, static_cast<float>(V));
  } else {
    rt::Tensor C = rt::Tensor::empty(D.shape(), D.dtype());
    for (int64_t I = 0; I < N; ++I)
      C.setFlat(I, V);
    D.copyFrom(C);
  }
  ++Impl->Version;
  return *this;
}

Tensor &Tensor::add_(const Tensor &O, Scalar Alpha) {
  checkInPlace(*this, "add_");
  NoGradGuard G;
  return assign(*this, add(*this, O, Alpha));
}

Tensor &Tensor::add_(Scalar V) {
  checkInPlace(*this, "add_");
  NoGradGuard G;
  return assign(*this, *this + V);
}

Tensor &Tensor::sub_(const Tensor &O, Scalar Alpha) {
  checkInPlace(*this, "sub_");
  NoGradGuard G;
  return assign(*this, sub(*this, O, Alpha));
}

Tensor &Tensor::mul_(const Tensor &O) {
  checkInPlace(*this, "mul_");
  NoGradGuard G;
  return assign(*this, mul(*this, O));
}

Tensor &Tensor::mul_(Scalar V) {
  checkInPlace(*this, "mul_");
  NoGradGuard G;
  return assign(*this, *this * V);
}

Tensor &Tensor::div_(const Tensor &O) {
  checkInPlace(*this, "div_");
  NoGradGuard G;
  return assign(*this, div(*this, O));
}

Tensor &Tensor::div_(Scalar V) {
  checkInPlace(*this, "div_");
  NoGradGuard G;
  return assign(*this, *this / V);
}

Tensor &Tensor::clamp_(std::optional<Scalar> Min, std::optional<Scalar> Max) {
  checkInPlace(*this, "clamp_");
  NoGradGuard G;
  return assign(*this, clamp(*this, Min, Max));
}

Tensor &Tensor::uniform_(double From, double To) {
  checkInPlace(*this, "uniform_");
  if (is_proxy())
    detail::failProxyData(*this, "uniform_()");
  if (is_meta())
    return *this; // Nothing to fill, nothing drawn.
  Generator &Gen = defaultGenerator();
  rt::Tensor C = rt::Tensor::empty(shape(), dtype());
  for (int64_t I = 0, N = numel(); I < N; ++I)
    C.setFlat(I, From + (To - From) * Gen.uniform());
  return assign(*this, Tensor(C));
}

Tensor &Tensor::normal_(double Mean, double Std) {
  checkInPlace(*this, "normal_");
  if (is_proxy())
    detail::failProxyData(*this, "normal_()");
  if (is_meta())
    return *this; // Nothing to fill, nothing drawn.
  Generator &Gen = defaultGenerator();
  rt::Tensor C = rt::Tensor::empty(shape(), dtype());
  for (int64_t I = 0, N = numel(); I < N; ++I)
    C.setFlat(I, Mean + Std * Gen.normal());
  return assign(*this, Tensor(C));
}

} // namespace nng
