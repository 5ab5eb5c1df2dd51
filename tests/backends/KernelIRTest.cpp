//===- KernelIRTest.cpp - Kernel IR: builder, verifier, printer, oracle ---===//
//
// The kernel IR on its own: the printed form of a few kernels checked
// exactly, the verifier's refusals, the stride helpers, and the interpreter
// (the JIT's oracle) against hand-computed values: softmax, layer
// normalization, mean/variance, a reduction over a non-last axis through a
// permuted domain, i32 semantics, NaN rules of max/min, casts and f16
// rounding.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <limits>

namespace nng {
namespace {

using namespace kerneltest;

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

TEST(KernelIRPrint, Softmax) {
  EXPECT_EQ(printKernel(softmaxKernel(DType::F32)),
            "kernel @softmax(%x: f32[d0, d1] in, %y: f32[d0, d1] out) "
            "domain [d0, d1] {\n"
            "  %m = reduce.max d1 {\n"
            "    %0 = load %x\n"
            "    yield %0\n"
            "  }\n"
            "  %1 = abs %m\n"
            "  %2 = lt %1, inf\n"
            "  %3 = select %2, %m, 0.0\n"
            "  %s = reduce.add d1 {\n"
            "    %4 = load %x\n"
            "    %5 = sub %4, %3\n"
            "    %6 = exp %5\n"
            "    yield %6\n"
            "  }\n"
            "  loop d1 {\n"
            "    %7 = load %x\n"
            "    %8 = sub %7, %3\n"
            "    %9 = exp %8\n"
            "    %10 = div %9, %s\n"
            "    store %y, %10\n"
            "  }\n"
            "}\n");
}

TEST(KernelIRPrint, LayerNormAndMeanVar) {
  EXPECT_EQ(printKernel(layerNormKernel(DType::BF16)),
            "kernel @layernorm(%x: bf16[d0, d1] in, %gamma: bf16[d1] in, "
            "%beta: bf16[d1] in, %y: bf16[d0, d1] out) domain [d0, d1] {\n"
            "  %0 = dim d1\n"
            "  %1 = cast %0 : f32\n"
            "  %sum = reduce.add d1 {\n"
            "    %2 = load %x\n"
            "    yield %2\n"
            "  }\n"
            "  %mean = div %sum, %1\n"
            "  %sq = reduce.add d1 {\n"
            "    %3 = load %x\n"
            "    %4 = sub %3, %mean\n"
            "    %5 = mul %4, %4\n"
            "    yield %5\n"
            "  }\n"
            "  %6 = div %sq, %1\n"
            "  %7 = add %6, 1e-05\n"
            "  %inv = rsqrt %7\n"
            "  loop d1 {\n"
            "    %8 = load %x\n"
            "    %9 = sub %8, %mean\n"
            "    %10 = mul %9, %inv\n"
            "    %11 = load %gamma\n"
            "    %12 = mul %10, %11\n"
            "    %13 = load %beta\n"
            "    %14 = add %12, %13\n"
            "    store %y, %14\n"
            "  }\n"
            "}\n");
  std::string MV = printKernel(meanVarKernel(DType::F16));
  EXPECT_NE(MV.find("%mean: f16[d0] out, %var: f16[d0] out"), std::string::npos)
      << MV;
  EXPECT_NE(MV.find("  store %mean, %"), std::string::npos) << MV;
}

TEST(KernelIRPrint, StridedIntsAndLiterals) {
  KernelBuilder B("mix", 3);
  int X = B.input("x", DType::I32, {0, 2, 1}, Layout::Strided);
  int F = B.input("f", DType::F32, {});
  int Y = B.output("y", DType::F32, {0, 1, 2});
  B.beginLoop();
  Value I = B.binary(Op::Div, B.load(X), B.constI32(-7));
  Value I2 = B.index(2);
  Value C = B.binary(Op::Ge, I2, B.index(0));
  Value V = B.select(C, B.cast(I, ScalarType::F32), B.constF32(-0.0f));
  V = B.add(V, B.load(F));
  V = B.binary(Op::Pow, V, B.constF32(2.5f));
  V = B.select(B.constBool(true), V, B.constF32(NaN));
  B.store(Y, B.min(V, B.constF32(3.4028235e38f)));
  B.endLoop();
  EXPECT_EQ(printKernel(B.finish()),
            "kernel @mix(%x: i32[d0, d2, d1] in strided, %f: f32[] in, "
            "%y: f32[d0, d1, d2] out) domain [d0, d1, d2] {\n"
            "  loop d2 {\n"
            "    %0 = load %x\n"
            "    %1 = div %0, -7\n"
            "    %2 = index d2\n"
            "    %3 = index d0\n"
            "    %4 = ge %2, %3\n"
            "    %5 = cast %1 : f32\n"
            "    %6 = select %4, %5, -0.0\n"
            "    %7 = load %f\n"
            "    %8 = add %6, %7\n"
            "    %9 = pow %8, 2.5\n"
            "    %10 = select true, %9, nan\n"
            "    %11 = min %10, 3.4028235e+38\n"
            "    store %y, %11\n"
            "  }\n"
            "}\n");
}

/// The verifier's message for a kernel the builder makes up to Build.
template <typename Fn> std::string builderError(Fn Build) {
  try {
    Build();
  } catch (const Error &E) {
    return E.what();
  }
  return "(no error)";
}

TEST(KernelIRVerify, Refusals) {
  // A store to an output broadcast along a dim of the loop.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 2);
              int X = B.input("x", DType::F32, {0, 1});
              int Y = B.output("y", DType::F32, {1});
              B.beginLoop();
              B.store(Y, B.load(X));
              B.endLoop();
              B.finish();
            }).find("broadcast along d0"),
            std::string::npos);
  // A row-level load of a buffer following the inner dim.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 2);
              int X = B.input("x", DType::F32, {0, 1});
              B.load(X);
            }).find("follows the inner dim"),
            std::string::npos);
  // Mixed types.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 1);
              B.add(B.constF32(1), B.constI32(1));
            }).find("two f32 or two i32"),
            std::string::npos);
  // An output never stored.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 1);
              B.output("y", DType::F32, {0});
              B.finish();
            }).find("stored 0 times"),
            std::string::npos);
  // A value of one loop used in another.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 1);
              int X = B.input("x", DType::F32, {0});
              int Y = B.output("y", DType::F32, {0});
              B.beginLoop();
              Value V = B.load(X);
              B.endLoop();
              B.beginLoop();
              B.store(Y, V);
              B.endLoop();
            }).find("another loop"),
            std::string::npos);
  // A store of f32 to an i32 output; an unsupported dtype.
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 1);
              int Y = B.output("y", DType::I32, {0});
              B.beginLoop();
              B.store(Y, B.constF32(1));
              B.endLoop();
              B.finish();
            }).find("cast it first"),
            std::string::npos);
  EXPECT_NE(builderError([] {
              KernelBuilder B("k", 1);
              int X = B.input("x", DType::F64, {0});
              B.beginLoop();
              B.load(X);
            }).find("unsupported type f64"),
            std::string::npos);
  // A hand-made kernel with a dangling operand: the verifier says where.
  Kernel K = softmaxKernel(DType::F32);
  K.Insts.back().Operands[0] = 999;
  try {
    verifyKernel(K);
    ADD_FAILURE() << "no error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Verify);
    EXPECT_NE(std::string(E.what()).find("kernel @softmax, instruction"),
              std::string::npos)
        << E.what();
  }
}

TEST(KernelIRStrides, RowMajorAndLaunchChecks) {
  KernelBuilder B("t", 3);
  int X = B.input("x", DType::F32, {0, 2, 1}); // [d0, d2, d1]
  int Bias = B.input("b", DType::F32, {1});
  int Y = B.output("y", DType::F32, {0, 1, 2});
  B.beginLoop();
  B.store(Y, B.add(B.load(X), B.load(Bias)));
  B.endLoop();
  Kernel K = B.finish();
  std::vector<int64_t> S = rowMajorStrides(K, std::vector<int64_t>{2, 3, 4});
  // x: shape [2, 4, 3]: d0 -> 12, d1 -> 1, d2 -> 3.
  EXPECT_EQ(S, (std::vector<int64_t>{12, 1, 3, 0, 1, 0, 12, 4, 1}));
  EXPECT_TRUE(K.Buffers[X].unitStride(1));
  EXPECT_FALSE(K.Buffers[X].unitStride(2));
  EXPECT_TRUE(K.isElementwise());
  std::vector<int64_t> Sizes{2, 3, 4};
  EXPECT_THROW(checkLaunch(K, 2, Sizes, {}), Error);
  EXPECT_THROW(checkLaunch(K, 3, std::vector<int64_t>{2, -1, 4}, {}), Error);
  std::vector<int64_t> Bad = S;
  Bad[3] = 5; // b broadcasts along d0.
  EXPECT_THROW(checkLaunch(K, 3, Sizes, Bad), Error);
  EXPECT_NO_THROW(checkLaunch(K, 3, Sizes, S));
}

TEST(KernelInterp, SoftmaxByHand) {
  Kernel K = softmaxKernel(DType::F32);
  std::vector<float> X{1,    2,   3, 0, 0,   0, -Inf, -Inf,
                       -Inf, Inf, 1, 2, NaN, 1, 2};
  std::vector<float> Y(X.size());
  void *Bufs[] = {X.data(), Y.data()};
  int64_t Sizes[] = {5, 3};
  interpretKernel(K, Bufs, Sizes);
  double E1 = std::exp(-2.0), E2 = std::exp(-1.0), S = E1 + E2 + 1;
  EXPECT_FLOAT_EQ(Y[0], float(E1 / S));
  EXPECT_FLOAT_EQ(Y[1], float(E2 / S));
  EXPECT_FLOAT_EQ(Y[2], float(1 / S));
  for (int I = 3; I < 6; ++I)
    EXPECT_FLOAT_EQ(Y[I], 1.0f / 3);
  // The reference: an all -inf row is NaN; +inf gives NaN there, 0 else;
  // a NaN makes the row NaN.
  for (int I = 6; I < 9; ++I)
    EXPECT_TRUE(std::isnan(Y[I]));
  EXPECT_TRUE(std::isnan(Y[9]));
  EXPECT_EQ(Y[10], 0.0f);
  EXPECT_EQ(Y[11], 0.0f);
  for (int I = 12; I < 15; ++I)
    EXPECT_TRUE(std::isnan(Y[I]));
}

TEST(KernelInterp, LayerNormAndMeanVarByHand) {
  Kernel K = layerNormKernel(DType::F32, 0.0f);
  std::vector<float> X{1, 2, 3, 4}, G{1, 2, 1, 1}, Bi{0, 0, 0, 10}, Y(4);
  void *Bufs[] = {X.data(), G.data(), Bi.data(), Y.data()};
  int64_t Sizes[] = {1, 4};
  interpretKernel(K, Bufs, Sizes);
  float Inv = 1.0f / std::sqrt(1.25f);
  EXPECT_FLOAT_EQ(Y[0], -1.5f * Inv);
  EXPECT_FLOAT_EQ(Y[1], -0.5f * Inv * 2);
  EXPECT_FLOAT_EQ(Y[2], 0.5f * Inv);
  EXPECT_FLOAT_EQ(Y[3], 1.5f * Inv + 10);

  Kernel MV = meanVarKernel(DType::F32);
  std::vector<float> Z{2, 4, 4, 4, 5, 5, 7, 9, 1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<float> M(2), V(2);
  void *Bufs2[] = {Z.data(), M.data(), V.data()};
  int64_t Sizes2[] = {2, 8};
  interpretKernel(MV, Bufs2, Sizes2);
  EXPECT_EQ(M, (std::vector<float>{5, 1}));
  EXPECT_EQ(V, (std::vector<float>{4, 0}));
}

TEST(KernelInterp, ReductionOverNonLastAxis) {
  // Sum over C of x[N, C, HW]: domain [N, HW, C], x follows [d0, d2, d1].
  Kernel K = sumOverCKernel();
  std::vector<float> Xs(2 * 3 * 4), Ys(2 * 4);
  for (size_t I = 0; I < Xs.size(); ++I)
    Xs[I] = float(I);
  void *Bufs[] = {Xs.data(), Ys.data()};
  int64_t Sizes[] = {2, 4, 3};
  interpretKernel(K, Bufs, Sizes);
  for (int N = 0; N < 2; ++N)
    for (int P = 0; P < 4; ++P) {
      float S = 0;
      for (int C = 0; C < 3; ++C)
        S += Xs[N * 12 + C * 4 + P];
      EXPECT_EQ(Ys[N * 4 + P], S);
    }
}

TEST(KernelInterp, IntsNaNRulesCastsAndRounding) {
  KernelBuilder B("ops", 1);
  int A = B.input("a", DType::I32, {0});
  int C = B.input("c", DType::I32, {0});
  int F = B.input("f", DType::F32, {0});
  int G = B.input("g", DType::F32, {0});
  int Q = B.output("q", DType::I32, {0});
  int Mx = B.output("mx", DType::F32, {0});
  int Mn = B.output("mn", DType::F32, {0});
  int Ci = B.output("ci", DType::I32, {0});
  int H = B.output("h", DType::F16, {0});
  B.beginLoop();
  Value La = B.load(A), Lc = B.load(C), Lf = B.load(F), Lg = B.load(G);
  B.store(Q, B.add(B.div(La, Lc), B.mul(La, La)));
  B.store(Mx, B.max(Lf, Lg));
  B.store(Mn, B.min(Lf, Lg));
  B.store(Ci, B.cast(Lf, ScalarType::I32));
  B.store(H, Lf);
  B.endLoop();
  Kernel K = B.finish();
  const int32_t Min = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> Av{7, -7, 5, Min, 65536}, Cv{2, 2, 0, -1, 1};
  std::vector<float> Fv{NaN, 1, -0.0f, 3e9f, 1.00048828125f},
      Gv{1, NaN, 0.0f, -2.5f, 2};
  std::vector<int32_t> Qv(5), Ciq(5);
  std::vector<float> Mxv(5), Mnv(5);
  std::vector<uint16_t> Hv(5);
  void *Bufs[] = {Av.data(),  Cv.data(),  Fv.data(),  Gv.data(), Qv.data(),
                  Mxv.data(), Mnv.data(), Ciq.data(), Hv.data()};
  int64_t Sizes[] = {5};
  interpretKernel(K, Bufs, Sizes);
  // Truncating division, x / 0 = 0, INT_MIN / -1 = INT_MIN; wrapping mul.
  EXPECT_EQ(Qv,
            (std::vector<int32_t>{3 + 49, -3 + 49, 0 + 25, Min + 0, 65536}));
  EXPECT_TRUE(std::isnan(Mxv[0]) && std::isnan(Mxv[1]));
  EXPECT_TRUE(std::isnan(Mnv[0]) && std::isnan(Mnv[1]));
  EXPECT_TRUE(std::signbit(Mxv[2])); // max(-0, 0) = -0 (a < b is false).
  EXPECT_EQ(Mxv[3], 3e9f);
  EXPECT_EQ(Mnv[3], -2.5f);
  EXPECT_EQ(Ciq, (std::vector<int32_t>{0, 1, 0, 2147483647, 1}));
  // 1 + 2^-11 is a tie between two halves: to even (1.0).
  EXPECT_EQ(Hv[4], 0x3c00);
  EXPECT_EQ(Hv[3], 0x7c00); // 3e9 overflows f16.
  EXPECT_EQ(Hv[0], 0x7e00);
}

} // namespace
} // namespace nng
