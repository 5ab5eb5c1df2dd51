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
// A convolution whose result is bounded cannot produce a NaN, so a clamp
// after it may be oneDNN's clip post-op, which maps NaN to a number but is
// exact on finite values. The program then speculates (Program::Speculative):
// the constants the bounds came from are recorded with their storage
// versions, and a run whose guarded clamps met a NaN, or whose constants
// changed since compile, is redone by the program compiled without
// speculation, so results are always the reference's.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include <cmath>

namespace nng::backends::cpu {

namespace {

/// Bounds above this count as none.
constexpr double MaxBound = 1e30;

std::optional<double> checked(double B) {
  if (!(B <= MaxBound))
    return std::nullopt;
  return B;
}

/// Records that the bounds depend on constant T's current values.
void dependOn(LowerContext &C, const Tensor &T) {
  // Once per storage: runs check these versions.
  for (const auto &[D, Version] : C.program().ProofDeps)
    if (D.storage() == T.storage())
      return;
  C.program().ProofDeps.emplace_back(T, T.storage()->version());
}

/// max |x| of a constant f32 tensor; none when it holds NaN or infinity.
std::optional<double> constantBound(LowerContext &C, const Tensor &T) {
  if (T.dtype() != DType::F32)
    return std::nullopt;
  const Tensor D = T.isContiguous() ? T : T.contiguous();
  const float *X = static_cast<const float *>(D.rawData());
  double M = 0;
  for (int64_t I = 0, N = D.numel(); I < N; ++I) {
    float A = std::fabs(X[I]);
    if (!(A <= 3.4e38f))
      return std::nullopt;
    M = std::max<double>(M, A);
  }
  dependOn(C, T);
  return M;
}

/// max over output channels o of sum |W[o, ...]|; none when W holds NaN or
/// infinity.
std::optional<double> rowNormBound(LowerContext &C, const Tensor &W) {
  if (W.dtype() != DType::F32 || W.rank() < 1 || W.shape()[0] == 0)
    return std::nullopt;
  const Tensor D = W.isContiguous() ? W : W.contiguous();
  const float *X = static_cast<const float *>(D.rawData());
  int64_t Rows = D.shape()[0], Len = D.numel() / Rows;
  double M = 0;
  for (int64_t R = 0; R < Rows; ++R) {
    double S = 0;
    for (int64_t I = 0; I < Len; ++I) {
      float A = std::fabs(X[R * Len + I]);
      if (!(A <= 3.4e38f))
        return std::nullopt;
      S += A;
    }
    M = std::max(M, S);
  }
  dependOn(C, W);
  return M;
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
    const ir::FusedActivationInfo *A =
        ir::lookupFusedActivation(N.attrString("activation"));
    if (!A)
      return std::nullopt;
    std::vector<float> Given;
    if (N.attrs().has("activation_params"))
      Given = N.attr("activation_params").floats();
    if (Given.size() > A->Params.size())
      return std::nullopt;
    std::vector<float> P = ir::fusedActivationParams(*A, Given);
    if (A->Op == K::Clip)
      return clampBound(Pre, P[0], P[1], Guarded);
    if (A->Op == K::Relu)
      return Pre;
    return std::nullopt;
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
    const ValueSlot &S = C.slot(Slot->second);
    if (S.Type != DType::F32 || S.Kind == SlotKind::Input)
      return std::nullopt;
    if (S.Kind == SlotKind::Constant)
      return constantBound(C, S.Const);
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
  if (N.numInputs() < 2 || N.numInputs() > 3)
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

void speculateClamp(LowerContext &C, Activation &A,
                    std::optional<double> PreBound, const ir::Node &ClampNode) {
  if (!C.Speculate || !A.needsOwnLoop() || A.Own.K != Epilogue::Clamp)
    return;
  float Lo = A.Own.Lo, Hi = A.Own.Hi;
  bool Finite = std::isfinite(Lo) && std::isfinite(Hi);
  // Padding of blocked layouts stays zero only for a range holding 0.
  if (PreBound && Finite && Lo <= 0.0f && Hi >= 0.0f &&
      Lo <= Hi) {
    A.PostOps = {{dnnl::algorithm::eltwise_clip, Lo, Hi}};
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
