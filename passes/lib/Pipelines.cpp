//===- Pipelines.cpp - Optimization presets -O0, -O1, -O2 -----------------===//
//
// The generic preset tables, the backends' own passes appended to them,
// their filtering by the pass registry, and the resolver of pipeline
// strings that names a level.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Pipelines.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <sstream>

namespace nng::passes {

std::string_view defaultPipelineBackend() {
  std::vector<std::string> Names = backends::backendNames();
  return std::find(Names.begin(), Names.end(), "cpu") != Names.end()
             ? "cpu"
             : "reference";
}

const std::vector<std::string> &genericPresetPassNames(int Level) {
  static const std::vector<std::string> Presets[MaxOptLevel + 1] = {
      /*-O0*/ {},
      /*-O1*/ {"canonicalize", "cse", "dce"},
      /*-O2*/
      {"shape-infer", "fuse-qdq", "canonicalize", "fold-conv-bn",
       "fold-conv-mul-add", "fuse-pad-into-conv", "fuse-transposes",
       "constant-reshape-targets", "fuse-reshapes", "recover-layernorm",
       "recover-gelu", "recover-hardswish", "fuse-attention",
       "fuse-matmul-add", "cse", "dedup-initializers", "canonicalize", "dce"},
  };
  NNG_CHECK(Level >= 0 && Level <= MaxOptLevel, "unknown optimization level ",
            Level, "; valid levels: 0, 1, 2");
  return Presets[Level];
}

std::vector<std::string> presetPassNames(int Level, std::string_view Backend) {
  std::vector<std::string> Names = genericPresetPassNames(Level);
  const backends::Backend &B = backends::getBackend(
      Backend.empty() ? defaultPipelineBackend() : Backend);
  for (std::string &Name : B.pipelinePasses(Level))
    Names.push_back(std::move(Name));
  return Names;
}

std::string presetPipeline(int Level, std::string_view Backend) {
  std::string S;
  for (const std::string &Name : presetPassNames(Level, Backend)) {
    if (!lookupPass(Name))
      continue;
    if (!S.empty())
      S += ',';
    S += Name;
  }
  return S;
}

std::vector<std::string> presetSkippedPasses(int Level,
                                             std::string_view Backend) {
  std::vector<std::string> Skipped;
  for (const std::string &Name : presetPassNames(Level, Backend))
    if (!lookupPass(Name))
      Skipped.push_back(Name);
  return Skipped;
}

std::string describePresets() {
  std::ostringstream OS;
  std::string_view Default = defaultPipelineBackend();
  for (int L = 0; L <= MaxOptLevel; ++L) {
    std::string P = presetPipeline(L);
    OS << "  -O" << L << "  " << (P.empty() ? "(no passes)" : P) << "\n";
    // The other backends' pipelines where their own passes differ.
    for (const std::string &B : backends::backendNames()) {
      std::string Other = presetPipeline(L, B);
      if (B != Default && Other != P)
        OS << "       on " << B << ": "
           << (Other.empty() ? "(no passes)" : Other) << "\n";
    }
    std::vector<std::string> Skipped = presetSkippedPasses(L);
    if (!Skipped.empty()) {
      OS << "       note: skipped (not registered in this build): ";
      for (size_t I = 0; I < Skipped.size(); ++I)
        OS << (I ? ", " : "") << Skipped[I];
      OS << "\n";
    }
  }
  return OS.str();
}

std::optional<int> parseOptLevel(std::string_view Spec) {
  std::string_view S = Spec;
  if (S.starts_with("-O"))
    S.remove_prefix(2);
  else if (S.starts_with("O"))
    S.remove_prefix(1);
  if (S.empty() || S.size() > 3 || !std::all_of(S.begin(), S.end(), [](char C) {
        return C >= '0' && C <= '9';
      }))
    return std::nullopt;
  int Level = std::stoi(std::string(S));
  NNG_CHECK(Level <= MaxOptLevel, "unknown optimization level '", Spec,
            "'; valid levels: 0, 1, 2");
  return Level;
}

std::string resolvePipeline(std::string_view Spec, std::string_view Backend) {
  if (std::optional<int> Level = parseOptLevel(Spec))
    return presetPipeline(*Level, Backend);
  return std::string(Spec);
}

} // namespace nng::passes
