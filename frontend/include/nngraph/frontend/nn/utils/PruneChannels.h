//===- PruneChannels.h - Structured channel pruning of modules --*- C++ -*-===//
//
// nn::utils::prune_channels removes whole channels from an nn::Module, as
// Torch-Pruning does: the module is traced (fx::symbolic_trace, in eval
// mode; parameters and buffers become initializers named by their
// state_dict keys), the graph pass's analysis and ranking decide which
// channels go (passes::planChannelPruning, the same as prune-channels'), and
// the module's tensors are sliced: conv, linear and BatchNorm weights,
// biases and running statistics lose the removed rows and columns, and the
// layers' hyperparameters follow (Conv1d/Conv2d in/out_channels and a
// depthwise conv's groups, BatchNorm num_features, Linear in/out_features,
// including a Linear after Flatten, where each channel is H*W input
// columns). state_dict(), forward, printing and a new trace agree with the
// smaller model, and eager training continues on it: make a new optimizer,
// the pruned parameters are new tensors.
//
//   nn::utils::PruneChannelsOptions O;   // ratio 0.5, l1, round 8
//   O.exclude = {"conv1"};
//   auto R = nn::utils::prune_channels(*Net, {fx::InputSpec({"N", 1, 28, 28})},
//                                      O);
//   optim::SGD Opt(Net->parameters(), {.lr = 0.01});
//
// The pruned module traces to the graph that the prune-channels pass makes
// of the original's trace (same layers, initializers and outputs).
// docs/pruning.md, "Pruning modules".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/Module.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nng::nn::utils {

/// The options of the prune-channels pass, by the same names.
struct PruneChannelsOptions {
  /// Share of each group's channels removed (of all channels with global),
  /// in [0, 1).
  double ratio = 0.5;
  /// Channel importance: "l1", "l2" (norms of the weight rows), "bn"
  /// (BatchNorm |weight|) or "random".
  std::string criterion = "l1";
  /// Kept channel counts are rounded up to a multiple of this.
  int64_t round = 8;
  /// Module paths or node names whose channels stay (glob patterns:
  /// "layer4.*", "fc"); each must match something in the trace.
  std::vector<std::string> exclude;
  /// Rank channels across all groups instead of removing ratio of each.
  bool global = false;
  /// Seed of the random criterion.
  int64_t seed = 0;
};

/// What prune_channels did.
struct PruneChannelsReport {
  /// Channel groups that lost channels, and how many channels they lost.
  int64_t groups_pruned = 0;
  int64_t channels_removed = 0;
  /// Groups left alone, counted by reason ("excluded", "a graph output").
  std::map<std::string, int64_t> groups_left;
  /// num_parameters() before and after.
  int64_t parameters_before = 0;
  int64_t parameters_after = 0;
  /// The state_dict keys of the tensors that were sliced.
  std::vector<std::string> sliced;
};

/// Prunes ratio of the channels of every prunable channel group of Module
/// (see the file comment), tracing it with Inputs (as fx::symbolic_trace;
/// channel and spatial dims must be fixed, the batch dim may be named).
/// Training flags are kept. Errors (nothing changes then): those of the
/// pass (a ratio outside [0, 1), an unknown criterion, an exclude pattern
/// that matches nothing, no group can be pruned), a module with masks from
/// nn::utils::prune (remove them first), a group reaching a tensor that is
/// not a parameter or buffer (made in forward), a parameter shared by
/// layers that would prune it differently, and trace errors.
PruneChannelsReport prune_channels(ModuleBase &Module,
                                   const std::vector<fx::InputSpec> &Inputs,
                                   const PruneChannelsOptions &Options = {});

} // namespace nng::nn::utils
