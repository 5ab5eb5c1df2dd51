//===- FuseEpilogues.cpp - Conv + residual Add + activation -> FusedConv --===//
//
// The cpu backend's convolution epilogue rule (FusionRules.h): a Conv, the
// residual Add that is its result's only reader, and the activation after
// that become one nng.FusedConv, its Sum input the residual. The lowering
// (backends/lib/cpu/LowerConv.cpp) makes the node one oneDNN convolution
// with a sum post-op and the activation's eltwise post-ops, or the own loop
// after it for a clamp that must keep NaN; what depends on run-time facts
// (value bounds, speculated clamps, layouts) stays there. Everything here
// is a graph fact: single readers, graph outputs, node order, dtypes and
// symbolic shapes.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"
#include "nngraph/backends/cpu/FusionRules.h"

#include <unordered_map>

namespace nng::backends::cpu {

namespace {

using namespace rules;

class EpilogueRule {
public:
  EpilogueRule(const FusionDeclineFn &Declined) : Declined(Declined) {}

  void run(ir::Graph &G) {
    rewriteCandidates(
        G, [](const ir::Node &N) { return N.op() == ir::OpKind::Conv; },
        [this](ir::Graph &Gr, ir::Node &N, NodePositions &Pos) {
          rewrite(Gr, N, Pos);
        });
  }

  EpilogueFusionCounts Counts;

private:
  const FusionDeclineFn &Declined;
  CompileTimeValues Known;

  bool decline(const ir::Node &N, std::string_view Stat,
               const std::string &Why) {
    return declineFusion(Declined, N, Stat, Why);
  }

  /// True when the lowering makes Conv N one oneDNN primitive (LowerConv.cpp
  /// declines the rest, or runs them on its own loop).
  bool lowersToPrimitive(const ir::Node &N) {
    const ir::TensorType &X = N.input(0)->type(), &W = N.input(1)->type();
    if (X.dtype() != DType::F32 || !X.hasRank() ||
        (X.rank() != 3 && X.rank() != 4))
      return decline(N, "declined-input", "its input is not f32 of rank 3 or 4");
    if (!Known.known(N.input(1)) || W.dtype() != DType::F32 ||
        !W.hasRank() || W.rank() != X.rank())
      return decline(N, "declined-weights",
                     "its weights are not f32 of the input's rank, known "
                     "at compile time");
    if (N.hasInput(2) && N.input(2)->type().dtype() != DType::F32)
      return decline(N, "declined-bias", "its bias is not f32");
    // A 1-d depthwise convolution runs on the backend's own loop, which
    // fuses nothing.
    if (X.rank() == 3 && N.attrInt("group") > 1 &&
        !(X.dim(1).isStatic() && W.dim(0).isStatic() &&
          N.attrInt("group") != X.dim(1).value()))
      return decline(N, "declined-depthwise-1d",
                     "it is (or may be) a 1-d depthwise convolution");
    return true;
  }

  bool rewrite(ir::Graph &G, ir::Node &N,
               NodePositions &Pos) {
    if (!lowersToPrimitive(N))
      return false;
    ir::Value *Y = N.output(0);
    ir::Node *U = soleReader(G, Y);
    if (!U) {
      auto [Stat, Why] = whyNoSoleReader(G, Y);
      return decline(N, Stat, Why);
    }
    // The residual Add.
    ir::Node *Sum = nullptr;
    ir::Value *Residual = nullptr, *Out = Y;
    if (U->op() == ir::OpKind::Add) {
      ir::Value *R = U->input(0) == Y ? U->input(1) : U->input(0);
      auto Bad = residualDecline(*U, R, Y, N, Pos, "Conv");
      if (Bad) {
        decline(N, Bad->first, Bad->second);
        // An activation on the Conv's result alone still fuses; an Add
        // does not.
        return false;
      }
      Sum = U;
      Residual = R;
      Out = U->output(0);
      U = soleReader(G, Out);
    }
    // The activation.
    ActivationTail T = matchActivationTail(G, U, Out, Sum != nullptr);
    if (T.Decline)
      return decline(N, T.Decline->first, T.Decline->second);
    ir::Node *Act = T.Act;
    if (Act)
      Out = Act->output(0);

    ir::AttrMap Attrs = N.attrs();
    setActivationAttrs(Attrs, T.M);
    std::vector<ir::Value *> Ins =
        fusedInputs(N.input(0), N.input(1),
                    N.hasInput(2) ? N.input(2) : nullptr, Residual);
    replaceByFused(G, ir::OpKind::FusedConv, N, std::move(Ins),
                   std::move(Attrs), Out, {Act, Sum}, Pos);
    ++Counts.Fused;
    Counts.Sums += Sum != nullptr;
    Counts.Activations += Act != nullptr;
    return true;
  }
};

} // namespace

EpilogueFusionCounts fuseConvEpilogues(ir::Graph &G,
                                       const FusionDeclineFn &Declined) {
  EpilogueRule R(Declined);
  R.run(G);
  return R.Counts;
}

} // namespace nng::backends::cpu
