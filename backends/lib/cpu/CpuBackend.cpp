//===- CpuBackend.cpp - The "cpu" backend: compiled schedules ------------===//
//
// compile() verifies the graph once; the executable compiles a Program
// (Lower.h) on the first run of each input signature (dtypes and shapes)
// and keeps the last few, so symbolic dims specialise per shape. What does
// not depend on the shape is made once for all of them (ProgramShared): the
// packed weights, the arena (grown to the largest plan), the fused regions'
// JIT kernels (KernelJit's cache); a new shape costs a lowering walk and
// the oneDNN primitives of its sizes (oneDNN's primitive cache). A graph
// with data-dependent shapes is cut where they start (SplitGraph.h): the
// nodes before the cut compile into an executable of their own, the rest
// runs node by node on the interpreter with the node kernels (as eager
// mode's one-op graphs do: compileCpu); without compute before the cut,
// the whole graph runs node by node.
//
// Node kernels (the fallback steps of a Program, and the interpreter) give
// each node a oneDNN kernel on plain layouts when its op family has one and
// its attributes allow it, the backend's fast loops, or the reference
// kernel. The interpreter path runs nodes whose tensors are all small with
// one OpenMP thread (a fork/join costs more than their work).
//
// Nodes with regions (If, Loop) run on a node kernel that owns one cpu
// executable per region (the region lifted into a graph, compiled at the
// node's first run and kept; each caches its Programs per input signature),
// so a loop's body is compiled once, not per iteration.
//
// Callers on several threads may run one executable at once: each run
// holds a lane (its own programs and arena; as many lanes as CPUs the
// process may use) and takes its share of the threads (RunShare); the
// shared state is locked only to compile or reshape.
//
// f16 graphs compile as the same graph in f32 (WidenHalf.h), with Casts at
// their inputs and outputs.
//
// An input that is an integer scalar deciding an If's condition (Silero
// VAD's sample rate) is part of the signature by its value, for a few
// values (ValueGuards.h): each is compiled as a constant, so the If is
// lowered as the branch it takes and the whole graph compiles, instead of
// running node by node around a branch decided at run time.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/backends/cpu/FusionRules.h"
#include "../reference/ControlFlow.h"
#include "DnnlKernel.h"
#include "Lower.h"
#include "SplitGraph.h"
#include "ValueGuards.h"
#include "WidenHalf.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/ir/FusedRegion.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Contention.h"
#include "nngraph/runtime/CpuCount.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace nng::backends {

namespace cpu {
namespace {

/// Tensors up to this many elements are too small to share between threads
/// (PyTorch's GRAIN_SIZE for elementwise loops).
constexpr int64_t SerialElems = 1 << 15;

/// True for ops whose work grows faster than their tensors (a small conv or
/// matmul may still be worth two threads) or that run arbitrary code: the
/// op table's compute and impure traits.
bool keepsThreads(ir::OpKind K) {
  return ir::hasTrait(K, ir::OpTrait::Compute) ||
         ir::hasTrait(K, ir::OpTrait::Impure);
}

/// True when every input and (statically inferred) output of C has at most
/// SerialElems elements.
bool allSmall(const KernelContext &C) {
  for (const Tensor &T : C.Inputs)
    if (T.defined() && T.numel() > SerialElems)
      return false;
  for (const ir::TensorType &T : C.OutTypes) {
    std::optional<int64_t> Elems = T.staticNumel();
    if (!Elems || *Elems > SerialElems)
      return false;
  }
  return true;
}

} // namespace

namespace {

NodeKernel chooseKernel(const ir::Node &N) {
  NodeKernel Chosen = nodeKernelFor(N);
  if (keepsThreads(N.op()))
    return Chosen;
  return [K = std::move(Chosen)](KernelContext &C) {
    if (numThreads() <= 1 || !allSmall(C)) {
      ThreadScope Threads(numThreads()); // oneDNN's count, from any thread.
      return K(C);
    }
    ThreadScope Serial(1);
    K(C);
  };
}

/// Runs a graph through compiled Programs, one per input signature, on
/// lanes. A lane is a set of Programs with their own arena, used by one run
/// at a time: callers on several threads run at once on different lanes
/// (as many lanes as CPUs this process may use; more callers wait for a
/// free one). What does not depend on the run (packed weights, oneDNN
/// primitives, the counters of --stats) is shared by every lane under one
/// mutex, taken only to compile or reshape, never while running.
class CompiledExecutable final : public Executable {
public:
  explicit CompiledExecutable(std::unique_ptr<ir::Graph> Graph)
      : G(std::move(Graph)), Guards(*G),
        MaxLanes(std::max(1, usableCpus().Count)) {
    for (const ir::Value *In : G->inputs())
      if (!In->type().isStatic())
        Shared.ShapesVary = true;
    CpuContention::global().prime();
  }

  std::vector<Tensor> run(const std::vector<Tensor> &Inputs) override {
    return runWith(Inputs, nullptr);
  }

  void runInto(const std::vector<Tensor> &Inputs,
               std::vector<Tensor> &Outputs) override {
    checkOutputCount(*G, Outputs);
    std::vector<Tensor> Got = runWith(Inputs, &Outputs);
    for (size_t I = 0; I < Got.size(); ++I)
      if (!Outputs[I].defined())
        Outputs[I] = std::move(Got[I]);
  }

  void prepare(const std::vector<Tensor> &Inputs) override {
    checkInputs(*G, Inputs);
    ThreadScope Threads(numThreads());
    LaneHold L(*this);
    lookup(*L, Inputs, numThreads());
  }

  bool concurrentRuns() const override { return true; }

  /// Read between runs: a run in progress on the last lane may be updating
  /// the program's counters.
  CpuExecutableStats stats() const {
    std::lock_guard<std::mutex> LanesLock(LanesMu);
    std::lock_guard<std::mutex> Lock(CompileMu);
    CpuExecutableStats S;
    const Entry *Last = Recent ? Recent->Last : nullptr;
    if (Last && !Last->P && TheCut) {
      // The cut: the static part's program, then the dynamic part's nodes
      // on node kernels.
      S = *cpuExecutableStats(*TheCut->Static);
      for (const std::string &D : TheCut->DynamicNodes)
        S.Fallbacks.push_back(D + " (node by node after the cut)");
      S.Steps += static_cast<int64_t>(TheCut->DynamicNodes.size());
      return S;
    }
    if (Last && Last->P) {
      const Program &P = *Last->P;
      S = P.Stats;
      for (size_t I = 0; I < P.StepMs.size(); ++I)
        S.StepTimes.push_back({P.Steps[I]->Desc, P.StepMs[I]});
      S.ProfiledRuns = P.ProfiledRuns;
    }
    if (Last)
      S.RunThreads = Last->Threads;
    S.Specializations = Compiled;
    S.ExactReruns = ExactReruns;
    S.WeightPacks = Shared.Packs.made();
    S.SharedWeightBytes = Shared.Packs.packedBytes();
    for (const auto &L : Lanes)
      S.SharedArenaBytes += static_cast<int64_t>(L->Arena->Bytes);
    S.Lanes = static_cast<int64_t>(Lanes.size());
    S.Primitives = Shared.Primitives;
    S.PrimitiveHits = Shared.PrimitiveHits;
    S.LastCompileMs = LastCompileMs;
    S.CompileMs = CompileMs;
    S.Reshapes = Reshapes;
    S.ReshapeRefusal = ReshapeRefusal;
    return S;
  }

  std::string schedule() const {
    std::lock_guard<std::mutex> Lock(LanesMu);
    std::lock_guard<std::mutex> CutLock(CompileMu); // TheCut.
    const Entry *Last = Recent ? Recent->Last : nullptr;
    if (!Last)
      return "schedule: none yet (the executable has not run)\n";
    if (!Last->P && TheCut)
      return *cpuSchedule(*TheCut->Static) + "then node by node: " +
             std::to_string(TheCut->DynamicNodes.size()) +
             " nodes from the first whose shape depends on the data, " +
             TheCut->Where + "\n";
    if (!Last->P)
      return "schedule: node by node (a shape depends on the data)\n";
    return printSchedule(*Last->P);
  }

  void setProfiling(bool On) {
    Profiling.store(On, std::memory_order_relaxed);
    std::lock_guard<std::mutex> Lock(CompileMu);
    if (TheCut)
      setCpuProfiling(*TheCut->Static, On);
  }

private:
  /// One input signature and its program (null: node by node).
  struct Entry {
    std::vector<DType> Types;
    std::vector<Shape> Shapes;
    /// The guarded inputs' values (ValueGuards.h) and the graph compiled
    /// for them; empty and G when the program serves any values.
    std::vector<int64_t> Values;
    const ir::Graph *Source = nullptr;
    int Threads = 1; ///< The threads its primitives were made for.
    std::unique_ptr<Program> P;
    std::unique_ptr<Program> Exact; ///< Without speculation, when needed.
  };

  /// Programs and an arena for one run at a time.
  struct Lane {
    std::shared_ptr<SharedArena> Arena = std::make_shared<SharedArena>();
    /// Signatures kept (most recently used last).
    std::vector<std::unique_ptr<Entry>> Cache;
    const Entry *Last = nullptr;
    std::unique_ptr<Executable> Interp; ///< Node by node, when needed.
    std::unique_ptr<Executable> CutInterp; ///< The cut's dynamic part.
    bool Busy = false;
  };

  /// Holds a free lane for the length of a run.
  class LaneHold {
  public:
    explicit LaneHold(const CompiledExecutable &E) : E(E), L(E.acquire()) {}
    ~LaneHold() { E.release(L); }
    LaneHold(const LaneHold &) = delete;
    LaneHold &operator=(const LaneHold &) = delete;
    Lane &operator*() const { return *L; }
    Lane *operator->() const { return L; }

  private:
    const CompiledExecutable &E;
    Lane *L;
  };

  /// The lane used last when it is free (a lone caller keeps its programs
  /// warm), else any free one, else a new one while there are fewer than
  /// MaxLanes, else waits for one.
  Lane *acquire() const {
    std::unique_lock<std::mutex> Lock(LanesMu);
    for (;;) {
      Lane *Got = Recent && !Recent->Busy ? Recent : nullptr;
      for (size_t I = 0; !Got && I < Lanes.size(); ++I)
        if (!Lanes[I]->Busy)
          Got = Lanes[I].get();
      if (!Got && Lanes.size() < MaxLanes)
        Got = Lanes.emplace_back(std::make_unique<Lane>()).get();
      if (Got) {
        Got->Busy = true;
        return Got;
      }
      Freed.wait(Lock);
    }
  }

  void release(Lane *L) const {
    {
      std::lock_guard<std::mutex> Lock(LanesMu);
      L->Busy = false;
      Recent = L;
    }
    Freed.notify_one();
  }

  /// Runs the program of Inputs' signature; Outputs, when given, holds the
  /// caller's output tensors (runInto), written in place.
  std::vector<Tensor> runWith(const std::vector<Tensor> &Inputs,
                              const std::vector<Tensor> *Outputs) {
    checkInputs(*G, Inputs);
    // Fewer threads while other work holds cores (Contention.h), and a
    // share of them while other runs of this process overlap: each thread
    // count has its own programs and primitives.
    RunShare Share(CpuContention::global().threadsFor(numThreads()));
    int Use = Share.threads();
    ThreadScope Threads(Use);
    LaneHold L(*this);
    Entry &E = lookup(*L, Inputs, Use);
    L->Last = &E;
    bool Profile = Profiling.load(std::memory_order_relaxed);
    if (E.P) {
      // A speculative program (ValueBounds.cpp) whose proof failed: the
      // exact one, compiled the first time it is needed.
      Program *P = E.P.get();
      if (P->Speculative && P->proofStale())
        P = &exact(*L, E);
      if (Outputs)
        checkOutputBuffers(*G, Inputs, *Outputs, P->outputTypes(),
                           P->outputShapes());
      P->Profile = Profile;
      std::vector<Tensor> Out = P->run(Inputs, Outputs);
      if (!(P->Speculative && P->GuardTripped))
        return Out;
      {
        std::lock_guard<std::mutex> Lock(CompileMu);
        ++ExactReruns;
      }
      Program &X = exact(*L, E);
      X.Profile = Profile;
      return X.run(Inputs, Outputs);
    }
    Executable *Interp = nullptr;
    std::vector<Tensor> CutInputs; // Inputs, then the static part's outputs.
    const Cut *C = cutFor(E);
    if (C) {
      // The static part compiled, then the rest node by node.
      CutInputs = Inputs;
      std::vector<Tensor> Mid = C->Static->run(Inputs);
      CutInputs.insert(CutInputs.end(), Mid.begin(), Mid.end());
      if (!L->CutInterp)
        L->CutInterp = reference::makeInterpreter(C->Dynamic->clone(),
                                                  chooseKernel, "cpu");
      Interp = L->CutInterp.get();
    } else {
      if (!L->Interp)
        L->Interp = reference::makeInterpreter(G->clone(), chooseKernel, "cpu");
      Interp = L->Interp.get();
    }
    const std::vector<Tensor> &In = C ? CutInputs : Inputs;
    if (!Outputs)
      return Interp->run(In);
    std::vector<Tensor> Into = *Outputs;
    Interp->runInto(In, Into);
    return Into;
  }

  /// The graph cut where its shapes depend on data (SplitGraph.h): the
  /// static part compiled (an executable of its own, shared by the lanes),
  /// the dynamic part's graph (each lane interprets it).
  struct Cut {
    std::unique_ptr<Executable> Static;
    std::unique_ptr<ir::Graph> Dynamic;
    std::string Where;
    std::vector<std::string> DynamicNodes; ///< Described.
  };

  /// The cut, made the first time a signature meets a data-dependent shape
  /// (at that signature's shapes); null when there is none worth making.
  const Cut *cutFor(const Entry &E) {
    std::lock_guard<std::mutex> Lock(CompileMu);
    if (CutTried)
      return TheCut.get();
    CutTried = true;
    std::optional<GraphSplit> S =
        splitAtDataDependence(*G, E.Types, E.Shapes, Shared);
    if (!S)
      return nullptr;
    auto C = std::make_unique<Cut>();
    try {
      C->Static = compileCpu(*S->Static, CpuMode::Compiled);
    } catch (const Error &) {
      return nullptr; // The whole graph node by node, as before.
    }
    setCpuProfiling(*C->Static, Profiling.load(std::memory_order_relaxed));
    C->Where = S->Where;
    for (const auto &N : S->Dynamic->nodes())
      C->DynamicNodes.push_back(N->describe());
    C->Dynamic = std::move(S->Dynamic);
    TheCut = std::move(C);
    return TheCut.get();
  }

  Program &exact(Lane &L, Entry &E) {
    if (!E.Exact)
      E.Exact = timedCompile(L, E, /*Speculate=*/false);
    return *E.Exact;
  }
  /// Signatures kept per lane; older ones are dropped. A program holds only
  /// its schedule: weights are shared, the arena is the lane's.
  static constexpr size_t MaxEntries = 32;

  std::unique_ptr<Program> timedCompile(Lane &L, const Entry &E,
                                        bool Speculate) {
    std::lock_guard<std::mutex> Lock(CompileMu);
    auto Start = std::chrono::steady_clock::now();
    Shared.Arena = L.Arena; // The lane's, for the programs compiled now.
    std::unique_ptr<Program> P =
        compileProgram(*E.Source, E.Types, E.Shapes, Shared, Speculate);
    if (P && !E.Values.empty()) // (Null: node by node.)
      P->Stats.Stages.insert(P->Stats.Stages.begin(),
                             {"values", 0.0, Guards.describe(E.Values)});
    LastCompileMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
    CompileMs += LastCompileMs;
    return P;
  }

  /// Removes entry I of L's cache (L.Last no longer points at it).
  static void dropEntry(Lane &L, size_t I) {
    if (L.Last == L.Cache[I].get())
      L.Last = nullptr;
    L.Cache.erase(L.Cache.begin() + static_cast<std::ptrdiff_t>(I));
  }

  /// Serves E's new shapes with the most recently used Program of L with
  /// the same dtypes and ranks, reshaped (Program::reshape): its entry
  /// goes, E takes it. False when there is none or it refuses (the reason
  /// is kept for --stats); a Program that failed half-way is dropped.
  bool reshapeInto(Lane &L, Entry &E) {
    for (size_t I = L.Cache.size(); I-- > 0;) {
      Entry &Old = *L.Cache[I];
      if (!Old.P || Old.Exact || Old.Types != E.Types ||
          Old.Threads != E.Threads || Old.Source != E.Source)
        continue;
      bool SameRanks = true;
      for (size_t J = 0; J < E.Shapes.size() && SameRanks; ++J)
        SameRanks = Old.Shapes[J].rank() == E.Shapes[J].rank();
      if (!SameRanks)
        continue;
      std::lock_guard<std::mutex> Lock(CompileMu);
      auto Start = std::chrono::steady_clock::now();
      bool Broken = false;
      std::string Why = Old.P->reshape(*E.Source, Shared, E.Shapes, Broken);
      if (!Why.empty()) {
        ReshapeRefusal = Why;
        if (Broken)
          dropEntry(L, I);
        return false;
      }
      E.P = std::move(Old.P);
      dropEntry(L, I);
      LastCompileMs = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - Start)
                          .count();
      CompileMs += LastCompileMs;
      ++Reshapes;
      // The compile's stages stay (they made the schedule); the last
      // reshape is one more.
      auto &Stages = E.P->Stats.Stages;
      std::erase_if(Stages, [](const auto &S) { return S.Name == "reshape"; });
      Stages.push_back({"reshape", LastCompileMs,
                        "the schedule compiled at other shapes, resized"});
      return true;
    }
    return false;
  }

  Entry &lookup(Lane &L, const std::vector<Tensor> &Inputs, int Threads) {
    // A program compiled for these values, else one that serves any.
    std::vector<int64_t> Values = Guards.valuesOf(Inputs);
    size_t Found = L.Cache.size();
    for (size_t I = L.Cache.size(); I-- > 0;) {
      Entry &E = *L.Cache[I];
      bool Same = E.Threads == Threads &&
                  (E.Values.empty() || E.Values == Values);
      for (size_t J = 0; J < Inputs.size() && Same; ++J)
        Same = E.Types[J] == Inputs[J].dtype() &&
               E.Shapes[J] == Inputs[J].shape();
      if (Same && (Found == L.Cache.size() || E.Values == Values))
        Found = I;
      if (Same && E.Values == Values)
        break;
    }
    if (Found != L.Cache.size()) {
      std::rotate(L.Cache.begin() + Found, L.Cache.begin() + Found + 1,
                  L.Cache.end());
      return *L.Cache.back();
    }
    auto E = std::make_unique<Entry>();
    E->Threads = Threads;
    for (const Tensor &T : Inputs) {
      E->Types.push_back(T.dtype());
      E->Shapes.push_back(T.shape());
    }
    E->Source = G.get();
    if (!Values.empty()) {
      std::lock_guard<std::mutex> Lock(CompileMu);
      if (const ir::Graph *S = Guards.graphFor(Values, Inputs)) {
        E->Source = S;
        E->Values = std::move(Values);
      }
    }
    if (!reshapeInto(L, *E)) {
      E->P = timedCompile(L, *E, /*Speculate=*/true);
      std::lock_guard<std::mutex> Lock(CompileMu);
      ++Compiled;
    }
    if (L.Cache.size() == MaxEntries)
      dropEntry(L, 0);
    L.Cache.push_back(std::move(E));
    return *L.Cache.back();
  }

  std::unique_ptr<ir::Graph> G;
  /// Inputs compiled by value; its graphs under CompileMu.
  ValueGuards Guards;
  /// Compile-time state of every lane, and the counters: under CompileMu.
  ProgramShared Shared;
  bool CutTried = false;
  std::unique_ptr<Cut> TheCut;
  int64_t Compiled = 0, Reshapes = 0;
  std::string ReshapeRefusal;
  int64_t ExactReruns = 0;
  double LastCompileMs = 0, CompileMs = 0;
  mutable std::mutex CompileMu;
  /// The lanes, under LanesMu (a lane's contents belong to its holder).
  const size_t MaxLanes;
  mutable std::vector<std::unique_ptr<Lane>> Lanes;
  mutable Lane *Recent = nullptr; ///< Released last.
  mutable std::mutex LanesMu;
  mutable std::condition_variable Freed;
  std::atomic<bool> Profiling{false};
};

class CpuBackend final : public Backend {
public:
  std::string_view name() const override { return "cpu"; }
  bool supportsOp(const ir::Node &N) const override {
    return lowerFnFor(N.op()) != nullptr;
  }
  std::unique_ptr<Executable> compile(const ir::Graph &G) override {
    return compileCpu(G, CpuMode::Compiled);
  }
  /// -O2 ends by forming the fused regions the LLVM JIT compiles; a build
  /// without the JIT runs the nodes on their kernels instead.
  /// The epilogue rule (FusionRules.h) comes before form-fused-regions,
  /// so that no region takes what a primitive fuses; compileCpu runs it
  /// too, for graphs that ran no pipeline.
  std::vector<std::string> pipelinePasses(int Level) const override {
    if (Level >= 2 && kernelJitAvailable())
      return {"cpu-fuse-epilogues", "form-fused-regions"};
    return {};
  }
};

} // namespace
} // namespace cpu

Backend &cpuBackend() {
  static cpu::CpuBackend B;
  return B;
}

std::optional<CpuExecutableStats> cpuExecutableStats(const Executable &E) {
  if (auto *C = dynamic_cast<const cpu::CompiledExecutable *>(&E))
    return C->stats();
  return std::nullopt;
}

std::optional<std::string> cpuSchedule(const Executable &E) {
  if (auto *C = dynamic_cast<const cpu::CompiledExecutable *>(&E))
    return C->schedule();
  return std::nullopt;
}

bool cpuRunsPackedProducts() { return cpu::packedGemmServes(); }

bool setCpuProfiling(Executable &E, bool On) {
  auto *C = dynamic_cast<cpu::CompiledExecutable *>(&E);
  if (C)
    C->setProfiling(On);
  return C != nullptr;
}

std::unique_ptr<Executable> compileCpu(const ir::Graph &G, CpuMode M) {
  ir::verifyOrThrow(G);
  std::unique_ptr<ir::Graph> C = G.clone();
  // f16 values compute in f32 (WidenHalf.h): the kernels are f32 ones.
  if (cpu::widenHalfToFloat(*C) > 0)
    ir::verifyOrThrow(*C);
  // Without the JIT, fused regions run best as their nodes (each on its
  // kernel) rather than through the reference's run of their bodies. Its
  // -O2 forms none (pipelinePasses); these are regions the graph came with
  // (a model nngraph-opt optimized for a build with the JIT).
  if (!cpu::kernelJitAvailable()) {
    std::vector<ir::Node *> Regions;
    for (const auto &N : C->nodes())
      if (N->op() == ir::OpKind::FusedRegion)
        Regions.push_back(N.get());
    for (ir::Node *N : Regions)
      ir::inlineFusedRegion(*C, N);
  }
  if (M == CpuMode::NodeByNode)
    return reference::makeInterpreter(std::move(C), cpu::chooseKernel, "cpu");
  // Stage "fuse": what the primitives fuse, as explicit nodes.
  int64_t Fused = cpu::fuseConvEpilogues(*C).Fused;
  Fused += cpu::fuseProductEpilogues(*C).Fused;
  if (Fused > 0)
    ir::verifyOrThrow(*C);
  return std::make_unique<cpu::CompiledExecutable>(std::move(C));
}

bool cpuServesWithDnnl(const ir::Node &N) {
  return cpu::dnnlKernelFor(N) != nullptr;
}

CpuCallCounts cpuCallCounts() {
  CpuCallCounts Counts = cpu::dnnlCallCounts();
  Counts.Fast = cpu::ownLoopCallCount();
  Counts.RegionCompiles = cpu::RegionCompiles.load(std::memory_order_relaxed);
  return Counts;
}

} // namespace nng::backends
