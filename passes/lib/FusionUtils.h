//===- FusionUtils.h - Helpers of the folding and fusion passes -*- C++ -*-===//
//
// What fold-conv-bn, fold-conv-mul-add, fuse-matmul-add, fuse-conv-act,
// fuse-gemm-act, fuse-pad-into-conv, fuse-qdq, recover-layernorm and
// recover-gelu share: use counts, constant data as doubles, per-channel
// broadcasting, replacing a constant input while keeping the initializer's
// name when nothing else uses it, and recognizing activations and scalar
// constants. Private to passes/lib.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/rewrite/PatternRewriter.h"

#include <optional>
#include <string>
#include <vector>

namespace nng::passes::fusion {

/// True when V feeds exactly one node input and is not a graph output.
bool hasSingleUse(const ir::Graph &G, const ir::Value *V);
/// The node of V's only use (see hasSingleUse), or null.
ir::Node *singleUser(const ir::Graph &G, const ir::Value *V);

/// V's constant data (initializer or Constant output) as a contiguous f64
/// tensor; undefined when V is null, not constant or not floating point.
rt::Tensor constantF64(const ir::Value *V);
/// The value of a constant V holding exactly one element (any dtype).
std::optional<double> constantScalar(const ir::Value *V);
/// True when |A - B| <= Tol * max(1, |B|).
bool near(double A, double B, double Tol);
/// A relative tolerance for recognizing a constant of dtype T: a few ulps
/// of T, at least 1e-5.
double constantTolerance(DType T);

/// A contiguous tensor of dtype T and shape S holding Values (row-major).
rt::Tensor makeTensor(const std::vector<double> &Values, const Shape &S,
                      DType T);

/// The M per-channel values of constant C when C, broadcast against a value
/// of rank OutRank whose channel axis is 1, varies along that axis only (or
/// not at all): C's rank is at most OutRank, and its dims, aligned to the
/// right, are 1 except axis 1, which may be M. Else nullopt.
std::optional<std::vector<double>> perChannel(const rt::Tensor &C,
                                              int64_t OutRank, int64_t M);

/// A value holding Data for input I of User: Old itself with new data when
/// Old is an initializer that only User uses and Data has its type (the
/// state_dict name survives), a new initializer taking Old's name when Old
/// is a node output only User reads (a constant subgraph being folded away),
/// else a new initializer named after Base.
ir::Value *foldedConstant(PatternRewriter &R, ir::Value *Old,
                          const ir::Node &User, rt::Tensor Data,
                          std::string_view Base);
/// The name for a bias added next to weight W ("conv1.weight" ->
/// "conv1.bias", else "<W>.bias").
std::string biasNameFor(const ir::Value *W);

/// The index (0 or 1) of the first of N's two operands that a node of op K
/// produces; nullopt when neither is.
std::optional<size_t> operandProducedBy(const ir::Node &N, ir::OpKind K);
/// When N is binary with V as one operand, the other one; else null.
ir::Value *otherOperand(const ir::Node &N, const ir::Value *V);
/// When V is produced by an op K whose one operand is a constant scalar
/// near Want (tolerance by dtype), the other operand; else null. For Div
/// and Sub only the second operand may be the constant.
ir::Value *matchScalarOp(const ir::Value *V, ir::OpKind K, double Want);
/// The single consumer of V when it is op K with a constant scalar near
/// Want (tolerance by V's dtype) as its other operand (V must be the first
/// operand of a Div); else null.
ir::Node *consumerWithScalar(const ir::Graph &G, const ir::Value *V,
                             ir::OpKind K, double Want);

/// An activation node as the 'activation'/'activation_params' of a fused op.
struct MatchedActivation {
  std::string Name;
  std::vector<float> Params;
};
/// Recognizes N (which must take its data as input 0) as an activation of
/// the FusedActivation table; on failure sets Why and returns nullopt.
std::optional<MatchedActivation> matchActivation(const ir::Node &N,
                                                 std::string &Why);

/// Fuses P (a Conv or Gemm) with the activation that is the single consumer
/// of its result into one FusedOp node that takes P's inputs, attributes,
/// name and scope and the activation's result name; or declines at P.
bool fuseWithActivation(ir::Node &P, ir::OpKind FusedOp, PatternRewriter &R);
/// The rule of fuse-conv-act and fuse-gemm-act: fuseWithActivation into
/// FusedOp.
MatchAndRewriteFn fuseActivationInto(ir::OpKind FusedOp);

} // namespace nng::passes::fusion
