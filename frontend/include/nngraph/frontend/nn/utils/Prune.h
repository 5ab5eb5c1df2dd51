//===- Prune.h - torch.nn.utils.prune: masks on module tensors --*- C++ -*-===//
//
// PyTorch 1.13's torch.nn.utils.prune in C++, with its semantics: pruning
// tensor `weight` of a module moves the parameter to `weight_orig`,
// registers the mask as buffer `weight_mask`, and installs a forward
// pre-hook that sets the module's `weight` member to weight_orig *
// weight_mask before each forward (the member is found through the module's
// member bindings, Module.h), so forward sees the masked tensor and
// gradients reach weight_orig. Pruning the same tensor again combines the
// masks as PyTorch's PruningContainer does (the new method acts on the
// entries, or channels, still unpruned); remove() makes it permanent;
// state_dict keys, their order and values equal PyTorch's for the same
// calls. Random methods draw from nng's generator (manual_seed makes them
// repeatable; the streams differ from PyTorch's); L1/Ln methods choose the
// entries PyTorch chooses (up to ties). docs/modules.md, "Pruning".
//
//   namespace prune = nng::nn::utils::prune;
//   prune::l1_unstructured(net->fc1, "weight", 0.3);   // 30% of the entries
//   prune::ln_structured(net->conv, "weight", 2, 2.0, 0); // 2 channels, L2
//   prune::remove(net->fc1, "weight");                  // permanent
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Module.h"

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nng::nn::utils::prune {

/// How much to prune: a fraction (a double in [0, 1]) of the entries or
/// channels, or an absolute count (an integer >= 0), as PyTorch's `amount`.
/// Methods validate it when constructed.
class Amount {
public:
  Amount(double Fraction) : Value(Fraction) {}
  template <std::integral I>
  requires(!std::same_as<I, bool>) Amount(I Count)
      : Count(static_cast<int64_t>(Count)), IsCount(true) {}

  bool is_count() const { return IsCount; }
  int64_t count() const { return Count; }
  double fraction() const { return Value; }
  /// Python's repr: "5", "0.3", "1.0".
  std::string toString() const;
  /// How many of Size units it prunes: the count, or round(fraction *
  /// Size) with Python's rounding (halves to even).
  int64_t of(int64_t Size) const;

private:
  double Value = 0;
  int64_t Count = 0;
  bool IsCount = false;
};

/// PyTorch's PRUNING_TYPE: what the container hands a method when pruning
/// again (unstructured: the unpruned entries; structured: the channels
/// along dim not yet entirely pruned; global: the whole tensor).
enum class PruningType { Unstructured, Structured, Global };

/// A way to compute masks (PyTorch's BasePruningMethod).
class BasePruningMethod {
public:
  virtual ~BasePruningMethod();
  /// The class name ("L1Unstructured"), for messages.
  virtual std::string name() const = 0;
  virtual PruningType pruning_type() const = 0;
  /// The mask for importance scores T, given DefaultMask (the mask so far,
  /// T's shape): PyTorch's compute_mask. Masks have 0 where pruned.
  virtual Tensor compute_mask(const Tensor &T,
                              const Tensor &DefaultMask) const = 0;
  /// The axis a structured method prunes along (nullopt for others).
  virtual std::optional<int64_t> dim() const { return std::nullopt; }

  /// `<name>_orig * <name>_mask` of M (PyTorch's apply_mask).
  Tensor apply_mask(ModuleBase &M) const;
  /// T * compute_mask(ImportanceScores (default T), DefaultMask (default
  /// ones)) without touching any module (PyTorch's prune).
  Tensor prune(const Tensor &T, const Tensor &DefaultMask = Tensor(),
               const Tensor &ImportanceScores = Tensor()) const;
  /// The tensor it was applied to ("" before apply).
  const std::string &tensor_name() const { return TensorName; }
  void set_tensor_name(std::string Name) { TensorName = std::move(Name); }

private:
  std::string TensorName;
};

using MethodPtr = std::shared_ptr<BasePruningMethod>;

/// Several methods applied one after the other to one tensor; its mask is
/// the last method's, computed on what the earlier ones left.
class PruningContainer : public BasePruningMethod {
public:
  PruningContainer() = default;
  /// The methods in order; all must act on the same tensor.
  explicit PruningContainer(std::vector<MethodPtr> Methods);
  /// Adds a method; it must act on this container's tensor.
  void add_pruning_method(MethodPtr Method);
  size_t size() const { return Methods.size(); }
  const MethodPtr &operator[](size_t I) const { return Methods.at(I); }

  std::string name() const override { return "PruningContainer"; }
  /// The last method's type.
  PruningType pruning_type() const override;
  /// The last method's mask, combined with DefaultMask (combine_masks).
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;

private:
  std::vector<MethodPtr> Methods;
};

/// PyTorch's PruningContainer._combine_masks: Method's mask computed on
/// the part of T that Mask leaves to it (see PruningType), merged into Mask;
/// the result has T's dtype.
Tensor combine_masks(const BasePruningMethod &Method, const Tensor &T,
                     const Tensor &Mask);

/// Prunes nothing (the mask stays as it is).
class Identity : public BasePruningMethod {
public:
  std::string name() const override { return "Identity"; }
  PruningType pruning_type() const override {
    return PruningType::Unstructured;
  }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
};

/// Prunes `amount` entries chosen at random.
class RandomUnstructured : public BasePruningMethod {
public:
  explicit RandomUnstructured(Amount amount);
  std::string name() const override { return "RandomUnstructured"; }
  PruningType pruning_type() const override {
    return PruningType::Unstructured;
  }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
  Amount amount;
};

/// Prunes the `amount` entries of smallest absolute value.
class L1Unstructured : public BasePruningMethod {
public:
  explicit L1Unstructured(Amount amount);
  std::string name() const override { return "L1Unstructured"; }
  PruningType pruning_type() const override {
    return PruningType::Unstructured;
  }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
  Amount amount;
};

/// Prunes `amount` channels along `dim`, chosen at random.
class RandomStructured : public BasePruningMethod {
public:
  explicit RandomStructured(Amount amount, int64_t dim = -1);
  std::string name() const override { return "RandomStructured"; }
  PruningType pruning_type() const override { return PruningType::Structured; }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
  std::optional<int64_t> dim() const override { return Dim; }
  Amount amount;

private:
  int64_t Dim;
};

/// Prunes the `amount` channels along `dim` of smallest L`n` norm (n: a
/// number; inf and -inf give the max and min absolute value, 0 the count
/// of nonzeros, as torch.norm).
class LnStructured : public BasePruningMethod {
public:
  LnStructured(Amount amount, double n, int64_t dim = -1);
  std::string name() const override { return "LnStructured"; }
  PruningType pruning_type() const override { return PruningType::Structured; }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
  std::optional<int64_t> dim() const override { return Dim; }
  Amount amount;
  double n;

private:
  int64_t Dim;
};

/// Prunes where `mask` is 0.
class CustomFromMask : public BasePruningMethod {
public:
  explicit CustomFromMask(Tensor mask);
  std::string name() const override { return "CustomFromMask"; }
  PruningType pruning_type() const override { return PruningType::Global; }
  Tensor compute_mask(const Tensor &T,
                      const Tensor &DefaultMask) const override;
  Tensor mask;
};

/// A module argument: a module, or a shared_ptr to one (net->fc1).
class ModuleRef {
public:
  ModuleRef(ModuleBase &M) : M(&M) {}
  template <typename T>
  requires std::derived_from<T, ModuleBase>
  ModuleRef(const std::shared_ptr<T> &P) : M(P.get()) {
    if (!P)
      failNull();
  }
  ModuleBase &get() const { return *M; }

private:
  [[noreturn]] static void failNull();
  ModuleBase *M;
};

/// Applies Method to tensor Name of Module (PyTorch's Method.apply): on the
/// first pruning of Name, parameter Name becomes Name_orig and the mask
/// buffer Name_mask; a later one combines with the earlier methods in a
/// PruningContainer. The mask is computed from ImportanceScores (default:
/// the tensor as forward sees it now). Returns the method in effect (Method
/// or the container). Nothing changes when it throws. Errors: Name is not
/// a parameter (a buffer, absent, undefined), no C++ member is bound to it
/// (Module.h, member bindings), importance scores of another shape, and the
/// method's own (amount larger than what is left, a bad dim).
MethodPtr apply(ModuleRef Module, const std::string &Name, MethodPtr Method,
                const Tensor &ImportanceScores = Tensor());

/// Prunes nothing but sets up the reparametrization (mask of ones).
ModuleBase &identity(ModuleRef module, const std::string &name);
/// Prunes amount entries at random.
ModuleBase &random_unstructured(ModuleRef module, const std::string &name,
                                Amount amount);
/// Prunes the amount entries of smallest |importance_scores| (default: the
/// tensor).
ModuleBase &l1_unstructured(ModuleRef module, const std::string &name,
                            Amount amount,
                            const Tensor &importance_scores = Tensor());
/// Prunes amount channels along dim at random.
ModuleBase &random_structured(ModuleRef module, const std::string &name,
                              Amount amount, int64_t dim);
/// Prunes the amount channels along dim of smallest Ln norm.
ModuleBase &ln_structured(ModuleRef module, const std::string &name,
                          Amount amount, double n, int64_t dim,
                          const Tensor &importance_scores = Tensor());
/// Prunes where mask is 0 (mask: the tensor's shape).
ModuleBase &custom_from_mask(ModuleRef module, const std::string &name,
                             const Tensor &mask);
/// Makes the pruning of name permanent: parameter name holds the masked
/// values again (the same tensor that was name_orig, as in PyTorch, so
/// optimizers keep it), name_orig, name_mask and the hook are gone. Error
/// when name is not pruned.
ModuleBase &remove(ModuleRef module, const std::string &name);
/// Whether module or a submodule has a pruned tensor.
bool is_pruned(const ModuleBase &module);

/// A method class as global_unstructured takes it (PyTorch passes the class
/// and amount=...): method<L1Unstructured>() or method<RandomUnstructured>().
struct MethodClass {
  std::function<MethodPtr(Amount)> make;
};
template <typename M> MethodClass method() {
  return {[](Amount A) -> MethodPtr { return std::make_shared<M>(A); }};
}

/// (module, tensor name).
using ParameterRef = std::pair<ModulePtr, std::string>;
/// Importance scores by (module, tensor name).
using ImportanceScores = std::map<ParameterRef, Tensor>;

/// Prunes the tensors of parameters as one: amount counts (or is a
/// fraction of) all their unpruned entries together, ranked by the method
/// (L1Unstructured: smallest |importance| overall). Each tensor then gets
/// its slice of the mask through custom_from_mask. Only unstructured
/// methods are accepted.
void global_unstructured(const std::vector<ParameterRef> &parameters,
                         const MethodClass &pruning_method, Amount amount,
                         const ImportanceScores &importance_scores = {});

} // namespace nng::nn::utils::prune
