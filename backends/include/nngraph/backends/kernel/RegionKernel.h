//===- RegionKernel.h - A fused region's body as one kernel -----*- C++ -*-===//
//
// Translates the body of an nng.FusedRegion (ir/FusedRegion.h), instantiated
// with static shapes, into one kernel of the kernel IR: the domain is the
// shape of the region's outputs with size-1 axes dropped and neighbouring
// axes merged where every buffer follows both, adjacent and in order, or
// neither (a row region keeps the reduced last axis apart); each input
// follows the domain axes it does not broadcast along, permuted when the
// region reads it through a Transpose; scalar constants of the body are
// inline constants.
// Elementwise nodes become expressions evaluated at each point (recomputed
// in every block that needs them); a row reduction (Softmax, LogSoftmax,
// LayerNormalization over the last axis) becomes reductions over the inner
// axis followed by the loop storing the outputs. regionCanHold says which
// nodes the translator takes (both come from one table of graph ops in
// RegionKernel.cpp), so the pass that forms regions asks it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"
#include "nngraph/ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nng::backends::kernel {

/// True when node N (f32, its op and attributes) can be an elementwise
/// member of a fused region.
bool regionCanHoldElementwise(const ir::Node &N);
/// True when node N is a Transpose a fused region can hold: of a value from
/// outside the region (its loads become permuted).
bool regionCanHoldTranspose(const ir::Node &N);
/// True when node N is a row reduction a fused region can hold: Softmax or
/// LogSoftmax over the last axis, LayerNormalization over the last axis
/// whose mean and inverse-deviation outputs are unused.
bool regionCanHoldRowReduction(const ir::Node &N);

/// A fused region's kernel and how to launch it.
struct RegionKernel {
  Kernel K;
  /// The domain sizes (after merging axes).
  std::vector<int64_t> Sizes;
  /// Per domain dim: the axes of the region's shape it merges (Sizes[D] is
  /// the product of their extents). At other extents with the same axes of
  /// size 1 (in the region's shape and in each input's), the kernel is the
  /// same and its sizes are these products.
  std::vector<std::vector<size_t>> Groups;
  /// Per kernel buffer: the index of the body input it reads (>= 0), or
  /// -1 - I for body output I.
  std::vector<int> Binding;
};

/// The kernel of Body, whose inputs and outputs all have static shapes.
/// Throws Error (kind Unsupported) saying which node or value it cannot
/// translate.
RegionKernel buildRegionKernel(const ir::Graph &Body, std::string Name);

} // namespace nng::backends::kernel
