//===- InferFused.cpp - Inference for the fused nng ops ------------------===//
//
// nng.FusedConv and nng.FusedGemm have the shapes of Conv and Gemm: their
// inference runs the Conv/Gemm functions (same attribute names and defaults)
// after checking the activation: a name from the FusedActivation table, at
// most as many parameters as it takes, a floating-point operand type; and
// FusedConv's residual Sum, when given: the result's shape and dtype. The
// table itself lives here too; its parameter defaults are the standalone ops'
// attribute defaults from the op table (Ops.def), not typed again.
// nng.Attention has the shape of its unfused graph MatMul(softmax(Q K^T *
// scale + mask), V).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/FusedActivation.h"
#include "nngraph/runtime/Error.h"

#include <limits>

namespace nng::ir {

void inferConv(InferContext &C);
void inferGemm(InferContext &C);

namespace {

/// Parameter Name of an activation standing for op K, with the default the
/// op table gives K's float attribute Name.
FusedActivationParam attrParam(OpKind K, std::string_view Name) {
  const AttrSchema *A = getOpSchema(K).findAttr(Name);
  if (!A || !A->Default || A->Default->type() != AttrType::Float)
    fail(ErrorKind::Internal, getOpSchema(K).qualifiedName(), " has no float ",
         "attribute '", Name, "' with a default for the fused activations");
  return {Name, A->Default->f()};
}

} // namespace

const std::vector<FusedActivationInfo> &fusedActivations() {
  constexpr float Inf = std::numeric_limits<float>::infinity();
  // Clip's min and max are inputs, without defaults in the op table: their
  // absence means no bound.
  static const std::vector<FusedActivationInfo> Table = {
      {"Relu", OpKind::Relu, {}, "", false},
      {"LeakyRelu",
       OpKind::LeakyRelu,
       {attrParam(OpKind::LeakyRelu, "alpha")},
       "",
       false},
      {"Sigmoid", OpKind::Sigmoid, {}, "", false},
      {"Tanh", OpKind::Tanh, {}, "", false},
      {"Clip", OpKind::Clip, {{"min", -Inf}, {"max", Inf}}, "", true},
      {"HardSigmoid",
       OpKind::HardSigmoid,
       {attrParam(OpKind::HardSigmoid, "alpha"),
        attrParam(OpKind::HardSigmoid, "beta")},
       "",
       false},
      {"HardSwish", OpKind::HardSwish, {}, "", false},
      {"Elu", OpKind::Elu, {attrParam(OpKind::Elu, "alpha")}, "", false},
      {"Gelu", OpKind::Gelu, {}, "none", false},
      {"GeluTanh", OpKind::Gelu, {}, "tanh", false},
      // No activation: a FusedConv that only adds its residual Sum.
      {"Identity", OpKind::Identity, {}, "", false},
  };
  return Table;
}

const FusedActivationInfo *lookupFusedActivation(std::string_view Name) {
  for (const FusedActivationInfo &A : fusedActivations())
    if (A.Name == Name)
      return &A;
  return nullptr;
}

std::string fusedActivationNames() {
  std::string S;
  for (const FusedActivationInfo &A : fusedActivations())
    S += (S.empty() ? "" : ", ") + std::string(A.Name);
  return S;
}

std::vector<float> fusedActivationParams(const FusedActivationInfo &A,
                                         const std::vector<float> &Params) {
  std::vector<float> Out = Params;
  for (size_t I = Out.size(); I < A.Params.size(); ++I)
    Out.push_back(A.Params[I].Default);
  return Out;
}

namespace {

/// Checks the 'activation' and 'activation_params' attributes and that the
/// operand type is floating point.
void checkActivation(const InferContext &C) {
  const std::string &Name = C.attrString("activation");
  const FusedActivationInfo *A = lookupFusedActivation(Name);
  if (!A)
    C.fail("unknown activation '", Name, "'; expected one of ",
           fusedActivationNames());
  if (C.hasAttr("activation_params")) {
    size_t N = C.attr("activation_params").floats().size();
    if (N > A->Params.size())
      C.fail("activation ", Name, " takes ", A->Params.size(),
             " parameter(s) but activation_params has ", N);
  }
  infer::checkFloatDType(C, 0);
}

} // namespace

/// nng.FusedConv: Conv's shape, then an elementwise activation; a residual
/// Sum, when given, has that shape and the operand's dtype.
void inferFusedConv(InferContext &C) {
  checkActivation(C);
  inferConv(C);
  infer::checkResidualSum(C, 3, C.outputTypes()[0]);
}

/// nng.FusedGemm: Gemm's shape, then an elementwise activation.
void inferFusedGemm(InferContext &C) {
  checkActivation(C);
  inferGemm(C);
}

/// nng.Attention(Q [.., M, D], K [.., N, D] or [.., D, N], V [.., N, Dv],
/// mask?): the scores [B.., M, N] broadcast Q's and K's batch axes, the mask
/// broadcasts to them without growing M or N, and Y [B'.., M, Dv] broadcasts
/// the scores' batch axes with V's.
void inferAttention(InferContext &C) {
  infer::checkFloatDType(C, 0);
  infer::checkSameDType(C, 0, 1);
  infer::checkSameDType(C, 0, 2);
  if (C.hasInput(3))
    infer::checkSameDType(C, 0, 3);
  const char *Why = "(attention takes [.., rows, features] operands)";
  for (size_t I = 0; I < 3; ++I)
    infer::requireMinRank(C, I, 2, Why);
  const TensorType &Q = C.inputType(0), &K = C.inputType(1),
                   &V = C.inputType(2);
  DType T = Q.dtype();
  if (!Q.hasRank() || !K.hasRank() || !V.hasRank() ||
      (C.hasInput(3) && !C.inputType(3).hasRank())) {
    C.setOutputType(0, TensorType(T));
    return;
  }
  bool KT = C.attrInt("k_transposed") != 0;
  const Dim &M = Q.dim(Q.rank() - 2), &D = Q.dim(Q.rank() - 1);
  const Dim &KD = K.dim(K.rank() - (KT ? 2 : 1));
  const Dim &N = K.dim(K.rank() - (KT ? 1 : 2));
  if (!infer::dimsCompatible(D, KD))
    C.fail("Q ", Q.toString(), " has D = ", D.toString(), " but K",
           KT ? " (transposed) " : " ", K.toString(), " has D = ",
           KD.toString());
  if (!infer::dimsCompatible(N, V.dim(V.rank() - 2)))
    C.fail("K ", K.toString(), " has N = ", N.toString(), " keys but V ",
           V.toString(), " has ", V.dim(V.rank() - 2).toString());
  auto batchOf = [&](const TensorType &X) {
    std::vector<Dim> B(X.dims().begin(), X.dims().end() - 2);
    B.push_back(Dim(1));
    B.push_back(Dim(1));
    return TensorType(T, std::move(B));
  };
  TensorType SB = infer::broadcastTypes(C, batchOf(Q), batchOf(K));
  std::vector<Dim> SD = SB.dims();
  SD[SD.size() - 2] = M;
  SD[SD.size() - 1] = N;
  TensorType Scores(T, SD);
  if (C.hasInput(3)) {
    TensorType S = infer::broadcastTypes(C, Scores, C.inputType(3));
    const Dim &SM = S.dim(S.rank() - 2), &SN = S.dim(S.rank() - 1);
    if (!infer::dimsCompatible(SM, M) || !infer::dimsCompatible(SN, N))
      C.fail("mask ", C.inputType(3).toString(),
             " must broadcast to the scores [.., M, N] = [.., ", M.toString(),
             ", ", N.toString(), "] without growing them");
    Scores = S;
  }
  std::vector<Dim> OutB =
      infer::broadcastTypes(C, batchOf(Scores), batchOf(V)).dims();
  OutB[OutB.size() - 2] = M;
  OutB[OutB.size() - 1] = V.dim(V.rank() - 1);
  C.setOutputType(0, TensorType(T, std::move(OutB)));
}

} // namespace nng::ir
