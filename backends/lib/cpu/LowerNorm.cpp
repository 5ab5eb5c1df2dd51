//===- LowerNorm.cpp - Batch and instance normalization -------------------===//
//
// BatchNormalization in inference mode (running statistics) is a oneDNN
// batch_normalization primitive in the producer's layout, blocked or plain,
// with scale, shift, mean and variance bound as plain vectors.
// InstanceNormalization (any rank >= 2, f32, scale and B of one value per
// channel) is the backend's own row loop (LoopsRows.cpp) on plain
// buffers: oneDNN 2.6 has no instance (or group) normalization, and its
// layer normalization keeps its statistics in f32, where the reference sums
// in double (a GroupNorm(1, C) export normalizes a single row of C x L
// values, where f32 sums lose digits). The loop
// reads its extents from its slots at each run, so a reshaped program (a
// new signal length) keeps it.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

namespace nng::backends::cpu {

bool lowerBatchNorm(LowerContext &C, const ir::Node &N) {
  if (N.attrInt("training_mode") != 0)
    return false;
  for (size_t I = 1; I < N.numOutputs(); ++I)
    if (C.needed(N.output(I)))
      return false;
  const ir::Value *X = N.input(0);
  const Shape &XS = C.shapeOf(X);
  if (XS.rank() < 2 || XS.rank() > 5 || XS.numel() == 0)
    return false;
  std::vector<int> Params;
  for (size_t I = 0; I < 5; ++I) {
    if (!N.hasInput(I) || !C.isF32(N.input(I)))
      return false;
    if (I > 0) {
      int S = C.B.plainOf(C.slotOf(N.input(I)));
      if (C.slot(S).S.numel() != XS[1])
        return false;
      Params.push_back(S);
    }
  }
  int In = C.slotOf(X);
  dnnl::memory::desc MD = C.slot(In).MD;
  auto Flags = dnnl::normalization_flags::use_global_stats |
               dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc D(
      dnnl::prop_kind::forward_inference, MD, N.attrFloat("epsilon"), Flags);
  dnnl::batch_normalization_forward::primitive_desc PD(D, cpuEngine());
  int Out = C.defineBuffer(N.output(0), PD.dst_desc());
  dnnl::memory::desc Vec = plainDesc({XS[1]});
  std::vector<int> Reads = {In};
  Reads.insert(Reads.end(), Params.begin(), Params.end());
  emitPrimitive(C, N, dnnl::batch_normalization_forward(PD), PD,
                {{DNNL_ARG_SRC, In, MD},
                 {DNNL_ARG_SCALE, Params[0], Vec},
                 {DNNL_ARG_SHIFT, Params[1], Vec},
                 {DNNL_ARG_MEAN, Params[2], Vec},
                 {DNNL_ARG_VARIANCE, Params[3], Vec},
                 {DNNL_ARG_DST, Out, PD.dst_desc()}},
                Reads, Out);
  return true;
}

bool lowerInstanceNorm(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X) || !C.isF32(N.input(1)) || !C.isF32(N.input(2)))
    return false;
  const Shape &XS = C.shapeOf(X);
  if (XS.rank() < 2 || XS.numel() == 0)
    return false;
  int64_t Channels = XS[1];
  // Scale and B of shape [C] (else the node kernel reports them).
  auto Param = [&](size_t I) {
    int S = C.B.plainOf(C.slotOf(N.input(I)));
    return C.slot(S).S == Shape{Channels} ? S : -1;
  };
  int Scale = Param(1), Bias = Param(2);
  if (Scale < 0 || Bias < 0)
    return false;
  int In = C.B.plainOf(C.slotOf(X));
  int Out = C.defineBuffer(N.output(0));
  double Eps = N.attrFloat("epsilon");
  emitLoop(
      C, {In, Scale, Bias}, Out, C.describe(N),
      [=](Program &P) {
        const Shape &S = P.Slots[In].S;
        int64_t Rows = S[0] * S[1];
        instanceNormRows(static_cast<const float *>(P.dataOf(In)),
                         reinterpret_cast<float *>(P.bufferData(Out)), Rows,
                         S.numel() / Rows, Channels, Eps,
                         static_cast<const float *>(P.dataOf(Scale)),
                         static_cast<const float *>(P.dataOf(Bias)));
      },
      [=](const Program &, const SlotShapes &New) {
        const Shape &S = New[In];
        return S.rank() >= 2 && S[1] == Channels && S.numel() > 0 &&
               New[Out] == S && New[Scale] == Shape{Channels} &&
               New[Bias] == Shape{Channels};
      });
  return true;
}

} // namespace nng::backends::cpu
