//===- Parametrize.h - torch.nn.utils.parametrize -------------*- C++ -*-===//
//
// PyTorch's torch.nn.utils.parametrize in C++: register_parametrization
// moves a module's parameter (or buffer) `weight` to
// `parametrizations.weight.original` (several originals `original0`,
// `original1`, ... when right_inverse returns several tensors), keeps the
// parametrization modules as `parametrizations.weight.0`, `.1`, ... (their
// parameters and buffers in the state_dict under those names, as
// PyTorch's), and before each forward sets the module's `weight` member to
// the chain of parametrizations applied to the originals (a forward
// pre-hook, as pruning does), so gradients reach the originals. The module
// prints as "Parametrized<Type>". Inside a Cached scope each value is
// computed once. remove_parametrizations makes the current value (or the
// original) the parameter again. Outside forward, value() computes the
// current value (the member holds the last forward's).
//
//   struct Symmetric : nn::Module<Symmetric> {
//     Tensor forward(const Tensor &X) { return X.triu() + X.triu(1).transpose(0, 1); }
//   };
//   parametrize::register_parametrization(Lin, "weight", nn::make<Symmetric>());
//
// A parametrization is an nn module whose forward takes the original (one
// tensor, or two for two originals) and returns the value; an optional
// right_inverse(value) returns the original (a Tensor) or originals (a
// std::vector<Tensor>) for a given value, used when registering and by
// assign() (PyTorch's `module.weight = value`); a right_inverse that
// cannot invert throws NotImplemented, which registration takes as the
// identity (as PyTorch does with NotImplementedError). docs/modules.md,
// "Parametrizations". weight_norm and spectral_norm are built on it
// (Parametrizations.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Module.h"

#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nng::nn::utils::parametrize {

/// Thrown by a right_inverse that cannot invert (PyTorch's
/// NotImplementedError): registering keeps the tensor as the original,
/// assign() passes the error on.
class NotImplemented : public Error {
public:
  explicit NotImplemented(std::string Message)
      : Error(ErrorKind::Unsupported, std::move(Message)) {}
};

/// A parametrization with its module erased: the calls
/// register_parametrization needs.
struct Parametrization {
  ModulePtr Module;
  /// The value from the originals (one, or several for the first of a
  /// chain whose right_inverse returned several).
  std::function<Tensor(const std::vector<Tensor> &)> Forward;
  /// The originals for a value; empty when the module has no right_inverse.
  std::function<std::vector<Tensor>(const Tensor &)> RightInverse;
};

/// Erases a parametrization module P (see the file comment).
template <typename P> Parametrization erase(std::shared_ptr<P> Mod) {
  Parametrization R;
  R.Module = Mod;
  R.Forward = [Mod](const std::vector<Tensor> &X) -> Tensor {
    if constexpr (requires(P &M, const Tensor &A, const Tensor &B) {
                    M.forward(A, B);
                  })
      if (X.size() == 2)
        return (*Mod)(X[0], X[1]);
    if constexpr (requires(P &M, const Tensor &A) { M.forward(A); })
      if (X.size() == 1)
        return (*Mod)(X[0]);
    fail(ErrorKind::InvalidArgument, Mod->type_name(),
         ": this parametrization's forward does not take ", X.size(),
         " tensor(s)");
  };
  if constexpr (requires(P &M, const Tensor &A) {
                  { M.right_inverse(A) } -> std::convertible_to<Tensor>;
                })
    R.RightInverse = [Mod](const Tensor &V) {
      return std::vector<Tensor>{Mod->right_inverse(V)};
    };
  else if constexpr (requires(P &M, const Tensor &A) {
                       {
                         M.right_inverse(A)
                         } -> std::convertible_to<std::vector<Tensor>>;
                     })
    R.RightInverse = [Mod](const Tensor &V) { return Mod->right_inverse(V); };
  return R;
}

/// The chain of one tensor: its originals (parameters, or buffers when the
/// tensor was a buffer) and the parametrizations ("0", "1", ...).
class ParametrizationList : public Module<ParametrizationList> {
public:
  ParametrizationList(std::vector<Tensor> Originals, bool AsBuffers,
                      Parametrization First);
  /// The parametrized value (the Cached scope's when one is open).
  Tensor forward();
  void append(Parametrization P);
  size_t size() const { return Chain.size(); }
  /// The originals, in order.
  std::vector<Tensor> originals() const;
  bool has_right_inverse() const;
  /// Sets the originals so that forward() gives Value: the
  /// parametrizations' right_inverse from the last to the first, the
  /// result copied into the originals (which keep their identity, so
  /// optimizers keep them). Throws when one has no right_inverse.
  void right_inverse(const Tensor &Value);
  /// The originals are buffers (the tensor was one).
  bool holds_buffers() const { return AsBuffers; }

private:
  std::vector<Parametrization> Chain;
  size_t NumOriginals;
  bool AsBuffers;
};

/// Registers parametrization Mod on tensor Name of M (a registered
/// parameter or buffer, or an already parametrized tensor: Mod is appended
/// to its chain). Unless Unsafe, Mod's value must keep the tensor's shape
/// and dtype. Throws naming the module and tensor on misuse.
void register_parametrization(ModuleBase &M, const std::string &Name,
                              Parametrization P, bool Unsafe = false);
template <typename P>
void register_parametrization(ModuleBase &M, const std::string &Name,
                              std::shared_ptr<P> Mod, bool Unsafe = false) {
  register_parametrization(M, Name, erase(std::move(Mod)), Unsafe);
}
template <typename P>
void register_parametrization(const std::shared_ptr<ModuleBase> &M,
                              const std::string &Name, std::shared_ptr<P> Mod,
                              bool Unsafe = false) {
  register_parametrization(*M, Name, erase(std::move(Mod)), Unsafe);
}

/// True when M has a parametrized tensor (Name empty) or tensor Name is
/// parametrized.
bool is_parametrized(const ModuleBase &M, const std::string &Name = "");
/// The current value of parametrized tensor Name.
Tensor value(const ModuleBase &M, const std::string &Name);
/// The chain of parametrized tensor Name.
std::shared_ptr<ParametrizationList> parametrizations(const ModuleBase &M,
                                                      const std::string &Name);

/// PyTorch's `module.name = value` for parametrized tensor Name: the
/// chain's right_inverse (ParametrizationList::right_inverse), then the
/// module's member holds the new value.
void assign(ModuleBase &M, const std::string &Name, const Tensor &Value);

/// Removes the parametrizations of Name: with LeaveParametrized the
/// tensor becomes a parameter (buffer) holding the current value (in the
/// first original's storage when the shapes agree, so optimizers keep
/// it); else the single original becomes it.
void remove_parametrizations(ModuleBase &M, const std::string &Name,
                             bool LeaveParametrized = true);

/// torch.nn.utils.parametrize.cached(): while one is alive on this thread,
/// each parametrized value is computed once.
class Cached {
public:
  Cached();
  ~Cached();
  Cached(const Cached &) = delete;
  Cached &operator=(const Cached &) = delete;
};

} // namespace nng::nn::utils::parametrize
