//===- CpuStatsReport.h - The cpu --stats report ----------------*- C++ -*-===//
//
// What nngraph-run --stats, nngraph-bench --stats and the Python module's
// InferenceSession.stats() report about a cpu executable (steps, oneDNN
// primitives, reorders, fused nodes, the arena, the shapes compiled, the
// JIT), as text lines or as a JSON object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/BuildConfig.h"

#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace nng::tools {

/// Prints S as the "stats:", "memory:", "speculation:", "jit:" and
/// "fallback:" lines.
void printCpuStats(std::ostream &Out, const backends::CpuExecutableStats &S);

/// S as a JSON object (the "stats" member of the tools' --json reports).
nlohmann::json cpuStatsJson(const backends::CpuExecutableStats &S);

} // namespace nng::tools
#endif
