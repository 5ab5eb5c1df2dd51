//===- FuseProducts.cpp - MatMul/Gemm + bias + residual + act -> FusedMatMul //
//
// The cpu backend's product epilogue rule (FusionRules.h): a linear layer's
// product (MatMul of an f32 activation by constant [K, N] weights, or a Gemm
// of such with alpha 1 and transA 0), the Add of a constant bias vector that
// is its result's only reader (MatMul; a Gemm's bias is its C), the residual
// Add after that and the activation after that become one nng.FusedMatMul.
// This is the one place that decides what a product fuses: the lowering
// (backends/lib/cpu/LowerMatMul.cpp) makes the node one oneDNN matmul with
// bias, a binary post-op for the residual and eltwise post-ops, or the own
// loops after it, deciding only what depends on run-time facts (the number
// of rows, speculated clamps). Everything here is a graph fact: single
// readers, graph outputs, node order, dtypes, constants and symbolic shapes.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"
#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/ir/ShapeInference.h"

#include <unordered_map>

namespace nng::backends::cpu {

namespace {

using namespace rules;

class ProductRule {
public:
  ProductRule(const FusionDeclineFn &Declined) : Declined(Declined) {}

  void run(ir::Graph &G) {
    rewriteCandidates(
        G, [](const ir::Node &N) { return N.op() == ir::OpKind::MatMul || N.op() == ir::OpKind::Gemm; },
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

  /// The static extent of T's last dim, or -1.
  static int64_t lastExtent(const ir::TensorType &T) {
    if (!T.hasRank() || T.rank() == 0 || !T.dim(T.rank() - 1).isStatic())
      return -1;
    return T.dim(T.rank() - 1).value();
  }

  /// True when V is an f32 vector of NOut values known at compile time
  /// (shape [NOut], [1, NOut], ...) of at most rank Rank: what the lowering
  /// passes to oneDNN as the product's bias.
  bool isBiasVector(const ir::Value *V, int64_t NOut, size_t Rank) {
    const ir::TensorType &T = V->type();
    if (NOut < 0 || !Known.known(V) || T.dtype() != DType::F32 ||
        !T.hasRank() || T.rank() == 0 ||
        static_cast<size_t>(T.rank()) > Rank ||
        lastExtent(T) != NOut)
      return false;
    for (int64_t D = 0; D + 1 < T.rank(); ++D)
      if (!T.dim(D).isStatic() || T.dim(D).value() != 1)
        return false;
    return true;
  }

  /// True when the lowering makes product N a linear layer (LowerMatMul.cpp
  /// lowerLinear); N's other products (two run-time operands) fuse nothing.
  /// NOut: the number of columns.
  bool isLinear(const ir::Node &N, int64_t &NOut) {
    const ir::TensorType &A = N.input(0)->type(), &B = N.input(1)->type();
    if (!Known.known(N.input(1)) || !B.hasRank() || B.rank() != 2)
      return false; // Not a linear layer: silently none.
    bool TransB = N.op() == ir::OpKind::Gemm && N.attrInt("transB") != 0;
    NOut = B.dim(TransB ? 0 : 1).isStatic() ? B.dim(TransB ? 0 : 1).value()
                                            : -1;
    if (A.dtype() != DType::F32 || B.dtype() != DType::F32 || !A.hasRank() ||
        A.rank() < 2 || NOut < 0)
      return decline(N, "declined-input",
                     "its operands are not f32 of rank >= 2 by a static "
                     "matrix");
    if (N.op() != ir::OpKind::Gemm)
      return true;
    if (N.attrFloat("alpha") != 1.0f || N.attrInt("transA") != 0)
      return decline(N, "declined-gemm-attributes",
                     "its alpha is not 1 or its A is transposed");
    if (N.hasInput(2) &&
        (N.attrFloat("beta") != 1.0f ||
         !isBiasVector(N.input(2), NOut, N.output(0)->type().rank())))
      return decline(N, "declined-bias",
                     "its C is not a constant f32 bias vector added with "
                     "beta 1");
    return true;
  }

  bool rewrite(ir::Graph &G, ir::Node &N,
               NodePositions &Pos) {
    int64_t NOut = -1;
    if (!isLinear(N, NOut))
      return false;
    bool IsGemm = N.op() == ir::OpKind::Gemm;
    ir::Value *Y = N.output(0), *Out = Y;
    ir::Node *U = soleReader(G, Y);
    if (!U) {
      auto [Stat, Why] = whyNoSoleReader(G, Y);
      return decline(N, Stat, Why);
    }
    // MatMul's bias: the Add of a constant vector.
    ir::Node *BiasAdd = nullptr;
    ir::Value *Bias = IsGemm && N.hasInput(2) ? N.input(2) : nullptr;
    if (!IsGemm && U->op() == ir::OpKind::Add &&
        U->input(0) != U->input(1)) {
      ir::Value *Other = U->input(0) == Y ? U->input(1) : U->input(0);
      if (isBiasVector(Other, NOut, Y->type().rank())) {
        BiasAdd = U;
        Bias = Other;
        Out = U->output(0);
        U = soleReader(G, Out);
      }
    }
    // The residual Add.
    ir::Node *Sum = nullptr;
    ir::Value *Residual = nullptr;
    if (U && U->op() == ir::OpKind::Add) {
      ir::Value *R = U->input(0) == Out ? U->input(1) : U->input(0);
      auto Bad = residualDecline(*U, R, Y, N, Pos, "product");
      if (Bad) {
        decline(N, Bad->first, Bad->second);
        U = nullptr; // The bias alone still fuses; what follows does not.
      } else {
        Sum = U;
        Residual = R;
        Out = U->output(0);
        U = soleReader(G, Out);
      }
    }
    // The activation.
    ActivationTail T = matchActivationTail(G, U, Out, Sum || BiasAdd);
    if (T.Decline)
      return decline(N, T.Decline->first, T.Decline->second);
    ir::Node *Act = T.Act;
    if (Act)
      Out = Act->output(0);

    ir::AttrMap Attrs;
    setActivationAttrs(Attrs, T.M);
    if (IsGemm && N.attrInt("transB") != 0)
      Attrs.set("transB", ir::Attribute(int64_t(1)));
    std::vector<ir::Value *> Ins =
        fusedInputs(N.input(0), N.input(1), Bias, Residual);
    replaceByFused(G, ir::OpKind::FusedMatMul, N, std::move(Ins),
                   std::move(Attrs), Out, {Act, Sum, BiasAdd}, Pos);
    ++Counts.Fused;
    Counts.Biases += BiasAdd != nullptr;
    Counts.Sums += Sum != nullptr;
    Counts.Activations += Act != nullptr;
    return true;
  }
};

} // namespace

EpilogueFusionCounts fuseProductEpilogues(ir::Graph &G,
                                          const FusionDeclineFn &Declined) {
  ProductRule R(Declined);
  R.run(G);
  return R.Counts;
}

} // namespace nng::backends::cpu
