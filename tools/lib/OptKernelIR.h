//===- OptKernelIR.h - nngraph-opt --kernel-ir ------------------*- C++ -*-===//
//
// The kernel-IR mode of nngraph-opt: the input is a kernel in the kernel
// IR's text form (what `--emit kernel` prints); it is parsed, verified and
// printed again, and optionally run on the kernel interpreter with given
// domain sizes and input values, its outputs printed as comments after it.
// Private to the tools library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace nng::tools {

/// What --kernel-ir reads and runs.
struct KernelIROptions {
  /// Domain sizes to interpret the kernel with; empty: print only.
  std::vector<int64_t> Sizes;
  /// "NAME=V,V,..." per input buffer (row-major over its own axes).
  std::vector<std::string> Inputs;
};

/// Parses and verifies Text (named Name in messages), then returns its
/// printed form, followed, when O.Sizes is given, by "# %OUT: TYPE[SHAPE] =
/// [V, ...]" for each output. Throws Error on any failure.
std::string runKernelIR(const std::string &Text, const std::string &Name,
                        const KernelIROptions &O);

} // namespace nng::tools
