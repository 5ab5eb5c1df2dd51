//===- Calibration.cpp - Observing activation ranges ----------------------===//
//
// The graph is cloned with every observed value made an extra graph output,
// compiled once on a backend, and run on each calibration batch. Pass 1
// records each value's minimum and maximum (NaN and infinities are skipped:
// a range is about the finite values). MinMax stops there. The histogram
// methods run the batches again, binning |x| over [0, max |x|]:
//  - Percentile keeps the smallest |x| threshold below which the given
//    percentage of values lie;
//  - Entropy (the KL-divergence calibration of TensorRT and ONNX Runtime)
//    tries every threshold from 128 bins up, merges the clipped histogram
//    into 128 quantization levels, expands it back, and keeps the threshold
//    whose quantized distribution is closest (smallest KL divergence) to
//    the clipped float one.
// The chosen threshold t clips the observed range to [max(min, -t),
// min(max, t)].
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/passes/Quantize.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nng::passes::quant {

namespace {

/// Levels of the entropy method's quantized distribution (int8's 128
/// magnitudes).
constexpr int QuantLevels = 128;

struct Observer {
  float Min = std::numeric_limits<float>::infinity();
  float Max = -std::numeric_limits<float>::infinity();
  std::vector<double> Hist;
  double Width = 0; ///< Histogram bin width over |x|.

  void observeRange(const rt::Tensor &T) {
    const rt::Tensor C = T.isContiguous() ? T : T.contiguous();
    const float *X = C.data<float>();
    for (int64_t I = 0, N = C.numel(); I < N; ++I)
      if (std::isfinite(X[I])) {
        Min = std::min(Min, X[I]);
        Max = std::max(Max, X[I]);
      }
  }

  void startHistogram(int Bins) {
    Hist.assign(static_cast<size_t>(Bins), 0.0);
    double A = std::max(std::fabs(double(Min)), std::fabs(double(Max)));
    Width = A > 0 ? A / Bins : 0;
  }

  void observeHistogram(const rt::Tensor &T) {
    if (!(Width > 0))
      return;
    const rt::Tensor C = T.isContiguous() ? T : T.contiguous();
    const float *X = C.data<float>();
    int64_t Last = static_cast<int64_t>(Hist.size()) - 1;
    for (int64_t I = 0, N = C.numel(); I < N; ++I)
      if (std::isfinite(X[I])) {
        auto B = static_cast<int64_t>(std::fabs(double(X[I])) / Width);
        Hist[static_cast<size_t>(std::min(B, Last))] += 1;
      }
  }

  double percentileThreshold(double Percent) const {
    double Total = 0;
    for (double H : Hist)
      Total += H;
    double Want = Total * Percent / 100.0, Sum = 0;
    for (size_t I = 0; I < Hist.size(); ++I) {
      Sum += Hist[I];
      if (Sum >= Want)
        return (static_cast<double>(I) + 1) * Width;
    }
    return static_cast<double>(Hist.size()) * Width;
  }

  double entropyThreshold() const {
    int Bins = static_cast<int>(Hist.size());
    if (Bins <= QuantLevels)
      return Bins * Width;
    double BestKl = std::numeric_limits<double>::infinity();
    int Best = Bins;
    std::vector<double> P, Q;
    for (int I = QuantLevels; I <= Bins; ++I) {
      P.assign(Hist.begin(), Hist.begin() + I);
      double Outliers = 0;
      for (int J = I; J < Bins; ++J)
        Outliers += Hist[static_cast<size_t>(J)];
      P[static_cast<size_t>(I - 1)] += Outliers;
      // Merge the I bins into QuantLevels levels, then spread each level's
      // count evenly over its non-empty bins.
      Q.assign(static_cast<size_t>(I), 0.0);
      double Per = static_cast<double>(I) / QuantLevels;
      for (int L = 0; L < QuantLevels; ++L) {
        int Lo = static_cast<int>(std::floor(L * Per));
        int Hi = L + 1 == QuantLevels ? I
                                      : static_cast<int>(std::floor((L + 1) * Per));
        double Sum = 0;
        int NonZero = 0;
        for (int J = Lo; J < Hi; ++J) {
          Sum += Hist[static_cast<size_t>(J)];
          NonZero += Hist[static_cast<size_t>(J)] > 0;
        }
        for (int J = Lo; J < Hi; ++J)
          if (Hist[static_cast<size_t>(J)] > 0)
            Q[static_cast<size_t>(J)] = Sum / NonZero;
      }
      double SP = 0, SQ = 0;
      for (int J = 0; J < I; ++J) {
        SP += P[static_cast<size_t>(J)];
        SQ += Q[static_cast<size_t>(J)];
      }
      if (!(SP > 0) || !(SQ > 0))
        continue;
      double Kl = 0;
      for (int J = 0; J < I; ++J) {
        double Pj = P[static_cast<size_t>(J)] / SP;
        if (Pj <= 0)
          continue;
        // Q is 0 only where P's unclipped count is 0 (the outlier bin):
        // smooth it so the divergence stays finite.
        double Qj = std::max(Q[static_cast<size_t>(J)] / SQ, 1e-12);
        Kl += Pj * std::log(Pj / Qj);
      }
      if (Kl < BestKl) {
        BestKl = Kl;
        Best = I;
      }
    }
    return (static_cast<double>(Best) + 0.5) * Width;
  }
};

} // namespace

CalibrationMethod parseCalibrationMethod(std::string_view Name) {
  if (Name == "minmax")
    return CalibrationMethod::MinMax;
  if (Name == "percentile")
    return CalibrationMethod::Percentile;
  if (Name == "entropy")
    return CalibrationMethod::Entropy;
  fail(ErrorKind::InvalidArgument, "unknown calibration method '", Name,
                 "'; valid: minmax, percentile, entropy");
}

std::string_view calibrationMethodName(CalibrationMethod M) {
  switch (M) {
  case CalibrationMethod::MinMax:
    return "minmax";
  case CalibrationMethod::Percentile:
    return "percentile";
  case CalibrationMethod::Entropy:
    return "entropy";
  }
  return "?";
}

RangeMap calibrate(const ir::Graph &G, const std::vector<std::string> &Values,
                   const std::vector<Batch> &Batches, const QuantizeOptions &O,
                   const std::string &Backend,
                   const CalibrationProgress &Progress) {
  NNG_CHECK(!Batches.empty(),
                 "calibration: the calibration set is empty; give at least "
                 "one sample per graph input");
  NNG_CHECK(O.Method == CalibrationMethod::MinMax ||
                     O.HistogramBins >= QuantLevels,
                 "calibration: at least ", QuantLevels,
                 " histogram bins are needed, not ", O.HistogramBins);
  NNG_CHECK(O.Method != CalibrationMethod::Percentile ||
                     (O.Percentile > 0 && O.Percentile <= 100),
                 "calibration: the percentile must lie in (0, 100], not ",
                 O.Percentile);
  std::unique_ptr<ir::Graph> Obs = G.clone();
  size_t First = Obs->outputs().size();
  for (const std::string &Name : Values) {
    ir::Value *V = Obs->lookup(Name);
    NNG_CHECK(V, "calibration: graph '", G.name(),
                   "' has no value named '", Name, "'");
    NNG_CHECK(V->type().dtype() == DType::F32,
                   "calibration: value '", Name, "' is ",
                   dtypeName(V->type().dtype()), ", not f32");
    Obs->addOutput(V);
  }
  std::unique_ptr<backends::Executable> Exe =
      backends::getBackend(Backend).compile(*Obs);
  std::vector<Observer> Seen(Values.size());
  bool Histograms = O.Method != CalibrationMethod::MinMax;
  for (int Pass = 1; Pass <= (Histograms ? 2 : 1); ++Pass) {
    if (Pass == 2)
      for (Observer &S : Seen)
        S.startHistogram(O.HistogramBins);
    for (size_t B = 0; B < Batches.size(); ++B) {
      backends::checkInputs(*Obs, Batches[B]);
      std::vector<rt::Tensor> Outs = Exe->run(Batches[B]);
      for (size_t I = 0; I < Values.size(); ++I) {
        const rt::Tensor &T = Outs.at(First + I);
        if (Pass == 1)
          Seen[I].observeRange(T);
        else
          Seen[I].observeHistogram(T);
      }
      if (Progress)
        Progress(Pass, B + 1, Batches.size());
    }
  }
  RangeMap Ranges;
  for (size_t I = 0; I < Values.size(); ++I) {
    const Observer &S = Seen[I];
    Range R;
    if (S.Min <= S.Max) { // Some finite value was seen.
      R = {S.Min, S.Max};
      double T = std::numeric_limits<double>::infinity();
      if (O.Method == CalibrationMethod::Percentile && S.Width > 0)
        T = S.percentileThreshold(O.Percentile);
      else if (O.Method == CalibrationMethod::Entropy && S.Width > 0)
        T = S.entropyThreshold();
      R.Min = static_cast<float>(std::max<double>(R.Min, -T));
      R.Max = static_cast<float>(std::min<double>(R.Max, T));
    }
    Ranges[Values[I]] = R;
  }
  return Ranges;
}

} // namespace nng::passes::quant
