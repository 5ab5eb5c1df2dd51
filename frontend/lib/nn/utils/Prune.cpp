//===- Prune.cpp - Pruning module tensors: apply, remove, global ----------===//
//
// How torch.nn.utils.prune changes a module, step by step as PyTorch 1.13
// does: apply() finds the pruning hook already on the tensor (a forward
// pre-hook whose callable is a PruningHook, found with target<>), computes
// the new mask (combined with the old one through the container logic),
// moves parameter `name` to `name_orig` on the first pruning, (re)registers
// buffer `name_mask`, sets the bound member `name` to orig * mask and
// installs the hook, which recomputes the member before every forward.
// Under a trace the member becomes a proxy of the graph's Mul(mask, orig);
// a companion forward hook gives it back its (eager) masked value after
// the traced call, so no proxy outlives the trace. remove() makes pruning
// permanent; global_unstructured ranks several tensors as one and gives
// each its slice of the mask through custom_from_mask.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>

namespace nng::nn::utils::prune {

namespace {

/// What the hooks of one pruned tensor share.
struct PruningState {
  MethodPtr Method;
  RemovableHandle Pre, Post;
};

/// The forward pre-hook of a pruned tensor (PyTorch's
/// BasePruningMethod.__call__): module.name = apply_mask(module).
struct PruningHook {
  std::shared_ptr<PruningState> S;
  std::optional<std::vector<Value>>
  operator()(ModuleBase &M, const std::vector<Value> &) const {
    M.set_attr(S->Method->tensor_name(), S->Method->apply_mask(M));
    return std::nullopt;
  }
};

/// The pruning state of M's tensor Name (null when not pruned).
std::shared_ptr<PruningState> findPruning(const ModuleBase &M,
                                          const std::string &Name) {
  std::shared_ptr<PruningState> Found;
  for (const auto &[Id, Hook] : M.forward_pre_hooks())
    if (const auto *H = Hook.target<PruningHook>())
      if (H->S->Method->tensor_name() == Name) {
        if (Found)
          fail(ErrorKind::Internal, M.type_name(), ": tensor '", Name,
               "' has two pruning hooks; there should be one (a "
               "PruningContainer)");
        Found = H->S;
      }
  return Found;
}

std::string describeCall(const char *Fn, const ModuleBase &M,
                         const std::string &Name) {
  return std::string("in prune::") + Fn + "(" + M.type_name() + ", '" + Name +
         "')";
}

/// Runs Body; an nng::Error gets the call as context.
template <typename F>
decltype(auto) withContext(const char *Fn, const ModuleBase &M,
                           const std::string &Name, F &&Body) {
  try {
    return Body();
  } catch (Error &E) {
    E.addContext(describeCall(Fn, M, Name));
    throw;
  }
}

/// The registered parameter Name of M (defined), or an error saying what
/// Name is instead.
Tensor parameterToPrune(const ModuleBase &M, const std::string &Name) {
  for (const auto &[N, T] : M.named_parameters("", false, false))
    if (N == Name)
      return T;
  for (const auto &[N, T] : M.named_buffers("", false, false))
    if (N == Name)
      fail(ErrorKind::InvalidArgument, M.type_name(), ": '", Name,
           "' is a buffer; pruning applies to parameters (PyTorch "
           "re-registers the tensor as parameter '",
           Name, "_orig' and refuses buffers too)");
  if (Tensor *Member = M.bound_member(Name); Member && !Member->defined())
    fail(ErrorKind::InvalidArgument, M.type_name(), ": parameter '", Name,
         "' is None (the module was built without it); there is nothing to "
         "prune");
  std::string Names;
  for (const auto &[N, T] : M.named_parameters("", false, false))
    Names += (Names.empty() ? "" : ", ") + N;
  fail(ErrorKind::InvalidArgument, M.type_name(), " has no parameter '", Name,
       "' (its parameters: ", Names.empty() ? "none" : Names, ")");
}

/// PyTorch's getattr(module, name) for global_unstructured: the parameter,
/// or the masked tensor of a pruned one.
Tensor currentTensor(const ModuleBase &M, const std::string &Name) {
  if (findPruning(M, Name)) {
    Tensor *Member = M.bound_member(Name);
    if (Member && Member->defined())
      return *Member;
  }
  return parameterToPrune(M, Name);
}

void checkImportance(const Tensor &Scores, const Tensor &Orig,
                     const ModuleBase &M, const std::string &Name) {
  if (Scores.defined() && Scores.shape() != Orig.shape())
    fail(ErrorKind::ShapeMismatch,
         "importance_scores should have the same shape as parameter ", Name,
         " of ", M.type_name(), ": ", Scores.shape().toString(), " vs ",
         Orig.shape().toString());
}

void installHooks(ModuleBase &M, const std::shared_ptr<PruningState> &S) {
  S->Pre = M.register_forward_pre_hook(ForwardPreHook(PruningHook{S}));
  // After a traced call the member holds a proxy of the finished graph:
  // give it the masked values (the proxy's example data) instead.
  std::weak_ptr<PruningState> W = S;
  S->Post = M.register_forward_hook(
      [W](ModuleBase &Mod, const std::vector<Value> &, const Value &) {
        auto St = W.lock();
        if (!St)
          return;
        Tensor *Member = Mod.bound_member(St->Method->tensor_name());
        if (Member && Member->is_proxy())
          Mod.set_attr(St->Method->tensor_name(), Tensor(Member->data()));
      });
}

} // namespace

void ModuleRef::failNull() {
  fail(ErrorKind::InvalidArgument,
       "prune: the module is null; pass a constructed module");
}

MethodPtr apply(ModuleRef Ref, const std::string &Name, MethodPtr Method,
                const Tensor &ImportanceScores) {
  ModuleBase &M = Ref.get();
  if (!Method)
    fail(ErrorKind::InvalidArgument, "prune::apply(", M.type_name(), ", '",
         Name, "'): the method is null");
  std::shared_ptr<PruningState> Old = findPruning(M, Name);
  Tensor Orig, DefaultMask;
  if (!Old) {
    Orig = parameterToPrune(M, Name);
    if (!M.bound_member(Name))
      fail(ErrorKind::InvalidArgument, M.type_name(), ": parameter '", Name,
           "' is not bound to a C++ member, so pruning could not make "
           "forward see the masked tensor. Hold it in a data member "
           "initialised from the registration (Tensor ",
           Name, " = register_parameter(\"", Name,
           "\", ...)), or bind the member forward reads with bind_member(\"",
           Name, "\", member)");
    for (const std::string &N : {Name + "_orig", Name + "_mask"}) {
      bool Taken = false;
      for (const auto &[K, T] : M.named_parameters("", false, false))
        Taken |= K == N;
      for (const auto &[K, T] : M.named_buffers("", false, false))
        Taken |= K == N;
      for (const auto &[K, C] : M.named_children())
        Taken |= K == N;
      if (Taken)
        fail(ErrorKind::InvalidArgument, M.type_name(), ": cannot prune '",
             Name, "': the name '", N,
             "' that pruning registers is already taken; rename it");
    }
  } else {
    Tensor *Member = M.bound_member(Name);
    if (!Member || !Member->defined())
      fail(ErrorKind::InvalidArgument, M.type_name(), ": '", Name,
           "' is pruned but its member holds no tensor; was it unbound?");
    Orig = *Member;
    DefaultMask = M.get_buffer(Name + "_mask").detach().clone();
  }
  checkImportance(ImportanceScores, Orig, M, Name);
  Tensor Scores =
      (ImportanceScores.defined() ? ImportanceScores : Orig).detach();

  // The mask first: nothing changes when a method refuses.
  Method->set_tensor_name(Name);
  Tensor Mask;
  {
    NoGradGuard NoGrad;
    if (!Old)
      Mask = Method->compute_mask(Scores, ones_like(Orig.detach()));
    else
      Mask = combine_masks(*Method, Scores, DefaultMask);
  }

  MethodPtr Effective = Method;
  if (!Old) {
    M.register_parameter(Name + "_orig", Orig, Orig.requires_grad());
    M.remove_parameter(Name);
    M.register_buffer(Name + "_mask", Mask);
  } else {
    Old->Pre.remove();
    Old->Post.remove();
    if (auto C = std::dynamic_pointer_cast<PruningContainer>(Old->Method)) {
      C->add_pruning_method(Method);
      Effective = C;
    } else {
      Effective = std::make_shared<PruningContainer>(
          std::vector<MethodPtr>{Old->Method, Method});
    }
    M.replace_buffer(Name + "_mask", Mask);
  }
  M.set_attr(Name, Effective->apply_mask(M));
  auto S = std::make_shared<PruningState>();
  S->Method = Effective;
  installHooks(M, S);
  return Effective;
}

ModuleBase &identity(ModuleRef Module, const std::string &Name) {
  return withContext("identity", Module.get(), Name, [&]() -> ModuleBase & {
    apply(Module, Name, std::make_shared<Identity>());
    return Module.get();
  });
}

ModuleBase &random_unstructured(ModuleRef Module, const std::string &Name,
                                Amount A) {
  return withContext(
      "random_unstructured", Module.get(), Name, [&]() -> ModuleBase & {
        apply(Module, Name, std::make_shared<RandomUnstructured>(A));
        return Module.get();
      });
}

ModuleBase &l1_unstructured(ModuleRef Module, const std::string &Name, Amount A,
                            const Tensor &ImportanceScores) {
  return withContext("l1_unstructured", Module.get(), Name,
                     [&]() -> ModuleBase & {
                       apply(Module, Name, std::make_shared<L1Unstructured>(A),
                             ImportanceScores);
                       return Module.get();
                     });
}

ModuleBase &random_structured(ModuleRef Module, const std::string &Name,
                              Amount A, int64_t Dim) {
  return withContext(
      "random_structured", Module.get(), Name, [&]() -> ModuleBase & {
        apply(Module, Name, std::make_shared<RandomStructured>(A, Dim));
        return Module.get();
      });
}

ModuleBase &ln_structured(ModuleRef Module, const std::string &Name, Amount A,
                          double N, int64_t Dim,
                          const Tensor &ImportanceScores) {
  return withContext(
      "ln_structured", Module.get(), Name, [&]() -> ModuleBase & {
        apply(Module, Name, std::make_shared<LnStructured>(A, N, Dim),
              ImportanceScores);
        return Module.get();
      });
}

ModuleBase &custom_from_mask(ModuleRef Module, const std::string &Name,
                             const Tensor &Mask) {
  return withContext(
      "custom_from_mask", Module.get(), Name, [&]() -> ModuleBase & {
        apply(Module, Name, std::make_shared<CustomFromMask>(Mask));
        return Module.get();
      });
}

ModuleBase &remove(ModuleRef Ref, const std::string &Name) {
  ModuleBase &M = Ref.get();
  std::shared_ptr<PruningState> S = findPruning(M, Name);
  if (!S)
    fail(ErrorKind::InvalidArgument, "prune::remove: Parameter '", Name,
         "' of module ", M.type_name(),
         " has to be pruned before pruning can be removed (prune it with a "
         "prune:: function first, or check the name)");
  // PyTorch's BasePruningMethod.remove: orig takes the masked values and
  // becomes parameter `name` again (registered last, as setattr does).
  Tensor Masked;
  {
    NoGradGuard NoGrad;
    Masked = S->Method->apply_mask(M).contiguous();
  }
  Tensor Orig = M.get_parameter(Name + "_orig");
  Orig.impl()->Data = Masked.data();
  ++Orig.impl()->Version;
  S->Pre.remove();
  S->Post.remove();
  M.remove_parameter(Name + "_orig");
  M.remove_buffer(Name + "_mask");
  M.register_parameter(Name, Orig, Orig.requires_grad());
  return M;
}

bool is_pruned(const ModuleBase &Module) {
  for (const auto &[Path, Sub] : Module.named_modules())
    for (const auto &[Id, Hook] : Sub->forward_pre_hooks())
      if (Hook.target<PruningHook>())
        return true;
  return false;
}

void global_unstructured(const std::vector<ParameterRef> &Parameters,
                         const MethodClass &PruningMethod, Amount A,
                         const ImportanceScores &Scores) {
  try {
    if (Parameters.empty())
      fail(ErrorKind::InvalidArgument,
           "parameters is empty; pass the (module, name) pairs to prune");
    if (!PruningMethod.make)
      fail(ErrorKind::InvalidArgument,
           "pruning_method is empty; pass prune::method<L1Unstructured>() "
           "or prune::method<RandomUnstructured>()");
    MethodPtr Method = PruningMethod.make(A);
    if (Method->pruning_type() != PruningType::Unstructured)
      fail(ErrorKind::InvalidArgument,
           "Only \"unstructured\" PRUNING_TYPE supported for the "
           "`pruning_method`. Found method ",
           Method->name(), " of type ",
           Method->pruning_type() == PruningType::Structured ? "structured"
                                                             : "global");
    // Flatten importance scores and masks of all tensors into one vector
    // each (parameters_to_vector).
    std::vector<Tensor> Flat, FlatMasks;
    std::vector<Tensor> Current;
    for (const auto &[Mod, Name] : Parameters) {
      if (!Mod)
        fail(ErrorKind::InvalidArgument, "the module of '", Name, "' is null");
      Tensor T = currentTensor(*Mod, Name);
      Current.push_back(T);
      Tensor S = T;
      if (auto It = Scores.find({Mod, Name}); It != Scores.end()) {
        checkImportance(It->second, T, *Mod, Name);
        S = It->second;
      }
      Flat.push_back(S.detach().reshape({T.numel()}));
      Tensor Mask;
      for (const auto &[K, B] : Mod->named_buffers("", false, false))
        if (K == Name + "_mask")
          Mask = B;
      FlatMasks.push_back(
          (Mask.defined() ? Mask.detach() : ones_like(T.detach()))
              .reshape({T.numel()}));
    }
    Tensor FinalMask;
    {
      NoGradGuard NoGrad;
      Tensor AllScores = cat(Flat, 0);
      Tensor AllMasks = cat(FlatMasks, 0).to(AllScores.dtype());
      Method->set_tensor_name("temp");
      FinalMask = combine_masks(*Method, AllScores, AllMasks);
    }
    int64_t Pointer = 0;
    for (size_t I = 0; I < Parameters.size(); ++I) {
      const Tensor &T = Current[I];
      int64_t N = T.numel();
      Tensor Slice = FinalMask.slice(0, Pointer, Pointer + N)
                         .reshape(SymIntList(T.sizes()))
                         .contiguous();
      custom_from_mask(*Parameters[I].first, Parameters[I].second, Slice);
      Pointer += N;
    }
  } catch (Error &E) {
    E.addContext("in prune::global_unstructured");
    throw;
  }
}

} // namespace nng::nn::utils::prune
