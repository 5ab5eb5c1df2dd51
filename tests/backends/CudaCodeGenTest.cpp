//===- CudaCodeGenTest.cpp - Kernel IR rendered to CUDA C, NVRTC-compiled -===//
//
// Every kind of kernel the kernel IR describes, rendered to CUDA C by
// renderCuda and compiled by NVRTC for sm_90 (a cubin) and compute_90
// (PTX) — no GPU needed: the fused regions the JIT serves (softmax, layer
// normalization, mean/variance, GELU, bias + residual + relu, a column
// sum) in f32, f16 and bf16 buffers; every expression op on f32 and i32
// operands, every cast, every reduction kind of both types; strided and
// broadcast buffers, index/dim leaves, rank 1 and rank 4. A compile error
// fails with NVRTC's log and the numbered source. SKIPPED in builds
// without the CUDA toolkit. (What the generated code computes is checked
// on a GPU; on the host the same IR runs through the cpu backend's JIT and
// the interpreter, tests/backends/Jit*Test.cpp.)
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include "nngraph/backends/cuda/CudaCodeGen.h"
#include "nngraph/runtime/Error.h"

#include <limits>

#include <gtest/gtest.h>

namespace nng {
namespace {

using namespace backends::kernel;
using namespace kerneltest;

#define REQUIRE_NVRTC()                                                        \
  do {                                                                         \
    if (!backends::cuda::nvrtcAvailable())                                     \
      GTEST_SKIP() << "SKIPPED: built without the CUDA toolkit (NVRTC)";       \
  } while (0)

/// Renders K and compiles it for sm_90 and compute_90.
void expectCompiles(const Kernel &K) {
  backends::cuda::CudaKernelSource S = backends::cuda::renderCuda(K);
  SCOPED_TRACE("kernel " + K.Name);
  std::string Cubin, Ptx;
  ASSERT_NO_THROW(Cubin = backends::cuda::compileWithNvrtc(S, "sm_90"));
  EXPECT_GT(Cubin.size(), 16u);
  EXPECT_EQ(Cubin.substr(1, 3), "ELF"); // A cubin is an ELF image.
  ASSERT_NO_THROW(Ptx = backends::cuda::compileWithNvrtc(S, "compute_90"));
  EXPECT_NE(Ptx.find(".entry " + S.Entry), std::string::npos) << Ptx;
}

TEST(CudaCodeGen, FusedRegionKernelsCompileForSm90) {
  REQUIRE_NVRTC();
  for (DType T : {DType::F32, DType::F16, DType::BF16}) {
    expectCompiles(softmaxKernel(T));
    expectCompiles(layerNormKernel(T));
    expectCompiles(meanVarKernel(T));
    expectCompiles(geluKernel(T));
    expectCompiles(biasResidualReluKernel(T));
  }
  expectCompiles(sumOverCKernel());
}

TEST(CudaCodeGen, EveryOpCastAndReductionCompiles) {
  REQUIRE_NVRTC();
  // f32: every unary and binary op, compares into selects, casts.
  {
    KernelBuilder B("f32_ops", 2);
    int X = B.input("x", DType::F32, {0, 1});
    int Y = B.input("y", DType::F32, {1}); // Broadcast along d0.
    int Out = B.output("out", DType::F32, {0, 1});
    int OutI = B.output("out_i", DType::I32, {0, 1});
    B.beginLoop();
    Value A = B.load(X), C = B.load(Y), Acc = B.constF32(0.5f);
    for (Op O : {Op::Neg, Op::Abs, Op::Exp, Op::Log, Op::Tanh, Op::Erf,
                 Op::Sqrt, Op::Rsqrt, Op::Sigmoid})
      Acc = B.add(Acc, B.unary(O, A));
    for (Op O : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max, Op::Pow})
      Acc = B.add(Acc, B.binary(O, A, C));
    for (Op O : {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge}) {
      Value Cond = B.binary(O, A, C);
      Cond = B.binary(Op::And, Cond, B.unary(Op::Not, B.binary(Op::Or, Cond, B.constBool(false))));
      Acc = B.select(Cond, Acc, B.constF32(-std::numeric_limits<float>::infinity()));
    }
    Acc = B.add(Acc, B.constF32(std::numeric_limits<float>::quiet_NaN()));
    Value AsInt = B.cast(Acc, ScalarType::I32);
    Value AsBool = B.cast(Acc, ScalarType::Bool);
    Acc = B.add(Acc, B.cast(AsBool, ScalarType::F32));
    B.store(Out, Acc);
    B.store(OutI, AsInt);
    B.endLoop();
    expectCompiles(B.finish());
  }
  // i32: wrapping arithmetic, division, min/max, compares, casts, index and
  // dim leaves, row scalars stored to an output that does not follow d1.
  {
    KernelBuilder B("i32_ops", 2);
    int X = B.input("x", DType::I32, {0, 1});
    int Out = B.output("out", DType::I32, {0, 1});
    int RowOut = B.output("row_out", DType::F32, {0});
    Value RowMax = Value();
    B.beginReduce(ReduceKind::Max);
    RowMax = B.endReduce(B.load(X), "rowmax");
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
    Acc = B.select(Cond, Acc, B.cast(B.cast(Acc, ScalarType::F32), ScalarType::I32));
    Acc = B.add(Acc, B.cast(B.cast(Acc, ScalarType::Bool), ScalarType::I32));
    B.store(Out, Acc);
    B.endLoop();
    expectCompiles(B.finish());
  }
  // f32 reductions of every kind, a strided (transposed) input, rank 4.
  {
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
    expectCompiles(B.finish());
  }
  // Rank 1: no outer dims, one row.
  {
    KernelBuilder B("rank1", 1);
    int X = B.input("x", DType::F32, {0});
    int Out = B.output("out", DType::F32, {0});
    B.beginLoop();
    B.store(Out, B.exp(B.load(X)));
    B.endLoop();
    expectCompiles(B.finish());
  }
}

TEST(CudaCodeGen, SourceCarriesTheIRsSemantics) {
  // Text checks that hold whether or not NVRTC is there.
  backends::cuda::CudaKernelSource S =
      backends::cuda::renderCuda(softmaxKernel(DType::F16));
  EXPECT_EQ(S.Entry, "nng_softmax");
  EXPECT_NE(S.Code.find("extern \"C\" __global__ void nng_softmax("),
            std::string::npos);
  EXPECT_NE(S.Code.find("nng_maxf("), std::string::npos); // NaN-propagating.
  EXPECT_NE(S.Code.find("__half2float("), std::string::npos);
  EXPECT_NE(S.Code.find("__float2half_rn("), std::string::npos);
  // The reduction walks the inner dimension in order in one thread.
  EXPECT_NE(S.Code.find("for (long long j = 0; j < n_inner; ++j)"),
            std::string::npos);
}

TEST(CudaCodeGen, CompileErrorsCarryNvrtcsLogAndTheSource) {
  REQUIRE_NVRTC();
  backends::cuda::CudaKernelSource Bad{"nng_bad", "extern \"C\" __global__ void "
                                                  "nng_bad() { undeclared(); }\n"};
  try {
    backends::cuda::compileWithNvrtc(Bad);
    FAIL() << "no error";
  } catch (const Error &E) {
    std::string M = E.what();
    EXPECT_NE(M.find("undeclared"), std::string::npos) << M;
    EXPECT_NE(M.find("1: extern"), std::string::npos) << M;
  }
}

} // namespace
} // namespace nng
