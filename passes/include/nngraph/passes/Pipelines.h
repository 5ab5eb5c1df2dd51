//===- Pipelines.h - Optimization presets -O0, -O1, -O2 ---------*- C++ -*-===//
//
// The named pipelines behind nngraph-opt's -O0/-O1/-O2. A preset is a list
// of pass names; only the registered ones are used, so that a preset keeps
// working while passes it names are still being written (the skipped names
// are reported by presetNotes() and in --list-passes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// The preset levels: 0, 1 and 2.
constexpr int MaxOptLevel = 2;

/// Every pass name preset Level lists, registered or not; throws
/// Error(InvalidArgument) for a level outside 0..MaxOptLevel.
const std::vector<std::string> &presetPassNames(int Level);

/// The pipeline string of preset Level built from its registered passes
/// ("canonicalize,cse,dce" for -O1; "" for -O0).
std::string presetPipeline(int Level);

/// The names preset Level lists that are not registered (and so skipped).
std::vector<std::string> presetSkippedPasses(int Level);

/// A human-readable description of every preset, one per line, with notes
/// on skipped passes (for --list-passes and the docs).
std::string describePresets();

} // namespace nng::passes
