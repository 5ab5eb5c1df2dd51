//===- LowerActivation.cpp - Activations: fused, own loops, oneDNN -------===//
//
// Which activations become oneDNN eltwise post-ops and which the backend's
// own loops: oneDNN 2.6's relu (alpha 0), clip and max pooling are built on
// vmaxps and map NaN to a number, and its logistic does in the gemm-based
// convolution; the reference (ONNX) keeps NaN. Measured algorithm by
// algorithm on NaN, +-inf in the jit and reference implementations:
// LeakyRelu (relu with alpha != 0), Tanh, Elu, Gelu (erf and tanh),
// HardSwish, Sqrt and Abs agree with the reference, so they are post-ops or
// eltwise primitives; Relu, Clip and LeakyRelu standing alone run as own
// loops (OwnKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

namespace {

/// True when oneDNN's eltwise Alg gives the reference's results on NaN and
/// infinities, in its jit and its reference implementations alike
/// (measured with oneDNN 2.6: relu with alpha 0, clip and logistic map NaN
/// to numbers in some of them).
bool nanExact(const PostOpEltwise &P) {
  using A = dnnl::algorithm;
  switch (P.Alg) {
  case A::eltwise_relu:
    return P.Alpha != 0; // LeakyRelu.
  case A::eltwise_tanh:
  case A::eltwise_elu:
  case A::eltwise_gelu_erf:
  case A::eltwise_gelu_tanh:
  case A::eltwise_hardswish:
    return true;
  default:
    return false;
  }
}

} // namespace

Activation fusedNodeActivation(const ir::Node &N) {
  Activation A;
  std::optional<PostOpEltwise> P = fusedActivationPostOp(N);
  if (!P)
    return A;
  if (nanExact(*P)) {
    A.PostOp = P;
    A.Ok = true;
  } else if (P->Alg == dnnl::algorithm::eltwise_relu) {
    A.Own = {Epilogue::Clamp, 0.0f, INFINITY, 0};
    A.Ok = true;
  } else if (P->Alg == dnnl::algorithm::eltwise_clip_v2) {
    A.Own = {Epilogue::Clamp, P->Alpha, P->Beta, 0};
    A.Ok = true;
  }
  return A;
}

Activation standaloneActivation(LowerContext &C, const ir::Node &Act) {
  Activation A;
  using ir::OpKind;
  switch (Act.op()) {
  case OpKind::Relu:
    A.Own = {Epilogue::Clamp, 0.0f, INFINITY, 0};
    A.Ok = true;
    break;
  case OpKind::LeakyRelu:
    A.Own = {Epilogue::Leaky, 0, 0, Act.attrFloat("alpha")};
    A.Ok = true;
    break;
  case OpKind::Clip: {
    float Lo = -INFINITY, Hi = INFINITY;
    for (size_t I = 1; I < 3; ++I) {
      if (!Act.hasInput(I))
        continue;
      const Tensor *T = C.constantOf(Act.input(I));
      if (!T || T->dtype() != DType::F32 || T->numel() != 1)
        return A;
      (I == 1 ? Lo : Hi) = static_cast<float>(T->getFlat(0));
    }
    // min > max gives max everywhere in the reference: the loop agrees.
    A.Own = {Epilogue::Clamp, Lo, Hi, 0};
    A.Ok = true;
    break;
  }
  case OpKind::Tanh:
    A.PostOp = PostOpEltwise{dnnl::algorithm::eltwise_tanh, 0, 0};
    A.Ok = true;
    break;
  case OpKind::Elu:
    A.PostOp = PostOpEltwise{dnnl::algorithm::eltwise_elu,
                             Act.attrFloat("alpha"), 0};
    A.Ok = true;
    break;
  case OpKind::HardSwish:
    A.PostOp = PostOpEltwise{dnnl::algorithm::eltwise_hardswish, 0, 0};
    A.Ok = true;
    break;
  case OpKind::Gelu:
    A.PostOp = PostOpEltwise{Act.attrString("approximate") == "tanh"
                                 ? dnnl::algorithm::eltwise_gelu_tanh
                                 : dnnl::algorithm::eltwise_gelu_erf,
                             0, 0};
    A.Ok = true;
    break;
  default:
    break;
  }
  return A;
}


namespace {

/// An own loop from one buffer into another (or the same one).
class EpilogueStep final : public Step {
public:
  int In = -1, Out = -1;
  Epilogue E;
  const float *X = nullptr;
  float *Y = nullptr;
  int64_t Count = 0;
  void bind(Program &P) override {
    if (P.Slots[In].Kind != SlotKind::Input)
      X = static_cast<const float *>(
          static_cast<const Tensor &>(P.tensorOf(In)).rawData());
    Y = reinterpret_cast<float *>(P.bufferData(Out));
    Count = static_cast<int64_t>(P.Slots[Out].MD.get_size() / sizeof(float));
  }
  void run(Program &P) override {
    if (P.Slots[In].Kind == SlotKind::Input)
      X = static_cast<const float *>(
          static_cast<const Tensor &>(P.tensorOf(In)).rawData());
    if (E.K == Epilogue::Clamp)
      clampFloats(X, Y, Count, E.Lo, E.Hi);
    else
      leakyReluFloats(X, Y, Count, E.Alpha);
  }
};

void emitOwnLoop(LowerContext &C, int In, int Out, const Epilogue &E,
                 std::string Desc) {
  auto St = std::make_unique<EpilogueStep>();
  St->In = In;
  St->Out = Out;
  St->E = E;
  St->Desc = std::move(Desc);
  C.B.reads(In);
  C.B.writes(Out);
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
}

} // namespace

void emitEpilogue(LowerContext &C, int Slot, const Epilogue &E,
                  std::string Desc) {
  emitOwnLoop(C, Slot, Slot, E, std::move(Desc));
}

bool lowerActivation(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X))
    return false;
  Activation A = standaloneActivation(C, N);
  if (!A.Ok || A.Own.K == Epilogue::None)
    return false;
  int In = C.slotOf(X);
  const ValueSlot &S = C.slot(In);
  // The bytes of every layout hold the same values (padding stays zero
  // under a clamp of a range holding 0 and under LeakyRelu).
  bool KeepsPadding = A.Own.K == Epilogue::Leaky ||
                      (A.Own.Lo <= 0.0f && A.Own.Hi >= 0.0f);
  if (S.Blocked && !KeepsPadding)
    In = C.B.plainOf(In);
  dnnl::memory::desc MD = C.slot(In).MD;
  int Out = C.defineBuffer(N.output(0), MD);
  emitOwnLoop(C, In, Out, A.Own, N.describe());
  return true;
}

bool lowerEltwise(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X))
    return false;
  using A = dnnl::algorithm;
  A Alg;
  float Alpha = 0, Beta = 0;
  switch (N.op()) {
  case ir::OpKind::Sqrt:
    Alg = A::eltwise_sqrt;
    break;
  case ir::OpKind::Abs:
    Alg = A::eltwise_abs;
    break;
  default: {
    Activation Act = standaloneActivation(C, N);
    if (!Act.Ok || !Act.PostOp)
      return false;
    Alg = Act.PostOp->Alg;
    Alpha = Act.PostOp->Alpha;
    Beta = Act.PostOp->Beta;
  }
  }
  int In = C.slotOf(X);
  dnnl::memory::desc MD = C.slot(In).MD;
  dnnl::eltwise_forward::desc D(dnnl::prop_kind::forward_inference, Alg, MD,
                                Alpha, Beta);
  dnnl::eltwise_forward::primitive_desc PD(D, cpuEngine());
  int Out = C.defineBuffer(N.output(0), PD.dst_desc());
  auto St = std::make_unique<PrimitiveStep>();
  St->Desc = N.describe();
  St->Prim = dnnl::eltwise_forward(PD);
  St->arg(DNNL_ARG_SRC, In, MD);
  St->arg(DNNL_ARG_DST, Out, PD.dst_desc());
  C.B.reads(In);
  C.B.writes(Out);
  C.B.emit(std::move(St));
  ++C.program().Stats.DnnlSteps;
  return true;
}

} // namespace nng::backends::cpu
