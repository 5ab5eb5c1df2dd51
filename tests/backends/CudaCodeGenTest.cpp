//===- CudaCodeGenTest.cpp - Kernel IR rendered to CUDA C, NVRTC-compiled -===//
//
// Every kind of kernel the kernel IR describes (the list of
// CudaTestKernels.h), rendered to CUDA C by renderCuda and compiled by
// NVRTC for sm_90 (a cubin) and compute_90 (PTX) — no GPU needed: the
// fused regions the JIT serves (softmax, layer normalization,
// mean/variance, GELU, bias + residual + relu, a column sum) in f32, f16
// and bf16 buffers; every expression op on f32 and i32 operands, every
// cast, every reduction kind of both types; strided and broadcast buffers,
// index/dim leaves, rank 1 and rank 4. A compile error fails with NVRTC's
// log and the numbered source. SKIPPED in builds without the CUDA toolkit.
// What the generated code computes is checked on a GPU by the device
// bundle of the same list (tests/cuda-device); on the host the same IR
// runs through the cpu backend's JIT and the interpreter
// (tests/backends/Jit*Test.cpp).
//
//===----------------------------------------------------------------------===//

#include "CudaTestKernels.h"

#include "nngraph/backends/cuda/CudaCodeGen.h"
#include "nngraph/runtime/Error.h"

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
  for (const CudaTestKernel &C : fusedRegionTestKernels())
    expectCompiles(C.K);
}

TEST(CudaCodeGen, EveryOpCastAndReductionCompiles) {
  REQUIRE_NVRTC();
  for (const CudaTestKernel &C : opTestKernels())
    expectCompiles(C.K);
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
