//===- OpenMPStart.cpp - How libgomp was told to spin ---------------------===//
//
// OpenMPStart.h. The setting itself is libnngraph_openmp_spin.so's
// (runtime/start/OpenMPSpin.cpp), which programs that run models link.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/OpenMPStart.h"

#include <cstdlib>

extern "C" __attribute__((weak)) int nng_openmp_spin_set_at_start;

namespace nng {

std::string describeOpenMPSpin() {
  if (&nng_openmp_spin_set_at_start && nng_openmp_spin_set_at_start)
    return std::string("GOMP_SPINCOUNT=") + OpenMPSpinDefault +
           " (nngraph's default, set at start)";
  if (const char *S = std::getenv("GOMP_SPINCOUNT"))
    return std::string("GOMP_SPINCOUNT=") + S + " (the environment's)";
  if (const char *P = std::getenv("OMP_WAIT_POLICY"))
    return std::string("OMP_WAIT_POLICY=") + P + " (the environment's)";
  return "libgomp's default";
}

} // namespace nng
