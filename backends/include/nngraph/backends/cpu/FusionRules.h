//===- FusionRules.h - The cpu backend's fusion rules on the graph -*- C++ -*-===//
//
// The first stage of the cpu backend's compile: what it fuses into a
// library primitive is decided on the graph, by rules that make the fused
// nodes explicit, before layouts, speculation, emission and the memory
// plan. Pure graph code (no oneDNN): the `cpu-fuse-epilogues` pass runs the
// same rule in a pipeline (before form-fused-regions), and compileCpu runs
// it on its copy of every graph, so a graph that ran no pipeline fuses too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nng::backends::cpu {

/// Called for each candidate a rule declines: the product node, the
/// statistic it counts under ("declined-two-consumers") and why, in words.
using FusionDeclineFn = std::function<void(
    const ir::Node &Product, std::string_view Stat, const std::string &Why)>;

/// What fuseConvEpilogues did.
struct EpilogueFusionCounts {
  int64_t Fused = 0;       ///< Convolutions that became a FusedConv.
  int64_t Sums = 0;        ///< Residual Adds fused into them.
  int64_t Activations = 0; ///< Activations fused into them.
};

/// The convolution epilogue rule: Conv, then a residual Add, then an
/// activation, each optional but one, becomes one nng.FusedConv whose Sum
/// input is the residual and whose 'activation' is the activation's
/// ('Identity' for none). The Add fuses when it is the Conv result's only
/// reader (not a graph output), adds an f32 value of the same static or
/// symbolic shape defined before the Conv in node order; the activation
/// when it is the only reader of what came before and oneDNN's post-op (or
/// the backend's own loop after the primitive) computes it as the reference
/// does: Relu, LeakyRelu, Tanh, Elu, HardSwish, Gelu, Clip with constant
/// f32 scalar bounds. Only Conv nodes the lowering makes one primitive are
/// candidates: f32 3-d or 4-d input, weights known at compile time, not
/// a 1-d depthwise convolution (the backend's own loop). Recurses into
/// regions (If branches, Loop and Scan bodies), not into fused regions.
EpilogueFusionCounts fuseConvEpilogues(ir::Graph &G,
                                       const FusionDeclineFn &Declined = {});

} // namespace nng::backends::cpu
