//===- QuantMath.cpp - Scales, zero points and int8 weights ---------------===//
//
// Parameters follow ONNX Runtime's quantizer: activations asymmetric over
// [min(lo, 0), max(hi, 0)] with 256 levels; weights symmetric over
// [-127, 127] (so that -128 never occurs and VNNI's u8 x s8 products cannot
// saturate); biases i32 at the product of the input and weight scales.
//
//===----------------------------------------------------------------------===//

#include "QuantMath.h"

#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nng::passes::quant {

namespace {

/// Scales below this would overflow 1 / scale; such ranges count as zero.
constexpr float MinScale = 1e-30f;

int32_t qmin(DType T) { return T == DType::U8 ? 0 : -128; }
int32_t qmax(DType T) { return T == DType::U8 ? 255 : 127; }

} // namespace

QParams activationParams(Range R, bool Signed) {
  QParams P;
  P.Type = Signed ? DType::I8 : DType::U8;
  double Lo = std::min<double>(R.Min, 0), Hi = std::max<double>(R.Max, 0);
  NNG_CHECK(std::isfinite(Lo) && std::isfinite(Hi),
            "quantize: a calibrated range is not finite (", R.Min, ", ", R.Max,
            "); the calibration data produced infinities or NaNs");
  double Scale = (Hi - Lo) / 255.0;
  if (!(Scale >= MinScale)) {
    P.Scale = 1;
    P.ZeroPoint = 0;
    return P;
  }
  P.Scale = static_cast<float>(Scale);
  double Z = qmin(P.Type) - std::nearbyint(Lo / P.Scale);
  P.ZeroPoint = static_cast<int32_t>(
      std::clamp<double>(Z, qmin(P.Type), qmax(P.Type)));
  return P;
}

int32_t quantizeValue(float X, const QParams &P) {
  double Q = std::nearbyint(static_cast<double>(X / P.Scale)) + P.ZeroPoint;
  if (std::isnan(Q))
    Q = P.ZeroPoint;
  return static_cast<int32_t>(
      std::clamp<double>(Q, qmin(P.Type), qmax(P.Type)));
}

QuantizedWeights quantizeWeights(const rt::Tensor &W, int64_t Axis,
                                 bool PerChannel) {
  NNG_CHECK(W.dtype() == DType::F32, "quantize: weights must be f32, not ",
            dtypeName(W.dtype()));
  const rt::Tensor C = W.isContiguous() ? W : W.contiguous();
  const float *X = C.data<float>();
  int64_t N = C.numel();
  int64_t Channels = 1, Inner = N;
  if (PerChannel) {
    NNG_CHECK(Axis >= 0 && Axis < C.rank(), "quantize: weight axis ", Axis,
              " outside rank ", C.rank());
    Channels = C.size(Axis);
    Inner = 1;
    for (int64_t D = Axis + 1; D < C.rank(); ++D)
      Inner *= C.size(D);
  }
  // Element I belongs to channel (I / Inner) % Channels.
  std::vector<float> AbsMax(static_cast<size_t>(Channels), 0.f);
  for (int64_t I = 0; I < N; ++I) {
    float A = std::fabs(X[I]);
    NNG_CHECK(std::isfinite(A),
              "quantize: weights hold a NaN or infinity at flat index ", I,
              "; fix the model's weights first");
    float &M = AbsMax[static_cast<size_t>((I / Inner) % Channels)];
    M = std::max(M, A);
  }
  QuantizedWeights Q;
  Q.Scales.resize(AbsMax.size());
  for (size_t Ch = 0; Ch < AbsMax.size(); ++Ch) {
    float S = AbsMax[Ch] / 127.f;
    Q.Scales[Ch] = S >= MinScale ? S : 1.f;
  }
  Q.Values = rt::Tensor::empty(C.shape(), DType::I8);
  int8_t *Y = Q.Values.data<int8_t>();
  for (int64_t I = 0; I < N; ++I) {
    float S = Q.Scales[static_cast<size_t>((I / Inner) % Channels)];
    double R = std::nearbyint(static_cast<double>(X[I] / S));
    Y[I] = static_cast<int8_t>(std::clamp<double>(R, -127, 127));
  }
  return Q;
}

rt::Tensor quantizeBias(const rt::Tensor &B, float InputScale,
                        const std::vector<float> &WeightScales) {
  NNG_CHECK(B.dtype() == DType::F32 && B.rank() == 1,
            "quantize: a bias must be a 1-D f32 constant");
  const rt::Tensor C = B.isContiguous() ? B : B.contiguous();
  int64_t N = C.numel();
  NNG_CHECK(WeightScales.size() == 1 ||
                static_cast<int64_t>(WeightScales.size()) == N,
            "quantize: ", WeightScales.size(), " weight scales for a bias of ",
            N, " values");
  rt::Tensor Out = rt::Tensor::empty(C.shape(), DType::I32);
  int32_t *Y = Out.data<int32_t>();
  const float *X = C.data<float>();
  constexpr double Lo = std::numeric_limits<int32_t>::min(),
                   Hi = std::numeric_limits<int32_t>::max();
  for (int64_t I = 0; I < N; ++I) {
    double S = static_cast<double>(InputScale) *
               WeightScales[WeightScales.size() == 1 ? 0 : I];
    double R = std::nearbyint(static_cast<double>(X[I]) / S);
    Y[I] = static_cast<int32_t>(std::clamp(std::isnan(R) ? 0.0 : R, Lo, Hi));
  }
  return Out;
}

rt::Tensor scaleTensor(const std::vector<float> &Scales, bool Vector) {
  if (!Vector)
    return rt::Tensor::scalar<float>(Scales.at(0));
  return rt::Tensor::fromVector<float>(
      Scales, Shape{static_cast<int64_t>(Scales.size())});
}

rt::Tensor zeroPointTensor(int32_t ZeroPoint, DType Type, int64_t Count,
                           bool Vector) {
  Shape Sh = Vector ? Shape{Count} : Shape{};
  rt::Tensor T = rt::Tensor::empty(Sh, Type);
  int64_t N = T.numel();
  for (int64_t I = 0; I < N; ++I) {
    if (Type == DType::U8)
      T.data<uint8_t>()[I] = static_cast<uint8_t>(ZeroPoint);
    else
      T.data<int8_t>()[I] = static_cast<int8_t>(ZeroPoint);
  }
  return T;
}

} // namespace nng::passes::quant
