//===- InferMath.cpp - Inference for losses, norms, linear algebra --------===//
//
// Shape and type inference for NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss ([N, C, d1...] scores against [N, d1...] labels;
// a scalar unless reduction is 'none'), Trilu, CumSum, EyeLike (same shape,
// optional dtype), Det (batched square matrices), MeanVarianceNormalization,
// LRN, DepthToSpace/SpaceToDepth (block rearrangements of [N, C, H, W]) and
// MaxUnpool (the inverse of MaxPool's geometry: WindowGeometry.h's
// transposed window, or an explicit output_shape).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/WindowGeometry.h"

namespace nng::ir {

using namespace infer;

namespace {

/// Checks the reduction attribute of the losses.
void checkLossReduction(const InferContext &C) {
  const std::string &R = C.attrString("reduction");
  if (R != "none" && R != "sum" && R != "mean")
    C.fail("attribute reduction = '", R, "' must be 'none', 'sum' or 'mean'");
}

/// The loss type shared by NegativeLogLikelihoodLoss and
/// SoftmaxCrossEntropyLoss: input 0 is [N, C, d1...], input 1 the labels
/// [N, d1...], input 2 optional per-class weights [C].
TensorType lossType(const InferContext &C) {
  checkFloatDType(C, 0);
  checkIndexDType(C, 1);
  checkLossReduction(C);
  const TensorType &X = C.inputType(0), &T = C.inputType(1);
  requireMinRank(C, 0, 2, "([N, C, d1, ...])");
  if (C.hasInput(2)) {
    checkSameDType(C, 0, 2);
    requireRank(C, 2, 1, "(one weight per class)");
    const TensorType &W = C.inputType(2);
    if (W.hasRank() && X.hasRank() && !dimsCompatible(W.dim(0), X.dim(1)))
      C.fail("weights ", W.toString(), " must have one entry per class; ",
             operandName(C, 0), " ", X.toString(), " has ", X.dim(1).toString(),
             " classes");
  }
  if (X.hasRank() && T.hasRank()) {
    if (T.rank() != X.rank() - 1)
      C.fail("labels ", T.toString(), " must have rank ", X.rank() - 1,
             " ([N, d1, ...]) for ", operandName(C, 0), " ", X.toString());
    for (int64_t I = 0; I < T.rank(); ++I) {
      const Dim &XD = X.dim(I == 0 ? 0 : I + 1);
      if (!dimsCompatible(T.dim(I), XD))
        C.fail("labels ", T.toString(), " do not match ", operandName(C, 0),
               " ", X.toString(),
               " (labels are [N, d1, ...] for [N, C, d1, "
               "...])");
    }
  }
  if (C.attrString("reduction") != "none")
    return TensorType(X.dtype(), std::vector<Dim>{});
  if (T.hasRank())
    return TensorType(X.dtype(), T.dims());
  if (X.hasRank()) {
    std::vector<Dim> D = X.dims();
    D.erase(D.begin() + 1);
    return TensorType(X.dtype(), std::move(D));
  }
  return TensorType(X.dtype());
}

/// Fails unless input 0 has rank 4 ([N, C, H, W]) when known.
void requireNCHW(const InferContext &C) {
  requireRank(C, 0, 4, "([N, C, H, W])");
}

/// The blocksize attribute, checked to be positive.
int64_t blockSize(const InferContext &C) {
  int64_t B = C.attrInt("blocksize");
  if (B <= 0)
    C.fail("attribute blocksize = ", B, " must be positive");
  return B;
}

/// D * F, static when D is; 0 stays 0.
Dim scaleDim(const Dim &D, int64_t F) {
  return D.isStatic() ? Dim(D.value() * F) : Dim::unknown();
}

/// D / F for a static D (failing unless it divides), else unknown.
Dim divideDim(const InferContext &C, const Dim &D, int64_t F,
              std::string_view What) {
  if (!D.isStatic())
    return Dim::unknown();
  if (D.value() % F != 0)
    C.fail(What, " ", D.value(), " is not divisible by ", F);
  return Dim(D.value() / F);
}

} // namespace

/// NegativeLogLikelihoodLoss(input, target, weight?): [N, d1...] or a scalar.
void inferNegativeLogLikelihoodLoss(InferContext &C) {
  C.setOutputType(0, lossType(C));
}

/// SoftmaxCrossEntropyLoss(scores, labels, weights?): the loss, and the
/// log-probabilities (scores' type) as the optional second output.
void inferSoftmaxCrossEntropyLoss(InferContext &C) {
  C.setOutputType(0, lossType(C));
  if (C.numOutputs() > 1)
    C.setOutputType(1, C.inputType(0));
}

/// Trilu(input, k?): input's type; rank >= 2; k a scalar.
void inferTrilu(InferContext &C) {
  requireMinRank(C, 0, 2, "(a batch of matrices)");
  if (C.hasInput(1)) {
    checkDType(C, 1, DType::I64, "(k)");
    if (auto N = staticLength(C.inputType(1)); N && *N != 1)
      C.fail("k ", C.inputType(1).toString(), " must be a scalar");
  }
  C.setOutputType(0, C.inputType(0));
}

/// CumSum(x, axis): x's type; axis a scalar in range.
void inferCumSum(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkIndexDType(C, 1);
  if (X.dtype() == DType::Bool)
    C.fail("x ", X.toString(), " must be numeric, not bool");
  if (auto N = staticLength(C.inputType(1)); N && *N != 1)
    C.fail("axis ", C.inputType(1).toString(), " must be a scalar");
  if (auto A = inputInts(C, 1); A && A->size() == 1 && X.hasRank())
    normalizeAxis(C, (*A)[0], X.rank());
  C.setOutputType(0, X);
}

/// EyeLike(input): a 2-D tensor of input's shape with dtype 'dtype' (an
/// ONNX element type number) or input's dtype.
void inferEyeLike(InferContext &C) {
  requireRank(C, 0, 2, "(EyeLike makes matrices)");
  TensorType Out = C.inputType(0);
  if (C.hasAttr("dtype")) {
    int64_t T = C.attrInt("dtype");
    auto D = dtypeFromOnnx(static_cast<int>(T));
    if (!D || !isNumeric(*D))
      C.fail("attribute dtype = ", T,
             " is not a numeric ONNX element type nngraph supports");
    Out.setDType(*D);
  }
  C.setOutputType(0, Out);
}

/// Det(X): X is [*, M, M]; the result is [*].
void inferDet(InferContext &C) {
  checkFloatDType(C, 0);
  requireMinRank(C, 0, 2, "([*, M, M])");
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, X);
    return;
  }
  int64_t R = X.rank();
  if (!dimsCompatible(X.dim(R - 1), X.dim(R - 2)))
    C.fail("X ", X.toString(), " must hold square matrices ([*, M, M])");
  C.setOutputType(
      0, TensorType(X.dtype(),
                    std::vector<Dim>(X.dims().begin(), X.dims().end() - 2)));
}

/// MeanVarianceNormalization(X, axes): X's type; axes in range.
void inferMeanVarianceNormalization(InferContext &C) {
  checkFloatDType(C, 0);
  const TensorType &X = C.inputType(0);
  if (X.hasRank())
    normalizeAxes(C, C.attrInts("axes"), X.rank());
  C.setOutputType(0, X);
}

/// LRN(X): X's type; X is [N, C, ...]; size is positive.
void inferLRN(InferContext &C) {
  checkFloatDType(C, 0);
  requireMinRank(C, 0, 2, "([N, C, ...])");
  if (C.attrInt("size") <= 0)
    C.fail("attribute size = ", C.attrInt("size"), " must be positive");
  C.setOutputType(0, C.inputType(0));
}

/// DepthToSpace(input): [N, C, H, W] -> [N, C/b^2, H*b, W*b].
void inferDepthToSpace(InferContext &C) {
  requireNCHW(C);
  int64_t B = blockSize(C);
  const std::string &Mode = C.attrString("mode");
  if (Mode != "DCR" && Mode != "CRD")
    C.fail("attribute mode = '", Mode, "' must be 'DCR' or 'CRD'");
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, unknownDims(X.dtype(), 4));
    return;
  }
  C.setOutputType(
      0, TensorType(X.dtype(),
                    {X.dim(0), divideDim(C, X.dim(1), B * B, "channel count"),
                     scaleDim(X.dim(2), B), scaleDim(X.dim(3), B)}));
}

/// SpaceToDepth(input): [N, C, H, W] -> [N, C*b^2, H/b, W/b].
void inferSpaceToDepth(InferContext &C) {
  requireNCHW(C);
  int64_t B = blockSize(C);
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, unknownDims(X.dtype(), 4));
    return;
  }
  C.setOutputType(0,
                  TensorType(X.dtype(), {X.dim(0), scaleDim(X.dim(1), B * B),
                                         divideDim(C, X.dim(2), B, "height"),
                                         divideDim(C, X.dim(3), B, "width")}));
}

/// MaxUnpool(X, I, output_shape?): X and I are [N, C, D1...]; the output
/// is output_shape when given, else each spatial extent is
/// (in - 1) * stride + kernel - pad_begin - pad_end.
void inferMaxUnpool(InferContext &C) {
  checkFloatDType(C, 0);
  checkDType(C, 1, DType::I64, "(the indices)");
  requireMinRank(C, 0, 3, "([N, C, D1, ...])");
  const TensorType &X = C.inputType(0), &I = C.inputType(1);
  if (X.hasRank() && I.hasRank() && X.rank() != I.rank())
    C.fail("indices ", I.toString(), " must have the shape of X ",
           X.toString());
  if (C.hasInput(2)) {
    checkIndexDType(C, 2);
    requireRank(C, 2, 1, "(the output shape)");
    if (auto S = inputInts(C, 2)) {
      if (X.hasRank() && static_cast<int64_t>(S->size()) != X.rank())
        C.fail("output_shape ", intsToString(*S), " must have ", X.rank(),
               " entries for X ", X.toString());
      std::vector<Dim> Out;
      for (int64_t D : *S) {
        if (D < 0)
          C.fail("output_shape ", intsToString(*S), " has a negative extent");
        Out.push_back(Dim(D));
      }
      C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
      return;
    }
    auto Len = staticLength(C.inputType(2));
    if (X.hasRank())
      C.setOutputType(0, unknownDims(X.dtype(), X.rank()));
    else if (Len)
      C.setOutputType(0, unknownDims(X.dtype(), *Len));
    else
      C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  std::vector<int64_t> K = C.attrInts("kernel_shape");
  if (!X.hasRank()) {
    C.setOutputType(0, unknownDims(X.dtype(), 2 + K.size()));
    return;
  }
  size_t S = X.rank() - 2;
  WindowAttrs A = readWindowAttrs(C.schema(), attrsFor(C, C.schema()), S);
  if (!A.ok())
    C.fail(A.Error);
  WindowGeometry Win = transposedWindow(A, spatialExtents(X, S));
  if (!Win.ok())
    C.fail(Win.Error, " (X ", X.toString(), ")");
  std::vector<Dim> Out{X.dim(0), X.dim(1)};
  for (int64_t E : Win.Out)
    Out.push_back(E == UnknownExtent ? Dim::unknown() : Dim(E));
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

} // namespace nng::ir
