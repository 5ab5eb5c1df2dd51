//===- LowerMatMul.cpp - MatMul, Gemm and the fused products as oneDNN ----===//
//
// A product with a constant 2-d right operand (a linear layer: MatMul of a
// [.., K] activation by [K, N], Gemm, FusedGemm, FusedMatMul) becomes one
// oneDNN matmul over the activation viewed as [M, K], with the weights
// reordered once into the layout the primitive picks and what the node
// holds fused: its bias (Gemm's C, FusedMatMul's Bias), FusedMatMul's
// residual Sum (a binary post-op) and its or FusedGemm's activation
// (post-ops, or an own loop after: LowerActivation.cpp). What a product
// fuses is decided on the graph, by the epilogue rule that made the
// FusedMatMul (rules/FuseProducts.cpp); here only what depends on the rows
// (a primitive with M given at run time takes no binary post-op) and on
// speculated clamps. Rows that vary, on an AVX-512 CPU, run the backend's
// own product over the weights packed in panels instead (packedGemm),
// with the bias, the residual and a clamp or leaky activation fused. A
// product of two run-time values (attention's Q.K^T
// and P.V) is a batched matmul on plain data with numpy broadcasting of the
// batch dims, or, with few rows on the left (a decoder's step), the
// backend's own loop.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include <array>
#include <atomic>
#include <cstring>

namespace nng::backends::cpu {

using dnnl::memory;

namespace {

/// True when T is a constant f32 vector of N values (shape [N], [1, N],
/// [1, 1, N], ...).
bool isBiasVector(const Tensor *T, int64_t N) {
  if (!T || T->dtype() != DType::F32 || T->rank() == 0 ||
      T->shape()[T->rank() - 1] != N)
    return false;
  return T->numel() == N;
}

/// What a linear layer's matmul primitive depends on besides M.
struct LinearForm {
  int64_t K = 0, NOut = 0;
  bool Bias = false, Residual = false;
  std::vector<PostOpEltwise> PostOps;
  std::string Key; ///< linearKey(): the primitive cache's key.
};

using MatMulPD = dnnl::matmul::primitive_desc;

/// Weights from which a product with few rows reads them in place
/// (emitLinearRows): 1 MiB, beyond a core's L2 share, where the product is
/// bound by reading them; and the rows up to which it does. Measured on a
/// 2-core EPYC (the benchmark decoder, 134 MB of weights a step): at one
/// row the own loop took 0.95x the time of oneDNN's on packed weights and
/// saved their 134 MB copy (0.71x since it reads whole rows per thread:
/// linearFewRows); at four rows a decode step took 1.3-1.5x.
constexpr size_t FewRowsWeightBytes = size_t(1) << 20;
constexpr int64_t InPlaceWeightRows = 2;

/// Rows (and columns) of the warm-up run: one row takes oneDNN's gemv
/// path, which generates nothing for later runs.
constexpr int64_t WarmRows = 64;

/// Runs Prim once on zeros with the given arguments, the first time a
/// process makes a primitive with run-time dims. oneDNN generates the
/// kernels of its gemm at the first execution of one (once per process,
/// about 30 ms on a 2-core EPYC), which then falls in the compile, not in
/// the first run at a new shape; later ones find them made.
void runOnce(const dnnl::matmul &Prim,
             const std::vector<std::pair<int, memory::desc>> &Args) {
  static std::atomic<bool> Warm{false};
  if (Warm.exchange(true))
    return;
  std::unordered_map<int, memory> Mems;
  for (const auto &[Arg, MD] : Args) {
    memory Mem(MD, cpuEngine());
    std::memset(Mem.get_data_handle(), 0, MD.get_size());
    Mems.emplace(Arg, Mem);
  }
  Prim.execute(cpuStream(), Mems);
  cpuStream().wait();
}

/// F's key in the executable's primitive cache (without M).
std::string linearKey(const LinearForm &F) {
  std::string Key = std::to_string(F.K) + "x" + std::to_string(F.NOut) + " " +
                    std::to_string(F.Bias) + std::to_string(F.Residual);
  for (const PostOpEltwise &P : F.PostOps)
    Key += " " + std::to_string(static_cast<int>(P.Alg)) + ":" +
           std::to_string(P.Alpha) + ":" + std::to_string(P.Beta);
  return Key;
}

/// Floats added to each weight row for the primitive with rows given at
/// run time, when padRows says so.
constexpr int64_t WeightRowPad = 16;

/// True when the primitive with M rows given at run time reads F's weights
/// from rows padded by WeightRowPad floats: more rows than the own loop
/// takes (a decoder's step keeps its weights where they lie, no copy) and
/// rows of a multiple of 512 floats (2 KiB), which oneDNN's gemm copies
/// through few cache sets. Measured on an Intel Xeon (AVX-512, 2 threads,
/// rows 37-512): 384 x 1536 took 1.21-1.29x the time of the brgemm made for
/// its rows, 1.07-1.16x padded; 384 x 2048 1.34-1.46x, 1.04-1.13x; other
/// widths (384, 1152) moved by less than the noise.
bool padRows(const LinearForm &F, int64_t M) {
  return M > OwnLoopRows && F.NOut % 512 == 0;
}

/// The primitive of F for M rows (user scratchpad), or with M given at run
/// time (M < 0; library scratchpad, its size depends on M; empty when
/// oneDNN has none; PadRows: weight rows of NOut + WeightRowPad floats),
/// made once per executable (ProgramShared).
std::pair<MatMulPD, dnnl::matmul> linearPrimitive(ProgramShared &Shared,
                                                  const LinearForm &F,
                                                  int64_t M,
                                                  bool PadRows = false) {
  memory::desc Wei =
      PadRows ? stridedDesc({F.K, F.NOut}, {F.NOut + WeightRowPad, 1})
              : anyF32({F.K, F.NOut});
  auto Make = [&](const memory::desc &Src, const memory::desc &Dst,
                  dnnl::scratchpad_mode Scratch) {
    dnnl::post_ops Ops;
    if (F.Residual)
      Ops.append_binary(dnnl::algorithm::binary_add, Dst);
    for (const PostOpEltwise &P : F.PostOps)
      Ops.append_eltwise(1.0f, P.Alg, P.Alpha, P.Beta);
    dnnl::primitive_attr Attr;
    Attr.set_post_ops(Ops);
    Attr.set_scratchpad_mode(Scratch);
    memory::desc BiasMD = F.Bias ? plainDesc({1, F.NOut}) : memory::desc();
    dnnl::matmul::desc D(Src, Wei, BiasMD, Dst);
    MatMulPD PD(D, Attr, cpuEngine());
    return std::make_pair(PD, dnnl::matmul(PD));
  };
  if (M >= 0)
    return Shared.primitive<MatMulPD, dnnl::matmul>(
        "linear M=" + std::to_string(M) + " " + F.Key, [&] {
          return Make(plainDesc({M, F.K}), plainDesc({M, F.NOut}),
                      dnnl::scratchpad_mode::user);
        });
  std::string Key = std::string("linear any-M ") + (PadRows ? "padded " : "");
  auto Made = Shared.primitive<MatMulPD, dnnl::matmul>(Key + F.Key, [&] {
    try {
      memory::desc Src({DNNL_RUNTIME_DIM_VAL, F.K}, memory::data_type::f32,
                       memory::dims{F.K, 1});
      memory::desc Dst({DNNL_RUNTIME_DIM_VAL, F.NOut}, memory::data_type::f32,
                       memory::dims{F.NOut, 1});
      auto Made = Make(Src, Dst, dnnl::scratchpad_mode::library);
      std::vector<std::pair<int, memory::desc>> Args = {
          {DNNL_ARG_SRC, plainDesc({WarmRows, F.K})},
          {DNNL_ARG_WEIGHTS, Made.first.weights_desc()},
          {DNNL_ARG_DST, plainDesc({WarmRows, F.NOut})}};
      if (F.Bias)
        Args.push_back({DNNL_ARG_BIAS, plainDesc({1, F.NOut})});
      if (F.Residual)
        Args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                        plainDesc({WarmRows, F.NOut})});
      runOnce(Made.second, Args);
      return Made;
    } catch (const dnnl::error &) {
      return std::make_pair(MatMulPD(), dnnl::matmul()); // None: per M.
    }
  });
  if (PadRows && !Made.second) // Padded rows refused: plain ones.
    return linearPrimitive(Shared, F, M, false);
  return Made;
}

/// A linear layer with few rows (a decoder's step) as linearFewRows, its
/// weights read where they lie (no packed copy: so few rows make the
/// product one pass over them either way). Reshaped to more rows (a
/// prompt after the steps), the step runs the primitive with M given at
/// run time, on weights packed then, and adds the residual itself.
struct LinearRows {
  int In = -1, Bias = -1, Residual = -1, Out = -1;
  int64_t K = 0, NOut = 0;
  bool TransB = false;
};

void emitLinearRows(LowerContext &C, const ir::Node &N, const LinearRows &L,
                    const Tensor &Wt, const LinearForm &Form) {
  struct Many { // The primitive for many rows, made at the first adopt.
    std::optional<std::pair<MatMulPD, dnnl::matmul>> Made;
    std::shared_ptr<PackedWeight> Packed;
  };
  auto State = std::make_shared<Many>();
  ProgramShared *Sh = &C.Shared;
  LinearForm Plain = Form;
  Plain.Residual = false;
  Plain.PostOps.clear();
  Plain.Key = linearKey(Plain);
  memory::desc WeiUser = L.TransB ? stridedDesc({L.K, L.NOut}, {1, L.K})
                                  : plainDesc({L.K, L.NOut});
  std::vector<int> Reads = {L.In};
  for (int S : {L.Bias, L.Residual})
    if (S >= 0)
      Reads.push_back(S);
  auto Run = [=, Wt = Wt](Program &P) {
    int64_t M = P.Slots[L.In].S.numel() / L.K;
    const float *A = static_cast<const float *>(P.dataOf(L.In));
    const float *Bias =
        L.Bias >= 0 ? static_cast<const float *>(P.dataOf(L.Bias)) : nullptr;
    const float *Res = L.Residual >= 0
                           ? static_cast<const float *>(P.dataOf(L.Residual))
                           : nullptr;
    float *Y = reinterpret_cast<float *>(P.bufferData(L.Out));
    if (M <= OwnLoopRows || !State->Packed) {
      linearFewRows(A, static_cast<const float *>(Wt.rawData()), L.TransB, Bias,
                    Res, Y, M, L.K, L.NOut);
      return;
    }
    dnnl::engine E = cpuEngine();
    std::unordered_map<int, memory> Args = {
        {DNNL_ARG_SRC, memory(plainDesc({M, L.K}), E, const_cast<float *>(A))},
        {DNNL_ARG_WEIGHTS, State->Packed->Packed},
        {DNNL_ARG_DST, memory(plainDesc({M, L.NOut}), E, Y)}};
    if (Bias)
      Args.emplace(DNNL_ARG_BIAS, memory(plainDesc({1, L.NOut}), E,
                                         const_cast<float *>(Bias)));
    if (State->Packed->refresh(*P.Stream))
      ++P.Stats.WeightRefreshes;
    State->Made->second.execute(*P.Stream, Args);
    P.Stream->wait();
    if (Res)
      binaryFloats(BinaryKind::Add, Y, Res, false, Y, M * L.NOut);
  };
  auto Fits = [=](const Program &, const SlotShapes &New) {
    const Shape &S = New[L.In];
    return S.rank() >= 2 && S[S.rank() - 1] == L.K && S.numel() > 0 &&
           New[L.Out].numel() == S.numel() / L.K * L.NOut &&
           (L.Residual < 0 || New[L.Residual] == New[L.Out]);
  };
  auto Adopt = [=, Wt = Wt](Program &P) {
    if (P.Slots[L.In].S.numel() / L.K <= OwnLoopRows || State->Packed)
      return true;
    if (!State->Made)
      State->Made = linearPrimitive(
          *Sh, Plain, -1, padRows(Plain, P.Slots[L.In].S.numel() / L.K));
    if (State->Made->second) // Else oneDNN has none: the own loop serves.
      State->Packed = Sh->Packs.get(Wt, WeiUser, State->Made->first.weights_desc());
    return true;
  };
  emitLoop(C, Reads, L.Out, C.describe(N) + " (few rows, weights in place)",
           Run, Fits, Adopt);
}

bool lowerLinear(LowerContext &C, const ir::Node &N, const Tensor &Wt,
                 bool TransB) {
  const ir::Value *A = N.input(0);
  const Shape &AS = C.shapeOf(A);
  if (AS.rank() < 2 || Wt.rank() != 2)
    return false;
  int64_t K = AS[AS.rank() - 1];
  int64_t NOut = TransB ? Wt.shape()[0] : Wt.shape()[1];
  if ((TransB ? Wt.shape()[1] : Wt.shape()[0]) != K)
    return false;
  int64_t M = AS.numel() / K;
  if (M == 0 || K == 0 || NOut == 0)
    return false;

  // Bias: Gemm's C, or FusedMatMul's Bias (cpu-fuse-epilogues decided what
  // the node fuses: FusionRules.h).
  const Tensor *BiasT = nullptr;
  int BiasSlot = -1;
  bool IsGemm =
      N.op() == ir::OpKind::Gemm || N.op() == ir::OpKind::FusedGemm;
  bool IsFused = N.op() == ir::OpKind::FusedMatMul;
  Activation Act;
  if (N.op() == ir::OpKind::FusedGemm || IsFused) {
    Act = fusedNodeActivation(N);
    if (!Act.Ok)
      return false;
  }
  if (IsGemm) {
    if (N.attrFloat("alpha") != 1.0f || N.attrInt("transA") != 0)
      return false;
    if (N.hasInput(2)) {
      BiasT = C.constantOf(N.input(2));
      if (N.attrFloat("beta") != 1.0f || !isBiasVector(BiasT, NOut))
        return false;
      BiasSlot = C.slotOf(N.input(2));
    }
  }
  const ir::Value *Y = N.output(0);
  const Shape YS = C.shapeOf(Y);
  const ir::Value *Residual = nullptr;
  if (IsFused) {
    if (N.hasInput(2)) {
      BiasT = C.constantOf(N.input(2));
      if (!isBiasVector(BiasT, NOut) || BiasT->rank() > YS.rank())
        return false; // The node kernel.
      BiasSlot = C.slotOf(N.input(2));
    }
    if (N.hasInput(3)) {
      Residual = N.input(3);
      if (!C.isF32(Residual) || C.shapeOf(Residual) != YS)
        return false; // A residual that broadcasts: the node kernel.
    }
    // A clamp: a guarded own loop (a product's result has no bound).
    if (Act.needsOwnLoop())
      speculateClamp(C, Act, std::nullopt, N);
  }
  // A node met with a second M (a sequence length that varies) gets one
  // primitive with M given at run time, for every M from then on; a model
  // served at one shape keeps the one specialised for its M (faster: up to
  // a quarter on a transformer's layers, measured).
  bool AnyM = C.Shared.variesAt(&N, M);
  // Such a primitive takes no binary post-op: the residual is then added by
  // the step's own loop after the product, and the activation, which must
  // follow it, by the own loop after that (Relu, Clip, LeakyRelu 0). An
  // activation only oneDNN computes keeps the primitive of this M, which
  // takes both as post-ops.
  bool SumAfter =
      AnyM && Residual && (Act.PostOps.empty() || Act.Own.K != Epilogue::None);
  // What the node fused, for the statistics.
  int64_t Fusions = IsFused ? (N.hasInput(2) ? 1 : 0) +
                                  (Residual && !SumAfter ? 1 : 0) +
                                  (N.attrString("activation") != "Identity" &&
                                           !SumAfter
                                       ? 1
                                       : 0)
                            : 0;

  // Few rows of large weights (a decoder's step at a small batch): the own
  // loop over the weights where they lie, then the activation's own loop,
  // or its eltwise primitive when only oneDNN has it (a few rows' GELU).
  bool OwnAct = Act.Own.K != Epilogue::None;
  if (M <= InPlaceWeightRows && !AnyM && Wt.isContiguous() &&
      Wt.nbytes() >= FewRowsWeightBytes &&
      (N.op() != ir::OpKind::FusedGemm || Act.PostOps.empty() || OwnAct) &&
      (OwnAct || Act.PostOps.size() <= 1)) {
    C.PendingTypes[Y] = {DType::F32, YS};
    LinearRows L;
    L.In = C.B.plainOf(C.slotOf(A));
    L.Bias = BiasT ? BiasSlot : -1;
    L.Residual = Residual ? C.B.plainOf(C.slotOf(Residual)) : -1;
    L.Out = C.defineBuffer(Y);
    L.K = K;
    L.NOut = NOut;
    L.TransB = TransB;
    LinearForm F{K, NOut, BiasT != nullptr, false, {}, ""};
    emitLinearRows(C, N, L, Wt, F);
    if (OwnAct)
      emitEpilogue(C, L.Out, Act.Own, C.describe(N) + " activation");
    else if (!Act.PostOps.empty())
      emitEltwiseInPlace(C, N, L.Out, Act.PostOps[0]);
    C.program().Stats.FusedNodes += Fusions;
    return true;
  }

  memory::desc SrcMD = plainDesc({M, K});
  memory::desc WeiUser =
      TransB ? stridedDesc({K, NOut}, {1, K}) : plainDesc({K, NOut});
  memory::desc DstMD = plainDesc({M, NOut});
  memory::desc BiasMD = BiasT ? plainDesc({1, NOut}) : memory::desc();
  // Everything the primitive depends on besides M: K, NOut and the
  // fusions (the weights are an argument, so layers of one form share it).
  LinearForm F{K,           NOut,
               BiasT != nullptr, Residual != nullptr && !SumAfter,
               SumAfter ? std::vector<PostOpEltwise>() : Act.PostOps, ""};
  F.Key = linearKey(F);
  // More rows than the own loop takes, on an AVX-512 CPU: the own
  // product over the weights packed once in panels (packedGemm), with
  // what the primitive fused (its activation when the node's has an own
  // form) and the residual.
  std::optional<Epilogue> GemmAct;
  // The step serves other rows (below) unless the primitive fuses both a
  // residual and an activation (a program for rows that vary then).
  bool OtherRows = !F.Residual || F.PostOps.empty();
  if (packedGemmServes() && OtherRows) {
    if (F.PostOps.empty())
      GemmAct = Epilogue{};
    else if (Act.Own.K != Epilogue::None && !Act.Own.Guard)
      GemmAct = Act.Own;
  }
  // A program compiled for rows that vary (a node met at a second row
  // count, or a graph with symbolic input dims) runs it from the start:
  // the weights are packed once, in panels, and a reshape packs nothing.
  bool OwnNow = (AnyM || C.Shared.ShapesVary) && GemmAct && M > OwnLoopRows;
  std::pair<MatMulPD, dnnl::matmul> Made;
  if (AnyM && !OwnNow)
    Made = linearPrimitive(C.Shared, F, -1, padRows(F, M));
  if (!Made.second && !OwnNow)
    Made = linearPrimitive(C.Shared, F, M);
  auto &[PD, Prim] = Made;

  int In = C.B.plainOf(C.slotOf(A));
  C.PendingTypes[Y] = {DType::F32, YS};
  int Out = C.defineBuffer(Y);
  std::vector<PrimitiveArg> Args = {{DNNL_ARG_SRC, In, SrcMD},
                                     {DNNL_ARG_DST, Out, DstMD}};
  std::vector<int> Reads = {In};
  if (BiasT) {
    Args.push_back({DNNL_ARG_BIAS, BiasSlot, BiasMD});
    Reads.push_back(BiasSlot);
  }
  int ResSlot = -1;
  if (Residual) {
    ResSlot = C.B.plainOf(C.slotOf(Residual));
    if (!SumAfter)
      Args.push_back(
          {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, ResSlot, DstMD});
    Reads.push_back(ResSlot);
  }
  if (OwnNow) // No primitive: the arguments stay for a later few-rows one.
    emitOwnLoopStep(C, N, std::move(Args), Reads, Out,
                    {WeightToPack{Wt, WeiUser, DNNL_ARG_WEIGHTS,
                                  panelDesc(K, NOut)}});
  else
    emitPrimitive(C, N, Prim, PD, std::move(Args), Reads, Out,
                  {WeightToPack{Wt, WeiUser}});
  auto AddResidual = [=](Program &Q) {
    float *Y = reinterpret_cast<float *>(Q.bufferData(Out));
    binaryFloats(BinaryKind::Add, Y,
                 static_cast<const float *>(Q.dataOf(ResSlot)), false, Y,
                 Q.Slots[Out].S.numel());
  };
  if (SumAfter)
    static_cast<PrimitiveStep &>(*C.program().Steps.back()).After = AddResidual;
  // Other rows (a reshaped program): the own packed product (more rows
  // than the own loop takes, on AVX-512), else the primitive with M given
  // at run time, new descriptions of the source and the destination, the
  // weights in its layout (packed once). A residual post-op takes no run-time
  // dims: the residual is then added by the step's own loop after the
  // product (an activation after it would have to follow: not then).
  if (OtherRows) {
    auto &St = static_cast<PrimitiveStep &>(*C.program().Steps.back());
    ProgramShared *Sh = &C.Shared;
    LinearForm Plain = F;
    Plain.Residual = false;
    Plain.Key = linearKey(Plain);
    // Made (and run once) now when the rows may vary: a sequence's, not a
    // decoder step's few rows (the same at every cache length).
    if (C.Shared.ShapesVary && M > OwnLoopRows && !GemmAct)
      linearPrimitive(C.Shared, Plain, -1, padRows(Plain, M));
    St.Fits = [=](const Program &, const SlotShapes &New) {
      const Shape &S = New[In];
      return S.rank() >= 2 && S[S.rank() - 1] == K && S.numel() > 0 &&
             New[Out].numel() == S.numel() / K * NOut &&
             (ResSlot < 0 || New[ResSlot] == New[Out]);
    };
    // The primitive and its packed weights, looked up at the first adopt
    // of few rows (weights where they lie) or many (rows padded: padRows).
    struct RunTimeRows {
      std::optional<std::pair<MatMulPD, dnnl::matmul>> Made;
      std::shared_ptr<PackedWeight> Packed;
    };
    auto Forms = std::make_shared<std::array<RunTimeRows, 2>>();
    auto Panels = std::make_shared<std::shared_ptr<PackedWeight>>();
    const std::vector<PrimitiveArg> Compiled = St.Pending;
    St.Adopt = [=, Wt = Wt](Program &P, PrimitiveStep &Step) {
      int64_t M2 = P.Slots[In].S.numel() / K;
      if (GemmAct && M2 > OwnLoopRows) {
        if (!*Panels)
          *Panels = Sh->Packs.get(Wt, WeiUser, panelDesc(K, NOut));
        for (auto &[Arg, W] : Step.Weights)
          if (Arg == DNNL_ARG_WEIGHTS)
            W = *Panels;
        std::shared_ptr<PackedWeight> Pack = *Panels;
        Epilogue A = *GemmAct;
        Step.Own = [=](Program &Q) {
          packedGemm(static_cast<const float *>(Q.dataOf(In)),
                     static_cast<const float *>(Pack->Packed.get_data_handle()),
                     reinterpret_cast<float *>(Q.bufferData(Out)),
                     Q.Slots[In].S.numel() / K, K, NOut,
                     BiasSlot >= 0
                         ? static_cast<const float *>(Q.dataOf(BiasSlot))
                         : nullptr,
                     ResSlot >= 0 ? static_cast<const float *>(Q.dataOf(ResSlot))
                                  : nullptr,
                     A);
        };
        Step.Pending.clear(); // No memories to bind.
        Step.Scratch = -1;
        Step.After = nullptr;
        return true;
      }
      Step.Own = nullptr;
      bool Pad = padRows(Plain, M2);
      RunTimeRows &Form = (*Forms)[Pad];
      if (!Form.Made)
        Form.Made = linearPrimitive(*Sh, Plain, -1, Pad);
      auto &[PD2, Prim2] = *Form.Made;
      if (!Prim2)
        return false; // oneDNN has none with run-time rows here.
      Step.Prim = Prim2;
      std::vector<PrimitiveArg> Args2;
      for (PrimitiveArg A : Compiled) {
        if (A.Arg == DNNL_ARG_SRC)
          A.MD = plainDesc({M2, K});
        else if (A.Arg == DNNL_ARG_DST)
          A.MD = plainDesc({M2, NOut});
        else if (A.Arg == (DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1))
          continue; // Added after the product instead.
        Args2.push_back(A);
      }
      Step.Pending = std::move(Args2);
      for (auto &[Arg, W] : Step.Weights)
        if (Arg == DNNL_ARG_WEIGHTS) {
          if (!Form.Packed)
            Form.Packed = Sh->Packs.get(Wt, WeiUser, PD2.weights_desc());
          W = Form.Packed;
        }
      Step.Scratch = -1; // The library's scratchpad.
      if (ResSlot >= 0)
        Step.After = AddResidual;
      return true;
    };
    if (OwnNow)
      St.Adopt(C.program(), St);
  }
  if (SumAfter ? OwnAct : Act.needsOwnLoop())
    emitEpilogue(C, Out, Act.Own, C.describe(N) + " activation");
  C.program().Stats.FusedNodes += Fusions;
  return true;
}

/// The oneDNN matmul of plain f32 operands of dims AD and BD (result YS),
/// made once per dims by the executable (ProgramShared).
std::pair<dnnl::matmul::primitive_desc, dnnl::matmul>
batchedPrimitive(ProgramShared &Shared, const memory::dims &AD,
                 const memory::dims &BD, const Shape &YS) {
  using MatMulPD = dnnl::matmul::primitive_desc;
  std::string Key = "batched";
  for (const memory::dims *Ds : {&AD, &BD})
    for (int64_t X : *Ds)
      Key += " " + std::to_string(X);
  return Shared.primitive<MatMulPD, dnnl::matmul>(Key, [&] {
    dnnl::primitive_attr Attr;
    Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::desc D(plainDesc(AD), plainDesc(BD), plainDesc(dimsOf(YS)));
    MatMulPD PD(D, Attr, cpuEngine());
    return std::make_pair(PD, dnnl::matmul(PD));
  });
}

} // namespace

std::optional<FewRowsDims> fewRowsDims(const Shape &A, const Shape &B, size_t R,
                                       bool TransB) {
  if (A.rank() < 2 || B.rank() < 2 || A.rank() > R || B.rank() > R)
    return std::nullopt;
  memory::dims AD = padDims(dimsOf(A), R), BD = padDims(dimsOf(B), R);
  FewRowsDims D;
  for (size_t I = 0; I + 2 < R; ++I) {
    if (AD[I] != BD[I])
      return std::nullopt;
    D.Batches *= AD[I];
  }
  D.M = AD[R - 2];
  D.K = AD[R - 1];
  D.N = TransB ? BD[R - 2] : BD[R - 1];
  if ((TransB ? BD[R - 1] : BD[R - 2]) != D.K)
    return std::nullopt;
  return D;
}

namespace {

/// The oneDNN matmul of plain f32 [B, M, K] x [B, K, N] with B, M and N
/// given at run time (library scratchpad), made once per K; empty when
/// oneDNN has none.
std::pair<dnnl::matmul::primitive_desc, dnnl::matmul>
anyDimsPrimitive(ProgramShared &Shared, int64_t K) {
  using MatMulPD = dnnl::matmul::primitive_desc;
  return Shared.primitive<MatMulPD, dnnl::matmul>(
      "batched any K=" + std::to_string(K), [&] {
        const int64_t R = DNNL_RUNTIME_DIM_VAL;
        auto Desc = [](memory::dims D, memory::dims St) {
          return memory::desc(D, memory::data_type::f32, St);
        };
        try {
          dnnl::primitive_attr Attr;
          Attr.set_scratchpad_mode(dnnl::scratchpad_mode::library);
          dnnl::matmul::desc D(Desc({R, R, K}, {R, K, 1}),
                               Desc({R, K, R}, {R, R, 1}),
                               Desc({R, R, R}, {R, R, 1}));
          MatMulPD PD(D, Attr, cpuEngine());
          std::string Impl = PD.impl_info_str();
          if (Impl.find("ref") != std::string::npos)
            return std::make_pair(MatMulPD(), dnnl::matmul()); // Too slow.
          dnnl::matmul Prim(PD);
          runOnce(Prim, {{DNNL_ARG_SRC, plainDesc({1, WarmRows, K})},
                         {DNNL_ARG_WEIGHTS, plainDesc({1, K, WarmRows})},
                         {DNNL_ARG_DST, plainDesc({1, WarmRows, WarmRows})}});
          return std::make_pair(PD, Prim);
        } catch (const dnnl::error &) {
          return std::make_pair(MatMulPD(), dnnl::matmul());
        }
      });
}

/// The product as the own loop (LoopsProducts.cpp) when A has at most
/// OwnLoopRows rows and no batch dim broadcasts; false otherwise. When B is
/// a transpose left unmaterialized, the loop reads its source as it lies.
bool lowerFewRows(LowerContext &C, const ir::Node &N, const memory::dims &AD,
                  const memory::dims &BD) {
  size_t R = AD.size();
  for (size_t D = 0; D + 2 < R; ++D)
    if (AD[D] != BD[D])
      return false;
  if (AD[R - 2] > OwnLoopRows)
    return false;
  int SA = C.B.plainOf(C.slotOf(N.input(0)));
  int SB = C.slotOf(N.input(1));
  bool TransB = C.slot(SB).TransposeOf >= 0;
  SB = TransB ? C.slot(SB).TransposeOf : C.B.plainOf(SB);
  int Out = C.defineBuffer(N.output(0));
  // Extents from the slots at each run: one step serves every cache length
  // of a reshaped program.
  emitLoop(
      C, {SA, SB}, Out, C.describe(N) + (TransB ? " (keys read in place)" : ""),
      [=](Program &P) {
        FewRowsDims D = *fewRowsDims(P.Slots[SA].S, P.Slots[SB].S, R, TransB);
        auto *Fn = TransB ? batchedFewRowsTransB : batchedFewRows;
        Fn(static_cast<const float *>(P.dataOf(SA)),
           static_cast<const float *>(P.dataOf(SB)),
           reinterpret_cast<float *>(P.bufferData(Out)), D.Batches, D.M, D.K,
           D.N);
      },
      [=](const Program &, const SlotShapes &New) {
        std::optional<FewRowsDims> D =
            fewRowsDims(New[SA], New[SB], R, TransB);
        return D && D->M <= OwnLoopRows && New[Out].numel() > 0 &&
               New[Out].numel() == D->Batches * D->M * D->N;
      });
  return true;
}

/// A product of two run-time values, batch dims broadcast.
bool lowerBatched(LowerContext &C, const ir::Node &N) {
  const ir::Value *A = N.input(0), *B = N.input(1);
  const Shape &AS = C.shapeOf(A), &BS = C.shapeOf(B);
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  if (AS.rank() < 2 || BS.rank() < 2 || YS.numel() == 0 ||
      AS.numel() == 0 || BS.numel() == 0)
    return false;
  size_t R = YS.rank();
  memory::dims AD = padDims(dimsOf(AS), R), BD = padDims(dimsOf(BS), R);
  if (R > 12)
    return false;
  if (lowerFewRows(C, N, AD, BD))
    return true;
  if (C.slotOfValue(B).TransposeOf >= 0) // Cannot read it in place after all.
    materializeTranspose(C, B);
  int SA = C.B.plainOf(C.slotOf(A)), SB = C.B.plainOf(C.slotOf(B));
  int Out = C.defineBuffer(N.output(0));
  ProgramShared *Sh = &C.Shared;
  // At other shapes, batch dims alike (attention's heads): one primitive
  // with the batch, M and N given at run time serves every length
  // (oneDNN's gemm for 3-d products; 4-d ones fall to its reference code),
  // made once per K: at the first compile when the model's shapes may
  // vary.
  using MatMulPD = dnnl::matmul::primitive_desc;
  auto AnyDims = [=](const Shape &AS2, const Shape &BS2)
      -> std::pair<std::pair<MatMulPD, dnnl::matmul>, std::vector<PrimitiveArg>> {
    std::optional<FewRowsDims> D = fewRowsDims(AS2, BS2, R);
    if (!D)
      return {};
    auto Made = anyDimsPrimitive(*Sh, D->K);
    if (!Made.second)
      return {};
    return {Made,
            {{DNNL_ARG_SRC, SA, plainDesc({D->Batches, D->M, D->K})},
             {DNNL_ARG_WEIGHTS, SB, plainDesc({D->Batches, D->K, D->N})},
             {DNNL_ARG_DST, Out, plainDesc({D->Batches, D->M, D->N})}}};
  };
  if (C.Shared.ShapesVary)
    AnyDims(AS, BS); // Made (and run once) now, for the first new shape.
  auto [PD, Prim] = batchedPrimitive(C.Shared, AD, BD, YS);
  emitPrimitive(C, N, Prim, PD,
                {{DNNL_ARG_SRC, SA, plainDesc(AD)},
                 {DNNL_ARG_WEIGHTS, SB, plainDesc(BD)},
                 {DNNL_ARG_DST, Out, plainDesc(dimsOf(YS))}},
                {SA, SB}, Out);
  auto &St = static_cast<PrimitiveStep &>(*C.program().Steps.back());
  // At other shapes (a reshaped program): the any-dims primitive, else the
  // one of the new dims from the executable's cache (made once per dims).
  St.Fits = [=](const Program &, const SlotShapes &New) {
    return New[SA].rank() <= R && New[SB].rank() <= R &&
           New[SA].numel() > 0 && New[SB].numel() > 0 && New[Out].rank() == R &&
           New[Out].numel() > 0;
  };
  St.Adopt = [=](Program &P, PrimitiveStep &Step) {
    memory::dims A2 = padDims(dimsOf(P.Slots[SA].S), R),
                 B2 = padDims(dimsOf(P.Slots[SB].S), R);
    const Shape &Y = P.Slots[Out].S;
    auto [Any2, Args2] = AnyDims(P.Slots[SA].S, P.Slots[SB].S);
    if (Any2.second) {
      Step.Prim = Any2.second;
      Step.Pending = std::move(Args2);
      Step.Scratch = -1; // The library's scratchpad.
      return true;
    }
    auto [PD2, Prim2] = batchedPrimitive(*Sh, A2, B2, Y);
    size_t Scratch = PD2.scratchpad_desc().get_size();
    if (Scratch && Step.Scratch < 0)
      return false; // No scratch buffer to grow.
    Step.Prim = Prim2;
    Step.Pending = {{DNNL_ARG_SRC, SA, plainDesc(A2)},
                    {DNNL_ARG_WEIGHTS, SB, plainDesc(B2)},
                    {DNNL_ARG_DST, Out, plainDesc(dimsOf(Y))}};
    if (Step.Scratch >= 0) {
      Step.ScratchMD = PD2.scratchpad_desc();
      P.resizeScratch(Step.Scratch, std::max<size_t>(Scratch, 1));
    }
    return true;
  };
  return true;
}

} // namespace

bool lowerMatMul(LowerContext &C, const ir::Node &N) {
  const ir::Value *A = N.input(0), *B = N.input(1);
  if (!C.isF32(A) || !C.isF32(B))
    return false;
  const Tensor *Wt = C.constantOf(B);
  bool IsMatMul = N.op() == ir::OpKind::MatMul;
  if (Wt && Wt->rank() == 2)
    return lowerLinear(C, N, *Wt, !IsMatMul && N.attrInt("transB") != 0);
  if (!IsMatMul)
    return false; // Gemm, FusedGemm, FusedMatMul: the node kernel.
  return lowerBatched(C, N);
}

} // namespace nng::backends::cpu
