//===- CpuBackend.h - The CPU backend (oneDNN) -----------------*- C++ -*-===//
//
// The "cpu" backend compiles a graph, per set of concrete input shapes, into
// a flat schedule: oneDNN primitives whose activations keep the blocked
// layouts the primitives pick, with bias, residual sums and activations
// fused, weights reordered once, and every intermediate tensor in one arena
// laid out by a static memory plan; the backend's own loops where oneDNN's
// results differ from the reference's (NaN); and node kernels (oneDNN on
// plain layouts, or the reference kernels) for the rest. Graphs with
// data-dependent shapes run node by node. Exists only in builds with
// NNGRAPH_HAVE_ONEDNN (nngraph/runtime/BuildConfig.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"

#include <optional>
#include <string>
#include <vector>

namespace nng::backends {

/// The CPU backend singleton (only in builds with oneDNN).
Backend &cpuBackend();

/// How the cpu backend runs a graph.
enum class CpuMode {
  /// Compiled schedules (node by node only for data-dependent shapes):
  /// what cpuBackend().compile gives.
  Compiled,
  /// Node by node on the node kernels, with inference per node: how graphs
  /// with data-dependent shapes run, and eager mode's one-op graphs (one
  /// node has nothing to fuse, keep or plan).
  NodeByNode,
};
/// Compiles G (verified) on the cpu backend in mode M.
std::unique_ptr<Executable> compileCpu(const ir::Graph &G, CpuMode M);

/// True when the CPU backend would serve N with a oneDNN kernel (its
/// attributes allow it; inputs may still fall back at run time).
bool cpuServesWithDnnl(const ir::Node &N);

/// Calls of oneDNN-served nodes since the process started (all threads):
/// how many ran a primitive and how many fell back to the reference kernel;
/// and how many calls the backend's own f32 loops (ReduceSum, ReduceMean,
/// Expand, Transpose) served; and how many regions (If branches, Loop and
/// Scan bodies) the backend compiled into executables of their own (once
/// per region of a node, however many iterations run).
struct CpuCallCounts {
  int64_t Dnnl = 0, Fallback = 0, Fast = 0, RegionCompiles = 0;
};
CpuCallCounts cpuCallCounts();

/// What a compiled cpu executable does per run, for its last-used shape
/// signature (nngraph-run --stats).
struct CpuExecutableStats {
  bool Compiled = false;         ///< False: it runs node by node.
  int64_t Specializations = 0;   ///< Shape signatures compiled so far.
  int64_t Steps = 0;             ///< Steps per run.
  int64_t DnnlSteps = 0;         ///< oneDNN primitives per run (reorders too).
  int64_t Reorders = 0;          ///< Layout reorders of activations per run.
  int64_t OwnKernels = 0;        ///< Steps served by the backend's own loops.
  int64_t JitKernels = 0;        ///< Of those, fused regions' JIT kernels.
  int64_t FusedNodes = 0;        ///< Nodes folded into another node's step.
  int64_t AliasNodes = 0;        ///< Reshape-like nodes that cost nothing.
  int64_t FoldedNodes = 0;       ///< Nodes computed once at compile time.
  int64_t ArenaBytes = 0;        ///< Peak arena bytes (the memory plan).
  int64_t NaiveBytes = 0;        ///< Arena bytes without buffer reuse.
  int64_t WeightBytes = 0;       ///< Weights packed into primitive layouts.
  int64_t WeightRefreshes = 0;   ///< Repacks since compile (weights changed).
  /// Shared by the programs of every shape: weights packed so far (each
  /// once, whatever the shapes) and their bytes, and the arenas' bytes (one
  /// per lane, each the largest plan it ran, with headroom).
  int64_t WeightPacks = 0;
  int64_t SharedWeightBytes = 0;
  int64_t SharedArenaBytes = 0;
  /// Lanes made so far: programs and arena for one run at a time (callers
  /// on several threads run at once on different lanes).
  int64_t Lanes = 0;
  /// oneDNN primitives the compiles of all shapes made, and those a compile
  /// found made already (a decoder's weight products at a new cache length).
  int64_t Primitives = 0;
  int64_t PrimitiveHits = 0;
  /// Wall time of the last new shape (a compile, or a reshape), and of all.
  double LastCompileMs = 0;
  double CompileMs = 0;
  /// New shapes served by reshaping a Program compiled before (no compile:
  /// shapes inferred again, steps adapted, the arena laid out again), and
  /// why the last one that could not be was not (empty: none refused).
  int64_t Reshapes = 0;
  std::string ReshapeRefusal;
  /// Clamps (ReLU6) done by oneDNN post-ops because their operand is proven
  /// finite; runs redone by the exact program when that proof failed (a NaN
  /// met by a guard, constants changed).
  int64_t ProvenClamps = 0;
  int64_t ExactReruns = 0;
  /// 3x3 convolutions run as Winograd's algorithm, and the guards per run
  /// that check their inputs are finite (a run whose guard fails is redone
  /// by the exact program, counted in ExactReruns).
  int64_t WinogradConvs = 0;
  int64_t Guards = 0;
  std::vector<std::string> Fallbacks; ///< Nodes run by node kernels.
  /// The stages of the compile of this shape signature, in order (bind,
  /// plan, emit, memory; a reshape is one stage): the wall time of each and
  /// what it decided, in words (empty: nothing to say).
  struct Stage {
    std::string Name;
    double Ms = 0;
    std::string Decided;
  };
  std::vector<Stage> Stages;
  /// Threads the last run used: the process's count, or fewer while other
  /// work held cores (runtime/Contention.h).
  int RunThreads = 0;
  /// With profiling on (setCpuProfiling): each step's description and its
  /// wall time summed over ProfiledRuns runs, in schedule order.
  struct StepTime {
    std::string Desc;
    double Ms = 0;
  };
  std::vector<StepTime> StepTimes;
  int64_t ProfiledRuns = 0;
};
/// The stats of E, or nullopt when E is not a cpu executable.
std::optional<CpuExecutableStats> cpuExecutableStats(const Executable &E);
/// The schedule E compiled for the input shapes it ran last, as text (one
/// line per step; nngraph-run --print-schedule): nullopt when E is not a
/// cpu executable; a line saying so when it runs node by node or has not
/// run yet.
std::optional<std::string> cpuSchedule(const Executable &E);

/// True when linear layers whose rows vary run the backend's own product
/// over weights packed in panels on this CPU (AVX-512, x86-64-v4, in a GCC
/// build), not oneDNN's matmul with rows given at run time.
bool cpuRunsPackedProducts();
/// Times every step of E's runs from now on (On) or stops (nngraph-run
/// --profile); false when E is not a cpu executable.
bool setCpuProfiling(Executable &E, bool On);

} // namespace nng::backends
