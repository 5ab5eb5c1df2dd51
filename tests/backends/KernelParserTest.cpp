//===- KernelParserTest.cpp - Kernel IR: op table and text parser ---------===//
//
// The kernel IR's op table (every mnemonic names its op back) and its text
// parser: print -> parse -> print is exact for the test kernels in every
// buffer type and for constants at the edges of f32 and i32; the parsed
// kernel computes what the built one does; and every prefix and one-byte
// corruption of a printed kernel gives a kernel or an Error, never a crash.
// The messages themselves are checked by the lit tests
// (tests/lit/backends/kernel).
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <limits>

namespace nng {
namespace {

using namespace kerneltest;

TEST(KernelOpTable, MnemonicsNameTheirOps) {
  int Count = 0;
  for (int I = 0; isKnownOp(static_cast<Op>(I)); ++I, ++Count) {
    Op O = static_cast<Op>(I);
    Op Back;
    ASSERT_TRUE(opNamed(opName(O), Back)) << opName(O);
    EXPECT_EQ(Back, O) << opName(O);
    bool Expression =
        opTypeRule(O) != TypeRule::Leaf && opTypeRule(O) != TypeRule::Structure;
    EXPECT_EQ(Expression, opArity(O) > 0) << opName(O);
  }
  EXPECT_EQ(Count, static_cast<int>(Op::Store) + 1);
  Op Ignored;
  EXPECT_FALSE(opNamed("frob", Ignored));
  EXPECT_EQ(opName(static_cast<Op>(200)), "?");
}

std::string roundTrip(const Kernel &K) {
  return printKernel(parseKernel(printKernel(K), "test.kir"));
}

TEST(KernelParser, RoundTripsTheTestKernels) {
  for (DType T : {DType::F32, DType::F16, DType::BF16}) {
    for (const Kernel &K :
         {softmaxKernel(T), layerNormKernel(T), meanVarKernel(T), geluKernel(T),
          biasResidualReluKernel(T)})
      EXPECT_EQ(roundTrip(K), printKernel(K)) << printKernel(K);
  }
  Kernel S = sumOverCKernel();
  EXPECT_EQ(roundTrip(S), printKernel(S));
}

TEST(KernelParser, RoundTripsConstantsAtTheEdges) {
  KernelBuilder B("edges", 1);
  int Y = B.output("y", DType::F32, {0});
  int Z = B.output("z", DType::I32, {0});
  B.beginLoop();
  Value V = B.constF32(std::numeric_limits<float>::denorm_min());
  for (float F :
       {std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
        std::numeric_limits<float>::min(), -0.0f, 0.1f, 1e-7f,
        std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()})
    V = B.add(V, B.constF32(F));
  B.store(Y, V);
  Value I = B.constI32(std::numeric_limits<int32_t>::min());
  I = B.add(I, B.constI32(std::numeric_limits<int32_t>::max()));
  B.store(Z, B.select(B.constBool(false), I, B.constI32(0)));
  B.endLoop();
  Kernel K = B.finish();
  EXPECT_EQ(roundTrip(K), printKernel(K)) << printKernel(K);
}

TEST(KernelParser, ParsedKernelComputesTheSame) {
  Kernel Built = layerNormKernel(DType::F32);
  Kernel Parsed = parseKernel(printKernel(Built));
  const int64_t Rows = 3, Cols = 5;
  std::vector<float> X(Rows * Cols), G(Cols), Bias(Cols);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = static_cast<float>(I % 7) * 0.25f - 0.5f;
  for (int64_t I = 0; I < Cols; ++I) {
    G[I] = 1.0f + 0.1f * static_cast<float>(I);
    Bias[I] = 0.05f * static_cast<float>(I);
  }
  std::vector<float> A(X.size()), P(X.size());
  std::vector<int64_t> Sizes{Rows, Cols};
  void *BufsA[] = {X.data(), G.data(), Bias.data(), A.data()};
  void *BufsP[] = {X.data(), G.data(), Bias.data(), P.data()};
  ASSERT_EQ(Built.Buffers.size(), 4u);
  interpretKernel(Built, BufsA, Sizes);
  interpretKernel(Parsed, BufsP, Sizes);
  EXPECT_EQ(A, P);
}

TEST(KernelParser, PrefixesAndCorruptionsNeverCrash) {
  std::string Text = printKernel(layerNormKernel(DType::F16));
  size_t Parsed = 0, Refused = 0;
  auto Try = [&](const std::string &S) {
    try {
      Kernel K = parseKernel(S, "fuzz.kir");
      EXPECT_EQ(printKernel(parseKernel(printKernel(K))), printKernel(K));
      ++Parsed;
    } catch (const Error &E) {
      EXPECT_TRUE(E.kind() == ErrorKind::Parse || E.kind() == ErrorKind::Verify)
          << E.what();
      EXPECT_EQ(std::string(E.what()).rfind("fuzz.kir:", 0), 0u) << E.what();
      ++Refused;
    }
  };
  for (size_t N = 0; N < Text.size(); ++N)
    Try(Text.substr(0, N));
  const char Bytes[] = {'%', '@', '{', '}',  ',',  '=',    ':', '9',
                        '-', 'x', ' ', '\n', '\0', '\xff', '#'};
  for (size_t I = 0; I < Text.size(); I += 3)
    for (char C : Bytes) {
      std::string S = Text;
      S[I] = C;
      Try(S);
    }
  EXPECT_GT(Refused, 0u);
  EXPECT_GT(Parsed, 0u); // Some corruptions (in names, spaces) still read.
}

} // namespace
} // namespace nng
