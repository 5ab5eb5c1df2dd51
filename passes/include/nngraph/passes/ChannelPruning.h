//===- ChannelPruning.h - Which channels pruning removes --------*- C++ -*-===//
//
// The analysis and the decision of structured channel pruning, shared by
// the graph pass `prune-channels` (PruneChannels.cpp, which slices the
// graph's constants) and the module pruner nn::utils::prune_channels (the
// frontend, which slices the traced module's parameters and buffers, named
// like the graph's initializers, and updates the layers). One dependency
// analysis and one ranking, so a pruned module traces to the graph the
// pass makes of its trace:
//
//   passes::ChannelPruningOptions O;   // ratio 0.5, l1, round 8
//   passes::ChannelPruningPlan P = passes::planChannelPruning(G, O);
//   for (const passes::ChannelGroupPlan &Grp : P.Groups)
//     for (const passes::ChannelSlice &S : Grp.Slices)
//       ...  // keep Grp.Kept of axis S.Axis of S.User's input S.Input
//
// How groups are found, when one is left alone and how channels are ranked:
// ChannelPruning.cpp's file comment and docs/pruning.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nng::passes {

/// The options of prune-channels (same names, defaults and meaning).
struct ChannelPruningOptions {
  /// Share of each group's channels removed (of all channels with Global),
  /// in [0, 1).
  double Ratio = 0.5;
  /// "l1", "l2" (weight-row norms), "bn" (BatchNorm |scale|) or "random".
  std::string Criterion = "l1";
  /// Kept channel counts are rounded up to a multiple of this (<= 1: none).
  int64_t Round = 8;
  /// Node name or scope patterns (NodePattern.h) whose channels stay; each
  /// must match a node.
  std::vector<std::string> Exclude;
  /// Rank channels across all groups (importance relative to each group's
  /// mean) instead of removing Ratio of each.
  bool Global = false;
  /// Seed of the random criterion.
  int64_t Seed = 0;
};

/// One constant operand to slice when its group loses channels.
struct ChannelSlice {
  ir::Node *User;     ///< The node reading the constant.
  size_t Input;       ///< Which operand of User.
  int64_t Axis;       ///< The constant's channel axis.
  int64_t Multiplier; ///< Consecutive entries per channel (after a Flatten).
};

/// A group of channels that loses some, and everything that follows.
struct ChannelGroupPlan {
  /// Its first producer's name (or output name), for messages.
  std::string Label;
  /// Channels before pruning.
  int64_t Channels = 0;
  /// The kept channel indices, ascending.
  std::vector<int64_t> Kept;
  /// Every constant that is sliced to Kept.
  std::vector<ChannelSlice> Slices;
  /// Depthwise Convs whose `group` becomes Kept.size().
  std::vector<ir::Node *> Depthwise;
  /// Reshapes of the group's 4-d values to [N, C*H*W] (a traced flatten):
  /// their shape operand goes stale, so the pass makes them Flatten(axis=1)
  /// (a module computes its shapes in forward).
  std::vector<ir::Node *> Reshapes;
  /// Whether the group is a Concat's result (its channels follow the
  /// Concat's inputs'; it is not counted as a pruned group).
  bool FromConcat = false;
};

/// What planChannelPruning decided.
struct ChannelPruningPlan {
  /// The groups that lose channels (in the order they are reported).
  std::vector<ChannelGroupPlan> Groups;
  /// Groups left alone, counted by reason.
  std::map<std::string, int64_t> LeftAlone;
};

/// Infers G's types, analyses its channel dependencies and decides which
/// channels go; G's constants are not changed. Under
/// --debug-only=prune-channels every group is reported. Errors
/// (Error(InvalidArgument)): a ratio outside [0, 1), an unknown criterion,
/// an exclude pattern that matches nothing, and (ratio > 0) a graph where no
/// group can be pruned, with the reasons counted.
ChannelPruningPlan planChannelPruning(ir::Graph &G,
                                      const ChannelPruningOptions &O);

/// The value holding V's data: V, or what a chain of Identity nodes copies
/// (torch's exporter shares equal initializers that way).
const ir::Value *channelConstantSource(const ir::Value *V);

/// T with only the entries Keep of axis Axis (each Multiplier consecutive
/// ones per kept index).
rt::Tensor gatherChannels(const rt::Tensor &T, int64_t Axis,
                          const std::vector<int64_t> &Keep,
                          int64_t Multiplier = 1);

} // namespace nng::passes
