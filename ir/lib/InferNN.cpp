//===- InferNN.cpp - Inference for linear algebra, norms and quantization -===//
//
// Shape and type inference for MatMul (numpy semantics, 1-D promotion and
// batch broadcasting), Gemm, BatchNormalization, LayerNormalization,
// Dropout, QuantizeLinear and DequantizeLinear. Convolution and pooling live
// in InferConv.cpp.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

namespace nng::ir {

using namespace infer;

/// MatMul(A, B): a 1-D A is [1, K] and a 1-D B is [K, 1] (the added axis
/// is dropped from the result); the leading (batch) axes broadcast; the
/// inner extents must agree.
void inferMatMul(InferContext &C) {
  checkSameDType(C, 0, 1);
  const TensorType &A = C.inputType(0), &B = C.inputType(1);
  if (!A.hasRank() || !B.hasRank()) {
    C.setOutputType(0, TensorType(A.dtype()));
    return;
  }
  if (A.rank() == 0 || B.rank() == 0)
    C.fail("operands must have rank >= 1, got A ", A.toString(), " and B ",
           B.toString(), "; use Mul for scalars");
  std::vector<Dim> DA = A.dims(), DB = B.dims();
  bool VecA = DA.size() == 1, VecB = DB.size() == 1;
  if (VecA)
    DA.insert(DA.begin(), Dim(1));
  if (VecB)
    DB.push_back(Dim(1));
  const Dim &KA = DA.back(), &KB = DB[DB.size() - 2];
  if (!dimsCompatible(KA, KB))
    C.fail("inner dimensions differ: A ", A.toString(),
           " has K = ", KA.toString(), " but B ", B.toString(),
           " has K = ", KB.toString());
  size_t BatchA = DA.size() - 2, BatchB = DB.size() - 2;
  size_t Batch = std::max(BatchA, BatchB);
  std::vector<Dim> Out(Batch);
  for (size_t I = 0; I < Batch; ++I) {
    Dim XA = I + BatchA >= Batch ? DA[I + BatchA - Batch] : Dim(1);
    Dim XB = I + BatchB >= Batch ? DB[I + BatchB - Batch] : Dim(1);
    auto D = broadcastDim(XA, XB);
    if (!D)
      C.fail("batch dimensions of A ", A.toString(), " and B ", B.toString(),
             " cannot be broadcast: ", XA.toString(), " vs ", XB.toString());
    Out[I] = *D;
  }
  if (!VecA)
    Out.push_back(DA[DA.size() - 2]);
  if (!VecB)
    Out.push_back(DB.back());
  C.setOutputType(0, TensorType(A.dtype(), std::move(Out)));
}

/// Gemm(A, B, C?): Y[M, N] = alpha * A' * B' + beta * C, with A' = A or
/// A^T (transA), B' likewise; C broadcasts to [M, N].
void inferGemm(InferContext &C) {
  checkSameDType(C, 0, 1);
  if (C.hasInput(2))
    checkSameDType(C, 0, 2);
  requireRank(C, 0, 2, "(Gemm takes matrices; use MatMul for batches)");
  requireRank(C, 1, 2, "(Gemm takes matrices; use MatMul for batches)");
  const TensorType &A = C.inputType(0), &B = C.inputType(1);
  bool TA = C.attrInt("transA") != 0, TB = C.attrInt("transB") != 0;
  Dim M, N, KA, KB;
  if (A.hasRank()) {
    M = A.dim(TA ? 1 : 0);
    KA = A.dim(TA ? 0 : 1);
  }
  if (B.hasRank()) {
    KB = B.dim(TB ? 1 : 0);
    N = B.dim(TB ? 0 : 1);
  }
  if (!dimsCompatible(KA, KB))
    C.fail("inner dimensions differ: A", TA ? "^T" : "", " of A ", A.toString(),
           " has K = ", KA.toString(), " but B", TB ? "^T" : "", " of B ",
           B.toString(), " has K = ", KB.toString());
  if (C.hasInput(2)) {
    const TensorType &Bias = C.inputType(2);
    if (Bias.hasRank()) {
      if (Bias.rank() > 2)
        C.fail("C ", Bias.toString(), " must broadcast to [M, N] = [",
               M.toString(), ", ", N.toString(), "]");
      Dim Target[2] = {M, N};
      for (int64_t I = 0; I < Bias.rank(); ++I) {
        const Dim &D = Bias.dim(I);
        const Dim &T = Target[2 - Bias.rank() + I];
        if (D.isStatic() && D.value() != 1 && !dimsCompatible(D, T))
          C.fail("C ", Bias.toString(), " must broadcast to [M, N] = [",
                 M.toString(), ", ", N.toString(), "]");
      }
    }
  }
  C.setOutputType(0, TensorType(A.dtype(), std::vector<Dim>{M, N}));
}

/// BatchNormalization(X[N, C, ...], scale[C], B[C], mean[C], var[C]): Y has
/// X's type; the optional running statistics (training mode) are [C].
void inferBatchNorm(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkFloatDType(C, 0);
  checkSameDType(C, 1, 2);
  checkSameDType(C, 3, 4);
  Dim Channels = Dim::unknown();
  if (X.hasRank()) {
    if (X.rank() == 0)
      C.fail("X ", X.toString(), " must have rank >= 1 ([N, C, ...])");
    Channels = X.rank() >= 2 ? X.dim(1) : Dim(1);
  }
  for (size_t I = 1; I < 5; ++I) {
    requireRank(C, I, 1, "([C])");
    const TensorType &T = C.inputType(I);
    if (T.hasRank() && !dimsCompatible(T.dim(0), Channels))
      C.fail("operand ", operandName(C, I), " ", T.toString(), " has ",
             T.dim(0).toString(), " entries but X ", X.toString(), " has ",
             Channels.toString(), " channels");
    if (T.hasRank() && !Channels.isStatic() && T.dim(0).isStatic())
      Channels = T.dim(0);
  }
  C.setOutputType(0, X);
  for (size_t I = 1; I < C.numOutputs(); ++I)
    C.setOutputType(I, TensorType(C.inputType(3).dtype(), {Channels}));
}

/// LayerNormalization(X, Scale, B?) over axes >= axis: Y has X's type; Mean
/// and InvStdDev keep X's leading axes and have extent 1 on the normalized
/// ones, with dtype stash_type.
void inferLayerNorm(InferContext &C) {
  const TensorType &X = C.inputType(0);
  checkFloatDType(C, 0);
  checkSameDType(C, 0, 1);
  if (C.hasInput(2))
    checkSameDType(C, 0, 2);
  int64_t Stash = C.attrInt("stash_type");
  auto StashT = dtypeFromOnnx(static_cast<int>(Stash));
  if (!StashT || !isFloatingPoint(*StashT))
    C.fail("attribute stash_type = ", Stash,
           " is not a floating-point ONNX element type (1 = f32)");
  C.setOutputType(0, X);
  if (!X.hasRank()) {
    for (size_t I = 1; I < C.numOutputs(); ++I)
      C.setOutputType(I, TensorType(*StashT));
    return;
  }
  int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
  for (size_t In = 1; In < 3; ++In) {
    if (!C.hasInput(In) || !C.inputType(In).hasRank())
      continue;
    const TensorType &S = C.inputType(In);
    bool Ok = S.rank() <= X.rank() - Axis;
    for (int64_t I = 0; Ok && I < S.rank(); ++I) {
      const Dim &D = S.dim(I), &T = X.dim(X.rank() - S.rank() + I);
      Ok = (D.isStatic() && D.value() == 1) || dimsCompatible(D, T);
    }
    if (!Ok)
      C.fail("operand ", operandName(C, In), " ", S.toString(),
             " must broadcast to the normalized axes of X ", X.toString(),
             " (axis ", Axis, ")");
  }
  std::vector<Dim> Stats(X.dims().begin(), X.dims().begin() + Axis);
  Stats.resize(X.rank(), Dim(1));
  for (size_t I = 1; I < C.numOutputs(); ++I)
    C.setOutputType(I, TensorType(*StashT, Stats));
}

/// Dropout(data, ratio?, training_mode?): output has data's type; mask is
/// bool of the same shape.
void inferDropout(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (C.hasInput(1)) {
    checkFloatDType(C, 1);
    requireRank(C, 1, 0, "(ratio is a scalar)");
  }
  if (C.hasInput(2)) {
    checkDType(C, 2, DType::Bool);
    requireRank(C, 2, 0, "(training_mode is a scalar)");
  }
  if (const Tensor *R = C.inputValue(1)) {
    double Ratio = R->getFlat(0);
    if (!(Ratio >= 0.0 && Ratio <= 1.0))
      C.fail("ratio ", Ratio, " must be in [0, 1]");
  }
  C.setOutputType(0, X);
  if (C.numOutputs() > 1) {
    TensorType Mask = X;
    Mask.setDType(DType::Bool);
    C.setOutputType(1, Mask);
  }
}

/// Checks a quantization scale (input 1) and zero point (input 2): a scalar
/// (per-tensor) or a 1-D tensor with one entry per slice along 'axis'. A
/// one-entry 1-D scale is per-tensor, as ONNX Runtime reads it (torch's
/// exporter writes weight scales so).
static void checkQuantParams(InferContext &C) {
  const TensorType &X = C.inputType(0), &S = C.inputType(1);
  if (S.hasRank() && S.rank() > 1)
    C.fail("scale ", S.toString(),
           " must be a scalar (per-tensor) or 1-D (per-axis)");
  bool OneEntry = S.hasRank() && S.rank() == 1 && S.dim(0).isStatic() &&
                  S.dim(0).value() == 1;
  if (S.hasRank() && S.rank() == 1 && X.hasRank() && !OneEntry) {
    int64_t Axis = normalizeAxis(C, C.attrInt("axis"), X.rank());
    if (!dimsCompatible(S.dim(0), X.dim(Axis)))
      C.fail("per-axis scale ", S.toString(), " has ", S.dim(0).toString(),
             " entries but axis ", Axis, " of ", X.toString(), " has ",
             X.dim(Axis).toString());
  }
  if (C.hasInput(2)) {
    const TensorType &Z = C.inputType(2);
    if (S.hasRank() && Z.hasRank() &&
        (S.rank() != Z.rank() ||
         (S.rank() == 1 && !dimsCompatible(S.dim(0), Z.dim(0)))))
      C.fail("zero point ", Z.toString(), " must have the shape of scale ",
             S.toString());
  }
}

/// QuantizeLinear(x, y_scale, y_zero_point?): y has x's shape and the zero
/// point's dtype (u8 when absent).
void inferQuantize(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (!isFloatingPoint(X.dtype()) && X.dtype() != DType::I32)
    C.fail("x ", X.toString(), " must be floating-point or i32");
  checkFloatDType(C, 1);
  DType Out = DType::U8;
  if (C.hasInput(2)) {
    Out = C.inputType(2).dtype();
    if (Out != DType::U8 && Out != DType::I8)
      C.fail("y_zero_point ", C.inputType(2).toString(), " must be u8 or i8");
  }
  checkQuantParams(C);
  TensorType Y = X;
  Y.setDType(Out);
  C.setOutputType(0, Y);
}

/// DequantizeLinear(x, x_scale, x_zero_point?): y is f32 of x's shape.
void inferDequantize(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (X.dtype() != DType::U8 && X.dtype() != DType::I8 &&
      X.dtype() != DType::I32)
    C.fail("x ", X.toString(), " must be u8, i8 or i32");
  checkFloatDType(C, 1);
  if (C.hasInput(2))
    checkSameDType(C, 0, 2);
  checkQuantParams(C);
  TensorType Y = X;
  Y.setDType(C.inputType(1).dtype());
  C.setOutputType(0, Y);
}

} // namespace nng::ir
