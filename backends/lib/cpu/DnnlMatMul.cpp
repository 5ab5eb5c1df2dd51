//===- DnnlMatMul.cpp - MatMul, Gemm and FusedGemm on oneDNN matmul ------===//
//
// MatMul with numpy semantics (1-d operands become matrices, batch axes
// broadcast) and Gemm (transposes as strided descriptors; C as the bias when
// alpha = beta = 1, else alpha/beta as the output scale, C as a binary-add
// post-op and beta as a linear post-op); nng.FusedGemm adds its activation
// as the last post-op. nng.FusedMatMul is MatMul's primitive with B read
// through swapped strides when transB, its bias vector as the primitive's
// bias, its Sum (of the result's shape) as a binary-add post-op and its
// activation last (a graph cut at a data-dependent shape runs Faster
// R-CNN's box head this way: 1000 proposals x 12544 x 1024). f32 only;
// anything else falls back.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

class MatMulPlan : public SimplePlan {
public:
  bool HasBias = false, HasPostOpSrc = false;
  /// With an activation post-op, inputs must be finite (see ConvPlan).
  bool NeedFinite = false;
  int PostOpArg = 0;
  /// FusedMatMul's Sum (input 3), bound to SumArg; -1: none.
  int SumInput = -1, SumArg = 0;
  bool accepts(const KernelContext &C) const override {
    return !NeedFinite || allInputsFinite(C);
  }
  void run(KernelContext &C) override {
    Tensor A = dense(C.in(0)), B = dense(C.in(1)), Cin, Sum;
    Tensor &Y = C.allocOutput(0);
    bind(DNNL_ARG_SRC, A);
    bind(DNNL_ARG_WEIGHTS, B);
    if (HasBias || HasPostOpSrc) {
      Cin = dense(C.in(2));
      bind(HasBias ? DNNL_ARG_BIAS : PostOpArg, Cin);
    }
    if (SumInput >= 0) {
      Sum = dense(C.in(SumInput));
      bind(SumArg, Sum);
    }
    bind(DNNL_ARG_DST, Y);
    execute();
  }
};

/// MatMul, and FusedMatMul (Fused: transB, bias, Sum and activation).
class MatMulKernel : public DnnlKernel {
public:
  MatMulKernel(const ir::Node &N, bool Fused, std::optional<PostOpEltwise> Act)
      : DnnlKernel(N), Fused(Fused), Act(Act) {}

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &A = C.in(0), &B = C.in(1);
    if (!isF32(A) || !isF32(B) || A.rank() == 0 || B.rank() == 0)
      return nullptr;
    bool TransB = Fused && C.attrInt("transB") != 0;
    if (TransB && B.rank() < 2)
      return nullptr; // The reference kernel reports it.
    memory::dims AD = dimsOf(A.shape()), BD = dimsOf(B.shape());
    if (A.rank() == 1)
      AD.insert(AD.begin(), 1);
    if (B.rank() == 1)
      BD.push_back(1);
    size_t R = std::max(AD.size(), BD.size());
    AD = padDims(AD, R);
    BD = padDims(BD, R);
    // B's plain strides, its last two axes swapped when transB.
    memory::dims BS(R, 1);
    for (size_t D = R - 1; D > 0; --D)
      BS[D - 1] = BS[D] * BD[D];
    if (TransB) {
      std::swap(BD[R - 1], BD[R - 2]);
      std::swap(BS[R - 1], BS[R - 2]);
    }
    if (AD[R - 1] != BD[R - 2])
      return nullptr;
    memory::dims YD(R);
    for (size_t D = 0; D + 2 < R; ++D) {
      if (AD[D] != BD[D] && AD[D] != 1 && BD[D] != 1)
        return nullptr;
      YD[D] = std::max(AD[D], BD[D]);
    }
    YD[R - 2] = AD[R - 2];
    YD[R - 1] = BD[R - 1];
    memory::desc Src = plainDesc(AD), Wei = stridedDesc(BD, BS),
                 Dst = plainDesc(YD);
    auto P = std::make_unique<MatMulPlan>();
    memory::desc Bias;
    dnnl::primitive_attr Attr;
    dnnl::post_ops Ops;
    if (Fused) {
      if (C.hasInput(2)) {
        const Tensor &BV = C.in(2);
        if (!isF32(BV) || BV.rank() != 1 || BV.size(0) != YD[R - 1])
          return nullptr;
        memory::dims BiasD(R, 1);
        BiasD[R - 1] = YD[R - 1];
        Bias = plainDesc(BiasD);
        P->HasBias = true;
      }
      if (C.hasInput(3)) {
        const Tensor &S = C.in(3);
        // A Sum that broadcasts goes to the reference kernel.
        if (!isF32(S) || S.rank() > R ||
            padDims(dimsOf(S.shape()), R) != YD)
          return nullptr;
        Ops.append_binary(dnnl::algorithm::binary_add, Dst);
        P->SumInput = 3;
        P->SumArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
      }
      if (Act) {
        Ops.append_eltwise(1.0f, Act->Alg, Act->Alpha, Act->Beta);
        P->NeedFinite = true;
      }
      Attr.set_post_ops(Ops);
    }
    dnnl::matmul::desc D = P->HasBias
                               ? dnnl::matmul::desc(Src, Wei, Bias, Dst)
                               : dnnl::matmul::desc(Src, Wei, Dst);
    dnnl::matmul::primitive_desc PD(D, Attr, cpuEngine());
    P->Prim = dnnl::matmul(PD);
    P->addArg(DNNL_ARG_SRC, Src);
    P->addArg(DNNL_ARG_WEIGHTS, Wei);
    P->addArg(DNNL_ARG_DST, Dst);
    if (P->HasBias)
      P->addArg(DNNL_ARG_BIAS, Bias);
    if (P->SumInput >= 0)
      P->addArg(P->SumArg, Dst);
    return P;
  }

private:
  bool Fused;
  std::optional<PostOpEltwise> Act;
};

class GemmKernel : public DnnlKernel {
public:
  GemmKernel(const ir::Node &N, std::optional<PostOpEltwise> Act)
      : DnnlKernel(N), Act(Act) {}

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &A = C.in(0), &B = C.in(1);
    bool HasC = C.hasInput(2);
    if (!isF32(A) || !isF32(B) || A.rank() != 2 || B.rank() != 2 ||
        (HasC && (!isF32(C.in(2)) || C.in(2).rank() > 2)))
      return nullptr;
    bool TransA = C.attrInt("transA") != 0, TransB = C.attrInt("transB") != 0;
    float Alpha = C.attrFloat("alpha"), Beta = C.attrFloat("beta");
    int64_t M = TransA ? A.size(1) : A.size(0),
            K = TransA ? A.size(0) : A.size(1);
    int64_t KB = TransB ? B.size(1) : B.size(0),
            N = TransB ? B.size(0) : B.size(1);
    if (K != KB)
      return nullptr;
    memory::desc Src =
        stridedDesc({M, K}, TransA ? memory::dims{1, M} : memory::dims{K, 1});
    memory::desc Wei =
        stridedDesc({K, N}, TransB ? memory::dims{1, K} : memory::dims{N, 1});
    memory::desc Dst = plainDesc({M, N});
    memory::dims CD;
    if (HasC) {
      CD = padDims(dimsOf(C.in(2).shape()), 2);
      if ((CD[0] != 1 && CD[0] != M) || (CD[1] != 1 && CD[1] != N))
        return nullptr; // The reference kernel reports it.
      // beta = 0 with a C holding inf or NaN gives NaN in the reference.
      if (Beta == 0.0f)
        return nullptr;
    }
    bool AsBias = HasC && Alpha == 1.0f && Beta == 1.0f;
    bool AsPostOp = HasC && !AsBias;
    auto P = std::make_unique<MatMulPlan>();
    dnnl::primitive_attr Attr;
    dnnl::post_ops Ops;
    float Scale = AsPostOp ? Alpha / Beta : Alpha;
    if (Scale != 1.0f)
      Attr.set_output_scales(0, {Scale});
    if (AsPostOp) {
      Ops.append_binary(dnnl::algorithm::binary_add, plainDesc(CD));
      if (Beta != 1.0f)
        Ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, Beta, 0.0f);
      P->HasPostOpSrc = true;
      P->PostOpArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
    }
    if (Act) {
      Ops.append_eltwise(1.0f, Act->Alg, Act->Alpha, Act->Beta);
      P->NeedFinite = true;
    }
    Attr.set_post_ops(Ops);
    memory::desc Bias = AsBias ? plainDesc(CD) : memory::desc();
    dnnl::matmul::desc D = AsBias ? dnnl::matmul::desc(Src, Wei, Bias, Dst)
                                  : dnnl::matmul::desc(Src, Wei, Dst);
    dnnl::matmul::primitive_desc PD(D, Attr, cpuEngine());
    P->Prim = dnnl::matmul(PD);
    P->HasBias = AsBias;
    P->addArg(DNNL_ARG_SRC, Src);
    P->addArg(DNNL_ARG_WEIGHTS, Wei);
    P->addArg(DNNL_ARG_DST, Dst);
    if (AsBias)
      P->addArg(DNNL_ARG_BIAS, Bias);
    if (AsPostOp)
      P->addArg(P->PostOpArg, plainDesc(CD));
    return P;
  }

private:
  std::optional<PostOpEltwise> Act;
};

} // namespace

std::shared_ptr<DnnlKernel> makeMatMulKernel(const ir::Node &N) {
  if (N.op() != ir::OpKind::FusedMatMul)
    return std::make_shared<MatMulKernel>(N, false, std::nullopt);
  std::optional<PostOpEltwise> Act;
  if (N.attrString("activation") != "Identity") {
    Act = fusedActivationPostOp(N);
    if (!Act)
      return nullptr;
  }
  return std::make_shared<MatMulKernel>(N, true, Act);
}

std::shared_ptr<DnnlKernel> makeGemmKernel(const ir::Node &N) {
  std::optional<PostOpEltwise> Act;
  if (N.op() == ir::OpKind::FusedGemm) {
    Act = fusedActivationPostOp(N);
    if (!Act)
      return nullptr;
  }
  return std::make_shared<GemmKernel>(N, Act);
}

} // namespace nng::backends::cpu
