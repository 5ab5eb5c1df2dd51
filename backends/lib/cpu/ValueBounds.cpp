//===- ValueBounds.cpp - Compile-time magnitude bounds of values ----------===//
//
// A bound B on a value says: every element is finite and |x| <= B, provided
// no guarded clamp of the run met a NaN. Guarded clamps are the own loops of
// a Clip with finite bounds (ReLU6): whatever their input (+-inf included)
// their result lies in [lo, hi] unless the input holds a NaN, which they
// report. From the graph inputs (no bound) bounds flow through the ops whose
// result magnitude follows from their operands': a convolution with
// constant weights (|y| <= B_x max_o sum |W[o]| + max |b|, for any order of
// summation), Add, Sub, Mul, pooling, reshapes, Concat, Relu, LeakyRelu,
// Clip, Tanh, Sigmoid and Softmax. Bounds over 1e30 (FLT_MAX is 3.4e38)
// count as none, so rounding cannot reach infinity.
//
// A guard (emitGuard) checks at run time that a value is finite and below
// a limit: a 3x3 convolution run as Winograd's algorithm (LowerConv.cpp)
// gives the direct convolution's results, up to rounding, only on such
// inputs (an infinity becomes NaN in its transforms, a NaN spreads over
// the output tile), and its ReLU may then be oneDNN's.
//
// A convolution whose result is bounded cannot produce a NaN, so a clamp
// after it may be oneDNN's clip post-op, which maps NaN to a number but is
// exact on finite values. The program then speculates (Program::Speculative):
// what the bounds assume of constants (their max |x| or row norms) is
// recorded with their storage versions, and a run whose guards met a NaN,
// or whose constants changed since compile past those assumptions, is
// redone by the program compiled without speculation, so results are
// always the reference's.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include <cmath>

namespace nng::backends::cpu {

double proofMeasure(const Tensor &T, ProofDep::Measure M) {
  const Tensor D = T.isContiguous() ? T : T.contiguous();
  const float *X = static_cast<const float *>(D.rawData());
  int64_t N = D.numel();
  int64_t Rows = M == ProofDep::RowNorm && D.rank() > 0 && D.shape()[0] > 0
                     ? D.shape()[0]
                     : 1;
  int64_t Len = N / Rows;
  double Result = 0;
  for (int64_t R = 0; R < Rows; ++R) {
    double Sum = 0, Max = 0;
    for (int64_t I = 0; I < Len; ++I) {
      float A = std::fabs(X[R * Len + I]);
      if (!(A <= 3.4e38f))
        return NAN;
      Sum += A;
      Max = std::max<double>(Max, A);
    }
    Result = std::max(Result, M == ProofDep::RowNorm ? Sum : Max);
  }
  return Result;
}

namespace {

/// Bounds above this count as none.
constexpr double MaxBound = 1e30;
/// How much larger than at compile time a Winograd convolution's weights
/// may become (updated in place) before its guard's limit no longer holds.
constexpr double WinogradSlack = 16;

std::optional<double> checked(double B) {
  if (!(B <= MaxBound))
    return std::nullopt;
  return B;
}

/// Records that the bounds assume measure M of constant T stays at most
/// Assumed (the tightest assumption per storage and measure is kept).
void dependOn(LowerContext &C, const Tensor &T, ProofDep::Measure M,
              double Assumed) {
  for (ProofDep &D : C.program().ProofDeps)
    if (D.T.storage() == T.storage() && D.M == M) {
      D.Assumed = std::min(D.Assumed, Assumed);
      return;
    }
  C.program().ProofDeps.push_back({T, M, Assumed, T.storage()->version()});
}

/// Measure M of the constant f32 tensor T times Slack (headroom for later
/// in-place updates: weights trained or loaded again within it keep the
/// program), recorded as an assumption; none when T holds NaN or infinity.
std::optional<double> assumedMeasure(LowerContext &C, const Tensor &T,
                                     ProofDep::Measure M, double Slack = 1) {
  if (T.dtype() != DType::F32 || (M == ProofDep::RowNorm &&
                                  (T.rank() < 1 || T.shape()[0] == 0)))
    return std::nullopt;
  double V = proofMeasure(T, M);
  if (!(V <= 3.4e38))
    return std::nullopt;
  dependOn(C, T, M, V * Slack);
  return V * Slack;
}

/// max |x| of a constant f32 tensor; none when it holds NaN or infinity.
std::optional<double> constantBound(LowerContext &C, const Tensor &T,
                                    double Slack = 1) {
  return assumedMeasure(C, T, ProofDep::MaxAbs, Slack);
}

/// max over output channels o of sum |W[o, ...]|; none when W holds NaN or
/// infinity.
std::optional<double> rowNormBound(LowerContext &C, const Tensor &W) {
  return assumedMeasure(C, W, ProofDep::RowNorm);
}

/// The constant scalar input I of N (Clip's bounds), Default when absent;
/// none when it is not a constant f32 scalar.
std::optional<float> scalarInput(LowerContext &C, const ir::Node &N,
                                 size_t I, float Default) {
  if (!N.hasInput(I))
    return Default;
  const Tensor *T = C.constantOf(N.input(I));
  if (!T || T->dtype() != DType::F32 || T->numel() != 1)
    return std::nullopt;
  return static_cast<float>(T->getFlat(0));
}

/// The bound of a clamp to [Lo, Hi] of an operand bounded by In (none: the
/// operand may hold anything), run by a guarded loop when Guarded.
/// The activation a fused node's 'activation' names, its parameters in P
/// ('activation_params' with the table's defaults); null when the node
/// names none the table has, or gives too many parameters.
const ir::FusedActivationInfo *fusedActivationOf(const ir::Node &N,
                                                 std::vector<float> &P) {
  const ir::FusedActivationInfo *A =
      ir::lookupFusedActivation(N.attrString("activation"));
  if (!A)
    return nullptr;
  std::vector<float> Given;
  if (N.attrs().has("activation_params"))
    Given = N.attr("activation_params").floats();
  if (Given.size() > A->Params.size())
    return nullptr;
  P = ir::fusedActivationParams(*A, Given);
  return A;
}

std::optional<double> clampBound(std::optional<double> In, float Lo,
                                  float Hi, bool Guarded) {
  bool Finite = std::isfinite(Lo) && std::isfinite(Hi);
  double Range = std::max(std::fabs(double(Lo)), std::fabs(double(Hi)));
  if (In)
    return Finite ? std::min(*In, Range) : *In;
  if (Finite && Guarded)
    return Range;
  return std::nullopt;
}

std::optional<double> computeBound(LowerContext &C, const ir::Value *V);

std::optional<double> boundOfNode(LowerContext &C, const ir::Node &N,
                                  const ir::Value *V) {
  using K = ir::OpKind;
  auto In = [&](size_t I) -> std::optional<double> {
    if (!N.hasInput(I))
      return std::nullopt;
    return valueBound(C, N.input(I));
  };
  if (V != N.output(0))
    return std::nullopt; // Second outputs (pooling indices, masks).
  bool Guarded = C.GuardedClamps.count(&N) != 0;
  switch (N.op()) {
  case K::Conv:
    return convResultBound(C, N);
  case K::FusedConv: {
    std::optional<double> Pre = convResultBound(C, N);
    if (Pre && N.hasInput(3)) {
      std::optional<double> S = In(3);
      Pre = S ? checked(*Pre + *S) : std::nullopt;
    }
    std::vector<float> P;
    const ir::FusedActivationInfo *A = fusedActivationOf(N, P);
    if (!A)
      return std::nullopt;
    if (A->Op == K::Clip)
      return clampBound(Pre, P[0], P[1], Guarded);
    if (A->Op == K::Relu || A->Op == K::Identity)
      return Pre;
    // As the standalone activations below, which the epilogue rule fused.
    if (!Pre)
      return std::nullopt;
    if (A->Op == K::LeakyRelu)
      return checked(*Pre * std::max(1.0, std::fabs(double(P[0]))));
    if (A->Op == K::Tanh)
      return 1.0;
    return std::nullopt;
  }
  case K::FusedMatMul: {
    // A product has no bound (as MatMul); a clamp after it bounds the
    // result when a guarded loop runs it, as the fused Clip's did.
    std::vector<float> P;
    const ir::FusedActivationInfo *A = fusedActivationOf(N, P);
    if (!A || A->Op != K::Clip)
      return std::nullopt;
    return clampBound(std::nullopt, P[0], P[1], Guarded);
  }
  case K::Clip: {
    std::optional<float> Lo = scalarInput(C, N, 1, -INFINITY);
    std::optional<float> Hi = scalarInput(C, N, 2, INFINITY);
    if (!Lo || !Hi)
      return std::nullopt;
    return clampBound(In(0), *Lo, *Hi, Guarded);
  }
  case K::Relu:
  case K::MaxPool:
  case K::AveragePool:
  case K::GlobalAveragePool:
  case K::GlobalMaxPool:
  case K::Reshape:
  case K::Flatten:
  case K::Squeeze:
  case K::Unsqueeze:
  case K::Transpose:
  case K::Identity:
  case K::Dropout:
    return In(0);
  case K::LeakyRelu: {
    std::optional<double> B = In(0);
    if (!B)
      return std::nullopt;
    return checked(*B * std::max(1.0, std::fabs(double(N.attrFloat("alpha")))));
  }
  case K::Tanh:
  case K::Sigmoid:
  case K::Softmax:
    return In(0) ? std::optional<double>(1.0) : std::nullopt;
  case K::Add:
  case K::Sub: {
    std::optional<double> A = In(0), B = In(1);
    return A && B ? checked(*A + *B) : std::nullopt;
  }
  case K::Mul: {
    std::optional<double> A = In(0), B = In(1);
    return A && B ? checked(*A * *B) : std::nullopt;
  }
  case K::Concat: {
    double M = 0;
    for (size_t I = 0; I < N.numInputs(); ++I) {
      std::optional<double> B = In(I);
      if (!B)
        return std::nullopt;
      M = std::max(M, *B);
    }
    return M;
  }
  default:
    return std::nullopt;
  }
}

std::optional<double> computeBound(LowerContext &C, const ir::Value *V) {
  // Values fused into another node's step have no slot: their producer
  // tells.
  auto Slot = C.SlotOf.find(V);
  if (Slot != C.SlotOf.end()) {
    ValueSlot &S = C.slot(Slot->second);
    if (S.Type != DType::F32 || S.Kind == SlotKind::Input)
      return std::nullopt;
    if (S.Kind == SlotKind::Constant) {
      S.Baked = true; // The bound holds for these values only.
      return constantBound(C, S.Const);
    }
  } else if (V->type().dtype() != DType::F32) {
    return std::nullopt;
  }
  if (!V->producer())
    return std::nullopt;
  return boundOfNode(C, *V->producer(), V);
}

} // namespace

std::optional<double> valueBound(LowerContext &C, const ir::Value *V) {
  auto It = C.Bounds.find(V);
  if (It != C.Bounds.end())
    return It->second;
  std::optional<double> B = computeBound(C, V);
  C.Bounds.emplace(V, B);
  return B;
}

std::optional<double> convResultBound(LowerContext &C, const ir::Node &N) {
  // (FusedConv's fourth input is its residual Sum, added after.)
  if (N.numInputs() < 2 ||
      N.numInputs() > (N.op() == ir::OpKind::FusedConv ? 4u : 3u))
    return std::nullopt;
  std::optional<double> X = valueBound(C, N.input(0));
  if (!X)
    return std::nullopt;
  const Tensor *W = C.constantOf(N.input(1));
  if (!W)
    return std::nullopt;
  std::optional<double> Norm = rowNormBound(C, *W);
  if (!Norm)
    return std::nullopt;
  double B = *X * *Norm;
  if (N.hasInput(2)) {
    std::optional<double> Bias = valueBound(C, N.input(2));
    if (!Bias)
      return std::nullopt;
    B += *Bias;
  }
  return checked(B);
}

std::optional<float> winogradInputLimit(LowerContext &C, const Tensor &W,
                                        const Tensor *Bias) {
  // Headroom: weights updated in place (training, loaded again) up to 16
  // times larger keep the program.
  std::optional<double> WMax = constantBound(C, W, WinogradSlack);
  std::optional<double> BMax = Bias ? constantBound(C, *Bias, WinogradSlack) : 0.0;
  if (!WMax || !BMax || *BMax > MaxBound || W.rank() < 2)
    return std::nullopt;
  // Each output sums W.numel() / W.shape()[0] products, so |y| <= Terms *
  // WMax * limit + BMax. Winograd's transforms (F(2x2,3x3), F(4x4,3x3))
  // scale each operand and partial sum by at most a few hundred: 1e4 more
  // keeps every intermediate below MaxBound, far from FLT_MAX.
  double Terms = static_cast<double>(W.numel() / W.shape()[0]);
  double Limit = (MaxBound - *BMax) / (1e4 * Terms * std::max(*WMax, 1.0));
  return static_cast<float>(std::min(Limit, MaxBound));
}

void emitGuard(LowerContext &C, const std::vector<std::pair<int, float>> &Checks,
               std::string Desc) {
  std::vector<int> Reads;
  for (const auto &Check : Checks)
    Reads.push_back(Check.first);
  auto Fn = [Checks](Program &P) {
    for (const auto &[S, Limit] : Checks) {
      const ValueSlot &V = P.Slots[S];
      const float *X = static_cast<const float *>(
          V.Kind == SlotKind::Buffer ? P.bufferData(S) : P.dataOf(S));
      int64_t Count = V.Kind == SlotKind::Buffer
                          ? static_cast<int64_t>(P.layoutOf(S).get_size() /
                                                 sizeof(float))
                          : V.S.numel();
      if (!allWithin(X, Count, Limit))
        P.GuardTripped = true;
    }
  };
  // A step reading the slots and writing nothing of its own.
  auto St = std::make_unique<LoopStep>(std::move(Fn));
  St->Desc = std::move(Desc);
  for (int S : Reads)
    C.B.reads(S);
  C.B.emit(std::move(St));
  ++C.program().Stats.Guards;
  C.program().Speculative = true;
}

Activation onFiniteValues(Activation A) {
  if (A.Own.K != Epilogue::Clamp)
    return A;
  if (A.Own.Lo == 0.0f && A.Own.Hi == INFINITY)
    A.PostOps = {{dnnl::algorithm::eltwise_relu, 0.0f, 0.0f}};
  else
    A.PostOps = {{dnnl::algorithm::eltwise_clip, A.Own.Lo, A.Own.Hi}};
  A.Own = {};
  return A;
}

void speculateClamp(LowerContext &C, Activation &A,
                    std::optional<double> PreBound, const ir::Node &ClampNode) {
  if (!C.Speculate || !A.needsOwnLoop() || A.Own.K != Epilogue::Clamp)
    return;
  float Lo = A.Own.Lo, Hi = A.Own.Hi;
  bool Finite = std::isfinite(Lo) && std::isfinite(Hi);
  // Padding of blocked layouts stays zero only for a range holding 0.
  if (PreBound && Finite && Lo <= 0.0f && Hi >= 0.0f &&
      Lo <= Hi) {
    A = onFiniteValues(A);
    C.program().Speculative = true;
    ++C.program().Stats.ProvenClamps;
    return;
  }
  if (Finite) {
    A.Own.Guard = true; // GuardedClamps gets ClampNode when it is emitted.
    A.Own.GuardNode = &ClampNode;
  }
}

} // namespace nng::backends::cpu
