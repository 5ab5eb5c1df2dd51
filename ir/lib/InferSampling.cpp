//===- InferSampling.cpp - Inference for resizing and detection -----------===//
//
// Shape and type inference for Resize (opset 13: scales or sizes), GridSample
// (opset 16, 4-D), RoiAlign (opset 16) and NonMaxSuppression (opset 11).
// Resize's and NonMaxSuppression's output extents depend on input values:
// they are exact when the values are known (constants, or every input at
// run time in the reference backend) and unknown dims otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nng::ir {

using namespace infer;

namespace {

/// Fails unless the string attribute Name is one of Allowed.
void checkChoice(const InferContext &C, StringAttrName Name,
                 std::initializer_list<std::string_view> Allowed) {
  const std::string &V = C.attrString(Name);
  std::string List;
  for (std::string_view A : Allowed) {
    if (V == A)
      return;
    List += List.empty() ? "" : ", ";
    List += A;
  }
  C.fail("attribute ", Name.str(), " is '", V, "'; expected one of ", List);
}

/// The float values of input I when known (any dtype), else nullopt.
std::optional<std::vector<double>> inputDoubles(const InferContext &C,
                                                size_t I) {
  if (!C.hasInput(I) || !C.inputValue(I))
    return std::nullopt;
  return C.inputValue(I)->toDoubleVector();
}

/// True when input I is present and not known to be empty (Resize treats an
/// empty scales or sizes tensor as absent).
bool maybeGiven(const InferContext &C, size_t I) {
  if (!C.hasInput(I))
    return false;
  auto Len = staticLength(C.inputType(I));
  return !Len || *Len != 0;
}

} // namespace

/// Resize(X, roi?, scales?, sizes?): Y has X's dtype and rank; extents are
/// 'sizes', or floor(extent * scale) per axis. Exactly one of scales and
/// sizes is given (an empty tensor counts as absent).
void inferResize(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkChoice(C, "mode", {"nearest", "linear", "cubic"});
  checkChoice(C, "coordinate_transformation_mode",
              {"half_pixel", "pytorch_half_pixel", "align_corners",
               "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"});
  checkChoice(C, "nearest_mode",
              {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  if (C.hasInput(1))
    checkFloatDType(C, 1);
  if (C.hasInput(2))
    checkFloatDType(C, 2);
  if (C.hasInput(3))
    checkDType(C, 3, DType::I64, "(sizes)");
  bool HasScales = maybeGiven(C, 2), HasSizes = maybeGiven(C, 3);
  if (!HasScales && !HasSizes)
    C.fail("needs a non-empty 'scales' or 'sizes' input");
  auto Sizes = HasSizes ? inputInts(C, 3) : std::nullopt;
  auto Scales = HasScales ? inputDoubles(C, 2) : std::nullopt;
  if (Sizes && Sizes->empty())
    Sizes.reset(), HasSizes = false;
  if (Scales && Scales->empty())
    Scales.reset(), HasScales = false;
  if (Sizes && Scales)
    C.fail("takes 'scales' or 'sizes' ", intsToString(*Sizes),
           ", not both; pass an empty or absent 'scales'");
  if (!HasScales && !HasSizes)
    C.fail("needs a non-empty 'scales' or 'sizes' input");
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  int64_t R = X.rank();
  std::vector<Dim> Out(R, Dim::unknown());
  if (Sizes) {
    if (static_cast<int64_t>(Sizes->size()) != R)
      C.fail("sizes ", intsToString(*Sizes), " has ", Sizes->size(),
             " entries but X ", X.toString(), " has rank ", R);
    for (int64_t I = 0; I < R; ++I) {
      if ((*Sizes)[I] < 0)
        C.fail("sizes ", intsToString(*Sizes), " has a negative extent");
      Out[I] = Dim((*Sizes)[I]);
    }
  } else if (Scales) {
    if (static_cast<int64_t>(Scales->size()) != R)
      C.fail("scales has ", Scales->size(), " entries but X ", X.toString(),
             " has rank ", R);
    for (int64_t I = 0; I < R; ++I) {
      double S = (*Scales)[I];
      if (!(S > 0) || !std::isfinite(S))
        C.fail("scale ", S, " for axis ", I, " must be positive and finite");
      if (S == 1)
        Out[I] = X.dim(I);
      else if (X.dim(I).isStatic())
        Out[I] = Dim(static_cast<int64_t>(
            std::floor(static_cast<double>(X.dim(I).value()) * S)));
    }
  }
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// GridSample(X[N, C, H, W], grid[N, Ho, Wo, 2]) -> Y[N, C, Ho, Wo].
void inferGridSample(InferContext &C) {
  checkChoice(C, "mode", {"bilinear", "nearest", "bicubic"});
  checkChoice(C, "padding_mode", {"zeros", "border", "reflection"});
  checkFloatDType(C, 1);
  requireRank(C, 0, 4, "([N, C, H, W])");
  requireRank(C, 1, 4, "([N, H_out, W_out, 2])");
  const TensorType &X = C.inputType(0), &G = C.inputType(1);
  if (G.hasRank() && !dimsCompatible(G.dim(3), Dim(2)))
    C.fail("grid ", G.toString(), " must end in 2 (x, y) coordinates");
  if (X.hasRank() && G.hasRank() && !dimsCompatible(X.dim(0), G.dim(0)))
    C.fail("X ", X.toString(), " and grid ", G.toString(),
           " must have the same batch size");
  Dim N = X.hasRank() ? X.dim(0) : (G.hasRank() ? G.dim(0) : Dim::unknown());
  if (!N.isStatic() && G.hasRank() && G.dim(0).isStatic())
    N = G.dim(0);
  C.setOutputType(
      0, TensorType(X.dtype(), {N, X.hasRank() ? X.dim(1) : Dim::unknown(),
                                G.hasRank() ? G.dim(1) : Dim::unknown(),
                                G.hasRank() ? G.dim(2) : Dim::unknown()}));
}

/// RoiAlign(X[N, C, H, W], rois[R, 4], batch_indices[R]) ->
/// Y[R, C, output_height, output_width].
void inferRoiAlign(InferContext &C) {
  checkChoice(C, "mode", {"avg", "max"});
  checkChoice(C, "coordinate_transformation_mode",
              {"half_pixel", "output_half_pixel"});
  checkFloatDType(C, 0);
  checkSameDType(C, 0, 1);
  checkIndexDType(C, 2);
  requireRank(C, 0, 4, "([N, C, H, W])");
  requireRank(C, 1, 2, "([num_rois, 4])");
  requireRank(C, 2, 1, "([num_rois])");
  int64_t OH = C.attrInt("output_height"), OW = C.attrInt("output_width");
  if (OH < 1 || OW < 1)
    C.fail("output_height ", OH, " and output_width ", OW, " must be >= 1");
  if (C.attrInt("sampling_ratio") < 0)
    C.fail("sampling_ratio ", C.attrInt("sampling_ratio"),
           " must be >= 0 (0: adaptive)");
  const TensorType &X = C.inputType(0), &Rois = C.inputType(1),
                   &BI = C.inputType(2);
  if (Rois.hasRank() && !dimsCompatible(Rois.dim(1), Dim(4)))
    C.fail("rois ", Rois.toString(), " must be [num_rois, 4]");
  Dim R = Rois.hasRank() ? Rois.dim(0) : Dim::unknown();
  if (BI.hasRank() && !dimsCompatible(BI.dim(0), R))
    C.fail("batch_indices ", BI.toString(), " must have one entry per roi (",
           Rois.toString(), ")");
  if (!R.isStatic() && BI.hasRank())
    R = BI.dim(0);
  C.setOutputType(
      0, TensorType(X.dtype(), {R, X.hasRank() ? X.dim(1) : Dim::unknown(),
                                Dim(OH), Dim(OW)}));
}

namespace {

/// Intersection over union of two boxes given as [y1, x1, y2, x2] (corners
/// in any order) or, with CenterBox, [x_center, y_center, width, height].
/// Zero when either box is empty.
double boxIou(const double *A, const double *B, bool CenterBox) {
  auto Corners = [CenterBox](const double *P, double &Y1, double &X1,
                             double &Y2, double &X2) {
    if (CenterBox) {
      X1 = P[0] - P[2] / 2, X2 = P[0] + P[2] / 2;
      Y1 = P[1] - P[3] / 2, Y2 = P[1] + P[3] / 2;
    } else {
      Y1 = std::min(P[0], P[2]), Y2 = std::max(P[0], P[2]);
      X1 = std::min(P[1], P[3]), X2 = std::max(P[1], P[3]);
    }
  };
  double AY1, AX1, AY2, AX2, BY1, BX1, BY2, BX2;
  Corners(A, AY1, AX1, AY2, AX2);
  Corners(B, BY1, BX1, BY2, BX2);
  double AreaA = (AY2 - AY1) * (AX2 - AX1), AreaB = (BY2 - BY1) * (BX2 - BX1);
  if (AreaA <= 0 || AreaB <= 0)
    return 0;
  double IH = std::min(AY2, BY2) - std::max(AY1, BY1);
  double IW = std::min(AX2, BX2) - std::max(AX1, BX1);
  if (IH <= 0 || IW <= 0)
    return 0;
  double Inter = IH * IW;
  return Inter / (AreaA + AreaB - Inter);
}

} // namespace

/// Scores up to which inference selects the boxes to give an exact count.
/// Small: the node-by-node interpreter infers every node from its known
/// inputs at run time, so a larger bound would run a detector's NMS twice
/// (RetinaNet's 3036 scores cost 6-8 ms per run in inference alone).
constexpr int64_t MaxEvaluatedScores = 256;

/// NonMaxSuppression(boxes[B, S, 4], scores[B, C, S], max_out?, iou?,
/// score?) -> i64[n, 3]. n is counted here, with the kernel's greedy
/// selection, when every input value is known and there are at most
/// MaxEvaluatedScores scores; else it is unknown.
void inferNonMaxSuppression(InferContext &C) {
  checkFloatDType(C, 0);
  checkSameDType(C, 0, 1);
  requireRank(C, 0, 3, "([num_batches, num_boxes, 4])");
  requireRank(C, 1, 3, "([num_batches, num_classes, num_boxes])");
  if (C.hasInput(2))
    checkIndexDType(C, 2);
  for (size_t I = 3; I < 5; ++I)
    if (C.hasInput(I))
      checkFloatDType(C, I);
  int64_t CB = C.attrInt("center_point_box");
  if (CB != 0 && CB != 1)
    C.fail("attribute center_point_box = ", CB, " must be 0 or 1");
  const TensorType &Boxes = C.inputType(0), &Scores = C.inputType(1);
  if (Boxes.hasRank() && !dimsCompatible(Boxes.dim(2), Dim(4)))
    C.fail("boxes ", Boxes.toString(), " must end in 4 coordinates");
  if (Boxes.hasRank() && Scores.hasRank() &&
      (!dimsCompatible(Boxes.dim(0), Scores.dim(0)) ||
       !dimsCompatible(Boxes.dim(1), Scores.dim(2))))
    C.fail("boxes ", Boxes.toString(), " and scores ", Scores.toString(),
           " disagree on the batch size or the number of boxes");
  // The exact count only for small known inputs (constants folded at
  // compile time): a run's kernel computes the selection anyway, and doing
  // it here too would double a detector's NMS time.
  bool Known = C.inputValue(0) && C.inputValue(1) &&
               C.inputValue(1)->numel() <= MaxEvaluatedScores;
  for (size_t I = 2; I < 5; ++I)
    Known = Known && (!C.hasInput(I) || C.inputValue(I));
  if (!Known) {
    C.setOutputType(
        0, TensorType(DType::I64, std::vector<Dim>{Dim::unknown(), Dim(3)}));
    return;
  }
  std::vector<double> BV = C.inputValue(0)->toDoubleVector();
  std::vector<double> SV = C.inputValue(1)->toDoubleVector();
  int64_t MaxOut = C.hasInput(2) ? C.inputValue(2)->getFlatInt(0) : 0;
  double Iou = C.hasInput(3) ? C.inputValue(3)->getFlat(0) : 0.0;
  bool HasThr = C.hasInput(4);
  double Thr = HasThr ? C.inputValue(4)->getFlat(0) : 0.0;
  const nng::Shape &SS = C.inputValue(1)->shape();
  int64_t NB = SS[0], NC = SS[1], NS = SS[2], Count = 0;
  for (int64_t B = 0; B < NB; ++B)
    for (int64_t K = 0; K < NC; ++K) {
      const double *Sc = SV.data() + (B * NC + K) * NS;
      std::vector<int64_t> Cand;
      for (int64_t I = 0; I < NS; ++I)
        if (!std::isnan(Sc[I]) && (!HasThr || Sc[I] > Thr))
          Cand.push_back(I);
      std::stable_sort(Cand.begin(), Cand.end(),
                       [&](int64_t L, int64_t R) { return Sc[L] > Sc[R]; });
      std::vector<int64_t> Sel;
      for (int64_t I : Cand) {
        if (static_cast<int64_t>(Sel.size()) >= MaxOut)
          break;
        bool Keep = true;
        for (int64_t J : Sel)
          Keep = Keep && boxIou(&BV[(B * NS + I) * 4], &BV[(B * NS + J) * 4],
                                CB != 0) <= Iou;
        if (Keep)
          Sel.push_back(I);
      }
      Count += static_cast<int64_t>(Sel.size());
    }
  C.setOutputType(0,
                  TensorType(DType::I64, std::vector<Dim>{Dim(Count), Dim(3)}));
}

} // namespace nng::ir
