//===- ModuleConversions.cpp - nn::ModuleBase's dtype and device moves ----===//
//
// to(dtype), to(device), to(tensor), to_empty(device): conversions of every
// parameter and buffer of a module tree that keep tensor identity (the data
// inside each tensor's impl is replaced, like PyTorch's param.data = ...),
// computed for all tensors before any is replaced so an error leaves the
// module as it was. Devices are the cpu and the meta device (shapes
// without memory): cpu -> meta drops the data, meta -> cpu needs new
// memory (to_empty) since there is nothing to copy.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <functional>
#include <unordered_set>

namespace nng::nn {

namespace {
/// The converted data of one floating tensor (and of its gradient).
struct Conversion {
  TensorImpl *Impl;
  rt::Tensor Data;
  rt::Tensor Grad;
};

/// Converts T's data (and gradient) to Type, without changing T yet.
void planConversion(const Tensor &T, DType Type, std::vector<Conversion> &Out) {
  if (!T.defined() || !T.is_floating_point() || T.dtype() == Type)
    return;
  for (const Conversion &C : Out)
    if (C.Impl == T.impl().get())
      return; // Shared between modules: once.
  TensorImpl &Impl = *T.impl();
  Conversion C{&Impl, Tensor(Impl.Data).to(Type).data(), rt::Tensor()};
  if (Impl.Grad && isFloatingPoint(Impl.Grad->Data.dtype()))
    C.Grad = Tensor(Impl.Grad->Data).to(Type).data();
  Out.push_back(std::move(C));
}
} // namespace

ModuleBase &ModuleBase::to(DType T) {
  if (!isFloatingPoint(T))
    fail(ErrorKind::InvalidArgument, TypeName, ".to(", dtypeName(T),
         "): modules can only be converted to floating-point dtypes (f32, "
         "f64, f16, bf16)");
  // Convert everything first, then swap the data in: an error leaves the
  // module as it was.
  std::vector<Conversion> Plan;
  {
    NoGradGuard NoGrad;
    for (const ModulePtr &M : modules()) {
      M->adoptMembers();
      for (const auto &[N, P] : M->Params)
        planConversion(P, T, Plan);
      for (const auto &[N, B] : M->Buffers)
        planConversion(B.Value, T, Plan);
    }
  }
  for (Conversion &C : Plan) {
    C.Impl->Data = std::move(C.Data);
    ++C.Impl->Version;
    // A leaf's accumulator records the old dtype; the next backward makes
    // a new one.
    C.Impl->Accumulator.reset();
    if (C.Grad.defined())
      C.Impl->Grad->Data = std::move(C.Grad);
  }
  return *this;
}

namespace {
/// Replaces the data (and gradient) of each of Impls with what Make returns
/// for it, computed for all first so an error leaves them as they were.
/// Tensor handles stay valid.
void replaceData(const std::function<rt::Tensor(const rt::Tensor &)> &Make,
                 const std::vector<TensorImpl *> &Impls) {
  std::vector<std::pair<rt::Tensor, rt::Tensor>> New;
  New.reserve(Impls.size());
  for (TensorImpl *I : Impls)
    New.emplace_back(Make(I->Data), I->Grad ? Make(I->Grad->Data) : rt::Tensor());
  for (size_t K = 0; K < Impls.size(); ++K) {
    TensorImpl &I = *Impls[K];
    I.Data = std::move(New[K].first);
    ++I.Version;
    I.Accumulator.reset();
    if (I.Grad)
      I.Grad->Data = std::move(New[K].second);
  }
}
} // namespace

std::vector<TensorImpl *> ModuleBase::tensorImpls() {
  std::vector<TensorImpl *> R;
  std::unordered_set<TensorImpl *> Seen;
  auto Add = [&](const Tensor &T) {
    if (T.defined() && Seen.insert(T.impl().get()).second)
      R.push_back(T.impl().get());
  };
  for (const ModulePtr &M : modules()) {
    M->adoptMembers();
    for (const auto &[N, P] : M->Params)
      Add(P);
    for (const auto &[N, B] : M->Buffers)
      Add(B.Value);
  }
  return R;
}

ModuleBase &ModuleBase::to(Device D) {
  if (D.isCUDA())
    fail(ErrorKind::Unsupported, TypeName, ".to(", D.toString(),
         "): eager tensors live on the CPU (or the meta device) in this "
         "build; compile the model (nng::compile) to run it on another device");
  std::vector<TensorImpl *> Impls = tensorImpls();
  if (D.isMeta()) {
    replaceData(
        [](const rt::Tensor &T) {
          return rt::Tensor::empty(T.shape(), T.dtype(), Device::meta());
        },
        Impls);
    return *this;
  }
  for (const auto &[Name, T] : named_parameters())
    if (T.is_meta())
      failMetaCopy(Name, "parameter", D);
  for (const auto &[Name, T] : named_buffers())
    if (T.is_meta())
      failMetaCopy(Name, "buffer", D);
  return *this;
}

void ModuleBase::failMetaCopy(const std::string &Name, const char *What,
                              Device D) const {
  fail(ErrorKind::InvalidArgument, TypeName, ".to(", D.toString(), "): ",
       What, " '", Name,
       "' is on the meta device and has no data to copy; use to_empty(",
       D.toString(),
       ") to allocate the module there (then initialize it or load a "
       "state dict), or load_state_dict(sd, true, /*assign=*/true)");
}

ModuleBase &ModuleBase::to_empty(Device D) {
  if (D.isCUDA())
    fail(ErrorKind::Unsupported, TypeName, ".to_empty(", D.toString(),
         "): eager tensors live on the CPU (or the meta device) in this build");
  replaceData(
      [D](const rt::Tensor &T) {
        return rt::Tensor::empty(T.shape(), T.dtype(), D);
      },
      tensorImpls());
  return *this;
}

ModuleBase &ModuleBase::to(Device D, DType T) {
  to(D);
  return to(T);
}

ModuleBase &ModuleBase::to(const Tensor &Other) {
  if (!Other.defined())
    fail(ErrorKind::InvalidArgument, TypeName,
         ".to(tensor): the tensor is undefined");
  return to(Other.device(), Other.dtype());
}

} // namespace nng::nn
