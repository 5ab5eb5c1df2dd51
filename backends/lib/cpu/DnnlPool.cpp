//===- DnnlPool.cpp - Pools and pool gradients on oneDNN pooling_v2 ------===//
//
// MaxPool (without Indices), AveragePool, nng.MaxPoolGrad (the forward
// re-run in training mode for its workspace, then pooling backward),
// nng.AveragePoolGrad and GlobalAveragePool (a mean reduction). ceil_mode
// becomes extra end padding; AveragePool's divisor is oneDNN's only where
// it equals the reference one (exclude_padding always; include_padding
// unless a ceil-mode window overhangs the padded input). Max pools fall
// back for NaN inputs and for dilated windows next to padding.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

/// oneDNN's view of a pool's window, or Ok = false when it cannot express
/// the reference's one exactly.
struct PoolGeometry {
  memory::dims Strides, Kernel, Dil, PadL, PadR;
  dnnl::algorithm Alg;
  bool Ok = false;
};

PoolGeometry poolGeometry(KernelContext &C, const Shape &X, bool IsMax) {
  PoolGeometry G;
  if (X.rank() < 3 || X.rank() > 5)
    return G;
  Window W = reference::forwardWindow(C, X);
  bool IncludePad = !IsMax && C.attrInt("count_include_pad") != 0;
  G.Alg = IsMax        ? dnnl::algorithm::pooling_max
          : IncludePad ? dnnl::algorithm::pooling_avg_include_padding
                       : dnnl::algorithm::pooling_avg_exclude_padding;
  for (size_t D = 0; D < W.rank(); ++D) {
    int64_t EffK = (W.Kernel[D] - 1) * W.Dilations[D] + 1;
    int64_t In = W.In[D], S = W.Strides[D], PB = W.PadBegin[D];
    int64_t PE = W.PadEnd[D];
    // ceil_mode: pad the end so that floor division gives the same extent.
    int64_t PR = (In + PB + PE - EffK) / S + 1 == W.Out[D]
                     ? PE
                     : (W.Out[D] - 1) * S + EffK - In - PB;
    if (PR < 0 || (IncludePad && PR != PE))
      return G;
    // Windows wholly in the padding (the reference gives -inf or 0/0).
    if (PB >= EffK || PR >= EffK || (W.Dilations[D] > 1 && (PB || PR)))
      return G;
    G.Strides.push_back(S);
    G.Kernel.push_back(W.Kernel[D]);
    G.Dil.push_back(W.Dilations[D] - 1);
    G.PadL.push_back(PB);
    G.PadR.push_back(PR);
  }
  G.Ok = true;
  return G;
}

dnnl::pooling_v2_forward::primitive_desc
poolForwardPD(const PoolGeometry &G, dnnl::prop_kind Prop,
              const memory::desc &Src, const memory::desc &Dst) {
  dnnl::pooling_v2_forward::desc D(Prop, G.Alg, Src, Dst, G.Strides, G.Kernel,
                                   G.Dil, G.PadL, G.PadR);
  return dnnl::pooling_v2_forward::primitive_desc(D, cpuEngine());
}

class PoolPlan : public SimplePlan {
public:
  bool IsMax = false;
  bool accepts(const KernelContext &C) const override {
    return !IsMax || noNaN(dense(C.in(0)));
  }
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0));
    Tensor &Y = C.allocOutput(0);
    bind(DNNL_ARG_SRC, X);
    bind(DNNL_ARG_DST, Y);
    execute();
  }
};

class PoolKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    bool IsMax = N.op() == ir::OpKind::MaxPool;
    if (!isF32(X) || C.Outputs.size() != 1)
      return nullptr;
    PoolGeometry G = poolGeometry(C, X.shape(), IsMax);
    if (!G.Ok)
      return nullptr;
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Dst = plainDesc(dimsOf(*C.OutTypes[0].staticShape()));
    auto P = std::make_unique<PoolPlan>();
    P->IsMax = IsMax;
    P->Prim = dnnl::pooling_v2_forward(
        poolForwardPD(G, dnnl::prop_kind::forward_inference, Src, Dst));
    P->addArg(DNNL_ARG_SRC, Src);
    P->addArg(DNNL_ARG_DST, Dst);
    return P;
  }
};

/// Pool gradients: for max pooling a training-mode forward fills the
/// workspace (which window element won) that the backward reads.
class PoolGradPlan : public Plan {
public:
  bool IsMax = false;
  dnnl::primitive Fwd, Bwd;
  std::unordered_map<int, dnnl::memory> FwdArgs, BwdArgs;
  bool accepts(const KernelContext &C) const override {
    return !IsMax || noNaN(dense(C.in(0)));
  }
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0)), DY = dense(C.in(1));
    Tensor &DX = C.allocOutput(0);
    if (IsMax) {
      FwdArgs.at(DNNL_ARG_SRC).set_data_handle(handle(X));
      execute(Fwd, FwdArgs);
    }
    BwdArgs.at(DNNL_ARG_DIFF_DST).set_data_handle(handle(DY));
    BwdArgs.at(DNNL_ARG_DIFF_SRC).set_data_handle(handle(DX));
    execute(Bwd, BwdArgs);
  }
};

class PoolGradKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0), &DY = C.in(1);
    bool IsMax = N.op() == ir::OpKind::MaxPoolGrad;
    if (!isF32(X) || !isF32(DY))
      return nullptr;
    PoolGeometry G = poolGeometry(C, X.shape(), IsMax);
    if (!G.Ok)
      return nullptr;
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Dst = plainDesc(dimsOf(DY.shape()));
    auto FPD = poolForwardPD(G, dnnl::prop_kind::forward_training, Src, Dst);
    dnnl::pooling_v2_backward::desc BD(G.Alg, Src, Dst, G.Strides, G.Kernel,
                                       G.Dil, G.PadL, G.PadR);
    dnnl::pooling_v2_backward::primitive_desc BPD(BD, cpuEngine(), FPD);
    auto P = std::make_unique<PoolGradPlan>();
    P->IsMax = IsMax;
    P->Bwd = dnnl::pooling_v2_backward(BPD);
    P->BwdArgs.emplace(DNNL_ARG_DIFF_DST,
                       memory(Dst, cpuEngine(), DNNL_MEMORY_NONE));
    P->BwdArgs.emplace(DNNL_ARG_DIFF_SRC,
                       memory(Src, cpuEngine(), DNNL_MEMORY_NONE));
    if (IsMax) {
      // The plan owns the forward's output and workspace buffers.
      memory WS(FPD.workspace_desc(), cpuEngine());
      P->Fwd = dnnl::pooling_v2_forward(FPD);
      P->FwdArgs.emplace(DNNL_ARG_SRC,
                         memory(Src, cpuEngine(), DNNL_MEMORY_NONE));
      P->FwdArgs.emplace(DNNL_ARG_DST, memory(Dst, cpuEngine()));
      P->FwdArgs.emplace(DNNL_ARG_WORKSPACE, WS);
      P->BwdArgs.emplace(DNNL_ARG_WORKSPACE, WS);
    }
    return P;
  }
};

class GlobalAveragePoolKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0);
    if (!isF32(X) || X.rank() < 3)
      return nullptr;
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Dst = plainDesc(dimsOf(*C.OutTypes[0].staticShape()));
    dnnl::reduction::desc D(dnnl::algorithm::reduction_mean, Src, Dst, 0.f,
                            0.f);
    auto P = std::make_unique<PoolPlan>();
    P->Prim = dnnl::reduction(dnnl::reduction::primitive_desc(D, cpuEngine()));
    P->addArg(DNNL_ARG_SRC, Src);
    P->addArg(DNNL_ARG_DST, Dst);
    return P;
  }
};

} // namespace

std::shared_ptr<DnnlKernel> makePoolKernel(const ir::Node &N) {
  if (N.numOutputs() != 1)
    return nullptr; // MaxPool's Indices: the reference kernel.
  return std::make_shared<PoolKernel>(N);
}

std::shared_ptr<DnnlKernel> makePoolGradKernel(const ir::Node &N) {
  return std::make_shared<PoolGradKernel>(N);
}

std::shared_ptr<DnnlKernel> makeGlobalAveragePoolKernel(const ir::Node &N) {
  return std::make_shared<GlobalAveragePoolKernel>(N);
}

} // namespace nng::backends::cpu
