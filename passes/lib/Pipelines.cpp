//===- Pipelines.cpp - Optimization presets -O0, -O1, -O2 -----------------===//
//
// The preset tables and their filtering by the pass registry.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Pipelines.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"

#include <sstream>

namespace nng::passes {

const std::vector<std::string> &presetPassNames(int Level) {
  static const std::vector<std::string> Presets[MaxOptLevel + 1] = {
      /*-O0*/ {},
      /*-O1*/ {"canonicalize", "cse", "dce"},
      /*-O2*/
      {"shape-infer", "fuse-qdq", "canonicalize", "fold-conv-bn",
       "fold-conv-mul-add",
       "fuse-pad-into-conv", "fuse-transposes", "constant-reshape-targets",
       "fuse-reshapes",
       "recover-layernorm", "recover-gelu", "fuse-attention", "fuse-matmul-add",
       "cse",
       "dedup-initializers", "canonicalize", "dce", "form-fused-regions"},
  };
  NNG_CHECK(Level >= 0 && Level <= MaxOptLevel, "unknown optimization level ",
            Level, "; valid levels: 0, 1, 2");
  return Presets[Level];
}

std::string presetPipeline(int Level) {
  std::string S;
  for (const std::string &Name : presetPassNames(Level)) {
    if (!lookupPass(Name))
      continue;
    if (!S.empty())
      S += ',';
    S += Name;
  }
  return S;
}

std::vector<std::string> presetSkippedPasses(int Level) {
  std::vector<std::string> Skipped;
  for (const std::string &Name : presetPassNames(Level))
    if (!lookupPass(Name))
      Skipped.push_back(Name);
  return Skipped;
}

std::string describePresets() {
  std::ostringstream OS;
  for (int L = 0; L <= MaxOptLevel; ++L) {
    std::string P = presetPipeline(L);
    OS << "  -O" << L << "  " << (P.empty() ? "(no passes)" : P) << "\n";
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

} // namespace nng::passes
