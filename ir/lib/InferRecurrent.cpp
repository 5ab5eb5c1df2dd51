//===- InferRecurrent.cpp - Inference for RNN, GRU and LSTM ---------------===//
//
// Shape and type inference for the recurrent layers (opset 14): X is
// [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1); W, R
// and B stack the gates ([num_directions, gates * hidden, ...]); Y is
// [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]) and the
// final states Y_h / Y_c are [dirs, batch, hidden] (layout 1: [batch, dirs,
// hidden]). The checks name the operand and both extents on a mismatch.
// com.microsoft.DynamicQuantizeLSTM shares LSTM's inference with its int8
// weights stored transposed (W [num_directions, input, 4 * hidden], R
// [num_directions, hidden, 4 * hidden]), layout 0 only, and checks its
// scales and zero points ([num_directions] or [num_directions, 4 * hidden]).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>
#include <cctype>

namespace nng::ir {

using namespace infer;

namespace {

/// The activation functions the recurrent ops accept (case-insensitive).
bool knownActivation(std::string Name) {
  std::transform(Name.begin(), Name.end(), Name.begin(),
                 [](unsigned char Ch) { return std::tolower(Ch); });
  static const char *Known[] = {"relu",       "tanh",        "sigmoid",
                                "affine",     "leakyrelu",   "thresholdedrelu",
                                "scaledtanh", "hardsigmoid", "elu",
                                "softsign",   "softplus"};
  return std::find(std::begin(Known), std::end(Known), Name) != std::end(Known);
}

/// Merges two candidate extents of one quantity: a static one wins; two
/// static ones must agree (What names the quantity in the message).
Dim mergeDim(const InferContext &C, const Dim &A, const Dim &B,
             std::string_view What) {
  if (!dimsCompatible(A, B))
    C.fail("operands disagree on ", What, ": ", A.toString(), " vs ",
           B.toString());
  return A.isStatic() ? A : B;
}

/// Checks that input I (when present and ranked) has the given dims.
void expectDims(const InferContext &C, size_t I, const std::vector<Dim> &Want,
                std::string_view Layout) {
  if (!C.hasInput(I))
    return;
  const TensorType &T = C.inputType(I);
  if (!T.hasRank())
    return;
  bool Ok = T.rank() == static_cast<int64_t>(Want.size());
  for (size_t D = 0; Ok && D < Want.size(); ++D)
    Ok = dimsCompatible(T.dim(D), Want[D]);
  if (!Ok)
    C.fail("operand ", operandName(C, I), " ", T.toString(),
           " must have shape ", TensorType(T.dtype(), Want).toString(), " ",
           Layout);
}

/// The quantization parameters of DynamicQuantizeLSTM's W or R (inputs
/// Scale and Scale + 1): f32 scales and zero points of the weight's dtype,
/// [num_directions] (per direction) or [num_directions, 4 * hidden] (per
/// column), both alike.
void checkWeightQuantParams(const InferContext &C, size_t Weight, size_t Scale,
                            const Dim &Dirs, const Dim &GH) {
  checkDType(C, Scale, DType::F32, "(a weight scale)");
  checkSameDType(C, Weight, Scale + 1);
  for (size_t I : {Scale, Scale + 1}) {
    const TensorType &T = C.inputType(I);
    if (!T.hasRank())
      continue;
    if (T.rank() == 1)
      expectDims(C, I, {Dirs}, "([num_directions]: per direction)");
    else
      expectDims(C, I, {Dirs, GH},
                 "([num_directions, 4 * hidden]: per column)");
  }
  const TensorType &S = C.inputType(Scale), &Z = C.inputType(Scale + 1);
  if (S.hasRank() && Z.hasRank() && S.rank() != Z.rank())
    C.fail("operands ", operandName(C, Scale), " ", S.toString(), " and ",
           operandName(C, Scale + 1), " ", Z.toString(),
           " must both be per direction or both per column");
}

/// Shared inference of RNN (Gates = 1, ActsPerDir = 1), GRU (3, 2) and
/// LSTM (4, 3). The outputs after Y (Y_h, and Y_c for LSTM) are states.
/// Quantized: DynamicQuantizeLSTM's i8/u8 weights, stored transposed.
void inferRecurrent(InferContext &C, int64_t Gates, size_t ActsPerDir,
                    bool Quantized = false) {
  checkFloatDType(C, 0);
  if (Quantized) {
    DType WT = C.inputType(1).dtype();
    if (WT != DType::I8 && WT != DType::U8)
      C.fail("operand ", operandName(C, 1), " is ", dtypeName(WT),
             "; expected i8 or u8 (quantized weights)");
    checkSameDType(C, 1, 2);
  } else {
    checkSameDType(C, 0, 1);
    checkSameDType(C, 0, 2);
  }
  const std::string &Dir = C.attrString("direction");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    C.fail("attribute direction is '", Dir,
           "'; expected forward, reverse or bidirectional");
  int64_t NumDirs = Dir == "bidirectional" ? 2 : 1;
  int64_t Layout = Quantized ? 0 : C.attrInt("layout");
  if (Layout != 0 && Layout != 1)
    C.fail("attribute layout = ", Layout, " must be 0 or 1");
  if (C.hasAttr("activations")) {
    const auto &Acts = C.attr("activations").strings();
    if (Acts.size() != ActsPerDir * NumDirs && Acts.size() != ActsPerDir)
      C.fail("attribute activations has ", Acts.size(), " entries; expected ",
             ActsPerDir, " per direction (", ActsPerDir * NumDirs, ")");
    for (const std::string &A : Acts)
      if (!knownActivation(A))
        C.fail("activation '", A,
               "' is not supported (Relu, Tanh, Sigmoid, "
               "Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
               "Elu, Softsign, Softplus)");
  }
  if (C.hasAttr("clip") && !(C.attrFloat("clip") > 0))
    C.fail("attribute clip = ", C.attrFloat("clip"), " must be positive");
  requireRank(C, 0, 3,
              Layout ? "([batch, seq, input])" : "([seq, batch, input])");
  const char *WLayout = Quantized ? "([num_directions, input, gates * hidden])"
                                  : "([num_directions, gates * hidden, input])";
  const char *RLayout = Quantized
                            ? "([num_directions, hidden, gates * hidden])"
                            : "([num_directions, gates * hidden, hidden])";
  requireRank(C, 1, 3, WLayout);
  requireRank(C, 2, 3, RLayout);
  const TensorType &X = C.inputType(0), &W = C.inputType(1),
                   &R = C.inputType(2);
  Dim Seq, Batch, Input, Hidden;
  if (X.hasRank()) {
    Seq = X.dim(Layout ? 1 : 0);
    Batch = X.dim(Layout ? 0 : 1);
    Input = X.dim(2);
  }
  if (C.hasAttr("hidden_size")) {
    int64_t H = C.attrInt("hidden_size");
    if (H < 1)
      C.fail("attribute hidden_size = ", H, " must be >= 1");
    Hidden = Dim(H);
  }
  // Where W and R keep input_size and hidden_size.
  int64_t WIn = Quantized ? 1 : 2, RHid = Quantized ? 1 : 2;
  Dim DirsDim(NumDirs);
  if (R.hasRank()) {
    Hidden = mergeDim(C, Hidden, R.dim(RHid),
                      Quantized ? "hidden_size (R's axis 1)"
                                : "hidden_size (R's last axis)");
    mergeDim(C, DirsDim, R.dim(0), "num_directions (R's first axis)");
  }
  if (W.hasRank()) {
    Input = mergeDim(C, Input, W.dim(WIn), "input_size (X and W)");
    mergeDim(C, DirsDim, W.dim(0), "num_directions (W's first axis)");
  }
  Dim GH = Hidden.isStatic() ? Dim(Gates * Hidden.value()) : Dim::unknown();
  if (Quantized) {
    expectDims(C, 1, {DirsDim, Input, GH}, WLayout);
    expectDims(C, 2, {DirsDim, Hidden, GH}, RLayout);
    checkWeightQuantParams(C, 1, 8, DirsDim, GH);
    checkWeightQuantParams(C, 2, 10, DirsDim, GH);
  } else {
    expectDims(C, 1, {DirsDim, GH, Input}, WLayout);
    expectDims(C, 2, {DirsDim, GH, Hidden}, RLayout);
  }
  Dim GH2 =
      Hidden.isStatic() ? Dim(2 * Gates * Hidden.value()) : Dim::unknown();
  expectDims(C, 3, {DirsDim, GH2}, "([num_directions, 2 * gates * hidden])");
  if (C.hasInput(4)) {
    checkDType(C, 4, DType::I32, "(sequence_lens)");
    expectDims(C, 4, {Batch}, "([batch])");
  }
  std::vector<Dim> State = Layout ? std::vector<Dim>{Batch, DirsDim, Hidden}
                                  : std::vector<Dim>{DirsDim, Batch, Hidden};
  const char *StateLayout = Layout ? "([batch, num_directions, hidden])"
                                   : "([num_directions, batch, hidden])";
  for (size_t I = 5; I < std::min<size_t>(C.numInputs(), Gates == 4 ? 7 : 6);
       ++I) {
    if (!C.hasInput(I))
      continue;
    checkSameDType(C, 0, I);
    expectDims(C, I, State, StateLayout);
  }
  if (Gates == 4 && C.hasInput(7)) {
    checkSameDType(C, 0, 7);
    Dim P3 = Hidden.isStatic() ? Dim(3 * Hidden.value()) : Dim::unknown();
    expectDims(C, 7, {DirsDim, P3}, "([num_directions, 3 * hidden])");
  }
  std::vector<Dim> Y = Layout ? std::vector<Dim>{Batch, Seq, DirsDim, Hidden}
                              : std::vector<Dim>{Seq, DirsDim, Batch, Hidden};
  C.setOutputType(0, TensorType(X.dtype(), Y));
  for (size_t I = 1; I < C.numOutputs(); ++I)
    C.setOutputType(I, TensorType(X.dtype(), State));
}

} // namespace

/// RNN: one gate, activation f (default Tanh).
void inferRNN(InferContext &C) { inferRecurrent(C, 1, 1); }

/// GRU: gates z, r, h; activations f, g (default Sigmoid, Tanh).
void inferGRU(InferContext &C) {
  int64_t L = C.attrInt("linear_before_reset");
  if (L != 0 && L != 1)
    C.fail("attribute linear_before_reset = ", L, " must be 0 or 1");
  inferRecurrent(C, 3, 2);
}

/// LSTM: gates i, o, f, c; activations f, g, h (default Sigmoid, Tanh,
/// Tanh); peepholes P[dirs, 3 * hidden].
void inferLSTM(InferContext &C) {
  int64_t F = C.attrInt("input_forget");
  if (F != 0 && F != 1)
    C.fail("attribute input_forget = ", F, " must be 0 or 1");
  inferRecurrent(C, 4, 3);
}

/// com.microsoft.DynamicQuantizeLSTM: LSTM with transposed 8-bit weights
/// and their scales and zero points (inputs 8 to 11).
void inferDynamicQuantizeLSTM(InferContext &C) {
  int64_t F = C.attrInt("input_forget");
  if (F != 0 && F != 1)
    C.fail("attribute input_forget = ", F, " must be 0 or 1");
  inferRecurrent(C, 4, 3, /*Quantized=*/true);
}

} // namespace nng::ir
