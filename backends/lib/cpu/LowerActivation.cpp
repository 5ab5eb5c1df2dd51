//===- LowerActivation.cpp - Activations: fused, own loops, oneDNN -------===//
//
// Which activations become oneDNN eltwise post-ops and which the backend's
// own loops: oneDNN 2.6's relu (alpha 0), clip and max pooling are built on
// vmaxps and map NaN to a number, and its logistic does in the gemm-based
// convolution; the reference (ONNX) keeps NaN. Measured algorithm by
// algorithm on NaN, +-inf in the jit and reference implementations:
// LeakyRelu (relu with alpha != 0), Tanh, Elu, Gelu (erf and tanh),
// HardSwish, Sqrt and Abs agree with the reference, so they are post-ops or
// eltwise primitives. Relu fused into a convolution or a matmul is the
// chain elu(alpha 0) then linear(1, 0): elu's compare-and-blend keeps NaN
// and gives -0 for x <= 0 (0 * expm1(x); -inf too), and adding +0 makes
// that +0, exactly max(x, 0) with NaN kept. Clip with an upper bound and
// LeakyRelu with alpha 0, and a Relu on its own, run as own loops
// (LoopsElementwise.cpp). Which activations exist, and their parameters, come
// from the fused-activation table (ir/FusedActivation.h); what a
// convolution or a product fuses is explicit in the graph (the epilogue
// rules, rules/FuseEpilogues.cpp and rules/FuseProducts.cpp, made it a
// FusedConv's or FusedMatMul's Sum and activation). PRelu is an own loop
// too (x < 0 ? slope * x : x, the slope
// broadcast by strides): oneDNN 2.6's prelu (jit_uni) gives NaN for an
// infinite or NaN slope where x >= 0 (the reference: x), and +0 where the
// reference's product is -0 (x = -0 under a negative slope, x < 0 under a
// zero slope). HardSigmoid, which oneDNN 2.6 lacks, is an own loop too.
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

/// Activation A with parameters P: a post-op when oneDNN's algorithm is
/// NaN-exact, else an own loop (Relu and Clip clamp; LeakyRelu with alpha 0
/// is x < 0 ? x * 0 : x, which is NaN at -inf as in the reference).
Activation activationOf(const ir::FusedActivationInfo &A,
                        const std::vector<float> &P) {
  Activation R;
  std::optional<PostOpEltwise> Post = activationPostOp(A, P);
  const bool Exact = Post && nanExact(*Post);
  if (Exact)
    R.PostOps = {*Post};
  using Alg = dnnl::algorithm;
  const std::vector<PostOpEltwise> ExactRelu = {
      {Alg::eltwise_elu, 0.0f, 0.0f}, {Alg::eltwise_linear, 1.0f, 0.0f}};
  switch (A.Op) {
  case ir::OpKind::Relu:
    if (!Exact)
      R.PostOps = ExactRelu;
    R.Own = {Epilogue::Clamp, 0.0f, INFINITY, 0};
    break;
  case ir::OpKind::Clip:
    // min > max gives max everywhere in the reference: the loop agrees.
    R.Own = {Epilogue::Clamp, P[0], P[1], 0};
    if (!Exact && P[0] == 0.0f && P[1] == INFINITY) // Relu.
      R.PostOps = ExactRelu;
    break;
  case ir::OpKind::LeakyRelu: // The own form beside the post-op too.
    R.Own = {Epilogue::Leaky, 0, 0, P[0]};
    break;
  case ir::OpKind::Identity: // A FusedConv that only adds its Sum.
    break;
  default:
    if (!Exact)
      return R; // Sigmoid, HardSigmoid: not fused.
  }
  R.Ok = true;
  return R;
}

} // namespace

Activation fusedNodeActivation(const ir::Node &N) {
  const ir::FusedActivationInfo *A =
      ir::lookupFusedActivation(N.attrString("activation"));
  std::vector<float> Given;
  if (N.attrs().has("activation_params"))
    Given = N.attr("activation_params").floats();
  if (!A || Given.size() > A->Params.size())
    return {}; // The node kernel reports it.
  return activationOf(*A, ir::fusedActivationParams(*A, Given));
}

Activation standaloneActivation(LowerContext &C, const ir::Node &Act) {
  for (const ir::FusedActivationInfo &A : ir::fusedActivations()) {
    if (A.Op != Act.op() || A.Op == ir::OpKind::Identity ||
        (A.Op == ir::OpKind::Gelu &&
         A.GeluApproximate != Act.attrString("approximate")))
      continue;
    // The parameters: attributes, or (Clip) constant scalar inputs.
    std::vector<float> P;
    for (size_t I = 0; I < A.Params.size(); ++I) {
      const ir::FusedActivationParam &Param = A.Params[I];
      if (!A.ParamsAreInputs) {
        P.push_back(Act.attrByName(Param.Name).f());
        continue;
      }
      if (!Act.hasInput(I + 1)) {
        P.push_back(Param.Default);
        continue;
      }
      const Tensor *T = C.constantOf(Act.input(I + 1));
      if (!T || T->dtype() != DType::F32 || T->numel() != 1)
        return {};
      P.push_back(static_cast<float>(T->getFlat(0)));
    }
    return activationOf(A, P);
  }
  return {};
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
    if (!P.runBound(In))
      X = static_cast<const float *>(
          static_cast<const Tensor &>(P.tensorOf(In)).rawData());
    if (!P.runBound(Out))
      Y = reinterpret_cast<float *>(P.bufferData(Out));
    Count = static_cast<int64_t>(P.Slots[Out].MD.get_size() / sizeof(float));
  }
  /// Its count comes from the destination's description at bind().
  bool fits(const Program &, const SlotShapes &) const override {
    return true;
  }
  void run(Program &P) override {
    if (P.runBound(In))
      X = static_cast<const float *>(
          static_cast<const Tensor &>(P.tensorOf(In)).rawData());
    if (P.runBound(Out))
      Y = reinterpret_cast<float *>(P.bufferData(Out));
    if (E.K == Epilogue::Clamp) {
      if (clampFloats(X, Y, Count, E.Lo, E.Hi) && E.Guard)
        P.GuardTripped = true;
    } else
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
  if (E.Guard && E.GuardNode)
    C.GuardedClamps.insert(E.GuardNode);
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

namespace {

/// A oneDNN eltwise primitive over X's layout.
bool emitEltwise(LowerContext &C, const ir::Node &N, dnnl::algorithm Alg,
                 float Alpha, float Beta) {
  int In = C.slotOf(N.input(0));
  dnnl::memory::desc MD = C.slot(In).MD;
  dnnl::eltwise_forward::desc D(dnnl::prop_kind::forward_inference, Alg, MD,
                                Alpha, Beta);
  dnnl::eltwise_forward::primitive_desc PD(D, cpuEngine());
  int Out = C.defineBuffer(N.output(0), PD.dst_desc());
  emitPrimitive(C, N, dnnl::eltwise_forward(PD), PD,
                {{DNNL_ARG_SRC, In, MD}, {DNNL_ARG_DST, Out, PD.dst_desc()}},
                {In}, Out);
  return true;
}

} // namespace

void emitEltwiseInPlace(LowerContext &C, const ir::Node &N, int Slot,
                        const PostOpEltwise &P) {
  dnnl::memory::desc MD = C.slot(Slot).MD;
  dnnl::eltwise_forward::desc D(dnnl::prop_kind::forward_inference, P.Alg, MD,
                                P.Alpha, P.Beta);
  dnnl::eltwise_forward::primitive_desc PD(D, cpuEngine());
  emitPrimitive(C, N, dnnl::eltwise_forward(PD), PD,
                {{DNNL_ARG_SRC, Slot, MD}, {DNNL_ARG_DST, Slot, MD}}, {Slot},
                Slot);
  C.program().Steps.back()->Desc += " activation";
}

bool lowerActivation(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X))
    return false;
  Activation A = standaloneActivation(C, N);
  if (!A.Ok)
    return false;
  if (A.needsOwnLoop())
    speculateClamp(C, A, C.Speculate ? valueBound(C, X) : std::nullopt, N);
  // A single post-op is an eltwise primitive; Relu's two-op chain would be
  // oneDNN's slow reference eltwise: the own loop does it in one pass.
  if (A.PostOps.size() == 1)
    return emitEltwise(C, N, A.PostOps[0].Alg, A.PostOps[0].Alpha,
                       A.PostOps[0].Beta);
  int In = C.slotOf(X);
  // The bytes of every layout hold the same values (padding stays zero
  // under a clamp of a range holding 0 and under LeakyRelu).
  bool KeepsPadding = A.Own.K == Epilogue::Leaky ||
                      (A.Own.Lo <= 0.0f && A.Own.Hi >= 0.0f);
  if (C.slot(In).Blocked && !KeepsPadding)
    In = C.B.plainOf(In);
  dnnl::memory::desc MD = C.slot(In).MD;
  int Out = C.defineBuffer(N.output(0), MD);
  emitOwnLoop(C, In, Out, A.Own, C.describe(N));
  return true;
}

bool lowerEltwise(LowerContext &C, const ir::Node &N) {
  dnnl::algorithm Alg = dnnlAlgorithmFor(N.op());
  if (!C.isF32(N.input(0)) || Alg == dnnl::algorithm::undef)
    return false;
  return emitEltwise(C, N, Alg, 0, 0);
}

namespace {

/// True when a slope of shape S broadcasts to X (numpy's rules, the result
/// of X's shape).
bool slopeFits(const Shape &X, const Shape &S) {
  if (S.rank() > X.rank())
    return false;
  size_t Pad = X.rank() - S.rank();
  for (size_t D = 0; D < S.rank(); ++D)
    if (S[D] != 1 && S[D] != X[Pad + D])
      return false;
  return true;
}

} // namespace

bool lowerPRelu(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0), *Slope = N.input(1);
  if (!C.isF32(X) || !C.isF32(Slope))
    return false;
  const Shape &XS = C.shapeOf(X), &SS = C.shapeOf(Slope);
  // The slope must broadcast to X (else the node kernel reports it).
  if (XS.numel() == 0 || !slopeFits(XS, SS))
    return false;
  int In = C.B.plainOf(C.slotOf(X));
  int S = C.B.plainOf(C.slotOf(Slope));
  int Out = C.defineBuffer(N.output(0));
  // The extents come from the slots at each run (a reshaped program's).
  emitLoop(
      C, {In, S}, Out, C.describe(N),
      [=](Program &P) {
        preluFloats(static_cast<const float *>(P.dataOf(In)),
                    static_cast<const float *>(P.dataOf(S)),
                    reinterpret_cast<float *>(P.bufferData(Out)), P.Slots[In].S,
                    P.Slots[S].S);
      },
      [=](const Program &, const SlotShapes &New) {
        const Shape &NX = New[In], &NS = New[S];
        return NX.numel() > 0 && New[Out] == NX && slopeFits(NX, NS);
      });
  return true;
}

bool lowerHardSigmoid(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X) || C.shapeOf(X).numel() == 0)
    return false;
  float Alpha = N.attrFloat("alpha"), Beta = N.attrFloat("beta");
  int In = C.B.plainOf(C.slotOf(X));
  int Out = C.defineBuffer(N.output(0));
  // The count comes from the slot at each run (a reshaped program's).
  emitLoop(
      C, {In}, Out, C.describe(N),
      [=](Program &P) {
        hardSigmoidFloats(static_cast<const float *>(P.dataOf(In)),
                          reinterpret_cast<float *>(P.bufferData(Out)),
                          P.Slots[In].S.numel(), Alpha, Beta);
      },
      [=](const Program &, const SlotShapes &New) {
        return New[In].numel() > 0 && New[Out] == New[In];
      });
  return true;
}

} // namespace nng::backends::cpu
