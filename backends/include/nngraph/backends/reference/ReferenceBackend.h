//===- ReferenceBackend.h - The interpreter that is the oracle ---*- C++ -*-===//
//
// The reference backend interprets a graph node by node with simple,
// obviously correct kernels (full broadcasting, every dtype the op allows).
// Every other backend and every pass is checked against it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/Backend.h"

namespace nng::backends {

/// The reference backend singleton.
Backend &referenceBackend();

/// Runs G on the reference backend once (compile + run).
std::vector<rt::Tensor> runReference(const ir::Graph &G,
                                      const std::vector<rt::Tensor> &Inputs);

} // namespace nng::backends
