//===- FastKernels.h - f32 loops of the cpu backend (internal) -*- C++ -*-===//
//
// Kernels the cpu backend prefers to both oneDNN and the reference kernel
// for some f32 ops (FastKernels.cpp); each hands whatever it does not
// serve to a fallback kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../reference/Interpreter.h"

namespace nng::backends::cpu {

/// The fast kernel of N, which calls Fallback for inputs it does not
/// serve; null when N's op has none.
reference::NodeKernel fastKernelFor(const ir::Node &N,
                                    reference::NodeKernel Fallback);

/// MaxPool and nng.MaxPoolGrad on f32 (FastPool.cpp): false when the loops
/// do not serve C (the caller falls back).
bool runFastMaxPool(reference::KernelContext &C);
bool runFastMaxPoolGrad(reference::KernelContext &C);

/// Calls the fast kernels served themselves since the process started.
int64_t fastCallCount();

} // namespace nng::backends::cpu
