//===- LowerBinary.cpp - Add/Sub/Mul/Div and Concat with oneDNN ----------===//
//
// Binary arithmetic of plain operands, the other one of the same shape or a
// single element, is an own loop; otherwise a oneDNN binary primitive in
// the full-shape operand's layout (blocked or plain, plain when oneDNN has
// only its reference code for the blocked one); the other operand, when it
// has the same shape, is brought to that layout, and when it broadcasts it
// must be plain (its dims padded with leading ones). Concat of plain inputs is an
// own loop of copies; of blocked ones, oneDNN's, which joins its inputs in
// their own layouts into the layout the primitive picks.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

using dnnl::memory;

namespace {

/// Binary arithmetic of a plain operand A of the result's shape with a
/// plain operand B of the same shape or a single element, as the own loop
/// (LoopsElementwise.cpp): no primitive per shape (attention's scaling of its
/// scores changes shape with every cache length), the same f32 operation.
bool lowerPlainBinary(LowerContext &C, const ir::Node &N, const ir::Value *A,
                      const ir::Value *B, const Shape &YS) {
  int SA = C.slotOf(A), SB = C.slotOf(B);
  if (C.slot(SA).Blocked || C.slot(SB).Blocked)
    return false;
  int64_t BN = C.shapeOf(B).numel();
  if (BN != 1 && C.shapeOf(B) != YS)
    return false;
  BinaryKind K;
  switch (N.op()) {
  case ir::OpKind::Add:
    K = BinaryKind::Add;
    break;
  case ir::OpKind::Sub:
    K = BinaryKind::Sub;
    break;
  case ir::OpKind::Mul:
    K = BinaryKind::Mul;
    break;
  case ir::OpKind::Div:
    K = BinaryKind::Div;
    break;
  default:
    return false;
  }
  // Sub and Div do not commute: lowerBinary swapped only Add and Mul.
  // Extents come from the slots at each run (a reshaped program's too).
  int Out = C.defineBuffer(N.output(0));
  emitLoop(
      C, {SA, SB}, Out, C.describe(N),
      [=](Program &P) {
        binaryFloats(K, static_cast<const float *>(P.dataOf(SA)),
                     static_cast<const float *>(P.dataOf(SB)),
                     P.Slots[SB].S.numel() == 1,
                     reinterpret_cast<float *>(P.bufferData(Out)),
                     P.Slots[Out].S.numel());
      },
      [=](const Program &, const SlotShapes &New) {
        return New[SA] == New[Out] && New[Out].numel() > 0 &&
               (New[SB].numel() == 1 || New[SB] == New[Out]);
      });
  return true;
}

/// Concat of plain inputs as the own loop (LoopsCopy.cpp): a run of each
/// input per outer index, no primitive (a KV cache's Concat changes shape
/// with every token).
bool lowerPlainConcat(LowerContext &C, const ir::Node &N,
                      const std::vector<int> &Ins, int64_t Axis) {
  for (int S : Ins)
    if (C.slot(S).Blocked)
      return false;
  // Runs come from the slots' shapes at each run: a reshaped program's
  // cache grows without a new step (empty inputs copy nothing).
  int Out = C.defineBuffer(N.output(0));
  emitLoop(
      C, Ins, Out, C.describe(N),
      [=](Program &P) {
        const Shape &Y = P.Slots[Out].S;
        int64_t Outer = 1;
        for (int64_t D = 0; D < Axis; ++D)
          Outer *= Y[D];
        std::vector<const float *> Src;
        std::vector<int64_t> Runs;
        for (int S : Ins) {
          Src.push_back(static_cast<const float *>(P.dataOf(S)));
          Runs.push_back(P.Slots[S].S.numel() / std::max<int64_t>(Outer, 1));
        }
        concatRuns(Src, Runs, reinterpret_cast<float *>(P.bufferData(Out)),
                   Outer);
      },
      [=](const Program &, const SlotShapes &New) {
        return New[Out].numel() > 0;
      });
  return true;
}

} // namespace

bool lowerBinary(LowerContext &C, const ir::Node &N) {
  const ir::Value *A = N.input(0), *B = N.input(1);
  if (!C.isF32(A) || !C.isF32(B))
    return false;
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  bool Commutes = N.op() == ir::OpKind::Add || N.op() == ir::OpKind::Mul;
  if (C.shapeOf(A) != YS) {
    if (!Commutes || C.shapeOf(B) != YS)
      return false;
    std::swap(A, B);
  }
  if (YS.rank() == 0 || YS.numel() == 0)
    return false;
  if (lowerPlainBinary(C, N, A, B, YS))
    return true;
  int SA = C.slotOf(A), SB = C.slotOf(B);
  memory::desc MDA = C.slot(SA).MD, MDB;
  if (C.shapeOf(B) == YS) {
    SB = C.B.inLayout(SB, MDA);
    MDB = MDA;
  } else {
    SB = C.B.plainOf(SB);
    // Broadcasting operand: plain, with leading ones; A must then be plain
    // too unless B is a per-channel or scalar vector oneDNN can broadcast.
    memory::dims BD = padDims(dimsOf(C.shapeOf(B)), YS.rank());
    MDB = plainDesc(BD);
    if (C.slot(SA).Blocked) {
      bool PerChannel = true;
      for (size_t I = 0; I < BD.size(); ++I)
        PerChannel = PerChannel && (BD[I] == 1 || I == 1);
      if (!PerChannel)
        SA = C.B.plainOf(SA), MDA = C.slot(SA).MD;
    }
  }
  dnnl::algorithm Alg = dnnlAlgorithmFor(N.op());
  if (Alg == dnnl::algorithm::undef)
    return false;
  auto Make = [&] {
    return C.Shared.primitive<dnnl::binary::primitive_desc, dnnl::binary>(
        "binary " + std::to_string(static_cast<int>(Alg)) + descKey(MDA) +
            descKey(MDB),
        [&] {
          dnnl::binary::desc D(Alg, MDA, MDB, MDA);
          dnnl::binary::primitive_desc PD(D, cpuEngine());
          return std::make_pair(PD, dnnl::binary(PD));
        });
  };
  auto [PD, Prim] = Make();
  // oneDNN's reference code on a blocked layout (a per-channel bias after
  // a deconvolution whose channels are no multiple of the block: 24 ms
  // where the plain layout's jit kernel takes 0.3): the plain layout.
  if (C.slot(SA).Blocked &&
      std::string(PD.impl_info_str()).rfind("ref", 0) == 0) {
    SA = C.B.plainOf(SA), MDA = C.slot(SA).MD;
    if (C.shapeOf(B) == YS)
      SB = C.B.plainOf(SB), MDB = MDA;
    std::tie(PD, Prim) = Make();
  }
  int Out = C.defineBuffer(N.output(0), MDA);
  emitPrimitive(C, N, Prim, PD,
                {{DNNL_ARG_SRC_0, SA, MDA},
                 {DNNL_ARG_SRC_1, SB, MDB},
                 {DNNL_ARG_DST, Out, MDA}},
                {SA, SB}, Out);
  return true;
}

bool lowerConcat(LowerContext &C, const ir::Node &N) {
  const Shape &YS = C.PendingTypes.at(N.output(0)).second;
  if (YS.rank() == 0 || YS.numel() == 0)
    return false;
  int64_t Axis = N.attrInt("axis");
  if (Axis < 0)
    Axis += static_cast<int64_t>(YS.rank());
  std::vector<int> All, Ins;
  std::vector<memory::desc> MDs;
  for (const ir::Value *V : N.inputs()) {
    if (!V || !C.isF32(V))
      return false;
    All.push_back(C.slotOf(V));
    if (C.shapeOf(V).numel() == 0)
      continue; // oneDNN refuses empty sources; they add nothing.
    Ins.push_back(C.slotOf(V));
    MDs.push_back(C.slot(Ins.back()).MD);
  }
  if (Ins.empty())
    return false;
  if (lowerPlainConcat(C, N, All, Axis))
    return true;
  dnnl::concat::primitive_desc PD(anyF32(dimsOf(YS)), static_cast<int>(Axis),
                                  MDs, cpuEngine());
  int Out = C.defineBuffer(N.output(0), PD.dst_desc());
  std::vector<PrimitiveArg> Args;
  for (size_t I = 0; I < Ins.size(); ++I)
    Args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(I), Ins[I], MDs[I]});
  Args.push_back({DNNL_ARG_DST, Out, PD.dst_desc()});
  emitPrimitive(C, N, dnnl::concat(PD), PD, std::move(Args), Ins, Out);
  return true;
}

} // namespace nng::backends::cpu
