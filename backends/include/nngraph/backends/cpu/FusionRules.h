//===- FusionRules.h - The cpu backend's fusion rules on the graph -*- C++ -*-===//
//
// The first stage of the cpu backend's compile: what it fuses into a
// library primitive is decided on the graph, by rules that make the fused
// nodes explicit, before layouts, speculation, emission and the memory
// plan. Pure graph code (no oneDNN): the `cpu-fuse-epilogues` pass runs the
// same rules in a pipeline (before form-fused-regions), and compileCpu runs
// them on its copy of every graph, so a graph that ran no pipeline fuses
// too. Convolutions become nng.FusedConv (rules/FuseEpilogues.cpp), linear
// layers' products nng.FusedMatMul (rules/FuseProducts.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace nng::passes {
class Pass;
} // namespace nng::passes

namespace nng::backends::cpu {

/// Called for each candidate a rule declines: the product node, the
/// statistic it counts under ("declined-two-consumers") and why, in words.
using FusionDeclineFn = std::function<void(
    const ir::Node &Product, std::string_view Stat, const std::string &Why)>;

/// What fuseConvEpilogues or fuseProductEpilogues did.
struct EpilogueFusionCounts {
  int64_t Fused = 0;       ///< Convolutions (products) that became fused nodes.
  int64_t Biases = 0;      ///< Bias Adds fused into products.
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

/// The product epilogue rule, the one place deciding what a product fuses:
/// a linear layer's product, then the Add of a bias vector, then a residual
/// Add, then an activation, each optional but one, becomes one
/// nng.FusedMatMul (Bias and Sum inputs, 'activation'). Candidates are the
/// products the lowering makes a linear layer: MatMul of an f32 value of
/// rank >= 2 by f32 [K, N] weights known at compile time, or such a Gemm
/// with alpha 1 and transA 0 whose C, if any, is a bias vector added with
/// beta 1 (its transB kept; a Gemm fuses only with a residual or an
/// activation). The bias Add (MatMul only) fuses when it is the product's
/// only reader and adds a constant f32 vector of N values ([N], [1, N],
/// ...); the residual Add and the activation as fuseConvEpilogues takes
/// them (sole readers, no graph outputs, a residual of the result's shape
/// defined before the product, the activations oneDNN's post-ops or the
/// backend's loops compute as the reference does). Recurses into regions,
/// not into fused regions.
EpilogueFusionCounts fuseProductEpilogues(ir::Graph &G,
                                          const FusionDeclineFn &Declined = {});

/// True when the cpu lowering may take N into the primitive of a quantized
/// product before it, so that N is no step of its own: the Cast to f32 of
/// an integer product's (ConvInteger, MatMulInteger) result, the Mul by the
/// scale, the Add of a bias and an activation after it (each the sole
/// reader of what precedes it); the Add of two DequantizeLinear results
/// one of which dequantizes a QLinearConv's, and the Relu after it
/// (rules/ProductTails.cpp). form-fused-regions leaves these nodes out of
/// its regions. The lowering checks the rest (scales, shapes, constants).
bool loweringTakesIntoProduct(const ir::Graph &G, const ir::Node &N);

/// Both rules as the pass `cpu-fuse-epilogues` (rules/FuseEpiloguesPass.cpp):
/// each decline counts under its reason and prints under
/// --debug-only=cpu-fuse-epilogues; statistics fused-convs, fused-products,
/// fused-biases, fused-sums and fused-activations.
std::unique_ptr<passes::Pass> createFuseEpiloguesPass();

} // namespace nng::backends::cpu
