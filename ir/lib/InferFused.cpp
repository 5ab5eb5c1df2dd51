//===- InferFused.cpp - Inference for nng.FusedConv and nng.FusedGemm ----===//
//
// The fused ops have the shapes of Conv and Gemm: their inference runs the
// Conv/Gemm functions (same attribute names and defaults) after checking the
// activation: a name from the FusedActivation table, at most as many
// parameters as it takes, a floating-point operand type. The table itself
// lives here too; its parameter defaults are the standalone ops' attribute
// defaults from the op table (Ops.def), not typed again.
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

/// nng.FusedConv: Conv's shape, then an elementwise activation.
void inferFusedConv(InferContext &C) {
  checkActivation(C);
  inferConv(C);
}

/// nng.FusedGemm: Gemm's shape, then an elementwise activation.
void inferFusedGemm(InferContext &C) {
  checkActivation(C);
  inferGemm(C);
}

} // namespace nng::ir
