//===- RuleUtils.h - What the cpu backend's fusion rules share --*- C++ -*-===//
//
// Graph facts the epilogue rules (FuseEpilogues.cpp for convolutions,
// FuseProducts.cpp for MatMul and Gemm) decide on alike: which activation
// nodes fuse and as what attributes, single readers, shapes that may be
// equal, values known when the backend compiles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/ir/Graph.h"

#include <functional>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nng::backends::cpu::rules {

/// An activation as a fused node's 'activation' and 'activation_params'.
struct MatchedActivation {
  std::string Name;
  std::vector<float> Params;
};

/// The activation node Act as a fused activation the lowering computes as
/// the reference does (LowerActivation.cpp: Sigmoid and HardSigmoid are
/// not fused); nullopt with Why set when it is none.
std::optional<MatchedActivation> matchActivation(const ir::Node &Act,
                                                 std::string &Why);

/// True when A may have B's shape: equal ranks and, where both dims are
/// known (static or symbolic), equal ones. An unknown dim (a length
/// inference could not name) is taken on trust: the lowering checks the
/// concrete shapes and declines otherwise, and the reference kernel
/// broadcasts the residual as the Add did.
bool sameShape(const ir::TensorType &A, const ir::TensorType &B);

/// The only reader of V, when V has one use and is no graph output.
ir::Node *soleReader(const ir::Graph &G, const ir::Value *V);

/// Why V has no sole reader, for a decline: the statistic and the words.
std::pair<std::string_view, std::string> whyNoSoleReader(const ir::Graph &G,
                                                         const ir::Value *V);

/// Nodes' places in their graph's order, as a rule found them (a fused node
/// takes the place of the node it replaces).
using NodePositions = std::unordered_map<const ir::Node *, size_t>;

/// Why the residual R, which Add adds to Y (the result of What N, a
/// convolution or a product), cannot join N's fused node: the statistic and
/// the words; nullopt when it can (R is not Y, is f32, may have Y's shape
/// and is defined before N, so the fused node may take N's place).
std::optional<std::pair<std::string_view, std::string>>
residualDecline(const ir::Node &Add, const ir::Value *R, const ir::Value *Y,
                const ir::Node &N, const NodePositions &Pos,
                std::string_view What);

/// The activation after a fused node's result Out, whose sole reader is U
/// (null: none): Act is U when the node takes it (M its match). Decline
/// holds the statistic and the words when the node fuses nothing after
/// all: U is no activation the node takes and nothing fused before it
/// (FusedBefore false).
struct ActivationTail {
  ir::Node *Act = nullptr;
  std::optional<MatchedActivation> M;
  std::optional<std::pair<std::string_view, std::string>> Decline;
};
ActivationTail matchActivationTail(const ir::Graph &G, ir::Node *U,
                                   const ir::Value *Out, bool FusedBefore);

/// Sets a fused node's 'activation' (Identity when M is none) and
/// 'activation_params' in A.
void setActivationAttrs(ir::AttrMap &A,
                        const std::optional<MatchedActivation> &M);

/// A fused node's inputs: X, W, then the optional Bias and Residual (an
/// absent Bias stays a null entry before a Residual; trailing absent ones
/// are dropped).
std::vector<ir::Value *> fusedInputs(ir::Value *X, ir::Value *W,
                                     ir::Value *Bias, ir::Value *Residual);

/// Replaces N and the nodes of Fused (null entries skipped) that follow it
/// by one node of op Op with inputs Ins and attributes Attrs at N's place:
/// it takes N's name and scope, Out's type, uses and name (Out: the last
/// fused node's result). Returns it.
ir::Node *replaceByFused(ir::Graph &G, ir::OpKind Op, ir::Node &N,
                         std::vector<ir::Value *> Ins, ir::AttrMap Attrs,
                         ir::Value *Out,
                         std::initializer_list<ir::Node *> Fused,
                         NodePositions &Pos);

/// Calls Rewrite(G, N, Pos) for each node N of G for which IsCandidate
/// holds, in order, after a scan that numbers G's nodes (Pos) and runs the
/// same over the regions of G's nodes (fused regions' bodies excepted).
void rewriteCandidates(
    ir::Graph &G, const std::function<bool(const ir::Node &)> &IsCandidate,
    const std::function<void(ir::Graph &, ir::Node &, NodePositions &)>
        &Rewrite);

/// Reports that N's fusion was declined (the statistic and why) to
/// Declined, when there is one; false, for a rule to return.
bool declineFusion(const FusionDeclineFn &Declined, const ir::Node &N,
                   std::string_view Stat, const std::string &Why);

/// Values known when the cpu backend compiles: initializers, and what pure
/// nodes compute from them (it folds them). Remembers its answers.
class CompileTimeValues {
public:
  bool known(const ir::Value *V);

private:
  std::unordered_map<const ir::Value *, bool> Known;
};

} // namespace nng::backends::cpu::rules
