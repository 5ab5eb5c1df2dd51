//===- BuildInfo.cpp - Version and configuration of this build -----------===//

#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/Parallel.h"

namespace nng {

const char *nngraphVersion() { return NNGRAPH_VERSION; }

std::string buildDescription() {
  auto YesNo = [](int V) { return V ? "yes" : "no"; };
  return std::string("nngraph ") + NNGRAPH_VERSION +
         " (oneDNN: " + YesNo(NNGRAPH_HAVE_ONEDNN) +
         ", LLVM 19: " + YesNo(NNGRAPH_HAVE_LLVM) +
         ", CUDA: " + YesNo(NNGRAPH_HAVE_CUDA) +
         ", OpenMP threads: " + std::to_string(numThreads()) + ")";
}

} // namespace nng
