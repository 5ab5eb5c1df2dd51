//===- InferSignal.cpp - Inference for the signal ops ---------------------===//
//
// Shape and type inference for DFT, STFT, the window generators (Hann,
// Hamming, Blackman) and MelWeightMatrix (opset 17). Complex values are a
// trailing axis of 2 (real, imaginary); real input may end in 1. Lengths
// that come from input values (dft_length, frame_step, frame_length, the
// window size, the mel matrix parameters) give static extents when known
// and unknown dims otherwise.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

namespace {

/// Fails unless input I (when present) is an integer scalar (rank 0 or a
/// single-element 1-D tensor); returns its value when known.
std::optional<int64_t> scalarInt(const InferContext &C, size_t I) {
  if (!C.hasInput(I))
    return std::nullopt;
  const TensorType &T = C.inputType(I);
  if (!isIntegral(T.dtype()) || T.dtype() == DType::Bool)
    C.fail("operand ", operandName(C, I), " (", T.toString(),
           ") must be an integer scalar");
  if (T.hasRank() && T.rank() > 1)
    C.fail("operand ", operandName(C, I), " (", T.toString(),
           ") must be a scalar");
  auto V = inputInts(C, I);
  if (!V)
    return std::nullopt;
  if (V->size() != 1)
    C.fail("operand ", operandName(C, I), " must hold one value, got ",
           intsToString(*V));
  return V->front();
}

/// The dtype named by the output_datatype attribute (an ONNX element type).
DType outputDType(const InferContext &C) {
  int64_t T = C.attrInt("output_datatype");
  auto D = dtypeFromOnnx(static_cast<int>(T));
  if (!D || *D == DType::Bool || !isNumeric(*D))
    C.fail("attribute output_datatype = ", T,
           " is not a numeric ONNX element type (1 = f32, 11 = f64, 7 = i64)");
  return *D;
}

/// Fails unless the complex axis (the last) of input I is 1 or 2.
void checkComplexAxis(const InferContext &C, size_t I) {
  const TensorType &T = C.inputType(I);
  if (!T.hasRank())
    return;
  const Dim &D = T.dim(T.rank() - 1);
  if (D.isStatic() && D.value() != 1 && D.value() != 2)
    C.fail("operand ", operandName(C, I), " ", T.toString(),
           " must end in 1 (real) or 2 (real, imaginary)");
}

} // namespace

/// DFT(input[batch, n1, ..., 1|2], dft_length?): the transform along axis
/// (not the last); that axis becomes dft_length (the input extent when
/// absent), or floor(length / 2) + 1 when onesided; the last axis is 2.
void inferDFT(InferContext &C) {
  checkFloatDType(C, 0);
  requireMinRank(C, 0, 3, "([batch, n1, ..., 1 or 2])");
  checkComplexAxis(C, 0);
  for (IntAttrName A : {IntAttrName("inverse"), IntAttrName("onesided")})
    if (C.attrInt(A) != 0 && C.attrInt(A) != 1)
      C.fail("attribute ", A.str(), " = ", C.attrInt(A), " must be 0 or 1");
  if (C.attrInt("inverse") && C.attrInt("onesided"))
    C.fail("onesided inverse transforms are not supported; use onesided = 0");
  auto Len = scalarInt(C, 1);
  if (Len && *Len < 1)
    C.fail("dft_length ", *Len, " must be >= 1");
  const TensorType &X = C.inputType(0);
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(X.dtype()));
    return;
  }
  int64_t R = X.rank();
  if (C.attrInt("onesided") && X.dim(R - 1).isStatic() &&
      X.dim(R - 1).value() == 2)
    C.fail("onesided output needs a real input, got ", X.toString(),
           "; set onesided = 0");
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), R);
  if (Axis == R - 1)
    C.fail("axis ", C.attrInt("axis"), " is the complex axis of ", X.toString(),
           "; pick a signal axis");
  std::vector<Dim> Out = X.dims();
  Dim N = Len ? Dim(*Len) : (C.hasInput(1) ? Dim::unknown() : X.dim(Axis));
  if (C.attrInt("onesided"))
    N = N.isStatic() ? Dim(N.value() / 2 + 1) : Dim::unknown();
  Out[Axis] = N;
  Out[R - 1] = Dim(2);
  C.setOutputType(0, TensorType(X.dtype(), std::move(Out)));
}

/// STFT(signal[batch, length, 1|2], frame_step, window?[frame_length],
/// frame_length?) -> [batch, frames, bins, 2] with frames = 1 + (length -
/// frame_length) / frame_step, bins = frame_length / 2 + 1 when onesided.
void inferSTFT(InferContext &C) {
  checkFloatDType(C, 0);
  requireRank(C, 0, 3, "([batch, signal_length, 1 or 2])");
  checkComplexAxis(C, 0);
  int64_t OneSided = C.attrInt("onesided");
  if (OneSided != 0 && OneSided != 1)
    C.fail("attribute onesided = ", OneSided, " must be 0 or 1");
  auto Step = scalarInt(C, 1);
  if (Step && *Step < 1)
    C.fail("frame_step ", *Step, " must be >= 1");
  std::optional<int64_t> FrameLen = scalarInt(C, 3);
  if (C.hasInput(2)) {
    checkSameDType(C, 0, 2);
    requireRank(C, 2, 1, "([frame_length])");
    const TensorType &W = C.inputType(2);
    if (W.hasRank() && W.dim(0).isStatic()) {
      if (FrameLen && *FrameLen != W.dim(0).value())
        C.fail("frame_length ", *FrameLen, " differs from the window ",
               W.toString());
      FrameLen = W.dim(0).value();
    }
  } else if (!C.hasInput(3)) {
    C.fail("needs a window or a frame_length");
  }
  if (FrameLen && *FrameLen < 1)
    C.fail("frame_length ", *FrameLen, " must be >= 1");
  const TensorType &X = C.inputType(0);
  if (OneSided && X.hasRank() && X.dim(2).isStatic() && X.dim(2).value() == 2)
    C.fail("onesided output needs a real signal, got ", X.toString(),
           "; set onesided = 0");
  Dim Batch = X.hasRank() ? X.dim(0) : Dim::unknown(), Frames, Bins;
  if (X.hasRank() && X.dim(1).isStatic() && FrameLen && Step) {
    int64_t L = X.dim(1).value();
    if (L < *FrameLen)
      C.fail("signal ", X.toString(), " is shorter than one frame (", *FrameLen,
             ")");
    Frames = Dim(1 + (L - *FrameLen) / *Step);
  }
  if (FrameLen)
    Bins = Dim(OneSided ? *FrameLen / 2 + 1 : *FrameLen);
  C.setOutputType(0, TensorType(X.dtype(), {Batch, Frames, Bins, Dim(2)}));
}

/// HannWindow, HammingWindow, BlackmanWindow(size) -> [size] of
/// output_datatype.
void inferWindow(InferContext &C) {
  DType T = outputDType(C);
  int64_t P = C.attrInt("periodic");
  if (P != 0 && P != 1)
    C.fail("attribute periodic = ", P, " must be 0 or 1");
  auto Size = scalarInt(C, 0);
  if (Size && *Size < 0)
    C.fail("size ", *Size, " must be >= 0");
  C.setOutputType(
      0, TensorType(T, std::vector<Dim>{Size ? Dim(*Size) : Dim::unknown()}));
}

/// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
/// upper_edge_hertz) -> [dft_length / 2 + 1, num_mel_bins].
void inferMelWeightMatrix(InferContext &C) {
  DType T = outputDType(C);
  auto Bins = scalarInt(C, 0), Len = scalarInt(C, 1), Rate = scalarInt(C, 2);
  for (size_t I = 3; I < 5; ++I)
    checkFloatDType(C, I);
  if (Bins && *Bins < 1)
    C.fail("num_mel_bins ", *Bins, " must be >= 1");
  if (Len && *Len < 1)
    C.fail("dft_length ", *Len, " must be >= 1");
  if (Rate && *Rate < 1)
    C.fail("sample_rate ", *Rate, " must be >= 1");
  C.setOutputType(0, TensorType(T, std::vector<Dim>{
                                       Len ? Dim(*Len / 2 + 1) : Dim::unknown(),
                                       Bins ? Dim(*Bins) : Dim::unknown()}));
}

} // namespace nng::ir
