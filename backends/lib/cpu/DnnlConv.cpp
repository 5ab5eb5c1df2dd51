//===- DnnlConv.cpp - Conv, FusedConv, ConvTranspose, ConvGradWeight -----===//
//
// oneDNN convolution_forward (FusedConv's activation as an eltwise post-op),
// deconvolution_forward and convolution_backward_weights over 1-d to 3-d
// f32 inputs. The tensors keep ONNX's plain layouts (NCHW activations,
// grouped weights viewed as [G, M/G, C/G, k...], ConvTranspose's
// [C, M/G, k...] described by strides); the primitives pick their own
// (blocked) layouts and the plan reorders into and out of them on each
// call. Geometry comes from the reference's forwardWindow, so auto_pad and
// pads mean the same; anything else falls back.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"

namespace nng::backends::cpu {

namespace {

using dnnl::memory;
using Arg = int;

/// Weights descriptor of W[M, C/G, k...] for G groups (row-major, so the
/// grouped view [G, M/G, C/G, k...] is plain too).
memory::desc convWeightsDesc(const Shape &W, int64_t G) {
  memory::dims D = dimsOf(W);
  if (G > 1) {
    D[0] /= G;
    D.insert(D.begin(), G);
  }
  return plainDesc(D);
}

/// MD's dims with the layout left to the primitive.
memory::desc anyLayout(const memory::desc &MD) {
  return memory::desc(MD.dims(), memory::data_type::f32,
                      memory::format_tag::any);
}

/// oneDNN's dilation is ONNX's minus one.
memory::dims dnnlDilations(const Window &W) {
  memory::dims D(W.Dilations.begin(), W.Dilations.end());
  for (auto &E : D)
    E -= 1;
  return D;
}

/// Conv geometry shared by forward and weight-gradient plans; fails over to
/// the reference (null) for channel counts that do not fit.
struct ConvGeometry {
  Window Win;
  int64_t Group;
  bool Ok = false;
};

ConvGeometry convGeometry(KernelContext &C, const Shape &X,
                          const std::vector<int64_t> &Kernel) {
  ConvGeometry G;
  G.Group = C.attrInt("group");
  if (X.rank() < 3 || X.rank() > 5 || G.Group <= 0)
    return G;
  G.Win = reference::forwardWindow(C, X, Kernel, true, false);
  G.Ok = true;
  return G;
}

// --- Conv and FusedConv ------------------------------------------------------

/// An operand of a primitive that picked its own memory layout: the plain
/// user memory (its handle set per call), the primitive's memory and the
/// reorder between them (none when the layouts agree).
struct LaidOut {
  memory User, Prim;
  dnnl::reorder Reorder;
  bool NeedsReorder = false;

  LaidOut() = default;
  LaidOut(const memory::desc &Plain, const memory::desc &Chosen, bool IsOutput)
      : User(Plain, cpuEngine(), DNNL_MEMORY_NONE) {
    NeedsReorder = Chosen != Plain;
    if (!NeedsReorder) {
      Prim = User;
      return;
    }
    Prim = memory(Chosen, cpuEngine());
    Reorder = IsOutput ? dnnl::reorder(Prim, User) : dnnl::reorder(User, Prim);
  }
  void toPrim(dnnl::stream &S) {
    if (NeedsReorder)
      Reorder.execute(S, User, Prim);
  }
  void fromPrim(dnnl::stream &S) {
    if (NeedsReorder)
      Reorder.execute(S, Prim, User);
  }
};

/// Conv / FusedConv in the layouts oneDNN prefers (blocked channels): the
/// operands are reordered on every call, weights included (an initializer
/// may be updated in place between runs, so a cached copy could go stale).
class ConvPlan : public Plan {
public:
  dnnl::primitive Prim;
  LaidOut Src, Wei, Dst;
  memory Bias;
  bool HasBias = false;
  /// With an activation post-op: oneDNN's relu maps NaN to 0, so inputs
  /// that are not all finite go to the reference kernel.
  bool NeedFinite = false;
  std::unordered_map<int, memory> Args;

  bool accepts(const KernelContext &C) const override {
    return !NeedFinite || allInputsFinite(C);
  }
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0)), W = dense(C.in(1)), B;
    Tensor &Y = C.allocOutput(0);
    dnnl::stream &S = cpuStream();
    Src.User.set_data_handle(handle(X));
    Src.toPrim(S);
    Wei.User.set_data_handle(handle(W));
    Wei.toPrim(S);
    if (HasBias) {
      B = dense(C.in(2));
      Bias.set_data_handle(handle(B));
    }
    Dst.User.set_data_handle(handle(Y));
    Prim.execute(S, Args);
    Dst.fromPrim(S);
    S.wait();
  }
};

/// Fills P's memories and arguments for a (de)convolution primitive
/// descriptor PD chosen over the plain descriptors Src, Wei, Bias?, Dst.
template <typename PrimDesc>
void setUpConvPlan(ConvPlan &P, const PrimDesc &PD, const memory::desc &Src,
                   const memory::desc &Wei, const memory::desc &Bias,
                   const memory::desc &Dst) {
  P.Src = LaidOut(Src, PD.src_desc(), false);
  P.Wei = LaidOut(Wei, PD.weights_desc(), false);
  P.Dst = LaidOut(Dst, PD.dst_desc(), true);
  P.Args = {{DNNL_ARG_SRC, P.Src.Prim},
            {DNNL_ARG_WEIGHTS, P.Wei.Prim},
            {DNNL_ARG_DST, P.Dst.Prim}};
  if (P.HasBias) {
    P.Bias = memory(Bias, cpuEngine(), DNNL_MEMORY_NONE);
    P.Args.emplace(DNNL_ARG_BIAS, P.Bias);
  }
}

class ConvKernel : public DnnlKernel {
public:
  ConvKernel(const ir::Node &N, std::optional<PostOpEltwise> Act)
      : DnnlKernel(N), Act(Act) {}

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0), &W = C.in(1);
    bool HasBias = C.hasInput(2);
    if (!isF32(X) || !isF32(W) || (HasBias && !isF32(C.in(2))) ||
        W.rank() != X.rank())
      return nullptr;
    std::vector<int64_t> Kernel(W.shape().begin() + 2, W.shape().end());
    std::vector<int64_t> KS = C.attrInts("kernel_shape");
    if (!KS.empty() && KS != Kernel)
      return nullptr;
    ConvGeometry G = convGeometry(C, X.shape(), Kernel);
    int64_t M = W.size(0);
    if (!G.Ok || X.size(1) != W.size(1) * G.Group || M % G.Group != 0 ||
        (HasBias && C.in(2).shape() != Shape{M}))
      return nullptr;
    auto P = std::make_unique<ConvPlan>();
    P->HasBias = HasBias;
    P->NeedFinite = Act.has_value();
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Wei = convWeightsDesc(W.shape(), G.Group);
    memory::desc Dst = plainDesc(dimsOf(*C.OutTypes[0].staticShape()));
    memory::desc Bias = HasBias ? plainDesc({M}) : memory::desc();
    memory::dims Strides(G.Win.Strides.begin(), G.Win.Strides.end());
    memory::dims PadL(G.Win.PadBegin.begin(), G.Win.PadBegin.end());
    memory::dims PadR(G.Win.PadEnd.begin(), G.Win.PadEnd.end());
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        anyLayout(Src), anyLayout(Wei), Bias, anyLayout(Dst), Strides,
        dnnlDilations(G.Win), PadL, PadR);
    dnnl::primitive_attr Attr;
    if (Act) {
      dnnl::post_ops Ops;
      Ops.append_eltwise(1.0f, Act->Alg, Act->Alpha, Act->Beta);
      Attr.set_post_ops(Ops);
    }
    dnnl::convolution_forward::primitive_desc PD(D, Attr, cpuEngine());
    P->Prim = dnnl::convolution_forward(PD);
    setUpConvPlan(*P, PD, Src, Wei, Bias, Dst);
    return P;
  }

private:
  std::optional<PostOpEltwise> Act;
};

// --- ConvTranspose -----------------------------------------------------------

class ConvTransposeKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0), &W = C.in(1);
    bool HasBias = C.hasInput(2);
    size_t Rank = X.rank();
    if (!isF32(X) || !isF32(W) || (HasBias && !isF32(C.in(2))) ||
        W.rank() != Rank || Rank < 3 || Rank > 5)
      return nullptr;
    int64_t G = C.attrInt("group"), Ch = X.size(1);
    if (G <= 0 || W.size(0) != Ch || Ch % G != 0)
      return nullptr;
    int64_t MPerG = W.size(1), M = MPerG * G, CPerG = Ch / G;
    if (HasBias && C.in(2).shape() != Shape{M})
      return nullptr;
    size_t R = Rank - 2;
    std::vector<int64_t> Kernel(W.shape().begin() + 2, W.shape().end());
    std::vector<int64_t> KS = C.attrInts("kernel_shape");
    if (!KS.empty() && KS != Kernel)
      return nullptr;
    auto Spatial = [&](const char *Name, int64_t Default, size_t Mult) {
      std::vector<int64_t> V = C.attrInts(Name);
      return V.empty() ? std::vector<int64_t>(R * Mult, Default) : V;
    };
    std::vector<int64_t> Strides = Spatial("strides", 1, 1);
    std::vector<int64_t> Dil = Spatial("dilations", 1, 1);
    std::vector<int64_t> Pads = Spatial("pads", 0, 2);
    std::vector<int64_t> OutPad = Spatial("output_padding", 0, 1);
    if (Strides.size() != R || Dil.size() != R || Pads.size() != 2 * R ||
        OutPad.size() != R)
      return nullptr;
    const std::string &AutoPad = C.attrString("auto_pad");
    bool Same = AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER";
    bool HasOutShape = !C.attrInts("output_shape").empty();
    if (!Same && AutoPad != "NOTSET" && AutoPad != "VALID")
      return nullptr;
    Shape Out = *C.OutTypes[0].staticShape();
    // The same begin padding as the reference kernel; the end padding is
    // what makes oneDNN's output extent equal the inferred one.
    memory::dims PadL(R), PadR(R), DilD(R), StrD(R);
    for (size_t D = 0; D < R; ++D) {
      if (Strides[D] <= 0 || Dil[D] <= 0 || OutPad[D] < 0)
        return nullptr;
      int64_t In = X.size(2 + D), O = Out[2 + D];
      int64_t EffK = (Kernel[D] - 1) * Dil[D] + 1;
      int64_t Full = Strides[D] * (In - 1) + OutPad[D] + EffK;
      if (HasOutShape || Same) {
        int64_t Total = std::max<int64_t>(0, Full - O);
        PadL[D] = AutoPad == "SAME_UPPER" ? Total / 2 : Total - Total / 2;
      } else {
        PadL[D] = AutoPad == "VALID" ? 0 : Pads[D];
      }
      PadR[D] = Strides[D] * (In - 1) + EffK - PadL[D] - O;
      if (PadL[D] < 0 || PadR[D] < 0)
        return nullptr;
      DilD[D] = Dil[D] - 1;
      StrD[D] = Strides[D];
    }
    // Logical weights [G, M/G, C/G, k...] (oneDNN's goihw order) over ONNX's
    // [G, C/G, M/G, k...] storage.
    int64_t KN = 1;
    for (int64_t K : Kernel)
      KN *= K;
    memory::dims WD{G, MPerG, CPerG}, WS{CPerG * MPerG * KN, KN, MPerG * KN};
    int64_t Acc = 1;
    memory::dims KSt(R);
    for (size_t D = R; D-- > 0;) {
      KSt[D] = Acc;
      Acc *= Kernel[D];
    }
    WD.insert(WD.end(), Kernel.begin(), Kernel.end());
    WS.insert(WS.end(), KSt.begin(), KSt.end());
    if (G == 1) {
      WD.erase(WD.begin());
      WS.erase(WS.begin());
    }
    auto P = std::make_unique<ConvPlan>();
    P->HasBias = HasBias;
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Wei = stridedDesc(WD, WS);
    memory::desc Dst = plainDesc(dimsOf(Out));
    memory::desc Bias = HasBias ? plainDesc({M}) : memory::desc();
    dnnl::deconvolution_forward::desc D(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::deconvolution_direct,
                                        anyLayout(Src), anyLayout(Wei), Bias,
                                        anyLayout(Dst), StrD, DilD, PadL, PadR);
    dnnl::deconvolution_forward::primitive_desc PD(D, cpuEngine());
    P->Prim = dnnl::deconvolution_forward(PD);
    setUpConvPlan(*P, PD, Src, Wei, Bias, Dst);
    return P;
  }
};

// --- ConvGradWeight ----------------------------------------------------------

/// Conv's weight gradient in the layouts oneDNN prefers; X and dY are
/// reordered in, dW out.
class ConvGradWeightPlan : public Plan {
public:
  dnnl::primitive Prim;
  LaidOut Src, DiffDst, DiffWei;
  std::unordered_map<int, memory> Args;
  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0)), DY = dense(C.in(1));
    Tensor &DW = C.allocOutput(0);
    dnnl::stream &S = cpuStream();
    Src.User.set_data_handle(handle(X));
    Src.toPrim(S);
    DiffDst.User.set_data_handle(handle(DY));
    DiffDst.toPrim(S);
    DiffWei.User.set_data_handle(handle(DW));
    Prim.execute(S, Args);
    DiffWei.fromPrim(S);
    S.wait();
  }
};

class ConvGradWeightKernel : public DnnlKernel {
public:
  using DnnlKernel::DnnlKernel;

protected:
  std::unique_ptr<Plan> makePlan(KernelContext &C) override {
    const Tensor &X = C.in(0), &DY = C.in(1);
    if (!isF32(X) || !isF32(DY) || DY.rank() != X.rank())
      return nullptr;
    ConvGeometry G = convGeometry(C, X.shape(), C.attrInts("kernel_shape"));
    int64_t M = DY.size(1);
    if (!G.Ok || X.size(1) % G.Group != 0 || M % G.Group != 0)
      return nullptr;
    Shape Want{X.size(0), M};
    for (int64_t E : G.Win.Out)
      Want.push_back(E);
    if (DY.shape() != Want)
      return nullptr; // The reference kernel reports the mismatch.
    Shape WShape = *C.OutTypes[0].staticShape();
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Wei = convWeightsDesc(WShape, G.Group);
    memory::desc Dst = plainDesc(dimsOf(DY.shape()));
    memory::dims Strides(G.Win.Strides.begin(), G.Win.Strides.end());
    memory::dims PadL(G.Win.PadBegin.begin(), G.Win.PadBegin.end());
    memory::dims PadR(G.Win.PadEnd.begin(), G.Win.PadEnd.end());
    memory::dims Dil = dnnlDilations(G.Win);
    dnnl::convolution_forward::desc FD(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
        anyLayout(Src), anyLayout(Wei), anyLayout(Dst), Strides, Dil, PadL,
        PadR);
    dnnl::convolution_forward::primitive_desc FPD(FD, cpuEngine());
    dnnl::convolution_backward_weights::desc BD(
        dnnl::algorithm::convolution_direct, anyLayout(Src), anyLayout(Wei),
        anyLayout(Dst), Strides, Dil, PadL, PadR);
    dnnl::convolution_backward_weights::primitive_desc BPD(BD, cpuEngine(),
                                                           FPD);
    auto P = std::make_unique<ConvGradWeightPlan>();
    P->Prim = dnnl::convolution_backward_weights(BPD);
    P->Src = LaidOut(Src, BPD.src_desc(), false);
    P->DiffDst = LaidOut(Dst, BPD.diff_dst_desc(), false);
    P->DiffWei = LaidOut(Wei, BPD.diff_weights_desc(), true);
    P->Args = {{DNNL_ARG_SRC, P->Src.Prim},
               {DNNL_ARG_DIFF_DST, P->DiffDst.Prim},
               {DNNL_ARG_DIFF_WEIGHTS, P->DiffWei.Prim}};
    return P;
  }
};

} // namespace

std::shared_ptr<DnnlKernel> makeConvKernel(const ir::Node &N) {
  std::optional<PostOpEltwise> Act;
  if (N.op() == ir::OpKind::FusedConv) {
    Act = fusedActivationPostOp(N);
    if (!Act)
      return nullptr;
  }
  return std::make_shared<ConvKernel>(N, Act);
}

std::shared_ptr<DnnlKernel> makeConvTransposeKernel(const ir::Node &N) {
  return std::make_shared<ConvTransposeKernel>(N);
}

std::shared_ptr<DnnlKernel> makeConvGradWeightKernel(const ir::Node &N) {
  return std::make_shared<ConvGradWeightKernel>(N);
}

} // namespace nng::backends::cpu
