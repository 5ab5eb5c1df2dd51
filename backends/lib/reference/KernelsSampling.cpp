//===- KernelsSampling.cpp - GridSample, RoiAlign, NMS --------------------===//
//
// Reference kernels of GridSample (opset 16; PyTorch's grid_sample:
// bilinear, nearest and bicubic, zeros / border / reflection padding,
// align_corners), RoiAlign (opset 16; ONNX Runtime's algorithm: half_pixel
// or output_half_pixel coordinates, adaptive or fixed sampling grids, avg
// or max) and NonMaxSuppression (opset 11; greedy per batch and class by
// descending score, suppressing boxes whose IoU with a kept one exceeds the
// threshold). Loops in double.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>

namespace nng::backends::reference {

namespace {

/// Maps a normalized coordinate in [-1, 1] to a pixel coordinate.
double unnormalize(double Coord, int64_t Size, bool Align) {
  return Align ? (Coord + 1) / 2 * static_cast<double>(Size - 1)
               : ((Coord + 1) * static_cast<double>(Size) - 1) / 2;
}

/// Reflects Coord into [TwiceLow / 2, TwiceHigh / 2] (PyTorch's
/// reflect_coordinates).
double reflect(double Coord, double TwiceLow, double TwiceHigh) {
  if (TwiceLow == TwiceHigh)
    return 0;
  double Min = TwiceLow / 2, Span = (TwiceHigh - TwiceLow) / 2;
  Coord = std::fabs(Coord - Min);
  double Extra = std::fmod(Coord, Span);
  double Flips = std::floor(Coord / Span);
  return std::fmod(Flips, 2.0) == 0 ? Extra + Min : Span - Extra + Min;
}

/// Applies the padding mode to a pixel coordinate: border clamps to the
/// image, reflection mirrors at its edges (then clamps), zeros keeps it.
double padCoord(double Coord, int64_t Size, const std::string &Pad,
                bool Align) {
  double Hi = static_cast<double>(Size - 1);
  if (Pad == "border")
    return std::clamp(Coord, 0.0, std::max(Hi, 0.0));
  if (Pad == "reflection") {
    Coord = Align ? reflect(Coord, 0, 2 * Hi)
                  : reflect(Coord, -1, 2 * static_cast<double>(Size) - 1);
    return std::clamp(Coord, 0.0, std::max(Hi, 0.0));
  }
  return Coord;
}

/// A pixel coordinate as an index; -1 (outside every image) when it is not
/// finite or beyond any index, so that NaN grids read zeros.
int64_t toIndex(double V) {
  return std::isfinite(V) && std::fabs(V) < 1e15 ? static_cast<int64_t>(V) : -1;
}

/// Keys' cubic weights (A = -0.75) of the taps at floor-1 .. floor+2.
void cubicCoeffs(double T, double *W) {
  const double A = -0.75;
  auto Near = [A](double X) { return ((A + 2) * X - (A + 3)) * X * X + 1; };
  auto Far = [A](double X) {
    return ((A * X - 5 * A) * X + 8 * A) * X - 4 * A;
  };
  W[0] = Far(T + 1);
  W[1] = Near(T);
  W[2] = Near(1 - T);
  W[3] = Far(2 - T);
}

} // namespace

void kernelGridSample(KernelContext &C) {
  const Tensor &X = C.in(0), &G = C.in(1);
  requireRank(C, X, 4, "X ([N, C, H, W])");
  requireRank(C, G, 4, "grid ([N, H_out, W_out, 2])");
  requireFloat(C, G, "grid");
  if (G.size(0) != X.size(0) || G.size(3) != 2)
    C.fail("grid ", G.shape().toString(),
           " must be [N, H_out, W_out, 2] for X ", X.shape().toString());
  const std::string &Mode = C.attrString("mode"),
                    &Pad = C.attrString("padding_mode");
  if (Mode != "bilinear" && Mode != "nearest" && Mode != "bicubic")
    C.fail("mode is '", Mode, "'; expected bilinear, nearest or bicubic");
  if (Pad != "zeros" && Pad != "border" && Pad != "reflection")
    C.fail("padding_mode is '", Pad, "'; expected zeros, border or reflection");
  bool Align = C.attrInt("align_corners") != 0;
  int64_t N = X.size(0), Ch = X.size(1), H = X.size(2), W = X.size(3);
  int64_t HO = G.size(1), WO = G.size(2);
  Tensor XF = toF64(X), GF = toF64(G);
  const double *PX = ptr<double>(XF), *PG = ptr<double>(GF);
  Tensor Y = Tensor::empty(Shape{N, Ch, HO, WO}, DType::F64);
  double *PY = mutPtr<double>(Y);
  parallelFor(0, N * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t NC = Begin; NC < End; ++NC) {
      int64_t B = NC / Ch;
      const double *Img = PX + NC * H * W;
      // The pixel at (Yi, Xi), zero outside the image.
      auto At = [&](int64_t Yi, int64_t Xi) {
        return Yi >= 0 && Yi < H && Xi >= 0 && Xi < W ? Img[Yi * W + Xi] : 0.0;
      };
      for (int64_t I = 0; I < HO * WO; ++I) {
        const double *Pt = PG + (B * HO * WO + I) * 2;
        double GX = unnormalize(Pt[0], W, Align);
        double GY = unnormalize(Pt[1], H, Align);
        double V = 0;
        if (Mode == "bicubic") {
          double FX = std::floor(GX), FY = std::floor(GY), WX[4], WY[4];
          cubicCoeffs(GX - FX, WX);
          cubicCoeffs(GY - FY, WY);
          for (int J = 0; J < 4; ++J)
            for (int K = 0; K < 4; ++K) {
              double TX = padCoord(FX - 1 + K, W, Pad, Align);
              double TY = padCoord(FY - 1 + J, H, Pad, Align);
              V += WY[J] * WX[K] * At(toIndex(TY), toIndex(TX));
            }
        } else {
          GX = padCoord(GX, W, Pad, Align);
          GY = padCoord(GY, H, Pad, Align);
          if (Mode == "nearest") {
            V = At(toIndex(std::nearbyint(GY)), toIndex(std::nearbyint(GX)));
          } else {
            double FX = std::floor(GX), FY = std::floor(GY);
            double LX = GX - FX, LY = GY - FY;
            int64_t X0 = toIndex(FX), Y0 = toIndex(FY);
            V = (1 - LY) * ((1 - LX) * At(Y0, X0) + LX * At(Y0, X0 + 1)) +
                LY * ((1 - LX) * At(Y0 + 1, X0) + LX * At(Y0 + 1, X0 + 1));
          }
        }
        PY[NC * HO * WO + I] = V;
      }
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
}

void kernelRoiAlign(KernelContext &C) {
  const Tensor &X = C.in(0), &Rois = C.in(1), &BI = C.in(2);
  requireFloat(C, X, "X");
  requireRank(C, X, 4, "X ([N, C, H, W])");
  requireRank(C, Rois, 2, "rois ([num_rois, 4])");
  requireRank(C, BI, 1, "batch_indices ([num_rois])");
  if (Rois.size(1) != 4 || BI.size(0) != Rois.size(0))
    C.fail("rois ", Rois.shape().toString(), " and batch_indices ",
           BI.shape().toString(), " must be [num_rois, 4] and [num_rois]");
  const std::string &Mode = C.attrString("mode"),
                    &Coord = C.attrString("coordinate_transformation_mode");
  if (Mode != "avg" && Mode != "max")
    C.fail("mode is '", Mode, "'; expected avg or max");
  if (Coord != "half_pixel" && Coord != "output_half_pixel")
    C.fail("coordinate_transformation_mode is '", Coord,
           "'; expected half_pixel or output_half_pixel");
  bool HalfPixel = Coord == "half_pixel", Max = Mode == "max";
  int64_t OH = C.attrInt("output_height"), OW = C.attrInt("output_width");
  int64_t SR = C.attrInt("sampling_ratio");
  double Scale = C.attrFloat("spatial_scale");
  if (OH < 1 || OW < 1 || SR < 0)
    C.fail("output_height ", OH, ", output_width ", OW,
           " must be >= 1 and sampling_ratio ", SR, " >= 0");
  int64_t N = X.size(0), Ch = X.size(1), H = X.size(2), W = X.size(3);
  int64_t NR = Rois.size(0);
  std::vector<double> RV = Rois.toDoubleVector();
  std::vector<int64_t> BV = BI.toIntVector();
  for (int64_t B : BV)
    if (B < 0 || B >= N)
      C.fail("batch index ", B, " is out of range for X ",
             X.shape().toString());
  Tensor XF = toF64(X);
  const double *PX = ptr<double>(XF);
  Tensor Y = Tensor::empty(Shape{NR, Ch, OH, OW}, DType::F64);
  double *PY = mutPtr<double>(Y);
  parallelFor(0, NR * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t RC = Begin; RC < End; ++RC) {
      int64_t R = RC / Ch, Cc = RC % Ch;
      const double *Img = PX + (BV[R] * Ch + Cc) * H * W;
      double Off = HalfPixel ? 0.5 : 0.0;
      double X1 = RV[R * 4] * Scale - Off, Y1 = RV[R * 4 + 1] * Scale - Off;
      double RW = RV[R * 4 + 2] * Scale - Off - X1;
      double RH = RV[R * 4 + 3] * Scale - Off - Y1;
      if (!HalfPixel) {
        RW = std::max(RW, 1.0);
        RH = std::max(RH, 1.0);
      }
      double BH = RH / static_cast<double>(OH),
             BW = RW / static_cast<double>(OW);
      // Adaptive grids of a huge or NaN roi would not end; sample once.
      auto Adaptive = [](double Bin) {
        return Bin < 1e6 ? static_cast<int64_t>(std::ceil(Bin)) : 1;
      };
      int64_t GH = SR > 0 ? SR : Adaptive(BH);
      int64_t GW = SR > 0 ? SR : Adaptive(BW);
      double Count = static_cast<double>(std::max<int64_t>(GH * GW, 1));
      for (int64_t PH = 0; PH < OH; ++PH)
        for (int64_t PW = 0; PW < OW; ++PW) {
          double Acc = 0;
          bool First = true;
          for (int64_t IY = 0; IY < GH; ++IY)
            for (int64_t IX = 0; IX < GW; ++IX) {
              double YY = Y1 + PH * BH + (IY + 0.5) * BH / GH;
              double XX = X1 + PW * BW + (IX + 0.5) * BW / GW;
              // Bilinear taps and weights; samples beyond one pixel
              // outside the image contribute 0.
              double Taps[4] = {0, 0, 0, 0};
              if (YY >= -1.0 && YY <= H && XX >= -1.0 && XX <= W) {
                YY = std::max(YY, 0.0);
                XX = std::max(XX, 0.0);
                int64_t YL = static_cast<int64_t>(YY),
                        XL = static_cast<int64_t>(XX);
                int64_t YHi = YL + 1, XHi = XL + 1;
                if (YL >= H - 1)
                  YHi = YL = H - 1, YY = static_cast<double>(YL);
                if (XL >= W - 1)
                  XHi = XL = W - 1, XX = static_cast<double>(XL);
                double LY = YY - YL, LX = XX - XL;
                Taps[0] = (1 - LY) * (1 - LX) * Img[YL * W + XL];
                Taps[1] = (1 - LY) * LX * Img[YL * W + XHi];
                Taps[2] = LY * (1 - LX) * Img[YHi * W + XL];
                Taps[3] = LY * LX * Img[YHi * W + XHi];
              }
              if (Max) {
                // ONNX Runtime's max: the largest weighted tap.
                double V = *std::max_element(Taps, Taps + 4);
                Acc = First ? V : std::max(Acc, V);
                First = false;
              } else {
                Acc += Taps[0] + Taps[1] + Taps[2] + Taps[3];
              }
            }
          PY[(RC * OH + PH) * OW + PW] = Max ? Acc : Acc / Count;
        }
    }
  });
  C.Outputs[0] = Y.to(X.dtype());
}

namespace {

/// A box as its corners (y1 <= y2, x1 <= x2) and area, from [y1, x1, y2,
/// x2] with corners in any order or [x_center, y_center, width, height].
struct BoxCorners {
  double Y1, X1, Y2, X2, Area;
};

BoxCorners cornersOf(const double *P, bool CenterBox) {
  BoxCorners C;
  if (CenterBox) {
    C.Y1 = P[1] - P[3] / 2, C.Y2 = P[1] + P[3] / 2;
    C.X1 = P[0] - P[2] / 2, C.X2 = P[0] + P[2] / 2;
  } else {
    C.Y1 = std::min(P[0], P[2]), C.Y2 = std::max(P[0], P[2]);
    C.X1 = std::min(P[1], P[3]), C.X2 = std::max(P[1], P[3]);
  }
  C.Area = (C.Y2 - C.Y1) * (C.X2 - C.X1);
  return C;
}

/// IoU of two boxes; 0 when either box is empty.
double iou(const BoxCorners &A, const BoxCorners &B) {
  if (A.Area <= 0 || B.Area <= 0)
    return 0;
  double IH = std::min(A.Y2, B.Y2) - std::max(A.Y1, B.Y1);
  double IW = std::min(A.X2, B.X2) - std::max(A.X1, B.X1);
  if (IH <= 0 || IW <= 0)
    return 0;
  return IH * IW / (A.Area + B.Area - IH * IW);
}

/// The boxes one class kept so far, found by where they lie: a box's IoU
/// with a box it does not overlap is 0, which suppresses nothing when the
/// threshold is >= 0, so a candidate needs comparing only with the kept
/// boxes whose rows [y1, y2] reach its own. Rows are bucketed by y over
/// the candidates' span (a detector's boxes of different classes, offset
/// apart for one batched call, fall in different buckets). Exact: used only
/// with finite boxes and a threshold >= 0; the plain comparison with every
/// kept box otherwise.
class KeptBoxes {
public:
  KeptBoxes(const std::vector<BoxCorners> &Corners,
            const std::vector<int64_t> &Cand, double Thr)
      : Corners(Corners), Thr(Thr) {
    double Lo = INFINITY, Hi = -INFINITY;
    bool Finite = Thr >= 0; // False for NaN too.
    for (int64_t I : Cand) {
      const BoxCorners &B = Corners[I];
      Finite = Finite && std::isfinite(B.Y1) && std::isfinite(B.Y2) &&
               std::isfinite(B.X1) && std::isfinite(B.X2) &&
               std::isfinite(B.Area);
      Lo = std::min(Lo, B.Y1), Hi = std::max(Hi, B.Y2);
    }
    if (!Finite || Cand.size() < 64 || !(Hi > Lo))
      return; // Plain: every kept box compared.
    Buckets.resize(std::min<size_t>(4096, Cand.size() / 4));
    Y0 = Lo;
    Scale = static_cast<double>(Buckets.size()) / (Hi - Lo);
  }

  /// True when some kept box suppresses box I.
  bool suppresses(int64_t I) const {
    const BoxCorners &A = Corners[I];
    if (Buckets.empty()) {
      for (int64_t J : All)
        if (!(iou(A, Corners[J]) <= Thr))
          return true;
      return false;
    }
    if (A.Area <= 0)
      return false; // IoU 0 with every box.
    auto [B0, B1] = range(A);
    for (size_t B = B0; B <= B1; ++B)
      for (const auto &[J, First] : Buckets[B])
        // A kept box lies in every bucket its rows reach: compared once,
        // in the first bucket both boxes reach.
        if (B == std::max(B0, First) && !(iou(A, Corners[J]) <= Thr))
          return true;
    return false;
  }

  void keep(int64_t I) {
    if (Buckets.empty()) {
      All.push_back(I);
      return;
    }
    const BoxCorners &A = Corners[I];
    if (A.Area <= 0)
      return; // Suppresses nothing.
    auto [B0, B1] = range(A);
    for (size_t B = B0; B <= B1; ++B)
      Buckets[B].push_back({I, B0});
  }

private:
  /// The buckets box A's rows reach.
  std::pair<size_t, size_t> range(const BoxCorners &A) const {
    auto At = [&](double Y) {
      double P = std::floor((Y - Y0) * Scale);
      return static_cast<size_t>(
          std::clamp(P, 0.0, static_cast<double>(Buckets.size() - 1)));
    };
    return {At(A.Y1), At(A.Y2)};
  }

  const std::vector<BoxCorners> &Corners;
  double Thr;
  std::vector<int64_t> All; ///< Plain mode: every kept box, in order.
  /// Per bucket: the kept boxes reaching it, with their first bucket.
  std::vector<std::vector<std::pair<int64_t, size_t>>> Buckets;
  double Y0 = 0, Scale = 0;
};

} // namespace

void kernelNonMaxSuppression(KernelContext &C) {
  const Tensor &Boxes = C.in(0), &Scores = C.in(1);
  requireRank(C, Boxes, 3, "boxes ([num_batches, num_boxes, 4])");
  requireRank(C, Scores, 3, "scores ([num_batches, num_classes, num_boxes])");
  int64_t NB = Boxes.size(0), NS = Boxes.size(1), NC = Scores.size(1);
  if (Boxes.size(2) != 4 || Scores.size(0) != NB || Scores.size(2) != NS)
    C.fail("boxes ", Boxes.shape().toString(), " and scores ",
           Scores.shape().toString(), " must be [B, S, 4] and [B, classes, S]");
  int64_t CB = C.attrInt("center_point_box");
  if (CB != 0 && CB != 1)
    C.fail("center_point_box = ", CB, " must be 0 or 1");
  int64_t MaxOut = C.hasInput(2) ? C.in(2).getFlatInt(0) : 0;
  double IouThr = C.hasInput(3) ? C.in(3).getFlat(0) : 0.0;
  bool HasThr = C.hasInput(4);
  double ScoreThr = HasThr ? C.in(4).getFlat(0) : 0.0;
  std::vector<double> BV = Boxes.toDoubleVector(), SV = Scores.toDoubleVector();
  std::vector<int64_t> Sel; // (batch, class, box) triples.
  std::vector<BoxCorners> Corners(NS);
  for (int64_t B = 0; B < NB; ++B) {
    // Each box's corners once: every class compares the same boxes.
    for (int64_t I = 0; I < NS; ++I)
      Corners[I] = cornersOf(&BV[(B * NS + I) * 4], CB != 0);
    for (int64_t K = 0; K < NC; ++K) {
      const double *Sc = SV.data() + (B * NC + K) * NS;
      std::vector<int64_t> Cand, Kept;
      for (int64_t I = 0; I < NS; ++I)
        if (!std::isnan(Sc[I]) && (!HasThr || Sc[I] > ScoreThr))
          Cand.push_back(I);
      std::stable_sort(Cand.begin(), Cand.end(),
                       [&](int64_t L, int64_t R) { return Sc[L] > Sc[R]; });
      // Greedy: in order of score, kept unless a kept box overlaps it by
      // more than the threshold.
      KeptBoxes Index(Corners, Cand, IouThr);
      for (int64_t I : Cand) {
        if (static_cast<int64_t>(Kept.size()) >= MaxOut)
          break;
        if (Index.suppresses(I))
          continue;
        Kept.push_back(I);
        Index.keep(I);
      }
      for (int64_t I : Kept)
        Sel.insert(Sel.end(), {B, K, I});
    }
  }
  int64_t N = static_cast<int64_t>(Sel.size() / 3);
  Tensor &Y = C.allocOutput(0, Shape{N, 3}, DType::I64);
  std::copy(Sel.begin(), Sel.end(), mutPtr<int64_t>(Y));
}

} // namespace nng::backends::reference
