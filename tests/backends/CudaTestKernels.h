//===- CudaTestKernels.h - The kernels of the CUDA tests --------*- C++ -*-===//
//
// The one list of kernels that CudaCodeGenTest renders and NVRTC-compiles
// and that the device bundle (tests/cuda-device, nngraph-cuda-bundle) runs
// on a GPU against the interpreter: the fused regions in f32, f16 and bf16
// buffers (FusedRegionKernels.h), every expression op on f32 and i32
// operands in one chain each and one output per op, every cast and
// reduction kind, strided and broadcast buffers, index/dim leaves, rank 1
// and rank 4. Each entry carries what a device run needs besides the
// kernel: domain sizes, input value ranges, whether inputs include special
// values (NaN, infinities, extremes), and a grid cap that makes the kernel's
// grid-stride loop take several rows per thread. No test framework needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FusedRegionKernels.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace nng::kerneltest {

/// The value range of one input buffer (by name) of a device run.
struct InputRange {
  std::string Buffer;
  float Lo = -3, Hi = 3;
};

/// A kernel of the CUDA code generator's tests and how a device run
/// launches it.
struct CudaTestKernel {
  std::string Label; ///< Unique in the list ("softmax_f16").
  Kernel K;
  std::vector<int64_t> Sizes; ///< The domain sizes of a device run.
  /// Input ranges other than the default: floats in [-3, 3), i32 in
  /// [-50, 50].
  std::vector<InputRange> Ranges;
  /// About one input element in 16 is a special value (f32: NaN, +-inf,
  /// +-0, +-1e30, subnormals; i32: INT_MIN, INT_MAX, 0, +-1, +-65536).
  bool Specials = false;
  unsigned MaxGrid = 0; ///< Most blocks a device run launches (0: enough).
};

/// The binary ops of f32 and i32 operands with a result of their type, and
/// the compares: the per-op kernels store one output of each, named by the
/// op table (opName).
inline constexpr Op NumericBinaryOps[] = {Op::Add, Op::Sub, Op::Mul,
                                          Op::Div, Op::Min, Op::Max};
inline constexpr Op CompareOps[] = {Op::Eq, Op::Ne, Op::Lt,
                                    Op::Le, Op::Gt, Op::Ge};

/// Every unary and binary op on f32 in one chain, compares into selects,
/// casts (y broadcast along d0).
inline Kernel f32OpsKernel() {
  KernelBuilder B("f32_ops", 2);
  int X = B.input("x", DType::F32, {0, 1});
  int Y = B.input("y", DType::F32, {1}); // Broadcast along d0.
  int Out = B.output("out", DType::F32, {0, 1});
  int OutI = B.output("out_i", DType::I32, {0, 1});
  B.beginLoop();
  Value A = B.load(X), C = B.load(Y), Acc = B.constF32(0.5f);
  for (Op O : {Op::Neg, Op::Abs, Op::Exp, Op::Log, Op::Tanh, Op::Erf, Op::Sqrt,
               Op::Rsqrt, Op::Sigmoid})
    Acc = B.add(Acc, B.unary(O, A));
  for (Op O : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max, Op::Pow})
    Acc = B.add(Acc, B.binary(O, A, C));
  for (Op O : {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge}) {
    Value Cond = B.binary(O, A, C);
    Cond =
        B.binary(Op::And, Cond,
                 B.unary(Op::Not, B.binary(Op::Or, Cond, B.constBool(false))));
    Acc = B.select(Cond, Acc,
                   B.constF32(-std::numeric_limits<float>::infinity()));
  }
  Acc = B.add(Acc, B.constF32(std::numeric_limits<float>::quiet_NaN()));
  Value AsInt = B.cast(Acc, ScalarType::I32);
  Value AsBool = B.cast(Acc, ScalarType::Bool);
  Acc = B.add(Acc, B.cast(AsBool, ScalarType::F32));
  B.store(Out, Acc);
  B.store(OutI, AsInt);
  B.endLoop();
  return B.finish();
}

/// i32: wrapping arithmetic, division, min/max, compares, casts, index and
/// dim leaves, row scalars stored to an output that does not follow d1.
inline Kernel i32OpsKernel() {
  KernelBuilder B("i32_ops", 2);
  int X = B.input("x", DType::I32, {0, 1});
  int Out = B.output("out", DType::I32, {0, 1});
  int RowOut = B.output("row_out", DType::F32, {0});
  B.beginReduce(ReduceKind::Max);
  Value RowMax = B.endReduce(B.load(X), "rowmax");
  B.beginReduce(ReduceKind::Min);
  Value RowMin = B.endReduce(B.load(X), "rowmin");
  B.beginReduce(ReduceKind::Add);
  Value RowSum = B.endReduce(B.load(X), "rowsum");
  Value Row = B.add(B.add(RowMax, RowMin), B.add(RowSum, B.index(0)));
  B.store(RowOut, B.cast(Row, ScalarType::F32));
  B.beginLoop();
  Value A = B.load(X), Acc = B.constI32(INT32_MIN);
  for (Op O : {Op::Neg, Op::Abs})
    Acc = B.add(Acc, B.unary(O, A));
  for (Op O : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max})
    Acc = B.binary(O, Acc, B.add(A, B.index(1)));
  Value Cond = B.binary(Op::Lt, Acc, B.dimSize(1));
  Acc = B.select(Cond, Acc,
                 B.cast(B.cast(Acc, ScalarType::F32), ScalarType::I32));
  Acc = B.add(Acc, B.cast(B.cast(Acc, ScalarType::Bool), ScalarType::I32));
  B.store(Out, Acc);
  B.endLoop();
  return B.finish();
}

/// f32 reductions of every kind, a strided (transposed) input, a bf16
/// input broadcast along d1 and d2, an f16 output, rank 4.
inline Kernel reduceStridedKernel() {
  KernelBuilder B("reduce_strided", 4);
  int X = B.input("x", DType::F32, {3, 2, 1, 0}, Layout::Strided);
  int Y = B.input("y", DType::BF16, {0, 3});
  int Out = B.output("out", DType::F16, {0, 1, 2, 3});
  B.beginReduce(ReduceKind::Max);
  Value M = B.endReduce(B.load(X), "m");
  B.beginReduce(ReduceKind::Min);
  Value N = B.endReduce(B.load(Y), "n");
  B.beginReduce(ReduceKind::Add);
  Value S = B.endReduce(B.sub(B.load(X), M), "s");
  B.beginLoop();
  B.store(Out, B.div(B.add(B.load(X), N), S));
  B.endLoop();
  return B.finish();
}

/// Rank 1: no outer dims, one row.
inline Kernel rank1Kernel() {
  KernelBuilder B("rank1", 1);
  int X = B.input("x", DType::F32, {0});
  int Out = B.output("out", DType::F32, {0});
  B.beginLoop();
  B.store(Out, B.exp(B.load(X)));
  B.endLoop();
  return B.finish();
}

/// One f32 output per op, so a device run reports each op's error alone:
/// the unary ops of x (log, sqrt and rsqrt of the positive p), the binary
/// ops of x and y (pow of p and y, and of x and an integral y), compares
/// and logic stored as i32, casts to i32 (truncating and saturating) and
/// through bool.
inline Kernel f32EachOpKernel() {
  KernelBuilder B("f32_each_op", 2);
  int X = B.input("x", DType::F32, {0, 1});
  int Y = B.input("y", DType::F32, {0, 1});
  int P = B.input("p", DType::F32, {0, 1});
  const Op Unary[] = {Op::Neg, Op::Abs,  Op::Exp,   Op::Log,    Op::Tanh,
                      Op::Erf, Op::Sqrt, Op::Rsqrt, Op::Sigmoid};
  std::vector<int> UnaryOut, BinaryOut, CompareOut;
  for (Op O : Unary)
    UnaryOut.push_back(B.output(std::string(opName(O)), DType::F32, {0, 1}));
  for (Op O : NumericBinaryOps)
    BinaryOut.push_back(B.output(std::string(opName(O)), DType::F32, {0, 1}));
  int PowP = B.output("pow_py", DType::F32, {0, 1});
  int PowX = B.output("pow_x_int", DType::F32, {0, 1});
  for (Op O : CompareOps)
    CompareOut.push_back(B.output(std::string(opName(O)), DType::I32, {0, 1}));
  int Logic = B.output("and_or_not", DType::I32, {0, 1});
  int ToI = B.output("cast_i32", DType::I32, {0, 1});
  int ToISat = B.output("cast_i32_sat", DType::I32, {0, 1});
  int ViaBool = B.output("cast_bool_f32", DType::F32, {0, 1});
  int Sel = B.output("select", DType::F32, {0, 1});
  B.beginLoop();
  Value A = B.load(X), C = B.load(Y), Pos = B.load(P);
  for (size_t I = 0; I < std::size(Unary); ++I) {
    Op O = Unary[I];
    bool NeedsPositive = O == Op::Log || O == Op::Sqrt || O == Op::Rsqrt;
    B.store(UnaryOut[I], B.unary(O, NeedsPositive ? Pos : A));
  }
  for (size_t I = 0; I < std::size(NumericBinaryOps); ++I)
    B.store(BinaryOut[I], B.binary(NumericBinaryOps[I], A, C));
  B.store(PowP, B.binary(Op::Pow, Pos, C));
  Value IntY = B.cast(B.cast(C, ScalarType::I32), ScalarType::F32);
  B.store(PowX, B.binary(Op::Pow, A, IntY));
  std::vector<Value> Conds;
  for (size_t I = 0; I < std::size(CompareOps); ++I) {
    Conds.push_back(B.binary(CompareOps[I], A, C));
    B.store(CompareOut[I], B.cast(Conds.back(), ScalarType::I32));
  }
  Value L = B.binary(Op::Or, B.binary(Op::And, Conds[2], Conds[1]),
                     B.unary(Op::Not, Conds[5]));
  B.store(Logic, B.cast(L, ScalarType::I32));
  B.store(ToI, B.cast(A, ScalarType::I32));
  B.store(ToISat, B.cast(B.mul(A, B.constF32(1e9f)), ScalarType::I32));
  B.store(ViaBool, B.cast(B.cast(A, ScalarType::Bool), ScalarType::F32));
  B.store(Sel, B.select(Conds[2], A, C));
  B.endLoop();
  return B.finish();
}

/// One i32 output per op: wrapping neg/abs/add/sub/mul, division (by zero,
/// INT_MIN / -1), min/max, compares, i32 -> f32 and -> bool casts, and the
/// index and dim leaves.
inline Kernel i32EachOpKernel() {
  KernelBuilder B("i32_each_op", 2);
  int X = B.input("x", DType::I32, {0, 1});
  int Y = B.input("y", DType::I32, {0, 1});
  int Neg = B.output("neg", DType::I32, {0, 1});
  int Abs = B.output("abs", DType::I32, {0, 1});
  std::vector<int> BinaryOut, CompareOut;
  for (Op O : NumericBinaryOps)
    BinaryOut.push_back(B.output(std::string(opName(O)), DType::I32, {0, 1}));
  for (Op O : CompareOps)
    CompareOut.push_back(B.output(std::string(opName(O)), DType::I32, {0, 1}));
  int ToF = B.output("cast_f32", DType::F32, {0, 1});
  int ToBool = B.output("cast_bool", DType::I32, {0, 1});
  int Leaves = B.output("index_dim", DType::I32, {0, 1});
  B.beginLoop();
  Value A = B.load(X), C = B.load(Y);
  B.store(Neg, B.neg(A));
  B.store(Abs, B.unary(Op::Abs, A));
  for (size_t I = 0; I < std::size(NumericBinaryOps); ++I)
    B.store(BinaryOut[I], B.binary(NumericBinaryOps[I], A, C));
  for (size_t I = 0; I < std::size(CompareOps); ++I)
    B.store(CompareOut[I],
            B.cast(B.binary(CompareOps[I], A, C), ScalarType::I32));
  B.store(ToF, B.cast(A, ScalarType::F32));
  B.store(ToBool, B.cast(B.cast(A, ScalarType::Bool), ScalarType::I32));
  Value Flat = B.add(B.mul(B.index(0), B.dimSize(1)), B.index(1));
  B.store(Leaves, B.sub(Flat, B.dimSize(0)));
  B.endLoop();
  return B.finish();
}

/// The fused-region kernels in f32, f16 and bf16 buffers, and the column
/// sum.
inline std::vector<CudaTestKernel> fusedRegionTestKernels() {
  std::vector<CudaTestKernel> L;
  for (DType T : {DType::F32, DType::F16, DType::BF16}) {
    std::string Suffix(T == DType::F32   ? "_f32"
                       : T == DType::F16 ? "_f16"
                                         : "_bf16");
    L.push_back({"softmax" + Suffix, softmaxKernel(T), {256, 333}});
    L.push_back({"layernorm" + Suffix, layerNormKernel(T), {256, 384}});
    L.push_back({"meanvar" + Suffix, meanVarKernel(T), {512, 200}});
    L.push_back({"gelu" + Suffix, geluKernel(T), {5000}, {{"x", -5, 5}}});
    // [d0, d1, d2] = [8, 300, 64]: 2400 rows; f32 caps the grid at 4
    // blocks, so each thread takes several rows.
    L.push_back({"bias_res_relu" + Suffix,
                 biasResidualReluKernel(T),
                 {8, 300, 64},
                 {},
                 false,
                 T == DType::F32 ? 4u : 0u});
  }
  // Domain [N, HW, C] over x[N, C, HW].
  L.push_back({"sum_c", sumOverCKernel(), {4, 49, 64}});
  return L;
}

/// Every expression op, cast and reduction kind; strided, broadcast, rank
/// 1 and rank 4 kernels.
inline std::vector<CudaTestKernel> opTestKernels() {
  std::vector<CudaTestKernel> L;
  L.push_back({"f32_ops", f32OpsKernel(), {64, 129}, {}, true});
  L.push_back({"i32_ops", i32OpsKernel(), {64, 77}, {}, true});
  L.push_back({"reduce_strided", reduceStridedKernel(), {3, 4, 5, 17}});
  L.push_back({"rank1", rank1Kernel(), {1000}});
  L.push_back({"f32_each_op",
               f32EachOpKernel(),
               {64, 100},
               {{"x", -4, 4}, {"y", -4, 4}, {"p", 0.01f, 10}},
               true});
  L.push_back({"i32_each_op", i32EachOpKernel(), {64, 100}, {}, true});
  return L;
}

/// Both lists: every kernel the CUDA code generator is tested on.
inline std::vector<CudaTestKernel> cudaTestKernels() {
  std::vector<CudaTestKernel> L = fusedRegionTestKernels();
  for (CudaTestKernel &C : opTestKernels())
    L.push_back(std::move(C));
  return L;
}

} // namespace nng::kerneltest
