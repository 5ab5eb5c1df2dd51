//===- KernelsResize.cpp - Resize -----------------------------------------===//
//
// Reference kernel of Resize (opset 13): nearest (four rounding modes),
// linear and cubic (cubic_coeff_a, exclude_outside) interpolation under
// every coordinate_transformation_mode, tf_crop_and_resize with roi and
// extrapolation_value, output extents from 'sizes' or 'scales'. As in
// ONNX's reference implementation the interpolation is separable: each
// axis is resized in turn, in double, with taps (input index, weight)
// computed once per output coordinate; indices outside the input are
// clamped to its edge. Nearest resizing of f32 is one gather with the same
// indices (a copy of values, exact without the f64 passes), linear and
// cubic resizing of f32 on the last two axes computes each output element
// from its taps with the passes' f64 sums in their order (no f64 tensors),
// and a resize by 1 on every axis is a copy.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

namespace nng::backends::reference {

namespace {

/// One output coordinate of one axis: the weighted input indices it reads,
/// or Extrapolate (tf_crop_and_resize outside the input).
struct Taps {
  std::vector<std::pair<int64_t, double>> W;
  bool Extrapolate = false;
};

/// The attributes and per-axis parameters of one Resize node.
struct ResizeParams {
  std::string Mode, Coord, Nearest;
  double CubicA = -0.75, Extrapolation = 0;
  bool ExcludeOutside = false;
  std::vector<double> Scales, RoiStart, RoiEnd;
  std::vector<int64_t> In, Out;
};

ResizeParams resizeParams(KernelContext &C) {
  const Tensor &X = C.in(0);
  ResizeParams P;
  P.Mode = C.attrString("mode");
  P.Coord = C.attrString("coordinate_transformation_mode");
  P.Nearest = C.attrString("nearest_mode");
  P.CubicA = C.attrFloat("cubic_coeff_a");
  P.Extrapolation = C.attrFloat("extrapolation_value");
  P.ExcludeOutside = C.attrInt("exclude_outside") != 0;
  size_t R = X.rank();
  P.In.assign(X.shape().begin(), X.shape().end());
  bool HasSizes = C.hasInput(3) && C.in(3).numel() > 0;
  bool HasScales = C.hasInput(2) && C.in(2).numel() > 0;
  if (HasSizes == HasScales)
    C.fail("needs exactly one non-empty input of 'scales' and 'sizes'");
  if (HasSizes) {
    P.Out = intsOf(C, C.in(3), "sizes");
    if (P.Out.size() != R)
      C.fail("sizes ", intsToString(P.Out), " needs one entry per axis of X ",
             X.shape().toString());
    for (size_t D = 0; D < R; ++D) {
      if (P.Out[D] < 0 || (P.In[D] == 0 && P.Out[D] > 0))
        C.fail("cannot resize axis ", D, " of X ", X.shape().toString(), " to ",
               P.Out[D]);
      P.Scales.push_back(P.In[D] ? static_cast<double>(P.Out[D]) /
                                       static_cast<double>(P.In[D])
                                 : 1.0);
    }
  } else {
    P.Scales = C.in(2).toDoubleVector();
    if (P.Scales.size() != R)
      C.fail("scales has ", P.Scales.size(), " entries but X ",
             X.shape().toString(), " has rank ", R);
    for (size_t D = 0; D < R; ++D) {
      if (!(P.Scales[D] > 0) || !std::isfinite(P.Scales[D]))
        C.fail("scale ", P.Scales[D], " for axis ", D,
               " must be positive and finite");
      P.Out.push_back(static_cast<int64_t>(
          std::floor(static_cast<double>(P.In[D]) * P.Scales[D])));
    }
  }
  P.RoiStart.assign(R, 0.0);
  P.RoiEnd.assign(R, 1.0);
  if (P.Coord == "tf_crop_and_resize") {
    if (!C.hasInput(1) || C.in(1).numel() != static_cast<int64_t>(2 * R))
      C.fail("tf_crop_and_resize needs a roi of ", 2 * R,
             " values (starts, then ends, normalized) for X ",
             X.shape().toString());
    std::vector<double> Roi = C.in(1).toDoubleVector();
    for (size_t D = 0; D < R; ++D) {
      P.RoiStart[D] = Roi[D];
      P.RoiEnd[D] = Roi[R + D];
    }
  }
  return P;
}

/// The input coordinate that output coordinate X of axis D maps to.
double sourceCoord(const ResizeParams &P, size_t D, double X) {
  double S = P.Scales[D], In = static_cast<double>(P.In[D]);
  double Len = S * In; // The resized length, fractional under 'scales'.
  const std::string &M = P.Coord;
  if (M == "half_pixel")
    return (X + 0.5) / S - 0.5;
  if (M == "pytorch_half_pixel")
    return Len > 1 ? (X + 0.5) / S - 0.5 : 0.0;
  if (M == "align_corners")
    return Len == 1 ? 0.0 : X * (In - 1) / (Len - 1);
  if (M == "asymmetric")
    return X / S;
  if (M == "tf_half_pixel_for_nn")
    return (X + 0.5) / S;
  // tf_crop_and_resize.
  double R0 = P.RoiStart[D], R1 = P.RoiEnd[D];
  if (Len == 1)
    return (R1 - R0) * (In - 1) / 2 + R0 * (In - 1);
  return X * (R1 - R0) * (In - 1) / (Len - 1) + R0 * (In - 1);
}

/// Keys' cubic convolution weights of the taps at base-1 .. base+2 for a
/// sample at base + Ratio.
void cubicWeights(double Ratio, double A, double *W) {
  auto Near = [A](double T) { // |t| <= 1
    return ((A + 2) * T - (A + 3)) * T * T + 1;
  };
  auto Far = [A](double T) { // 1 < |t| < 2
    return ((A * T - 5 * A) * T + 8 * A) * T - 4 * A;
  };
  W[0] = Far(Ratio + 1);
  W[1] = Near(Ratio);
  W[2] = Near(1 - Ratio);
  W[3] = Far(2 - Ratio);
}

Taps tapsFor(KernelContext &C, const ResizeParams &P, size_t D, int64_t O) {
  Taps T;
  double X = sourceCoord(P, D, static_cast<double>(O));
  int64_t In = P.In[D];
  // Outside the input under tf_crop_and_resize, or a NaN roi.
  if (!std::isfinite(X) || (P.Coord == "tf_crop_and_resize" &&
                            (X < 0 || X > static_cast<double>(In - 1)))) {
    T.Extrapolate = true;
    return T;
  }
  X = std::clamp(X, -2.0, static_cast<double>(In + 2)); // Taps clamp anyway.
  auto Clamp = [In](int64_t I) { return std::clamp<int64_t>(I, 0, In - 1); };
  double Fl = std::floor(X);
  bool Integral = Fl == X;
  if (P.Mode == "nearest") {
    int64_t I = static_cast<int64_t>(Fl);
    double Ratio = X - Fl;
    if (!Integral) {
      const std::string &N = P.Nearest;
      bool Up = N == "ceil" || (N == "round_prefer_floor" && Ratio > 0.5) ||
                (N == "round_prefer_ceil" && Ratio >= 0.5);
      if (N != "floor" && N != "ceil" && N != "round_prefer_floor" &&
          N != "round_prefer_ceil")
        C.fail("nearest_mode is '", N,
               "'; expected round_prefer_floor, round_prefer_ceil, floor or "
               "ceil");
      I += Up ? 1 : 0;
    }
    T.W.push_back({Clamp(I), 1.0});
    return T;
  }
  // The taps lie left of or at X: an integral X is the last tap of its
  // left interval (ratio 1), as in ONNX's reference implementation.
  int64_t Base = static_cast<int64_t>(Fl) - (Integral ? 1 : 0);
  double Ratio = X - static_cast<double>(Base);
  std::vector<std::pair<int64_t, double>> W;
  if (P.Mode == "linear") {
    W = {{Base, 1 - Ratio}, {Base + 1, Ratio}};
  } else if (P.Mode == "cubic") {
    double CW[4];
    cubicWeights(Ratio, P.CubicA, CW);
    for (int K = 0; K < 4; ++K)
      W.push_back({Base - 1 + K, CW[K]});
  } else {
    C.fail("mode is '", P.Mode, "'; expected nearest, linear or cubic");
  }
  if (P.ExcludeOutside) {
    double Sum = 0;
    for (auto &[I, Wt] : W) {
      if (I < 0 || I >= In)
        Wt = 0;
      Sum += Wt;
    }
    if (Sum != 0)
      for (auto &E : W)
        E.second /= Sum;
  }
  for (auto &[I, Wt] : W)
    if (Wt != 0)
      T.W.push_back({Clamp(I), Wt});
  return T;
}

/// Whether every output coordinate of axis D reads the input coordinate
/// of its own index with weight 1 (a resize by 1 under most modes).
bool isIdentityAxis(KernelContext &C, const ResizeParams &P, size_t D) {
  if (P.In[D] != P.Out[D])
    return false;
  for (int64_t O = 0; O < P.Out[D]; ++O) {
    Taps T = tapsFor(C, P, D, O);
    if (T.Extrapolate || T.W.size() != 1 || T.W[0].first != O ||
        T.W[0].second != 1.0)
      return false;
  }
  return true;
}

/// Resizes axis D of the contiguous f64 tensor Cur to P.Out[D].
Tensor resizeAxis(KernelContext &C, const ResizeParams &P, const Tensor &Cur,
                  size_t D) {
  int64_t In = P.In[D], Out = P.Out[D];
  if (isIdentityAxis(C, P, D))
    return Cur;
  std::vector<Taps> All;
  for (int64_t O = 0; O < Out; ++O)
    All.push_back(tapsFor(C, P, D, O));
  Shape S = Cur.shape();
  int64_t Outer = 1, Inner = 1;
  for (size_t I = 0; I < D; ++I)
    Outer *= S[I];
  for (size_t I = D + 1; I < S.rank(); ++I)
    Inner *= S[I];
  S[D] = Out;
  Tensor Next = Tensor::empty(S, DType::F64);
  const double *PX = ptr<double>(Cur);
  double *PY = mutPtr<double>(Next);
  parallelFor(0, Outer, 1, [&](int64_t B, int64_t E) {
    for (int64_t A = B; A < E; ++A)
      for (int64_t O = 0; O < Out; ++O) {
        const Taps &T = All[O];
        double *Dst = PY + (A * Out + O) * Inner;
        for (int64_t K = 0; K < Inner; ++K) {
          double V = 0;
          if (T.Extrapolate)
            V = P.Extrapolation;
          else
            for (const auto &[I, Wt] : T.W)
              V += Wt * PX[(A * In + I) * Inner + K];
          Dst[K] = V;
        }
      }
  });
  return Next;
}

/// Nearest resizing of an f32 tensor as one gather (every output element
/// copies the input element at its axes' source indices: what the
/// separable f64 passes compute, without them). False when some output
/// coordinate extrapolates (tf_crop_and_resize outside the input).
bool nearestF32(KernelContext &C, const ResizeParams &P, const Tensor &X0) {
  size_t R = X0.rank();
  std::vector<std::vector<int64_t>> Src(R);
  for (size_t D = 0; D < R; ++D)
    for (int64_t O = 0; O < P.Out[D]; ++O) {
      Taps T = tapsFor(C, P, D, O);
      if (T.Extrapolate || T.W.size() != 1 || T.W[0].second != 1.0)
        return false;
      Src[D].push_back(T.W[0].first);
    }
  const Tensor X = X0.isContiguous() ? X0 : X0.contiguous();
  Tensor &Y = C.allocOutput(0, Shape(P.Out.begin(), P.Out.end()), DType::F32);
  if (Y.numel() == 0)
    return true;
  std::vector<int64_t> InStride(R, 1);
  for (size_t D = R - 1; D-- > 0;)
    InStride[D] = InStride[D + 1] * P.In[D + 1];
  const float *PX = ptr<float>(X);
  float *PY = mutPtr<float>(Y);
  int64_t Row = P.Out[R - 1], Rows = Y.numel() / Row;
  const std::vector<int64_t> &Last = Src[R - 1];
  parallelFor(0, Rows, 1, [&](int64_t B, int64_t E) {
    for (int64_t Rw = B; Rw < E; ++Rw) {
      // The input offset of output row Rw (its coordinates on the other
      // axes, last but one fastest).
      int64_t Off = 0, Rest = Rw;
      for (size_t D = R - 1; D-- > 0;) {
        Off += Src[D][Rest % P.Out[D]] * InStride[D];
        Rest /= P.Out[D];
      }
      float *Dst = PY + Rw * Row;
      for (int64_t O = 0; O < Row; ++O)
        Dst[O] = PX[Off + Last[O]];
    }
  });
  return true;
}

/// Linear or cubic resizing of an f32 tensor on its last two axes only
/// (the others resized by 1), each output element computed on its own
/// from its taps: the same f64 sums in the same order as the separable
/// passes (the last but one axis first), without their f64 tensors. False
/// when another axis is resized or some coordinate extrapolates.
bool lastTwoAxesF32(KernelContext &C, const ResizeParams &P,
                    const Tensor &X0) {
  size_t R = X0.rank();
  if (R < 2)
    return false;
  for (size_t D = 0; D + 2 < R; ++D)
    if (!isIdentityAxis(C, P, D))
      return false;
  std::vector<Taps> Axis[2];
  for (size_t K = 0; K < 2; ++K) {
    size_t D = R - 2 + K;
    bool Identity = isIdentityAxis(C, P, D);
    for (int64_t O = 0; O < P.Out[D]; ++O) {
      Taps T;
      if (Identity)
        T.W.push_back({O, 1.0});
      else
        T = tapsFor(C, P, D, O);
      if (T.Extrapolate)
        return false;
      Axis[K].push_back(std::move(T));
    }
  }
  const Tensor X = X0.isContiguous() ? X0 : X0.contiguous();
  Tensor &Y = C.allocOutput(0, Shape(P.Out.begin(), P.Out.end()), DType::F32);
  if (Y.numel() == 0)
    return true;
  int64_t InH = P.In[R - 2], InW = P.In[R - 1];
  int64_t OutH = P.Out[R - 2], OutW = P.Out[R - 1];
  const float *PX = ptr<float>(X);
  float *PY = mutPtr<float>(Y);
  parallelFor(0, Y.numel() / OutW, 1, [&](int64_t B, int64_t E) {
    for (int64_t Row = B; Row < E; ++Row) {
      const float *Plane = PX + (Row / OutH) * InH * InW;
      const Taps &H = Axis[0][Row % OutH];
      float *Dst = PY + Row * OutW;
      for (int64_t O = 0; O < OutW; ++O) {
        double V = 0;
        for (const auto &[IW, WW] : Axis[1][O].W) {
          double T = 0;
          for (const auto &[IH, WH] : H.W)
            T += WH * static_cast<double>(Plane[IH * InW + IW]);
          V += WW * T;
        }
        Dst[O] = static_cast<float>(V);
      }
    }
  });
  return true;
}

} // namespace

void kernelResize(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (X.dtype() == DType::Bool)
    C.fail("X must be numeric, got bool");
  ResizeParams P = resizeParams(C);
  if (P.Mode == "nearest" && X.dtype() == DType::F32 && X.rank() > 0 &&
      nearestF32(C, P, X))
    return;
  // A resize by 1 on every axis (a detector's transform of an image already
  // at its size) is a copy: no f64 passes.
  bool Identity = true;
  for (size_t D = 0; Identity && D < X.rank(); ++D)
    Identity = isIdentityAxis(C, P, D);
  if (Identity) {
    C.allocOutput(0, X.shape(), X.dtype()).copyFrom(X);
    return;
  }
  if (P.Mode != "nearest" && X.dtype() == DType::F32 &&
      lastTwoAxesF32(C, P, X))
    return;
  Tensor Cur = toF64(X);
  for (size_t D = 0; D < X.rank(); ++D)
    Cur = resizeAxis(C, P, Cur, D);
  if (!isFloatingPoint(X.dtype())) {
    double *PV = mutPtr<double>(Cur);
    for (int64_t I = 0; I < Cur.numel(); ++I)
      PV[I] = std::nearbyint(PV[I]);
  }
  Shape OutShape(P.Out.begin(), P.Out.end());
  Tensor &Y = C.allocOutput(0, OutShape, X.dtype());
  Y.copyFrom(Cur);
}

} // namespace nng::backends::reference
