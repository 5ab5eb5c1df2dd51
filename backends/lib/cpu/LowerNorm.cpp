//===- LowerNorm.cpp - Inference batch normalization with oneDNN ----------===//
//
// BatchNormalization in inference mode (running statistics) is a oneDNN
// batch_normalization primitive in the producer's layout, blocked or plain,
// with scale, shift, mean and variance bound as plain vectors.
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

} // namespace nng::backends::cpu
