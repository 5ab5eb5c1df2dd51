//===- CpuStatsReport.cpp - The cpu backend's --stats, as text and JSON ---===//
//
// The stats block of nngraph-run and nngraph-bench (CpuStatsReport.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/CpuStatsReport.h"

#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/runtime/Contention.h"
#include "nngraph/runtime/CpuCount.h"
#include "nngraph/runtime/OpenMPStart.h"
#include "nngraph/runtime/Parallel.h"

#include <cstdio>

namespace nng::tools {

namespace {

/// What the JIT did in this process, as JSON.
nlohmann::json jitJson() {
  backends::cpu::JitStats J = backends::cpu::KernelJit::global().stats();
  return {{"compiled", J.Compiled},
          {"disk_hits", J.DiskHits},
          {"memory_hits", J.MemoryHits},
          {"corrupt_entries", J.CorruptEntries},
          {"ms", J.CompileMs + J.LoadMs + J.LinkMs}};
}

/// The compile's stages, as JSON: name, ms and what each decided.
nlohmann::json stagesJson(const backends::CpuExecutableStats &S) {
  nlohmann::json Out = nlohmann::json::array();
  for (const backends::CpuExecutableStats::Stage &St : S.Stages)
    Out.push_back({{"name", St.Name}, {"ms", St.Ms}, {"decided", St.Decided}});
  return Out;
}

} // namespace

void printCpuStats(std::ostream &Out, const backends::CpuExecutableStats &S) {
  if (!S.Compiled) {
    Out << "stats: node by node (a shape depends on the data)\n";
    return;
  }
  Out << "stats: " << S.Steps << " steps per run (" << S.DnnlSteps
      << " oneDNN, " << S.OwnKernels << " own loops, " << S.Fallbacks.size()
      << " node kernels), " << S.Reorders << " layout reorders, "
      << S.FusedNodes << " nodes fused, " << S.AliasNodes << " views, "
      << S.FoldedNodes << " folded at compile time\n";
  Out << "threads: " << nng::numThreads() << " (" << nng::threadCountOrigin()
      << "); the last run used " << S.RunThreads << " ("
      << nng::CpuContention::global().describe() << "); "
      << S.Lanes << " lane(s) for callers running at once; idle OpenMP "
      << "threads spin per " << nng::describeOpenMPSpin() << "\n";
  Out << "memory: arena " << S.ArenaBytes << " bytes (" << S.NaiveBytes
      << " without reuse), packed weights " << S.WeightBytes << " bytes, "
      << S.Specializations << " shape signature(s) compiled\n";
  char Shapes[360];
  std::snprintf(Shapes, sizeof(Shapes),
                "shapes: %lld compiled, %lld reshaped (%.1f ms in all, the "
                "last %.2f ms); shared by all: %lld weights packed once (%lld "
                "bytes), arena %lld bytes, %lld oneDNN primitives made (%lld "
                "reused)\n",
                static_cast<long long>(S.Specializations),
                static_cast<long long>(S.Reshapes), S.CompileMs,
                S.LastCompileMs, static_cast<long long>(S.WeightPacks),
                static_cast<long long>(S.SharedWeightBytes),
                static_cast<long long>(S.SharedArenaBytes),
                static_cast<long long>(S.Primitives),
                static_cast<long long>(S.PrimitiveHits));
  Out << Shapes;
  if (!S.Stages.empty()) {
    Out << "stages:";
    const char *Sep = " ";
    for (const backends::CpuExecutableStats::Stage &St : S.Stages) {
      char Ms[32];
      std::snprintf(Ms, sizeof(Ms), "%.2f ms", St.Ms);
      Out << Sep << St.Name << " " << Ms;
      Sep = ", ";
    }
    Out << "\n";
  }
  if (!S.ReshapeRefusal.empty())
    Out << "reshape: the last compile of a new shape was needed because "
        << S.ReshapeRefusal << "\n";
  if (S.ProvenClamps || S.Guards || S.ExactReruns)
    Out << "speculation: " << S.ProvenClamps
        << " clamps by oneDNN on operands proven finite, " << S.WinogradConvs
        << " Winograd convolutions, " << S.Guards << " guards per run, "
        << S.ExactReruns
        << " runs redone exactly (a guard met a NaN or an out-of-range "
           "value)\n";
  if (S.JitKernels) {
    backends::cpu::JitStats J = backends::cpu::KernelJit::global().stats();
    char Buf[200];
    std::snprintf(Buf, sizeof(Buf),
                  "jit: %lld fused-region kernels per run; %lld compiled, "
                  "%lld from the disk cache (%s), %lld reused; %.1f ms\n",
                  static_cast<long long>(S.JitKernels),
                  static_cast<long long>(J.Compiled),
                  static_cast<long long>(J.DiskHits),
                  backends::cpu::KernelJit::global().cacheDir().c_str(),
                  static_cast<long long>(J.MemoryHits),
                  J.CompileMs + J.LoadMs + J.LinkMs);
    Out << Buf;
  }
  for (const std::string &F : S.Fallbacks)
    Out << "fallback: " << F << "\n";
}

nlohmann::json cpuStatsJson(const backends::CpuExecutableStats &S) {
  return {{"compiled", S.Compiled},
          {"steps", S.Steps},
          {"onednn_steps", S.DnnlSteps},
          {"own_loops", S.OwnKernels},
          {"reorders", S.Reorders},
          {"fused_nodes", S.FusedNodes},
          {"views", S.AliasNodes},
          {"folded_nodes", S.FoldedNodes},
          {"arena_bytes", S.ArenaBytes},
          {"arena_bytes_without_reuse", S.NaiveBytes},
          {"packed_weight_bytes", S.WeightBytes},
          {"shapes",
           {{"compiled", S.Specializations},
            {"compile_ms", S.CompileMs},
            {"last_compile_ms", S.LastCompileMs},
            {"reshaped", S.Reshapes},
            {"reshape_refusal", S.ReshapeRefusal},
            {"weight_packs", S.WeightPacks},
            {"shared_weight_bytes", S.SharedWeightBytes},
            {"shared_arena_bytes", S.SharedArenaBytes},
            {"primitives", S.Primitives},
            {"primitive_hits", S.PrimitiveHits}}},
          {"proven_clamps", S.ProvenClamps},
          {"winograd_convs", S.WinogradConvs},
          {"guards", S.Guards},
          {"jit_kernels", S.JitKernels},
          {"jit", jitJson()},
          {"exact_reruns", S.ExactReruns},
          {"stages", stagesJson(S)},
          {"threads", {{"count", nng::numThreads()},
                       {"origin", nng::threadCountOrigin()},
                       {"last_run", S.RunThreads},
                       {"lanes", S.Lanes},
                       {"adaptive", nng::CpuContention::global().enabled()},
                       {"others_busy_cpus",
                        nng::CpuContention::global().othersBusy()}}},
          {"fallbacks", S.Fallbacks}};
}

} // namespace nng::tools
#endif
