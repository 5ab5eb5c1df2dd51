//===- KernelTestUtils.h - Kernels and buffers for kernel IR tests -*- C++
//-*-===//
//
// Shared by KernelIRTest, JitTest, JitMathTest and JitCacheTest: typed host
// buffers (f32, f16, bf16, i32 held as bytes, read and written as float or
// int), the JIT the tests use, and comparisons in ulp; the kernels of the
// fused regions the JIT is for come from FusedRegionKernels.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FusedRegionKernels.h"

#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/kernel/Interpreter.h"
#include "nngraph/backends/kernel/KernelIR.h"
#include "nngraph/runtime/Half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace nng::kerneltest {

using namespace nng::backends::kernel;

/// A host buffer of N elements of type T.
struct HostBuffer {
  DType T = DType::F32;
  std::vector<char> Bytes;

  HostBuffer() = default;
  HostBuffer(DType T, size_t N) : T(T), Bytes(N * dtypeSize(T) + 1, 0) {}
  size_t size() const { return (Bytes.size() - 1) / dtypeSize(T); }
  void *data() { return Bytes.data(); }

  float get(size_t I) const {
    switch (T) {
    case DType::F16: {
      uint16_t H;
      std::memcpy(&H, Bytes.data() + 2 * I, 2);
      return halfBitsToFloat(H);
    }
    case DType::BF16: {
      uint16_t H;
      std::memcpy(&H, Bytes.data() + 2 * I, 2);
      return static_cast<float>(BFloat16::fromBits(H));
    }
    case DType::I32:
      return static_cast<float>(geti(I));
    default: {
      float F;
      std::memcpy(&F, Bytes.data() + 4 * I, 4);
      return F;
    }
    }
  }
  int32_t geti(size_t I) const {
    int32_t V;
    std::memcpy(&V, Bytes.data() + 4 * I, 4);
    return V;
  }
  void set(size_t I, float F) {
    switch (T) {
    case DType::F16: {
      uint16_t H = floatToHalfBits(F);
      std::memcpy(Bytes.data() + 2 * I, &H, 2);
      break;
    }
    case DType::BF16: {
      uint16_t H = BFloat16(F).Bits;
      std::memcpy(Bytes.data() + 2 * I, &H, 2);
      break;
    }
    case DType::I32:
      seti(I, static_cast<int32_t>(F));
      break;
    default:
      std::memcpy(Bytes.data() + 4 * I, &F, 4);
    }
  }
  void seti(size_t I, int32_t V) { std::memcpy(Bytes.data() + 4 * I, &V, 4); }
};

/// Random values in [Lo, Hi) for float buffers, [-50, 50] for i32.
inline void fillRandom(HostBuffer &B, std::mt19937 &R, float Lo = -3,
                       float Hi = 3) {
  std::uniform_real_distribution<float> U(Lo, Hi);
  std::uniform_int_distribution<int32_t> UI(-50, 50);
  for (size_t I = 0; I < B.size(); ++I)
    B.T == DType::I32 ? B.seti(I, UI(R)) : B.set(I, U(R));
}

/// The number of elements of buffer B of K for domain sizes S.
inline size_t elementsOf(const Kernel &K, int B,
                         const std::vector<int64_t> &S) {
  size_t N = 1;
  for (int D : K.Buffers[B].Dims)
    N *= static_cast<size_t>(S[D]);
  return N;
}

/// Buffers for K at sizes S, inputs filled randomly, outputs zero.
inline std::vector<HostBuffer> makeBuffers(const Kernel &K,
                                           const std::vector<int64_t> &S,
                                           std::mt19937 &R, float Lo = -3,
                                           float Hi = 3) {
  std::vector<HostBuffer> Bs;
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    Bs.emplace_back(K.Buffers[B].Type, elementsOf(K, B, S));
    if (!K.Buffers[B].IsOutput)
      fillRandom(Bs.back(), R, Lo, Hi);
  }
  return Bs;
}

inline std::vector<void *> pointers(std::vector<HostBuffer> &Bs) {
  std::vector<void *> P;
  for (HostBuffer &B : Bs)
    P.push_back(B.data());
  return P;
}

/// Distance in representable floats (0 for equal values, both NaN, or
/// +0/-0); huge for NaN against a number.
inline int64_t ulpDistance(float A, float B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B) ? 0 : INT64_MAX;
  auto Key = [](float F) {
    int32_t I = std::bit_cast<int32_t>(F);
    return I < 0 ? int64_t(INT32_MIN) - I : int64_t(I);
  };
  return std::abs(Key(A) - Key(B));
}

/// The JIT the tests use: no disk cache (JitCacheTest makes its own), so
/// tests leave nothing in the user's cache folder.
inline backends::cpu::KernelJit &testJit() {
  static backends::cpu::KernelJit *J = [] {
    backends::cpu::JitOptions O;
    O.DiskCache = false;
    return new backends::cpu::KernelJit(O);
  }();
  return *J;
}

/// Skips the test in builds without LLVM.
#define NNG_REQUIRE_JIT()                                                      \
  do {                                                                         \
    if (!::nng::backends::cpu::kernelJitAvailable())                           \
      GTEST_SKIP() << "built without LLVM (NNGRAPH_ENABLE_LLVM=OFF): no "      \
                      "kernel JIT";                                            \
  } while (false)

/// Runs K through the interpreter and the JIT on copies of the same inputs
/// and returns both buffer sets.
struct BothRuns {
  std::vector<HostBuffer> Interp, Jit;
};
inline BothRuns runBoth(const Kernel &K, const std::vector<int64_t> &Sizes,
                        std::vector<HostBuffer> Inputs,
                        std::span<const int64_t> Strides = {}) {
  BothRuns R{Inputs, Inputs};
  std::vector<void *> PI = pointers(R.Interp), PJ = pointers(R.Jit);
  interpretKernel(K, PI, Sizes, Strides);
  testJit().compile(K)->run(PJ, Sizes, Strides);
  return R;
}

/// Expects the outputs of R to agree: NaN where NaN, equal infinities, and
/// |jit - interp| <= Atol + Rtol * |interp| (Rtol scaled up for f16/bf16
/// outputs by their precision). i32 outputs must be equal.
inline void expectClose(const Kernel &K, const BothRuns &R, double Rtol = 1e-5,
                        double Atol = 1e-6, const std::string &What = "") {
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    if (!K.Buffers[B].IsOutput)
      continue;
    const HostBuffer &I = R.Interp[B], &J = R.Jit[B];
    double Rt = Rtol, At = Atol;
    if (I.T == DType::F16)
      Rt = std::max(Rt, 2e-3), At = std::max(At, 1e-4);
    if (I.T == DType::BF16)
      Rt = std::max(Rt, 1.6e-2), At = std::max(At, 1e-3);
    int Bad = 0;
    for (size_t E = 0; E < I.size() && Bad < 5; ++E) {
      if (I.T == DType::I32) {
        if (I.geti(E) != J.geti(E)) {
          ++Bad;
          ADD_FAILURE() << What << " %" << K.Buffers[B].Name << "[" << E
                        << "]: jit " << J.geti(E) << ", interpreter "
                        << I.geti(E);
        }
        continue;
      }
      float A = J.get(E), Ref = I.get(E);
      bool Ok = std::isnan(Ref)   ? std::isnan(A)
                : std::isinf(Ref) ? A == Ref
                                  : std::fabs(double(A) - Ref) <=
                                        At + Rt * std::fabs(double(Ref));
      if (!Ok) {
        ++Bad;
        ADD_FAILURE() << What << " %" << K.Buffers[B].Name << "[" << E
                      << "]: jit " << A << ", interpreter " << Ref;
      }
    }
  }
}

} // namespace nng::kerneltest
