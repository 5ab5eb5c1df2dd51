//===- JitMathTest.cpp - Accuracy of the JIT's math and conversions -------===//
//
// Sweeps the inline polynomials the JIT emits (exp, log, tanh, erf,
// sigmoid, and sqrt/rsqrt) over their f32 ranges and measures the distance
// in ulp to the correctly rounded result (double std:: functions rounded
// once, which is what the reference backend computes). The maxima are
// printed and recorded as test properties; each must be within 2 ulp.
// The f16/bf16 conversions must match nng::Half / nng::BFloat16 bit for bit
// (every f16, a sweep of f32 patterns). SKIPPED in builds without LLVM.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include <cstdio>
#include <functional>

namespace nng {
namespace {

using namespace kerneltest;

/// The f32 values of the bit patterns in [Lo, Hi] (as ordered keys: both
/// signs), about N of them, evenly spaced in the bit order.
std::vector<float> sweep(float Lo, float Hi, int64_t N) {
  auto Key = [](float F) {
    int32_t I = std::bit_cast<int32_t>(F);
    return I < 0 ? int64_t(INT32_MIN) - I : int64_t(I);
  };
  auto FromKey = [](int64_t K) {
    int32_t I = K < 0 ? static_cast<int32_t>(int64_t(INT32_MIN) - K)
                      : static_cast<int32_t>(K);
    return std::bit_cast<float>(I);
  };
  int64_t A = Key(Lo), B = Key(Hi);
  int64_t Step = std::max<int64_t>(1, (B - A) / N);
  std::vector<float> V;
  for (int64_t K = A; K <= B; K += Step)
    V.push_back(FromKey(K));
  V.push_back(Hi);
  return V;
}

/// Runs y = O(x) through the JIT over Xs.
std::vector<float> jitUnary(Op O, const std::vector<float> &Xs) {
  KernelBuilder B(std::string(opName(O)), 1);
  int X = B.input("x", DType::F32, {0});
  int Y = B.output("y", DType::F32, {0});
  B.beginLoop();
  B.store(Y, B.unary(O, B.load(X)));
  B.endLoop();
  std::vector<float> In = Xs, Out(Xs.size());
  void *Bufs[] = {In.data(), Out.data()};
  std::vector<int64_t> S{static_cast<int64_t>(Xs.size())};
  testJit().compile(B.finish())->run(Bufs, S);
  return Out;
}

struct Sweep {
  Op O;
  std::function<double(double)> Ref;
  float Lo, Hi;
  int64_t MaxUlp;
};

TEST(JitMath, UlpSweeps) {
  NNG_REQUIRE_JIT();
  std::vector<Sweep> Sweeps{
      {Op::Exp, [](double X) { return std::exp(X); }, -104.0f, 89.0f, 2},
      {Op::Log, [](double X) { return std::log(X); }, 1e-45f, 3.4e38f, 2},
      {Op::Tanh, [](double X) { return std::tanh(X); }, -12.0f, 12.0f, 2},
      {Op::Erf, [](double X) { return std::erf(X); }, -5.0f, 5.0f, 2},
      {Op::Sigmoid, [](double X) { return 1.0 / (1.0 + std::exp(-X)); },
       -104.0f, 30.0f, 2},
      {Op::Sqrt, [](double X) { return std::sqrt(X); }, 0.0f, 3.4e38f, 0},
      {Op::Rsqrt, [](double X) { return 1.0 / std::sqrt(X); }, 1e-45f, 3.4e38f,
       1},
  };
  for (const Sweep &S : Sweeps) {
    std::vector<float> Xs = sweep(S.Lo, S.Hi, 1 << 19);
    std::vector<float> Ys = jitUnary(S.O, Xs);
    int64_t Worst = 0;
    float WorstX = 0;
    for (size_t I = 0; I < Xs.size(); ++I) {
      float Ref = static_cast<float>(S.Ref(Xs[I]));
      int64_t D = ulpDistance(Ys[I], Ref);
      if (D > Worst) {
        Worst = D;
        WorstX = Xs[I];
      }
    }
    std::string Name(opName(S.O));
    std::printf("[ JitMath  ] %-8s max %lld ulp over %zu points in [%g, %g] "
                "(at x = %.9g)\n",
                Name.c_str(), static_cast<long long>(Worst), Xs.size(),
                double(S.Lo), double(S.Hi), double(WorstX));
    ::testing::Test::RecordProperty(Name + "_max_ulp", std::to_string(Worst));
    EXPECT_LE(Worst, S.MaxUlp) << Name << " at x = " << WorstX;
  }
}

/// Copies In (type From) to an output of type To through the JIT.
HostBuffer jitConvert(const HostBuffer &In, DType To) {
  KernelBuilder B("convert", 1);
  int X = B.input("x", In.T, {0});
  int Y = B.output("y", To, {0});
  B.beginLoop();
  B.store(Y, B.load(X));
  B.endLoop();
  HostBuffer Src = In, Out(To, In.size());
  void *Bufs[] = {Src.data(), Out.data()};
  std::vector<int64_t> S{static_cast<int64_t>(In.size())};
  testJit().compile(B.finish())->run(Bufs, S);
  return Out;
}

TEST(JitMath, HalfAndBfloatConversions) {
  NNG_REQUIRE_JIT();
  // Every f16 and bf16 pattern up to f32: exact.
  for (DType T : {DType::F16, DType::BF16}) {
    HostBuffer All(T, 65536);
    for (uint32_t H = 0; H < 65536; ++H) {
      uint16_t Bits = static_cast<uint16_t>(H);
      std::memcpy(All.Bytes.data() + 2 * H, &Bits, 2);
    }
    HostBuffer F = jitConvert(All, DType::F32);
    int Bad = 0;
    for (size_t I = 0; I < 65536 && Bad < 5; ++I)
      if (ulpDistance(F.get(I), All.get(I)) != 0) {
        ++Bad;
        ADD_FAILURE() << dtypeName(T) << " bits " << I << ": jit " << F.get(I)
                      << ", expected " << All.get(I);
      }
  }
  // A sweep of f32 patterns (both signs, NaN payloads, subnormals, ties)
  // down to f16 and bf16: bit for bit.
  std::vector<uint32_t> Patterns;
  for (uint64_t U = 0; U < (1ull << 32); U += 4093)
    Patterns.push_back(static_cast<uint32_t>(U));
  for (uint32_t U :
       {0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffbfffffu, 0x477ff000u,
        0x477fefffu, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u,
        0x3f801000u, 0x3f803000u, 0x3f808000u, 0x3f818000u})
    Patterns.push_back(U);
  HostBuffer F(DType::F32, Patterns.size());
  std::memcpy(F.Bytes.data(), Patterns.data(), 4 * Patterns.size());
  HostBuffer H = jitConvert(F, DType::F16), Bf = jitConvert(F, DType::BF16);
  int Bad = 0;
  for (size_t I = 0; I < Patterns.size() && Bad < 5; ++I) {
    float X = std::bit_cast<float>(Patterns[I]);
    uint16_t Hj, Bj;
    std::memcpy(&Hj, H.Bytes.data() + 2 * I, 2);
    std::memcpy(&Bj, Bf.Bytes.data() + 2 * I, 2);
    if (Hj != floatToHalfBits(X) || Bj != BFloat16(X).Bits) {
      ++Bad;
      ADD_FAILURE() << "f32 bits 0x" << std::hex << Patterns[I] << ": f16 0x"
                    << Hj << " (expected 0x" << floatToHalfBits(X)
                    << "), bf16 0x" << Bj << " (expected 0x" << BFloat16(X).Bits
                    << ")";
    }
  }
}

} // namespace
} // namespace nng
