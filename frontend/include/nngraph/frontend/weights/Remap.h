//===- Remap.h - Renaming the keys of a state dict --------------*- C++ -*-===//
//
// Key remapping for state dicts whose names do not quite match a model:
// strip a prefix ("module." that DataParallel adds), rename by regex rules
// ("PATTERN=REPLACEMENT", std::regex ECMAScript syntax, $1 for groups),
// add a prefix. The steps run in that order: strip, each rule in turn,
// add. A report says how many keys each step changed and which steps
// changed nothing (usually a typo in a rule); two keys that end up with one
// name are an error naming both. Data only (runtime tensors), shared by
// nngraph-convert and weights::loadWeights.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/weights/TensorMap.h"

#include <cstddef>
#include <string>
#include <vector>

namespace nng::weights {

/// One regex rename: every match of Pattern in a key is replaced by
/// Replacement (like Python's re.sub; anchor with ^ and $ as needed).
struct RenameRule {
  std::string Pattern;
  std::string Replacement;
  /// "PATTERN=REPLACEMENT".
  std::string text() const { return Pattern + "=" + Replacement; }
};

/// Parses "PATTERN=REPLACEMENT", split at the first '=' (write \x3d for a
/// literal '=' in the pattern). Errors name the text when there is no '=',
/// the pattern is empty or not a valid regex.
RenameRule parseRenameRule(const std::string &Text);

/// What to do to the keys.
struct RemapOptions {
  /// Removed from the front of every key that starts with it; other keys
  /// are kept as they are (like torch's
  /// consume_prefix_in_state_dict_if_present).
  std::string StripPrefix;
  /// Applied in order after the strip.
  std::vector<RenameRule> Renames;
  /// Put in front of every key last.
  std::string AddPrefix;

  bool empty() const {
    return StripPrefix.empty() && Renames.empty() && AddPrefix.empty();
  }
};

/// How one step went.
struct RemapStep {
  /// "strip-prefix 'module.'", "rename 'a=b'", "add-prefix 'x.'".
  std::string Description;
  /// How many keys this step changed.
  size_t Changed = 0;
};

/// What remapping did.
struct RemapReport {
  /// One entry per requested step, in the order they ran.
  std::vector<RemapStep> Steps;
  /// (old key, new key) for every key whose name changed.
  std::vector<std::pair<std::string, std::string>> Renamed;

  /// The descriptions of the steps that changed no key.
  std::vector<std::string> unmatched() const;
  /// A few human-readable lines: one per step and its count.
  std::string toString() const;
};

/// The new names of Keys (same order). Errors: a key that would become
/// empty, two keys that would get the same name (the message names both
/// original keys and the common target).
std::vector<std::string> remapKeyList(const std::vector<std::string> &Keys,
                                      const RemapOptions &Opts,
                                      RemapReport *Report = nullptr);

/// M with its keys remapped (tensors shared, order kept).
TensorMap remapKeys(const TensorMap &M, const RemapOptions &Opts,
                    RemapReport *Report = nullptr);

} // namespace nng::weights
