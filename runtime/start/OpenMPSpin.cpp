//===- OpenMPSpin.cpp - libgomp's spin, chosen before it starts ----------===//
//
// The library libnngraph_openmp_spin.so: its initializer sets GOMP_SPINCOUNT
// to OpenMPSpinDefault (OpenMPStart.h) unless the environment sets it or
// OMP_WAIT_POLICY. libgomp reads them once, in its own initializer, so this
// one must run first: a program links it after libgomp
// (nngraph_openmp_spin_at_start in cmake/NngraphLibrary.cmake), and the
// dynamic loader initializes libraries that do not depend on each other in
// the reverse of their order in the program's needed list. The program's
// own code runs too late (libgomp is loaded and initialized before it), and
// so does a .preinit_array entry's setenv (the C library resets the
// environment after it). Nothing here needs nngraph's other code.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/OpenMPStart.h"

#include <cstdlib>

/// 1 once the initializer set GOMP_SPINCOUNT (describeOpenMPSpin reads it
/// through a weak reference: programs without this library lack it).
extern "C" {
__attribute__((visibility("default"))) int nng_openmp_spin_set_at_start = 0;
}

namespace {

__attribute__((constructor)) void setSpinBeforeLibgomp() {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY"))
    return;
  if (setenv("GOMP_SPINCOUNT", nng::OpenMPSpinDefault, 0) == 0)
    nng_openmp_spin_set_at_start = 1;
}

} // namespace
