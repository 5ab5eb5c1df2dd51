//===- Interpreter.h - The node-by-node run loop (internal) ----*- C++ -*-===//
//
// The reference backend's run loop, shared with backends that serve some
// nodes with their own kernels (the CPU backend): a KernelChooser picks each
// node's kernel once, when the graph is compiled; the loop infers each
// node's output types from the concrete inputs, calls the chosen kernel,
// checks its outputs against the inferred types and frees values after
// their last use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Kernels.h"
#include "nngraph/backends/Backend.h"

#include <functional>
#include <memory>

namespace nng::backends::reference {

/// Runs one node: reads KernelContext's inputs and inferred output types,
/// fills its Outputs (like a reference kernel).
using NodeKernel = std::function<void(KernelContext &)>;

/// Picks the kernel of a node of the graph being compiled. The node lives as
/// long as the executable, so the kernel may keep a reference to it.
using KernelChooser = std::function<NodeKernel(const ir::Node &)>;

/// An executable that interprets G (already verified) node by node with the
/// kernels Choose picks; Name ("reference", "cpu") appears in its errors.
std::unique_ptr<Executable> makeInterpreter(std::unique_ptr<ir::Graph> G,
                                            const KernelChooser &Choose,
                                            std::string_view Name);

} // namespace nng::backends::reference
