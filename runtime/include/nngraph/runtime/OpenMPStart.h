//===- OpenMPStart.h - libgomp's spin, chosen before it starts ---*- C++ -*-===//
//
// libgomp (OpenMP; Debian's oneDNN and parallelFor run on it) reads how long
// its idle threads spin (GOMP_SPINCOUNT, OMP_WAIT_POLICY) once, when it is
// loaded, and has no call that changes it later. Its default spins about
// 5 ms after every parallel region, so a process waiting for its next
// request burns that much of a core after each run. nngraph's programs
// link libnngraph_openmp_spin.so (runtime/start/OpenMPSpin.cpp), whose
// initializer sets a shorter spin before libgomp's runs; the Python package
// sets it before it loads its extension, when nothing has loaded libgomp
// yet. A value the user set is kept.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace nng {

/// The spin count nngraph's programs give libgomp (GOMP_SPINCOUNT), as
/// text: long enough to bridge the steps of one run, short enough that an
/// idle process stops spinning within about a millisecond.
inline constexpr const char *OpenMPSpinDefault = "20000";

/// How libgomp was told to spin: "GOMP_SPINCOUNT=20000 (nngraph's default,
/// set at start)", "GOMP_SPINCOUNT=... (the environment's)",
/// "OMP_WAIT_POLICY=... (the environment's)" or "libgomp's default".
std::string describeOpenMPSpin();

} // namespace nng
