//===- FusedActivation.h - Activations of the fused ops ---------*- C++ -*-===//
//
// nng.FusedConv and nng.FusedGemm apply an activation to their result. Its
// 'activation' attribute names a row of the table below and
// 'activation_params' gives that row's parameters in order (missing trailing
// ones take the defaults). The same table tells the fusion passes which
// standalone op (and which of its attributes or constant inputs) each
// activation comes from, the reference kernels what to compute, and ONNX
// export which standard op to expand it back into.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/OpSchema.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir {

/// GELU's constants, written once for every layer that computes, builds or
/// recognizes it (the reference kernels, the kernel IR, autograd, ONNX
/// export, recover-gelu): gelu(x) = 0.5 x (1 + erf(x / sqrt(2))), and its
/// tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
inline const double GeluSqrt2 = std::sqrt(2.0);
inline const double GeluTanhScale = std::sqrt(2.0 / M_PI);
inline constexpr double GeluTanhCubic = 0.044715;

/// One parameter of a fused activation.
struct FusedActivationParam {
  /// The attribute of the standalone op ("alpha"), or for Clip the name of
  /// its constant input ("min", "max").
  std::string_view Name;
  float Default;
};

/// One activation a fused op may apply.
struct FusedActivationInfo {
  std::string_view Name; ///< The 'activation' attribute value ("LeakyRelu").
  OpKind Op;             ///< The standalone op it stands for.
  /// Parameters in 'activation_params' order.
  std::vector<FusedActivationParam> Params;
  /// For nng.Gelu rows: the 'approximate' attribute ("none" or "tanh").
  std::string_view GeluApproximate;
  /// True when the parameters are inputs of the standalone op (Clip's min
  /// and max), false when they are its attributes.
  bool ParamsAreInputs = false;
};

/// Every activation, in table order.
const std::vector<FusedActivationInfo> &fusedActivations();
/// The activation named Name, or null.
const FusedActivationInfo *lookupFusedActivation(std::string_view Name);
/// "Relu, LeakyRelu, ...": the valid names, for messages.
std::string fusedActivationNames();
/// Params padded with the defaults of A to A's full parameter count; the
/// caller checks that Params is not longer.
std::vector<float> fusedActivationParams(const FusedActivationInfo &A,
                                         const std::vector<float> &Params);

} // namespace nng::ir
