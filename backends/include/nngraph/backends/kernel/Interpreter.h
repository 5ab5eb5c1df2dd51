//===- Interpreter.h - Runs kernel IR on host buffers -----------*- C++ -*-===//
//
// A plain C++ interpreter of the kernel IR: the oracle the code generators
// are tested against. It computes the way the reference backend computes an
// unfused graph: f32 arithmetic rounds after every op, the math functions
// (exp, log, tanh, erf, sigmoid, pow, rsqrt) are evaluated in double and
// rounded once, f32 sums accumulate in double; i32 is exact with wrapping.
// It is slow (one instruction at a time) and meant for tests and debugging.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"

namespace nng::backends::kernel {

/// Runs K over the domain of sizes Sizes. Buffers holds one pointer per
/// buffer parameter (in order; the element type is the parameter's);
/// Strides, when not empty, holds the element strides of every buffer
/// along every domain dim (buffer-major, as rowMajorStrides returns them);
/// empty means row-major. Throws Error on bad arguments (checkLaunch).
void interpretKernel(const Kernel &K, std::span<void *const> Buffers,
                     std::span<const int64_t> Sizes,
                     std::span<const int64_t> Strides = {});

} // namespace nng::backends::kernel
