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

/// A histogram of magnitudes over [0, Width * bins).
struct Histogram {
  std::vector<double> Bins;
  double Width = 0;

  void start(int N, double Magnitude) {
    Bins.assign(static_cast<size_t>(N), 0.0);
    Width = Magnitude > 0 ? Magnitude / N : 0;
  }
  void add(double A) {
    if (!(Width > 0))
      return;
    auto B = static_cast<int64_t>(A / Width);
    int64_t Last = static_cast<int64_t>(Bins.size()) - 1;
    Bins[static_cast<size_t>(std::min(B, Last))] += 1;
  }

  /// The smallest threshold below which Percent of the values lie.
  double percentile(double Percent) const {
    double Total = 0;
    for (double H : Bins)
      Total += H;
    double Want = Total * Percent / 100.0, Sum = 0;
    for (size_t I = 0; I < Bins.size(); ++I) {
      Sum += Bins[I];
      if (Sum >= Want)
        return (static_cast<double>(I) + 1) * Width;
    }
    return static_cast<double>(Bins.size()) * Width;
  }

  /// The KL-divergence threshold. The zero bin takes its neighbour's count
  /// first (as NVIDIA's pytorch-quantization does): a ReLU's many exact
  /// zeros would otherwise pull the threshold far down. Among equal
  /// divergences the largest threshold wins (a lone spike is kept).
  double entropy() const {
    int N = static_cast<int>(Bins.size());
    if (N <= QuantLevels || !(Width > 0))
      return N * Width;
    std::vector<double> H = Bins;
    H[0] = H[1];
    double BestKl = std::numeric_limits<double>::infinity();
    int Best = N;
    std::vector<double> P, Q;
    for (int I = QuantLevels; I <= N; ++I) {
      P.assign(H.begin(), H.begin() + I);
      double Outliers = 0;
      for (int J = I; J < N; ++J)
        Outliers += H[static_cast<size_t>(J)];
      P[static_cast<size_t>(I - 1)] += Outliers;
      // Merge the I bins into QuantLevels levels, then spread each level's
      // count evenly over its non-empty bins.
      Q.assign(static_cast<size_t>(I), 0.0);
      double Per = static_cast<double>(I) / QuantLevels;
      for (int L = 0; L < QuantLevels; ++L) {
        int Lo = static_cast<int>(std::floor(L * Per));
        int Hi = L + 1 == QuantLevels
                     ? I
                     : static_cast<int>(std::floor((L + 1) * Per));
        double Sum = 0;
        int NonZero = 0;
        for (int J = Lo; J < Hi; ++J) {
          Sum += H[static_cast<size_t>(J)];
          NonZero += H[static_cast<size_t>(J)] > 0;
        }
        for (int J = Lo; J < Hi; ++J)
          if (H[static_cast<size_t>(J)] > 0)
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
      if (Kl <= BestKl * (1 + 1e-12)) {
        BestKl = std::min(BestKl, Kl);
        Best = I;
      }
    }
    return std::min<double>(N, Best + 0.5) * Width;
  }
};

struct Observer {
  float Min = std::numeric_limits<float>::infinity();
  float Max = -std::numeric_limits<float>::infinity();
  Histogram Abs;      ///< |x| (percentile).
  Histogram Pos, Neg; ///< x >= 0 and -x for x < 0 (entropy, per side).

  void observeRange(const rt::Tensor &T) {
    const rt::Tensor C = T.isContiguous() ? T : T.contiguous();
    const float *X = C.data<float>();
    for (int64_t I = 0, N = C.numel(); I < N; ++I)
      if (std::isfinite(X[I])) {
        Min = std::min(Min, X[I]);
        Max = std::max(Max, X[I]);
      }
  }

  bool seen() const { return Min <= Max; }

  void startHistograms(int Bins) {
    double Lo = std::fabs(double(std::min(Min, 0.f)));
    double Hi = double(std::max(Max, 0.f));
    Abs.start(Bins, std::max(Lo, Hi));
    Pos.start(Bins, Hi);
    Neg.start(Bins, Lo);
  }

  void observeHistograms(const rt::Tensor &T) {
    const rt::Tensor C = T.isContiguous() ? T : T.contiguous();
    const float *X = C.data<float>();
    for (int64_t I = 0, N = C.numel(); I < N; ++I)
      if (std::isfinite(X[I])) {
        double V = X[I];
        Abs.add(std::fabs(V));
        if (V >= 0)
          Pos.add(V);
        else
          Neg.add(-V);
      }
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
        S.startHistograms(O.HistogramBins);
    for (size_t B = 0; B < Batches.size(); ++B) {
      backends::checkInputs(*Obs, Batches[B]);
      std::vector<rt::Tensor> Outs = Exe->run(Batches[B]);
      for (size_t I = 0; I < Values.size(); ++I) {
        const rt::Tensor &T = Outs.at(First + I);
        if (Pass == 1)
          Seen[I].observeRange(T);
        else
          Seen[I].observeHistograms(T);
      }
      if (Progress)
        Progress(Pass, B + 1, Batches.size());
    }
  }
  RangeMap Ranges;
  for (size_t I = 0; I < Values.size(); ++I) {
    const Observer &S = Seen[I];
    Range R;
    if (S.seen()) { // Some finite value was seen.
      R = {S.Min, S.Max};
      if (O.Method == CalibrationMethod::Percentile) {
        double T = S.Abs.percentile(O.Percentile);
        R.Min = static_cast<float>(std::max<double>(R.Min, -T));
        R.Max = static_cast<float>(std::min<double>(R.Max, T));
      } else if (O.Method == CalibrationMethod::Entropy) {
        // Each sign on its own: an image's background spike on one side
        // must not clip the other.
        if (R.Max > 0)
          R.Max = static_cast<float>(std::min<double>(R.Max, S.Pos.entropy()));
        if (R.Min < 0)
          R.Min = static_cast<float>(std::max<double>(R.Min, -S.Neg.entropy()));
      }
    }
    Ranges[Values[I]] = R;
  }
  return Ranges;
}

} // namespace nng::passes::quant
