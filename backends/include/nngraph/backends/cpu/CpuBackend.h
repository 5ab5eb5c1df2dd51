//===- CpuBackend.h - The CPU backend (oneDNN) -----------------*- C++ -*-===//
//
// The "cpu" backend runs a graph with the reference backend's run loop but
// serves conv, matmul, pooling, their gradients and the hottest f32
// elementwise, reduction, softmax and batch-norm ops with oneDNN primitives,
// cached per node by input shapes. Whatever a primitive cannot compute
// exactly as the reference kernel does (dtype, attribute, shape, NaN inputs
// to a max) runs on the reference kernel. Exists only in builds with
// NNGRAPH_HAVE_ONEDNN (nngraph/runtime/BuildConfig.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"

namespace nng::backends {

/// The CPU backend singleton (only in builds with oneDNN).
Backend &cpuBackend();

/// True when the CPU backend would serve N with a oneDNN kernel (its
/// attributes allow it; inputs may still fall back at run time).
bool cpuServesWithDnnl(const ir::Node &N);

/// Calls of oneDNN-served nodes since the process started (all threads):
/// how many ran a primitive and how many fell back to the reference kernel;
/// and how many calls the backend's own f32 loops (ReduceSum, ReduceMean,
/// Expand, Transpose) served.
struct CpuCallCounts {
  int64_t Dnnl = 0, Fallback = 0, Fast = 0;
};
CpuCallCounts cpuCallCounts();

} // namespace nng::backends
