//===- KernelsRoiAlign.cpp - RoiAlign on f32 for the cpu backend ----------===//
//
// RoiAlign (opset 16, ONNX Runtime's algorithm, as the reference kernel
// computes it: half_pixel or output_half_pixel coordinates, adaptive or
// fixed sampling grids, avg or max of the weighted taps) on f32 feature
// maps. The reference kernel widens the whole feature map to double on
// every call and recomputes each sample's position and weights for every
// channel; this loop computes each roi's samples once (as ONNX Runtime
// does: the four pixel offsets and bilinear weights of every sample, the
// weights in double as the reference computes them, stored as f32), then
// runs over (roi, block of channels) tasks in parallel, accumulating in
// f32. Results differ from the reference's by f32 rounding. Other dtypes,
// bad attributes, out-of-range batch indices and absurd adaptive grids go
// to the reference kernel, which reports the errors.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::cpu {

namespace {

/// One sample's position along one axis: its two taps and their weights;
/// Valid is false for a sample more than one pixel outside the map (it
/// contributes 0).
struct AxisSample {
  int32_t Lo = 0, Hi = 0;
  double WLo = 0, WHi = 0;
  bool Valid = false;
};

/// The sample of coordinate V along an axis of extent Size (the reference
/// kernel's clamping: below 0 to 0, at or past the last pixel to it).
AxisSample sampleAt(double V, int64_t Size) {
  AxisSample S;
  if (!(V >= -1.0 && V <= static_cast<double>(Size)))
    return S;
  V = std::max(V, 0.0);
  int64_t Lo = static_cast<int64_t>(V), Hi = Lo + 1;
  if (Lo >= Size - 1) {
    Hi = Lo = Size - 1;
    V = static_cast<double>(Lo);
  }
  double L = V - static_cast<double>(Lo);
  S.Lo = static_cast<int32_t>(Lo);
  S.Hi = static_cast<int32_t>(Hi);
  S.WLo = 1 - L;
  S.WHi = L;
  S.Valid = true;
  return S;
}

/// One roi's sampling grid: GH samples per output row (OH * GH entries in
/// Ys) and GW per output column (OW * GW in Xs).
struct RoiGrid {
  int64_t Batch = 0, GH = 1, GW = 1;
  std::vector<AxisSample> Ys, Xs;
};

/// Taps per roi above which the loop leaves a roi to the reference kernel.
constexpr int64_t MaxTaps = int64_t(1) << 20;
/// Channels per parallel task (they share the roi's taps).
constexpr int64_t ChannelBlock = 32;

/// One sample of a bin: its four pixels' offsets in the channel's map and
/// their bilinear weights; Off[0] < 0 for a sample outside the map.
struct Tap {
  int32_t Off[4];
  float W[4];
};

/// G's taps, bin by bin (row-major over the OH x OW output), each bin's
/// GH x GW samples row-major, over a map of width W.
void buildTaps(const RoiGrid &G, int64_t OH, int64_t OW, int64_t W,
               std::vector<Tap> &Taps) {
  Taps.clear();
  for (int64_t PH = 0; PH < OH; ++PH)
    for (int64_t PW = 0; PW < OW; ++PW)
      for (int64_t IY = 0; IY < G.GH; ++IY)
        for (int64_t IX = 0; IX < G.GW; ++IX) {
          const AxisSample &SY = G.Ys[static_cast<size_t>(PH * G.GH + IY)];
          const AxisSample &SX = G.Xs[static_cast<size_t>(PW * G.GW + IX)];
          Tap T{{-1, 0, 0, 0}, {0, 0, 0, 0}};
          if (SY.Valid && SX.Valid) {
            int32_t Lo = SY.Lo * static_cast<int32_t>(W),
                    Hi = SY.Hi * static_cast<int32_t>(W);
            T = Tap{{Lo + SX.Lo, Lo + SX.Hi, Hi + SX.Lo, Hi + SX.Hi},
                    {static_cast<float>(SY.WLo * SX.WLo),
                     static_cast<float>(SY.WLo * SX.WHi),
                     static_cast<float>(SY.WHi * SX.WLo),
                     static_cast<float>(SY.WHi * SX.WHi)}};
          }
          Taps.push_back(T);
        }
}

/// The sum of a bin's weighted taps (samples outside the map add 0).
float sumOfBin(const float *Img, const Tap *T, int64_t N) {
  float Acc = 0;
  for (int64_t S = 0; S < N; ++S) {
    if (T[S].Off[0] < 0)
      continue;
    Acc += T[S].W[0] * Img[T[S].Off[0]] + T[S].W[1] * Img[T[S].Off[1]] +
           T[S].W[2] * Img[T[S].Off[2]] + T[S].W[3] * Img[T[S].Off[3]];
  }
  return Acc;
}

/// ONNX Runtime's max of a bin: the largest weighted tap of each sample
/// (the first of equals, as std::max_element picks; 0 outside the map),
/// then the largest of those in the samples' order; 0 for no samples.
float maxOfBin(const float *Img, const Tap *T, int64_t N) {
  float Acc = 0;
  for (int64_t S = 0; S < N; ++S) {
    float V = 0;
    if (T[S].Off[0] >= 0) {
      V = T[S].W[0] * Img[T[S].Off[0]];
      for (int K = 1; K < 4; ++K) {
        float Tk = T[S].W[K] * Img[T[S].Off[K]];
        if (V < Tk)
          V = Tk;
      }
    }
    Acc = S == 0 ? V : std::max(Acc, V);
  }
  return Acc;
}

} // namespace

bool runRoiAlign(reference::KernelContext &C) {
  if (C.Inputs.size() < 3 || !C.hasInput(0) || !C.hasInput(1) || !C.hasInput(2))
    return false;
  const Tensor &X = C.in(0), &Rois = C.in(1), &BI = C.in(2);
  if (X.dtype() != DType::F32 || X.rank() != 4 || Rois.rank() != 2 ||
      Rois.size(1) != 4 || BI.rank() != 1 || BI.size(0) != Rois.size(0) ||
      (BI.dtype() != DType::I64 && BI.dtype() != DType::I32) ||
      !isNumeric(Rois.dtype()))
    return false;
  const std::string &Mode = C.attrString("mode"),
                    &Coord = C.attrString("coordinate_transformation_mode");
  if ((Mode != "avg" && Mode != "max") ||
      (Coord != "half_pixel" && Coord != "output_half_pixel"))
    return false;
  bool HalfPixel = Coord == "half_pixel", Max = Mode == "max";
  int64_t OH = C.attrInt("output_height"), OW = C.attrInt("output_width");
  int64_t SR = C.attrInt("sampling_ratio");
  double Scale = C.attrFloat("spatial_scale");
  int64_t N = X.size(0), Ch = X.size(1), H = X.size(2), W = X.size(3);
  int64_t NR = Rois.size(0);
  if (OH < 1 || OW < 1 || SR < 0 || H <= 0 || W <= 0 || H * W > INT32_MAX)
    return false;
  std::vector<double> RV = Rois.toDoubleVector();
  std::vector<int64_t> BV = BI.toIntVector();
  for (int64_t B : BV)
    if (B < 0 || B >= N)
      return false; // The reference kernel names the bad index.

  // Each roi's grid, as the reference kernel computes its samples.
  std::vector<RoiGrid> Grids(static_cast<size_t>(NR));
  double Off = HalfPixel ? 0.5 : 0.0;
  for (int64_t R = 0; R < NR; ++R) {
    const double *P = &RV[static_cast<size_t>(R * 4)];
    double X1 = P[0] * Scale - Off, Y1 = P[1] * Scale - Off;
    double RW = P[2] * Scale - Off - X1, RH = P[3] * Scale - Off - Y1;
    if (!HalfPixel) {
      RW = std::max(RW, 1.0);
      RH = std::max(RH, 1.0);
    }
    double BH = RH / static_cast<double>(OH), BW = RW / static_cast<double>(OW);
    // Adaptive grids of a huge or NaN roi would not end; sample once.
    auto Adaptive = [](double Bin) {
      return Bin < 1e6 ? static_cast<int64_t>(std::ceil(Bin)) : 1;
    };
    RoiGrid &G = Grids[static_cast<size_t>(R)];
    G.Batch = BV[static_cast<size_t>(R)];
    G.GH = SR > 0 ? SR : Adaptive(BH);
    G.GW = SR > 0 ? SR : Adaptive(BW);
    // The samples of one axis: Grid per output bin, from Start by Bin.
    auto Samples = [&](auto &Out, int64_t Bins, int64_t Grid, double Start,
                       double Bin, int64_t Extent) {
      Out.reserve(static_cast<size_t>(Bins * std::max<int64_t>(Grid, 0)));
      for (int64_t P = 0; P < Bins; ++P)
        for (int64_t I = 0; I < Grid; ++I)
          Out.push_back(sampleAt(Start + static_cast<double>(P) * Bin +
                                     (static_cast<double>(I) + 0.5) * Bin /
                                         static_cast<double>(Grid),
                                 Extent));
    };
    Samples(G.Ys, OH, G.GH, Y1, BH, H);
    Samples(G.Xs, OW, G.GW, X1, BW, W);
  }

  // A roi's taps are built for each block of channels that reads them;
  // a grid too large to tabulate (an absurd adaptive grid) is left to the
  // reference kernel.
  for (const RoiGrid &G : Grids)
    if (G.GH > 0 && G.GW > 0 && OH * OW * G.GH * G.GW > MaxTaps)
      return false;
  Tensor Src = X.contiguous();
  const float *PX = static_cast<const float *>(Src.rawData());
  Tensor &Y = allocDenseOutput(C, 0, Shape{NR, Ch, OH, OW}, DType::F32);
  float *PY = static_cast<float *>(Y.rawData());
  int64_t Blocks = (Ch + ChannelBlock - 1) / ChannelBlock;
  parallelFor(0, NR * Blocks, 1, [&](int64_t Begin, int64_t End) {
    std::vector<Tap> Taps;
    int64_t TapsOf = -1; // The roi Taps holds.
    for (int64_t Task = Begin; Task < End; ++Task) {
      int64_t R = Task / Blocks, C0 = Task % Blocks * ChannelBlock;
      const RoiGrid &G = Grids[static_cast<size_t>(R)];
      int64_t PerBin = std::max<int64_t>(G.GH, 0) * std::max<int64_t>(G.GW, 0);
      if (TapsOf != R) {
        buildTaps(G, OH, OW, W, Taps);
        TapsOf = R;
      }
      float Count = static_cast<float>(std::max<int64_t>(G.GH * G.GW, 1));
      for (int64_t Cc = C0; Cc < std::min(Ch, C0 + ChannelBlock); ++Cc) {
        const float *Img = PX + (G.Batch * Ch + Cc) * H * W;
        float *Out = PY + (R * Ch + Cc) * OH * OW;
        const Tap *T = Taps.data();
        for (int64_t Bin = 0; Bin < OH * OW; ++Bin, T += PerBin)
          Out[Bin] =
              Max ? maxOfBin(Img, T, PerBin) : sumOfBin(Img, T, PerBin) / Count;
      }
    }
  });
  return true;
}

} // namespace nng::backends::cpu
