//===- DnnlConv.cpp - Conv, FusedConv, ConvTranspose, ConvGradWeight -----===//
//
// oneDNN convolution_forward (FusedConv's activation as an eltwise post-op),
// deconvolution_forward and convolution_backward_weights over 1-d to 3-d
// f32 inputs. The tensors keep ONNX's plain layouts (NCHW activations,
// grouped weights viewed as [G, M/G, C/G, k...], ConvTranspose's
// [C, M/G, k...] described by strides); the primitives pick their own
// (blocked) layouts and the plan reorders into and out of them on each
// call. Geometry comes from ir's window geometry (WindowGeometry.h), as in
// inference and the reference kernels, so auto_pad and pads mean the same;
// anything else falls back. The weight gradient of a
// single-input-channel 2-d convolution (a first layer) runs as direct
// loops instead, which beat oneDNN's channel-padded blocked kernel.
//
//===----------------------------------------------------------------------===//

#include "DnnlKernel.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>

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
  G.Win = reference::forwardWindow(C, X, Kernel);
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
    auto [Strides, Dil, PadL, PadR] = dnnlWindow(G.Win);
    dnnl::convolution_forward::desc D(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        anyLayout(Src), anyLayout(Wei), Bias, anyLayout(Dst), Strides, Dil,
        PadL, PadR);
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
    int64_t M = W.size(1) * G;
    if (HasBias && C.in(2).shape() != Shape{M})
      return nullptr;
    Shape Out = *C.OutTypes[0].staticShape();
    std::optional<DeconvGeometry> Geo =
        deconvGeometry(C.N, X.shape(), Out, W.shape());
    if (!Geo)
      return nullptr;
    auto P = std::make_unique<ConvPlan>();
    P->HasBias = HasBias;
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Wei = Geo->Weights;
    memory::desc Dst = plainDesc(dimsOf(Out));
    memory::desc Bias = HasBias ? plainDesc({M}) : memory::desc();
    dnnl::deconvolution_forward::desc D(
        dnnl::prop_kind::forward_inference,
        dnnl::algorithm::deconvolution_direct, anyLayout(Src), anyLayout(Wei),
        Bias, anyLayout(Dst), Geo->Strides, Geo->Dil, Geo->PadL, Geo->PadR);
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

/// The weight gradient of a 2-d, stride-1, undilated convolution with one
/// input channel (a network's first layer), where oneDNN pads the channel
/// to a vector block and reorders dY: per image the shifted input planes
/// (one per kernel tap, zero outside the image) are laid out once, then
/// each output channel's dY plane is dotted with each of them (in float
/// lanes that vectorize, summed in double).
class ConvGradWeightC1Plan : public Plan {
public:
  int64_t N = 0, M = 0, H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0;
  int64_t PadT = 0, PadL = 0;

  void run(KernelContext &C) override {
    Tensor X = dense(C.in(0)), DY = dense(C.in(1));
    Tensor &DW = C.allocOutput(0);
    const float *PX = static_cast<const float *>(X.rawData());
    const float *PG = static_cast<const float *>(DY.rawData());
    float *PW = static_cast<float *>(DW.rawData());
    const int64_t Taps = KH * KW, Plane = OH * OW;
    parallelFor(0, M, 1, [&](int64_t B, int64_t E) {
      std::vector<float> Cols(Taps * Plane);
      std::vector<double> Acc((E - B) * Taps, 0.0);
      for (int64_t Nb = 0; Nb < N; ++Nb) {
        shiftedPlanes(PX + Nb * H * W, Cols.data());
        for (int64_t Mo = B; Mo < E; ++Mo) {
          const float *G = PG + (Nb * M + Mo) * Plane;
          for (int64_t T = 0; T < Taps; ++T)
            Acc[(Mo - B) * Taps + T] += dot(G, Cols.data() + T * Plane, Plane);
        }
      }
      for (int64_t I = 0; I < (E - B) * Taps; ++I)
        PW[B * Taps + I] = static_cast<float>(Acc[I]);
    });
  }

private:
  /// Cols[tap][y, x] = In[y + ky - PadT, x + kx - PadL], 0 outside.
  void shiftedPlanes(const float *In, float *Cols) const {
    for (int64_t Ky = 0; Ky < KH; ++Ky)
      for (int64_t Kx = 0; Kx < KW; ++Kx) {
        float *Out = Cols + (Ky * KW + Kx) * OH * OW;
        int64_t DX = Kx - PadL;
        int64_t X0 = std::clamp<int64_t>(-DX, 0, OW);
        int64_t X1 = std::clamp<int64_t>(W - DX, X0, OW);
        for (int64_t Y = 0; Y < OH; ++Y) {
          float *Row = Out + Y * OW;
          int64_t IY = Y + Ky - PadT;
          if (IY < 0 || IY >= H) {
            std::fill(Row, Row + OW, 0.f);
            continue;
          }
          std::fill(Row, Row + X0, 0.f);
          std::copy(In + IY * W + X0 + DX, In + IY * W + X1 + DX, Row + X0);
          std::fill(Row + X1, Row + OW, 0.f);
        }
      }
  }

  /// Sum of A[i] * B[i] over [0, Len): 16 float lanes, double per block.
  static double dot(const float *A, const float *B, int64_t Len) {
    constexpr int64_t Lanes = 16, Block = 1024;
    double Sum = 0;
    for (int64_t B0 = 0; B0 < Len; B0 += Block) {
      int64_t BE = std::min(Len, B0 + Block), I = B0;
      float L[Lanes] = {};
      for (; I + Lanes <= BE; I += Lanes)
        for (int64_t K = 0; K < Lanes; ++K)
          L[K] += A[I + K] * B[I + K];
      double S = 0;
      for (; I < BE; ++I)
        S += static_cast<double>(A[I]) * B[I];
      for (int64_t K = 0; K < Lanes; ++K)
        S += L[K];
      Sum += S;
    }
    return Sum;
  }
};

/// The single-channel plan for C, or null when its geometry is another.
std::unique_ptr<Plan> singleChannelGradWeightPlan(const Tensor &X,
                                                  const Tensor &DY,
                                                  const ConvGeometry &G) {
  if (X.rank() != 4 || X.size(1) != 1 || G.Group != 1)
    return nullptr;
  for (size_t D = 0; D < 2; ++D)
    if (G.Win.Strides[D] != 1 || G.Win.Dilations[D] != 1)
      return nullptr;
  auto P = std::make_unique<ConvGradWeightC1Plan>();
  P->N = X.size(0);
  P->M = DY.size(1);
  P->H = X.size(2);
  P->W = X.size(3);
  P->OH = DY.size(2);
  P->OW = DY.size(3);
  P->KH = G.Win.Kernel[0];
  P->KW = G.Win.Kernel[1];
  P->PadT = G.Win.PadBegin[0];
  P->PadL = G.Win.PadBegin[1];
  return P;
}

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
    if (std::unique_ptr<Plan> P = singleChannelGradWeightPlan(X, DY, G))
      return P;
    Shape WShape = *C.OutTypes[0].staticShape();
    memory::desc Src = plainDesc(dimsOf(X.shape()));
    memory::desc Wei = convWeightsDesc(WShape, G.Group);
    memory::desc Dst = plainDesc(dimsOf(DY.shape()));
    auto [Strides, Dil, PadL, PadR] = dnnlWindow(G.Win);
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
    // A residual Sum, or no activation: the reference kernel.
    if (N.hasInput(3))
      return nullptr;
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

std::optional<DeconvGeometry> deconvGeometry(const ir::Node &N, const Shape &X,
                                             const Shape &Y, const Shape &WS) {
  size_t Rank = X.rank(), R = Rank - 2;
  int64_t G = N.attrInt("group"), Ch = X[1];
  if (Rank < 3 || WS.rank() != Rank || Y.rank() != Rank || G <= 0 ||
      WS[0] != Ch || Ch % G != 0)
    return std::nullopt;
  int64_t MPerG = WS[1], CPerG = Ch / G;
  std::vector<int64_t> Kernel(WS.begin() + 2, WS.end());
  std::vector<int64_t> KS = N.attrInts("kernel_shape");
  if (!KS.empty() && KS != Kernel)
    return std::nullopt;
  ir::WindowGeometry Win = ir::transposedWindow(
      ir::readWindowAttrs(N.schema(), N.attrs(), R, Kernel),
      std::vector<int64_t>(X.begin() + 2, X.end()));
  if (!Win.ok() || !std::equal(Win.Out.begin(), Win.Out.end(), Y.begin() + 2))
    return std::nullopt;
  DeconvGeometry Geo;
  for (size_t D = 0; D < R; ++D) {
    if (Win.PadBegin[D] < 0 || Win.PadEnd[D] < 0)
      return std::nullopt;
    Geo.PadL.push_back(Win.PadBegin[D]);
    Geo.PadR.push_back(Win.PadEnd[D]);
    Geo.Dil.push_back(Win.Dilations[D] - 1);
    Geo.Strides.push_back(Win.Strides[D]);
  }
  // Logical weights [G, M/G, C/G, k...] over ONNX's [G, C/G, M/G, k...].
  int64_t KN = 1;
  for (int64_t K : Kernel)
    KN *= K;
  memory::dims WD{G, MPerG, CPerG}, WSt{CPerG * MPerG * KN, KN, MPerG * KN};
  memory::dims KSt(R);
  for (size_t D = R, Acc = 1; D-- > 0;) {
    KSt[D] = static_cast<int64_t>(Acc);
    Acc *= static_cast<size_t>(Kernel[D]);
  }
  WD.insert(WD.end(), Kernel.begin(), Kernel.end());
  WSt.insert(WSt.end(), KSt.begin(), KSt.end());
  if (G == 1) {
    WD.erase(WD.begin());
    WSt.erase(WSt.begin());
  }
  Geo.Weights = stridedDesc(WD, WSt);
  return Geo;
}

} // namespace nng::backends::cpu
