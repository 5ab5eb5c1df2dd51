//===- KernelsRandom.cpp - ONNX's random generators -----------------------===//
//
// RandomUniform, RandomNormal, their -Like forms, Bernoulli and
// Multinomial. Each draw is a counter-based hash (splitmix64 of the seed
// and the element's index, as Dropout's), so a node with a seed attribute
// gives the same values on every run and backend; without one, each run
// takes a new stream from a process-wide counter. Normal samples come from
// pairs of uniform ones (Box-Muller). ONNX's expected outputs came from
// numpy's generator: tests compare them by their moments, not values.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/runtime/SplitMix64.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <numbers>

namespace nng::backends::reference {

namespace {

/// The stream of C's node: its seed attribute's bits, else a new one per
/// call.
uint64_t streamOf(const KernelContext &C) {
  static std::atomic<uint64_t> Next{0x6e6e6772616e64ULL};
  if (C.N.attrs().has("seed"))
    return splitMix64(std::bit_cast<uint32_t>(C.attrFloat("seed")));
  return splitMix64(Next.fetch_add(1, std::memory_order_relaxed));
}

/// Uniform in [0, 1): draw I of stream S.
double uniformAt(uint64_t S, int64_t I) {
  uint64_t H =
      splitMix64(S * 0x100000001b3ULL ^ splitMix64(static_cast<uint64_t>(I)));
  return static_cast<double>(H >> 11) * 0x1.0p-53;
}

/// Standard normal: draw I of stream S (Box-Muller on draws 2i and 2i+1;
/// odd I take the sine of the pair).
double normalAt(uint64_t S, int64_t I) {
  int64_t Pair = I / 2;
  double U1 = 1.0 - uniformAt(S, 2 * Pair); // In (0, 1]: log is finite.
  double U2 = uniformAt(S, 2 * Pair + 1);
  double R = std::sqrt(-2.0 * std::log(U1));
  double A = 2.0 * std::numbers::pi * U2;
  return R * (I % 2 ? std::sin(A) : std::cos(A));
}

void fillUniform(KernelContext &C, Tensor &Y) {
  double Lo = C.attrFloat("low"), Hi = C.attrFloat("high");
  if (!(Lo <= Hi))
    C.fail("low ", Lo, " must not exceed high ", Hi);
  uint64_t S = streamOf(C);
  for (int64_t I = 0; I < Y.numel(); ++I)
    Y.setFlat(I, Lo + (Hi - Lo) * uniformAt(S, I));
}

void fillNormal(KernelContext &C, Tensor &Y) {
  double Mean = C.attrFloat("mean"), Scale = C.attrFloat("scale");
  uint64_t S = streamOf(C);
  for (int64_t I = 0; I < Y.numel(); ++I)
    Y.setFlat(I, Mean + Scale * normalAt(S, I));
}

} // namespace

void kernelRandomUniform(KernelContext &C) { fillUniform(C, C.allocOutput(0)); }
void kernelRandomNormal(KernelContext &C) { fillNormal(C, C.allocOutput(0)); }
void kernelRandomUniformLike(KernelContext &C) {
  fillUniform(C, C.allocOutput(0));
}
void kernelRandomNormalLike(KernelContext &C) {
  fillNormal(C, C.allocOutput(0));
}

void kernelBernoulli(KernelContext &C) {
  const Tensor &P = C.in(0);
  Tensor &Y = C.allocOutput(0);
  uint64_t S = streamOf(C);
  for (int64_t I = 0; I < P.numel(); ++I) {
    double Pi = P.getFlat(I);
    if (!(Pi >= 0 && Pi <= 1))
      C.fail("probability ", Pi, " at index ", I, " is outside [0, 1]");
    Y.setFlat(I, uniformAt(S, I) < Pi ? 1.0 : 0.0);
  }
}

void kernelMultinomial(KernelContext &C) {
  const Tensor &X = C.in(0);
  Tensor &Y = C.allocOutput(0);
  int64_t Batch = X.size(0), Classes = X.size(1), Samples = Y.size(1);
  if (Classes == 0 && Samples > 0)
    C.fail("input ", X.shape().toString(), " has no classes to sample");
  uint64_t S = streamOf(C);
  std::vector<double> Cum(static_cast<size_t>(Classes));
  for (int64_t B = 0; B < Batch; ++B) {
    // Cumulative softmax of the row (unnormalized log-probabilities).
    double Max = -INFINITY;
    for (int64_t K = 0; K < Classes; ++K)
      Max = std::max(Max, X.getFlat(B * Classes + K));
    double Sum = 0;
    for (int64_t K = 0; K < Classes; ++K)
      Cum[K] = Sum += std::exp(X.getFlat(B * Classes + K) - Max);
    if (!(Sum > 0) || !std::isfinite(Sum))
      C.fail("row ", B, " of the input has no finite probabilities");
    for (int64_t J = 0; J < Samples; ++J) {
      double U = uniformAt(S, B * Samples + J) * Sum;
      int64_t K = std::upper_bound(Cum.begin(), Cum.end(), U) - Cum.begin();
      Y.setFlat(B * Samples + J, static_cast<double>(std::min(K, Classes - 1)));
    }
  }
}

} // namespace nng::backends::reference
