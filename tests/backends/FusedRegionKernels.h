//===- FusedRegionKernels.h - Kernels of typical fused regions --*- C++ -*-===//
//
// The kernel IR of the fused regions the JIT and the CUDA code generator
// serve (softmax, layer normalization, mean/variance, GELU, a broadcasting
// bias + residual + relu chain, a column sum), built with KernelBuilder.
// Shared by the kernel IR, JIT and CUDA tests (KernelTestUtils.h,
// CudaTestKernels.h) and the CUDA device bundle; needs no test framework.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"

#include <cmath>

namespace nng::kerneltest {

using namespace nng::backends::kernel;

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

/// softmax over the last axis, with the reference's row maximum (0 when it
/// is not finite).
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
