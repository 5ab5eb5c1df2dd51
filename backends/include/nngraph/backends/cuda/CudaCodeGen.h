//===- CudaCodeGen.h - Kernel IR to CUDA C, compiled by NVRTC ---*- C++ -*-===//
//
// The cuda backend's half of the shared kernel IR (kernel/KernelIR.h):
// renderCuda writes a kernel as one CUDA C `__global__` function with the
// IR's semantics (the interpreter's: NaN-propagating max/min, wrapping i32
// arithmetic, x / 0 = 0, saturating f32 -> i32 casts, f16/bf16 loads and
// round-to-nearest-even stores, f32 reductions in a fixed order), one
// thread per outer point ("row") walking the inner dimension in order, so
// results are deterministic. compileWithNvrtc compiles it for a GPU
// architecture (sm_90: a cubin; compute_90: PTX) with NVRTC; it needs no
// GPU, so every build with the CUDA toolkit checks the generated code.
//
// The launch: grid-stride over rows; arguments are the buffers in the
// kernel's order, then one struct by value with the domain sizes and the
// buffers' element strides (buffer-major, as kernel::rowMajorStrides).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"

#include <string>

namespace nng::backends::cuda {

/// A kernel as CUDA C: the source and its extern "C" entry point.
struct CudaKernelSource {
  std::string Entry;
  std::string Code;
};

/// K as CUDA C (K must verify).
CudaKernelSource renderCuda(const kernel::Kernel &K);

/// True when this build has NVRTC (the CUDA toolkit was found).
bool nvrtcAvailable();
/// Compiles S with NVRTC for Arch ("sm_90" gives a cubin, "compute_90"
/// PTX) and returns the binary; throws Error (kind Unsupported without
/// NVRTC, else Internal with NVRTC's log and the source's line numbers).
std::string compileWithNvrtc(const CudaKernelSource &S,
                             const std::string &Arch = "sm_90");

} // namespace nng::backends::cuda
