//===- LowerRows.cpp - Softmax and layer normalization as own loops -------===//
//
// Softmax and LogSoftmax over the last axis, and LayerNormalization over
// trailing axes with Scale (and B) of the normalized shape, are the
// backend's own row loops (LoopsRows.cpp) on plain f32 buffers. Other
// axes, broadcast Scale/B and the optional mean / inverse-deviation
// outputs decline to the node kernel.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

void emitLoop(LowerContext &C, const std::vector<int> &Reads, int Out,
              std::string Desc, std::function<void(Program &)> Fn,
              LoopStep::FitsFn Fits, LoopStep::AdoptFn Adopt) {
  auto St = std::make_unique<LoopStep>(std::move(Fn), std::move(Fits),
                                       std::move(Adopt));
  St->Desc = std::move(Desc);
  for (int S : Reads)
    C.B.reads(S);
  C.B.writes(Out);
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
}

namespace {

/// Rows and row length of X when Axis (normalized) and every later axis
/// form the rows; nullopt for a bad axis.
std::optional<std::pair<int64_t, int64_t>> rowsFrom(const Shape &S,
                                                    int64_t Axis) {
  int64_t R = static_cast<int64_t>(S.rank());
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R)
    return std::nullopt;
  int64_t Rows = 1, Len = 1;
  for (int64_t D = 0; D < R; ++D)
    (D < Axis ? Rows : Len) *= S[D];
  return std::pair{Rows, Len};
}

} // namespace

bool lowerSoftmax(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  const Shape &XS = C.shapeOf(X);
  if (!C.isF32(X) || XS.rank() == 0)
    return false;
  int64_t Axis = N.attrInt("axis");
  int64_t R = static_cast<int64_t>(XS.rank());
  if (Axis != -1 && Axis != R - 1)
    return false; // Rows would be strided.
  auto RL = rowsFrom(XS, Axis);
  if (!RL || RL->second == 0)
    return false;
  int In = C.B.plainOf(C.slotOf(X));
  int Out = C.defineBuffer(N.output(0));
  bool Log = N.op() == ir::OpKind::LogSoftmax;
  // Rows and their length come from the slot's shape at each run, so the
  // loop serves every shape of a reshaped program.
  emitLoop(
      C, {In}, Out, C.describe(N),
      [=](Program &P) {
        auto [Rows, Len] = *rowsFrom(P.Slots[In].S, Axis);
        softmaxRows(static_cast<const float *>(P.dataOf(In)),
                    reinterpret_cast<float *>(P.bufferData(Out)), Rows, Len,
                    Log);
      },
      [=](const Program &, const SlotShapes &New) {
        auto RL = rowsFrom(New[In], Axis);
        return RL && RL->second > 0 && New[Out] == New[In];
      });
  return true;
}

bool lowerLayerNorm(LowerContext &C, const ir::Node &N) {
  for (size_t I = 1; I < N.numOutputs(); ++I)
    if (C.needed(N.output(I)))
      return false;
  const ir::Value *X = N.input(0);
  if (!C.isF32(X) || !C.isF32(N.input(1)))
    return false;
  bool HasBias = N.numInputs() > 2 && N.hasInput(2);
  if (HasBias && !C.isF32(N.input(2)))
    return false;
  auto RL = rowsFrom(C.shapeOf(X), N.attrInt("axis"));
  if (!RL || RL->second == 0)
    return false;
  int64_t Len = RL->second;
  // Scale and B must hold exactly the normalized shape's elements (a
  // broadcast one, e.g. f32[1], stays with the node kernel).
  auto Param = [&](size_t I) {
    int S = C.B.plainOf(C.slotOf(N.input(I)));
    return C.slot(S).S.numel() == Len ? S : -1;
  };
  int Scale = Param(1), Bias = HasBias ? Param(2) : -1;
  if (Scale < 0 || (HasBias && Bias < 0))
    return false;
  int In = C.B.plainOf(C.slotOf(X));
  int Out = C.defineBuffer(N.output(0));
  float Eps = N.attrFloat("epsilon");
  std::vector<int> Reads = {In, Scale};
  if (HasBias)
    Reads.push_back(Bias);
  int64_t Axis = N.attrInt("axis");
  emitLoop(
      C, Reads, Out, C.describe(N),
      [=](Program &P) {
        auto [Rows, L] = *rowsFrom(P.Slots[In].S, Axis);
        layerNormRows(static_cast<const float *>(P.dataOf(In)),
                      reinterpret_cast<float *>(P.bufferData(Out)), Rows, L,
                      Eps, static_cast<const float *>(P.dataOf(Scale)),
                      Bias < 0 ? nullptr
                               : static_cast<const float *>(P.dataOf(Bias)));
      },
      [=](const Program &, const SlotShapes &New) {
        auto RL = rowsFrom(New[In], Axis);
        return RL && RL->second == Len && New[Out] == New[In];
      });
  return true;
}

} // namespace nng::backends::cpu
