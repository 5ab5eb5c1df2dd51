//===- JitTest.cpp - Kernels compiled by the LLVM JIT vs the interpreter --===//
//
// The JIT's results against the kernel IR interpreter: elementwise chains
// with broadcasting, softmax, layer normalization, mean/variance and GELU
// on f32, f16 and bf16, i32 kernels, NaN and infinities, strided, permuted
// and gathered accesses, sizes around the 16-lane vectors (1, 15, 16, 17,
// 1000) and large enough to split across threads; determinism across runs
// and thread counts; the LLVM IR text. SKIPPED in builds without LLVM.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"

#include <limits>

namespace nng {
namespace {

using namespace kerneltest;

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();
const DType FloatTypes[] = {DType::F32, DType::F16, DType::BF16};

std::string label(DType T, const std::vector<int64_t> &S) {
  std::string L = std::string(dtypeName(T)) + " [";
  for (size_t I = 0; I < S.size(); ++I)
    L += (I ? "," : "") + std::to_string(S[I]);
  return L + "]";
}

TEST(JitElementwise, BiasResidualReluBroadcast) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(1);
  for (DType T : FloatTypes) {
    Kernel K = biasResidualReluKernel(T);
    for (std::vector<int64_t> S : {std::vector<int64_t>{1, 1, 1},
                                   {2, 3, 17},
                                   {1, 1, 15},
                                   {3, 5, 1000},
                                   {2, 2, 16},
                                   {0, 3, 5},
                                   {2, 3, 0}}) {
      BothRuns Both = runBoth(K, S, makeBuffers(K, S, R));
      // Only adds and a max: exactly the interpreter's.
      expectClose(K, Both, 0, 0, label(T, S));
    }
  }
}

TEST(JitElementwise, GeluSizesAndThreadSplit) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(2);
  for (DType T : FloatTypes) {
    Kernel K = geluKernel(T);
    // 100003: one row, split along the inner dim across threads.
    for (int64_t N : {1, 15, 16, 17, 1000, 100003}) {
      std::vector<int64_t> S{N};
      BothRuns Both = runBoth(K, S, makeBuffers(K, S, R, -6, 6));
      // Near x = -4, 1 + erf(x / sqrt 2) cancels: 1 ulp of erf is up to
      // 2e-4 of the result; the absolute error stays below 4e-7.
      expectClose(K, Both, 4e-7, 4e-7, label(T, S));
    }
  }
}

TEST(JitElementwise, ConstantFills) {
  NNG_REQUIRE_JIT();
  // Stores of constants may become memset calls after O3: the JIT links
  // them against the process.
  KernelBuilder B("fill", 2);
  int Z = B.output("z", DType::F32, {0, 1});
  int M = B.output("m", DType::I32, {0, 1});
  int O = B.output("o", DType::BF16, {0, 1});
  B.beginLoop();
  B.store(Z, B.constF32(0));
  B.store(M, B.constI32(-1));
  B.store(O, B.constF32(1));
  B.endLoop();
  Kernel K = B.finish();
  std::mt19937 R(9);
  for (std::vector<int64_t> S : {std::vector<int64_t>{3, 1000}, {1, 5}})
    expectClose(K, runBoth(K, S, makeBuffers(K, S, R)), 0, 0);
}

TEST(JitRows, SoftmaxAgainstInterpreter) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(3);
  for (DType T : FloatTypes) {
    Kernel K = softmaxKernel(T);
    for (std::vector<int64_t> S : {std::vector<int64_t>{1, 1},
                                   {3, 15},
                                   {4, 17},
                                   {2, 1000},
                                   {7, 16},
                                   {5, 33},
                                   {300, 129}}) {
      BothRuns Both = runBoth(K, S, makeBuffers(K, S, R, -10, 10));
      expectClose(K, Both, 2e-6, 1e-7, label(T, S));
    }
  }
}

TEST(JitRows, SoftmaxNaNAndInfinities) {
  NNG_REQUIRE_JIT();
  Kernel K = softmaxKernel(DType::F32);
  // Rows of 20: finite, one +inf, all -inf, one NaN, -inf and finite mixed.
  std::vector<int64_t> S{5, 20};
  std::mt19937 R(4);
  std::vector<HostBuffer> In = makeBuffers(K, S, R);
  In[0].set(20 + 3, Inf);
  for (int I = 0; I < 20; ++I)
    In[0].set(40 + I, -Inf);
  In[0].set(60 + 17, NaN);
  In[0].set(80 + 2, -Inf);
  In[0].set(80 + 19, -Inf);
  BothRuns Both = runBoth(K, S, In);
  expectClose(K, Both, 2e-6, 1e-7);
  EXPECT_TRUE(std::isnan(Both.Jit[1].get(23)));
  EXPECT_EQ(Both.Jit[1].get(24), 0.0f);
  EXPECT_TRUE(std::isnan(Both.Jit[1].get(40)));
  EXPECT_TRUE(std::isnan(Both.Jit[1].get(60)));
  EXPECT_EQ(Both.Jit[1].get(82), 0.0f);
}

TEST(JitRows, LayerNormAndMeanVar) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(5);
  for (DType T : FloatTypes) {
    Kernel LN = layerNormKernel(T);
    Kernel MV = meanVarKernel(T);
    for (std::vector<int64_t> S :
         {std::vector<int64_t>{1, 1}, {3, 15}, {4, 17}, {2, 1000}, {33, 256}}) {
      // Offset inputs: the variance is small against the mean.
      expectClose(LN, runBoth(LN, S, makeBuffers(LN, S, R, 1, 3)), 2e-5, 1e-5,
                  "layernorm " + label(T, S));
      expectClose(MV, runBoth(MV, S, makeBuffers(MV, S, R, 1, 3)), 2e-5, 1e-6,
                  "meanvar " + label(T, S));
    }
  }
}

/// i32 arithmetic, comparisons, selects, casts both ways and i32
/// reductions.
Kernel intKernel() {
  KernelBuilder B("ints", 2);
  int A = B.input("a", DType::I32, {0, 1});
  int C = B.input("c", DType::I32, {1});
  int F = B.input("f", DType::F32, {0, 1});
  int Y = B.output("y", DType::I32, {0, 1});
  int Z = B.output("z", DType::F32, {0, 1});
  int Mx = B.output("mx", DType::I32, {0});
  int Sm = B.output("sum", DType::I32, {0});
  B.beginReduce(ReduceKind::Max);
  Value M = B.endReduce(B.load(A));
  B.beginReduce(ReduceKind::Add);
  Value Sum = B.endReduce(B.mul(B.load(A), B.load(C)));
  B.beginLoop();
  Value Av = B.load(A), Cv = B.load(C);
  Value Q = B.div(Av, Cv);
  Value Neg = B.binary(Op::Lt, Av, B.constI32(0));
  Value V = B.select(Neg, B.unary(Op::Abs, Q), B.sub(B.mul(Av, Cv), M));
  V = B.max(B.min(V, B.constI32(1000)), B.neg(B.index(1)));
  B.store(Y, V);
  Value Fi = B.cast(B.load(F), ScalarType::I32);
  Value Bo = B.binary(Op::Or, B.unary(Op::Not, Neg),
                      B.binary(Op::Eq, Fi, B.constI32(0)));
  B.store(Z, B.add(B.cast(Fi, ScalarType::F32), B.cast(Bo, ScalarType::F32)));
  B.endLoop();
  B.store(Mx, M);
  B.store(Sm, Sum);
  return B.finish();
}

TEST(JitInts, ArithmeticCastsReductions) {
  NNG_REQUIRE_JIT();
  Kernel K = intKernel();
  std::mt19937 R(6);
  for (std::vector<int64_t> S :
       {std::vector<int64_t>{1, 1}, {3, 17}, {2, 1000}, {4, 16}}) {
    std::vector<HostBuffer> In = makeBuffers(K, S, R, -1e10f, 1e10f);
    // Zeros, -1 and INT_MIN among the divisors and dividends; NaN and huge
    // floats for the saturating cast.
    In[1].seti(0, 0);
    if (S[1] > 2) {
      In[1].seti(1, -1);
      In[0].seti(1, std::numeric_limits<int32_t>::min());
      In[2].set(2, NaN);
      In[2].set(0, -Inf);
    }
    expectClose(K, runBoth(K, S, In), 0, 0, label(DType::I32, S));
  }
}

/// y = f(x) for each unary op and max/min/relu/clip against the
/// interpreter on NaN, infinities, zeros and ordinary values.
TEST(JitElementwise, SpecialValues) {
  NNG_REQUIRE_JIT();
  std::vector<float> Vals{NaN,   -NaN,   Inf,    -Inf,   0.0f,   -0.0f,   1.0f,
                          -1.0f, 0.5f,   -88.0f, 89.0f,  1e-40f, -1e-40f, 3.9f,
                          -4.0f, 0.625f, 1e30f,  -1e30f, 2.0f};
  std::vector<int64_t> S{static_cast<int64_t>(Vals.size())};
  for (Op O : {Op::Exp, Op::Log, Op::Tanh, Op::Erf, Op::Sqrt, Op::Rsqrt,
               Op::Sigmoid, Op::Neg, Op::Abs}) {
    KernelBuilder B(std::string(opName(O)), 1);
    int X = B.input("x", DType::F32, {0});
    int Y = B.output("y", DType::F32, {0});
    int M = B.output("m", DType::F32, {0});
    B.beginLoop();
    Value V = B.load(X);
    B.store(Y, B.unary(O, V));
    // relu and clip as max/min: NaN stays NaN.
    B.store(M, B.min(B.max(B.max(V, B.constF32(0)), B.constF32(-1)),
                     B.constF32(6)));
    B.endLoop();
    Kernel K = B.finish();
    HostBuffer In(DType::F32, Vals.size());
    for (size_t I = 0; I < Vals.size(); ++I)
      In.set(I, Vals[I]);
    std::vector<HostBuffer> Bufs{In, HostBuffer(DType::F32, Vals.size()),
                                 HostBuffer(DType::F32, Vals.size())};
    BothRuns Both = runBoth(K, S, Bufs);
    expectClose(K, Both, 3e-7, 1e-45, std::string(opName(O)));
  }
  // pow with ONNX's signs and special cases.
  KernelBuilder B("pow", 1);
  int A = B.input("a", DType::F32, {0});
  int E = B.input("e", DType::F32, {0});
  int Y = B.output("y", DType::F32, {0});
  B.beginLoop();
  B.store(Y, B.binary(Op::Pow, B.load(A), B.load(E)));
  B.endLoop();
  Kernel K = B.finish();
  std::vector<std::pair<float, float>> Cases{
      {2, 3},     {-2, 3},  {-2, 2},  {-2, 0.5f}, {0, 2},    {0, -1},
      {-0.0f, 3}, {NaN, 0}, {1, NaN}, {-1, Inf},  {3, -2},   {0.5f, 10},
      {10, 1.5f}, {NaN, 2}, {2, NaN}, {Inf, 2},   {2, -Inf}, {1.5f, 7.25f}};
  HostBuffer Ab(DType::F32, Cases.size()), Eb(DType::F32, Cases.size());
  for (size_t I = 0; I < Cases.size(); ++I) {
    Ab.set(I, Cases[I].first);
    Eb.set(I, Cases[I].second);
  }
  expectClose(K,
              runBoth(K, {static_cast<int64_t>(Cases.size())},
                      {Ab, Eb, HostBuffer(DType::F32, Cases.size())}),
              1e-6, 0, "pow");
}

TEST(JitStrided, PermutedGatheredAndExplicitStrides) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(7);
  // A reduction over C of x[N, C, HW] through the permuted domain
  // [N, HW, C] (the inner loads are a gather with stride HW).
  {
    Kernel K = sumOverCKernel();
    for (std::vector<int64_t> S :
         {std::vector<int64_t>{2, 5, 3}, {3, 7, 40}, {1, 1, 17}})
      expectClose(K, runBoth(K, S, makeBuffers(K, S, R)), 2e-6, 1e-6,
                  label(DType::F32, S));
  }
  // A transpose with a strided (scattered) output and an explicitly
  // strided input: x is every other column of a [rows, 2 * cols] array.
  {
    KernelBuilder B("strided", 2);
    int X = B.input("x", DType::F16, {0, 1}, Layout::Strided);
    int T = B.input("t", DType::F32, {1, 0});
    int Y = B.output("y", DType::F32, {0, 1}, Layout::Strided);
    B.beginLoop();
    B.store(Y, B.mul(B.load(X), B.load(T)));
    B.endLoop();
    Kernel K = B.finish();
    for (std::vector<int64_t> S :
         {std::vector<int64_t>{3, 17}, {4, 1}, {2, 40}}) {
      int64_t Rows = S[0], Cols = S[1];
      std::vector<HostBuffer> In{HostBuffer(DType::F16, Rows * Cols * 2),
                                 HostBuffer(DType::F32, Rows * Cols),
                                 HostBuffer(DType::F32, Cols * Rows * 3)};
      fillRandom(In[0], R);
      fillRandom(In[1], R);
      // y: column-major with a gap: y[r, c] at c * (3 * Rows) + r.
      std::vector<int64_t> Strides{2 * Cols, 2,    // x
                                   1,        Rows, // t (row-major [d1, d0])
                                   1,        3 * Rows};
      expectClose(K, runBoth(K, S, In, Strides), 0, 0, label(DType::F16, S));
    }
  }
}

TEST(JitDeterminism, ThreadsAndRepeats) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(8);
  for (Kernel K : {softmaxKernel(DType::F32), layerNormKernel(DType::F32)}) {
    std::vector<int64_t> S{64, 1000};
    std::vector<HostBuffer> In = makeBuffers(K, S, R);
    auto Once = [&](int Threads) {
      int Old = numThreads();
      setNumThreads(Threads);
      std::vector<HostBuffer> Bufs = In;
      std::vector<void *> P = pointers(Bufs);
      testJit().compile(K)->run(P, S);
      setNumThreads(Old);
      return Bufs.back().Bytes;
    };
    std::vector<char> First = Once(1);
    EXPECT_EQ(First, Once(2)) << K.Name;
    EXPECT_EQ(First, Once(2)) << K.Name;
    EXPECT_EQ(First, Once(1)) << K.Name;
  }
}

TEST(JitErrors, BadLaunchAndNoLLVMAbort) {
  NNG_REQUIRE_JIT();
  Kernel K = softmaxKernel(DType::F32);
  auto JK = testJit().compile(K);
  std::vector<float> X(6), Y(6);
  void *Bufs[] = {X.data(), Y.data()};
  EXPECT_THROW(
      JK->run(std::span<void *const>(Bufs, 1), std::vector<int64_t>{2, 3}),
      Error);
  EXPECT_THROW(JK->run(Bufs, std::vector<int64_t>{2}), Error);
  void *Null[] = {nullptr, Y.data()};
  EXPECT_THROW(JK->run(Null, std::vector<int64_t>{2, 3}), Error);
  EXPECT_NO_THROW(JK->run(Null, std::vector<int64_t>{0, 3}));
  Kernel Bad = K;
  Bad.Insts.back().Operands[0] = -1;
  EXPECT_THROW(testJit().compile(Bad), Error);
}

TEST(JitIR, LLVMTextAndHost) {
  NNG_REQUIRE_JIT();
  Kernel K = softmaxKernel(DType::F32);
  std::string Raw = testJit().llvmIR(K);
  EXPECT_NE(Raw.find("define void @nng_kernel(ptr"), std::string::npos) << Raw;
  EXPECT_NE(Raw.find("<16 x float>"), std::string::npos);
  EXPECT_EQ(Raw.find("call float @exp"), std::string::npos); // No libm.
  std::string Opt = testJit().llvmIR(K, true);
  EXPECT_NE(Opt.find("define void @nng_kernel("), std::string::npos);
  EXPECT_NE(Opt.find("\"target-cpu\"=\"" + testJit().hostCPU() + "\""),
            std::string::npos);
  bool Avx512 = testJit().hostFeatures().find("+avx512f") != std::string::npos;
  EXPECT_EQ(Opt.find("\"prefer-vector-width\"=\"512\"") != std::string::npos,
            Avx512);
  std::string Asm = testJit().assembly(K);
  EXPECT_EQ(Asm.find("call"), std::string::npos) << "the kernel calls out";
  if (Avx512)
    EXPECT_NE(Asm.find("zmm"), std::string::npos);
}

} // namespace
} // namespace nng
