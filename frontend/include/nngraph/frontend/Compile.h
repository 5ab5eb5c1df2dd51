//===- Compile.h - nng::compile: trace, optimize, compile, cache *- C++ -*-===//
//
// nng::compile(module, options) is torch.compile for C++ modules: it returns
// a CompiledModule that, on the first call with a new input signature
// (dtypes, shapes, which dims are dynamic, and the module's training flag),
// traces the module (fx::symbolic_trace), runs the pass pipeline of the
// options, compiles the graph on the chosen backend and caches it; a later
// call whose inputs pass a cached entry's guard runs that entry's
// executable; inputs that pass no guard compile a new entry. Counters say
// how often each happened and how long compiling took.
//
//   auto Net = std::make_shared<MyNet>();
//   CompiledModule Fast = nng::compile(Net, {.Backend = "cpu",
//                                           .Pipeline = "O2"});
//   Tensor Y = Fast({X});            // traces + compiles
//   Y = Fast({X2});                  // same signature: cache hit
//
// The weights are captured when an entry is traced: after changing the
// module's parameters call reset() so the next call traces again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Value.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nng {

namespace fx {
class GraphModule;
} // namespace fx

/// Which input dims a compiled entry leaves symbolic.
enum class DynamicShapes {
  /// Every dim is specialised: each new shape compiles a new entry.
  Static,
  /// Dim 0 of every input is the symbol "N" (one batch size shared by all
  /// inputs); the other dims are specialised.
  Batch,
  /// Like torch.compile's automatic dynamic shapes: the first call
  /// specialises every dim; when a later call differs from an earlier
  /// signature (same dtypes and ranks) only in some dims, the new entry
  /// makes exactly those dims (and the ones already dynamic) symbolic, so a
  /// third batch size hits the cache.
  Auto,
};

/// What nng::compile does.
struct CompileOptions {
  /// The backend that runs the compiled graphs ("reference", "cpu").
  std::string Backend = "reference";
  /// A pass pipeline run on every traced graph: "" for none, a level ("O2",
  /// "-O2" or "2") for the -O pipeline of Backend (passes/Pipelines.h),
  /// else a pipeline string ("canonicalize,fold-conv-bn").
  std::string Pipeline;
  DynamicShapes Dynamic = DynamicShapes::Auto;
  /// When tracing throws fx::TraceError: true runs the module eagerly from
  /// then on (printing a warning once to stderr; fallback_reason() keeps
  /// it); false lets the error propagate.
  bool FallbackToEager = false;
};

/// Counters of a CompiledModule.
struct CompileStats {
  /// Calls that ran a cached entry.
  uint64_t Hits = 0;
  /// Calls that compiled a new entry (or tried to, and fell back).
  uint64_t Misses = 0;
  /// Calls that ran the module eagerly (fallback mode).
  uint64_t EagerCalls = 0;
  /// Total seconds spent tracing, optimizing and compiling.
  double CompileSeconds = 0;
};

/// A module made fast: call it like the module. Copies share the cache;
/// calls from several threads are serialised (eager fallback calls are not).
class CompiledModule {
public:
  /// Runs the module on Inputs (one per forward argument) and returns
  /// forward's result (tensor, tuple, list, dict).
  nn::Value forward(const std::vector<Tensor> &Inputs);
  /// forward(), for a single-tensor result.
  Tensor operator()(const std::vector<Tensor> &Inputs);

  const CompileStats &stats() const;
  /// The number of cached entries.
  size_t cache_size() const;
  /// The guards of the cached entries, one line each
  /// ("train=0 x0: f32[s0,4]"), most recent first.
  std::vector<std::string> guards() const;
  /// The graph module of the entry the last call ran; null before the
  /// first call and in eager fallback.
  const fx::GraphModule *last_graph_module() const;
  /// True once tracing failed and the module runs eagerly.
  bool is_eager_fallback() const;
  /// Why it fell back (the TraceError's message), or "".
  const std::string &fallback_reason() const;
  /// Drops every cached entry, the fallback state and the counters.
  void reset();
  const CompileOptions &options() const;

private:
  friend CompiledModule compile(std::shared_ptr<nn::ModuleBase>,
                                CompileOptions);
  struct Impl;
  std::shared_ptr<Impl> P;
};

/// Compiles M lazily (on the first call); the CompiledModule keeps M alive.
CompiledModule compile(std::shared_ptr<nn::ModuleBase> M,
                       CompileOptions O = {});
/// The same for a module the caller keeps alive (M must outlive the result).
CompiledModule compile(nn::ModuleBase &M, CompileOptions O = {});

} // namespace nng
