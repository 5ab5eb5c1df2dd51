//===- Pipelines.h - Optimization presets -O0, -O1, -O2 ---------*- C++ -*-===//
//
// The one place that says which passes `-O LEVEL` runs, for every caller
// (nngraph-opt, nngraph-run, nngraph-bench, the conformance driver,
// nng::compile, the Python module): a generic preset per level, then the
// passes of the backend the graph is optimized for (Backend::pipelinePasses:
// the cpu backend lists form-fused-regions only where it has the LLVM JIT),
// and one resolver of pipeline strings ("-O2", "O2", "2", or a pass list).
// Only registered passes are used, so that a preset keeps working while
// passes it names are still being written (the skipped names are reported
// by presetSkippedPasses() and in --list-passes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// The preset levels: 0, 1 and 2.
constexpr int MaxOptLevel = 2;

/// The backend a pipeline is for when the caller names none (""): "cpu"
/// where this build has it, else "reference".
std::string_view defaultPipelineBackend();

/// The target-independent pass names of preset Level, registered or not;
/// throws Error(InvalidArgument) for a level outside 0..MaxOptLevel.
const std::vector<std::string> &genericPresetPassNames(int Level);

/// Every pass name of the -O Level pipeline for Backend ("" for
/// defaultPipelineBackend()), registered or not: the generic preset's, then
/// the backend's own (Backend::pipelinePasses(Level)). Throws
/// Error(InvalidArgument) for a bad level or an unknown backend.
std::vector<std::string> presetPassNames(int Level,
                                         std::string_view Backend = "");

/// The pipeline string of presetPassNames(Level, Backend) built from its
/// registered passes ("canonicalize,cse,dce" for -O1; "" for -O0).
std::string presetPipeline(int Level, std::string_view Backend = "");

/// The names presetPassNames(Level, Backend) lists that are not registered
/// (and so skipped).
std::vector<std::string> presetSkippedPasses(int Level,
                                             std::string_view Backend = "");

/// A human-readable description of every preset, one per line, for the
/// default backend, with notes on the backends whose pipeline differs and
/// on skipped passes (for --list-passes and the docs).
std::string describePresets();

/// The level an optimization-level spelling names: "2", "O2" or "-O2";
/// nullopt when Spec is none (a pass list). Throws Error(InvalidArgument)
/// for a level outside 0..MaxOptLevel ("O7").
std::optional<int> parseOptLevel(std::string_view Spec);

/// The pipeline string Spec stands for on Backend: presetPipeline(Level,
/// Backend) when Spec names a level (parseOptLevel), else Spec itself (a
/// pass list, checked when a PassManager parses it).
std::string resolvePipeline(std::string_view Spec,
                            std::string_view Backend = "");

} // namespace nng::passes
