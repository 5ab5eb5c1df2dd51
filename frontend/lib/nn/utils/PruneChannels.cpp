//===- PruneChannels.cpp - nn::utils::prune_channels ----------------------===//
//
// Applies the channel-pruning plan of the module's trace to the module:
// (1) trace in eval mode (training flags restored), (2) plan with
// passes::planChannelPruning, (3) resolve every constant the plan slices to
// the module's parameter or buffer of that state_dict key, checking
// everything (a constant made in forward, a shared tensor sliced two ways)
// before anything changes, (4) replace each tensor by its slice in every
// module slot that holds it (replace_parameter / replace_buffer, so the
// layers' members follow), (5) set the owning layers' hyperparameters from
// their new weight shapes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/utils/PruneChannels.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/passes/ChannelPruning.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

namespace nng::nn::utils {
namespace {

/// How one tensor is sliced.
struct TensorSlice {
  int64_t Axis;
  int64_t Multiplier;
  const std::vector<int64_t> *Kept;
  std::string Group; ///< The group's label, for messages.
};

/// A registered slot holding a tensor.
struct Slot {
  ModuleBase *Owner;
  std::string Name;
  bool IsParameter;
};

/// Sets every module's training flag back on destruction.
class TrainingFlags {
public:
  explicit TrainingFlags(ModuleBase &M) {
    for (const auto &[Path, Sub] : M.named_modules("", false))
      Saved.push_back({Sub, Sub->is_training()});
  }
  ~TrainingFlags() {
    // Pre-order: a parent's train() sets its children, which come later.
    for (auto &[Sub, Flag] : Saved)
      Sub->train(Flag);
  }

private:
  std::vector<std::pair<ModulePtr, bool>> Saved;
};

/// The tensors a trace names its initializers after (Trace.cpp's order: a
/// shared tensor under its first key).
std::map<std::string, Tensor> tracedTensors(const ModuleBase &M) {
  std::map<std::string, Tensor> Out;
  std::set<const void *> Seen;
  auto Add = [&](const std::string &Key, const Tensor &T) {
    if (T.defined() && Seen.insert(T.impl().get()).second)
      Out.emplace(Key, T);
  };
  for (const auto &[Key, T] : M.state_dict("", /*KeepVars=*/true))
    Add(Key, T);
  for (const auto &[Key, T] : M.named_buffers())
    Add(Key, T);
  for (const auto &[Key, T] : M.named_parameters())
    Add(Key, T);
  return Out;
}

/// Every registered slot of every module, by the tensor it holds.
std::unordered_map<const void *, std::vector<Slot>>
slotsByTensor(const ModuleBase &M) {
  std::unordered_map<const void *, std::vector<Slot>> Out;
  for (const auto &[Path, Sub] : M.named_modules()) {
    for (const auto &[Name, T] : Sub->named_parameters("", false))
      Out[T.impl().get()].push_back({Sub.get(), Name, true});
    for (const auto &[Name, T] : Sub->named_buffers("", false))
      Out[T.impl().get()].push_back({Sub.get(), Name, false});
  }
  return Out;
}

/// Sets a layer's channel hyperparameters from its (sliced) tensors.
void updateLayer(ModuleBase &M) {
  auto UpdateConv = [](detail::ConvNd &C) {
    if (C.transposed || !C.weight.defined())
      return;
    int64_t Out = C.weight.size(0), In = C.weight.size(1);
    if (C.groups > 1 && C.groups == C.in_channels &&
        C.groups == C.out_channels) {
      C.groups = C.in_channels = C.out_channels = Out; // Depthwise.
      return;
    }
    C.out_channels = Out;
    C.in_channels = In * C.groups;
  };
  if (auto *C = M.as<Conv2d>())
    return UpdateConv(*C);
  if (auto *C = M.as<Conv1d>())
    return UpdateConv(*C);
  if (auto *L = M.as<Linear>()) {
    L->out_features = L->weight.size(0);
    L->in_features = L->weight.size(1);
    return;
  }
  detail::BatchNormBase *B = M.as<BatchNorm2d>();
  if (!B)
    B = M.as<BatchNorm1d>();
  if (B) {
    const Tensor &T = B->running_mean.defined() ? B->running_mean : B->weight;
    if (T.defined())
      B->num_features = T.size(0);
  }
}

} // namespace

PruneChannelsReport prune_channels(ModuleBase &Module,
                                   const std::vector<fx::InputSpec> &Inputs,
                                   const PruneChannelsOptions &Options) {
  if (prune::is_pruned(Module))
    fail(ErrorKind::InvalidArgument,
         "prune_channels: the module has masks from nn::utils::prune "
         "(weight_orig, weight_mask); make them permanent with "
         "prune::remove first");
  passes::ChannelPruningOptions O;
  O.Ratio = Options.ratio;
  O.Criterion = Options.criterion;
  O.Round = Options.round;
  O.Exclude = Options.exclude;
  O.Global = Options.global;
  O.Seed = Options.seed;

  // 1-2. Trace in eval mode (BatchNorm as one node with its statistics) and
  // plan.
  std::shared_ptr<ir::Graph> G;
  {
    TrainingFlags Restore(Module);
    Module.eval();
    G = fx::Tracer().trace_graph(Module, Inputs).Graph;
  }
  passes::ChannelPruningPlan Plan = passes::planChannelPruning(*G, O);

  // 3. Which module tensor each sliced constant is; all checked first.
  std::map<std::string, Tensor> Tensors = tracedTensors(Module);
  std::map<std::string, std::vector<TensorSlice>> ToSlice;
  for (const passes::ChannelGroupPlan &P : Plan.Groups) {
    for (const passes::ChannelSlice &S : P.Slices) {
      const ir::Value *V =
          passes::channelConstantSource(S.User->input(S.Input));
      if (!V->isInitializer() || !Tensors.count(V->name())) {
        // BatchNorm without affine parameters: the layer makes its ones and
        // zeros from num_features.
        if (S.User->op() == ir::OpKind::BatchNormalization)
          continue;
        std::string Scope = S.User->scope().Path.empty() ? std::string("<root>")
                                                         : S.User->scope().Path;
        fail(ErrorKind::InvalidArgument, "prune_channels: the channels of ",
             P.Label, " reach a constant that is not a parameter or buffer ",
             "of the module (", V->name(), ", read by a ",
             S.User->schema().Name, " in module ", Scope,
             ", made in forward): it cannot be sliced; exclude that layer "
             "or register the tensor");
      }
      // A weight is sliced along its input and its output axis; a tensor
      // read by several nodes must be sliced the same way by each.
      TensorSlice New{S.Axis, S.Multiplier, &P.Kept, P.Label};
      std::vector<TensorSlice> &List = ToSlice[V->name()];
      auto Same =
          std::find_if(List.begin(), List.end(), [&](const TensorSlice &T) {
            return T.Axis == New.Axis;
          });
      if (Same == List.end())
        List.push_back(New);
      else if (Same->Multiplier != New.Multiplier || *Same->Kept != *New.Kept)
        fail(ErrorKind::InvalidArgument, "prune_channels: '", V->name(),
             "' is shared by layers whose channels are pruned differently "
             "(groups of ",
             Same->Group, " and ", New.Group, "); exclude one of them");
    }
  }

  // 4. Slice, in every slot that holds the tensor.
  PruneChannelsReport R;
  R.parameters_before = Module.num_parameters();
  std::unordered_map<const void *, std::vector<Slot>> Slots =
      slotsByTensor(Module);
  std::vector<ModuleBase *> Owners;
  for (const auto &[Key, List] : ToSlice) {
    const Tensor &Old = Tensors.at(Key);
    rt::Tensor Data = Old.data();
    for (const TensorSlice &S : List)
      Data = passes::gatherChannels(Data, S.Axis, *S.Kept, S.Multiplier);
    Tensor New(std::move(Data));
    for (const Slot &Sl : Slots[Old.impl().get()]) {
      if (Sl.IsParameter)
        Sl.Owner->replace_parameter(Sl.Name, New, Old.requires_grad());
      else
        Sl.Owner->replace_buffer(Sl.Name, New);
      if (std::find(Owners.begin(), Owners.end(), Sl.Owner) == Owners.end())
        Owners.push_back(Sl.Owner);
    }
    R.sliced.push_back(Key);
  }

  // 5. The layers' hyperparameters follow their tensors.
  for (ModuleBase *M : Owners)
    updateLayer(*M);
  for (const passes::ChannelGroupPlan &P : Plan.Groups)
    if (!P.FromConcat) {
      ++R.groups_pruned;
      R.channels_removed += P.Channels - static_cast<int64_t>(P.Kept.size());
    }
  R.groups_left = Plan.LeftAlone;
  R.parameters_after = Module.num_parameters();
  return R;
}

} // namespace nng::nn::utils
