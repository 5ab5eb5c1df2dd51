//===- KernelTestUtils.h - Kernels and buffers for kernel IR tests -*- C++
//-*-===//
//
// Shared by KernelIRTest, JitTest, JitMathTest and JitCacheTest: typed host
// buffers (f32, f16, bf16, i32 held as bytes, read and written as float or
// int), the kernels of the fused regions the JIT is for (softmax, layer
// normalization, mean/variance, GELU, a broadcasting bias + residual + relu
// chain), and comparisons in ulp.
//
//===----------------------------------------------------------------------===//
#pragma once

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

// --- The kernels of typical fused regions ------------------------------------

/// softmax over the last axis, with the reference's row maximum (0 when it
/// is not finite).
/// The sum over C of x[N, C, HW] as the permuted domain [N, HW, C] (x
/// follows [d0, d2, d1]; the inner loads are a gather with stride HW).
inline Kernel sumOverCKernel() {
  KernelBuilder B("sum_c", 3);
  int X = B.input("x", DType::F32, {0, 2, 1});
  int Y = B.output("y", DType::F32, {0, 1});
  B.beginReduce(ReduceKind::Add);
  B.store(Y, B.endReduce(B.load(X)));
  return B.finish();
}

inline Kernel softmaxKernel(DType T) {
  KernelBuilder B("softmax", 2);
  int X = B.input("x", T, {0, 1});
  int Y = B.output("y", T, {0, 1});
  B.beginReduce(ReduceKind::Max);
  Value M = B.endReduce(B.load(X), "m");
  Value Finite = B.binary(Op::Lt, B.unary(Op::Abs, M), B.constF32(INFINITY));
  Value Ms = B.select(Finite, M, B.constF32(0));
  B.beginReduce(ReduceKind::Add);
  Value S = B.endReduce(B.exp(B.sub(B.load(X), Ms)), "s");
  B.beginLoop();
  B.store(Y, B.div(B.exp(B.sub(B.load(X), Ms)), S));
  B.endLoop();
  return B.finish();
}

/// LayerNorm over the last axis: (x - mean) * rsqrt(var + eps) * g + b.
inline Kernel layerNormKernel(DType T, float Eps = 1e-5f) {
  KernelBuilder B("layernorm", 2);
  int X = B.input("x", T, {0, 1});
  int G = B.input("gamma", T, {1});
  int Bi = B.input("beta", T, {1});
  int Y = B.output("y", T, {0, 1});
  Value N = B.cast(B.dimSize(1), ScalarType::F32);
  B.beginReduce(ReduceKind::Add);
  Value Sum = B.endReduce(B.load(X), "sum");
  Value Mean = B.div(Sum, N);
  B.setName(Mean, "mean");
  B.beginReduce(ReduceKind::Add);
  Value D = B.sub(B.load(X), Mean);
  Value Sq = B.endReduce(B.mul(D, D), "sq");
  Value Inv = B.unary(Op::Rsqrt, B.add(B.div(Sq, N), B.constF32(Eps)));
  B.setName(Inv, "inv");
  B.beginLoop();
  // One operand per statement: C++ leaves the order of arguments open.
  Value Xc = B.sub(B.load(X), Mean);
  Value Xn = B.mul(Xc, Inv);
  Value Yv = B.mul(Xn, B.load(G));
  Yv = B.add(Yv, B.load(Bi));
  B.store(Y, Yv);
  B.endLoop();
  return B.finish();
}

/// Mean and (population) variance of each row, stored per row.
inline Kernel meanVarKernel(DType T) {
  KernelBuilder B("meanvar", 2);
  int X = B.input("x", T, {0, 1});
  int Mo = B.output("mean", T, {0});
  int Vo = B.output("var", T, {0});
  Value N = B.cast(B.dimSize(1), ScalarType::F32);
  B.beginReduce(ReduceKind::Add);
  Value Mean = B.div(B.endReduce(B.load(X)), N);
  B.beginReduce(ReduceKind::Add);
  Value D = B.sub(B.load(X), Mean);
  Value Var = B.div(B.endReduce(B.mul(D, D)), N);
  B.store(Mo, Mean);
  B.store(Vo, Var);
  return B.finish();
}

/// GELU (erf form): 0.5 x (1 + erf(x / sqrt 2)), elementwise over [d0].
inline Kernel geluKernel(DType T) {
  KernelBuilder B("gelu", 1);
  int X = B.input("x", T, {0});
  int Y = B.output("y", T, {0});
  B.beginLoop();
  Value V = B.load(X);
  Value E = B.unary(Op::Erf, B.mul(V, B.constF32(0.70710678118654752f)));
  B.store(Y, B.mul(B.mul(V, B.constF32(0.5f)), B.add(B.constF32(1.0f), E)));
  B.endLoop();
  return B.finish();
}

/// relu(x + bias + residual): bias [d2] broadcast over [d0, d1, d2], two
/// outputs (the sum before and after relu).
inline Kernel biasResidualReluKernel(DType T) {
  KernelBuilder B("bias_res_relu", 3);
  int X = B.input("x", T, {0, 1, 2});
  int Bias = B.input("bias", T, {2});
  int Res = B.input("res", T, {0, 1, 2});
  int S = B.output("sum", T, {0, 1, 2});
  int Y = B.output("y", T, {0, 1, 2});
  B.beginLoop();
  Value Sum = B.add(B.add(B.load(X), B.load(Bias)), B.load(Res));
  B.store(S, Sum);
  B.store(Y, B.max(Sum, B.constF32(0)));
  B.endLoop();
  return B.finish();
}

} // namespace nng::kerneltest
