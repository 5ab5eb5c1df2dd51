//===- LowerReduce.cpp - ReduceSum and ReduceMean as own loops ------------===//
//
// An f32 ReduceSum or ReduceMean over constant axes is the backend's own
// loop (reduceF32, KernelsReduceCopy.cpp: sums in double, any axes) on the plain
// layout, one step of the schedule. As a fallback step it ran a node
// kernel that made oneDNN's reduction for small tensors on every run
// (Silero VAD's mean over 129 frequencies of 8 frames: 15 us, the loop's
// 1 us).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Lower.h"

namespace nng::backends::cpu {

bool lowerReduce(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  if (!C.isF32(X))
    return false;
  const Shape &XS = C.shapeOf(X);
  int64_t R = static_cast<int64_t>(XS.rank());
  if (R == 0 || XS.numel() == 0)
    return false;
  std::vector<int64_t> Axes;
  if (N.hasInput(1)) { // ReduceSum's axes input.
    const Tensor *A = C.constantOf(N.input(1));
    if (!A || A->dtype() != DType::I64 || A->rank() > 1)
      return false;
    Axes = A->toIntVector();
  } else if (N.attrs().has("axes")) {
    Axes = N.attrInts("axes");
  }
  if (Axes.empty() && N.attrs().has("noop_with_empty_axes") &&
      N.attrInt("noop_with_empty_axes") != 0)
    return false; // An identity: the node kernel.
  std::vector<bool> Reduced(R, Axes.empty());
  for (int64_t A : Axes) {
    if (A < -R || A >= R || Reduced[A < 0 ? A + R : A])
      return false; // The node kernel reports it.
    Reduced[A < 0 ? A + R : A] = true;
  }
  bool Mean = N.op() == ir::OpKind::ReduceMean;
  int In = C.B.plainOf(C.slotOf(X));
  int Out = C.defineBuffer(N.output(0));
  bool KeepDims = N.attrInt("keepdims") != 0;
  emitLoop(
      C, {In}, Out, C.describe(N),
      [=](Program &P) {
        Tensor XV = Tensor::fromBlob(const_cast<void *>(P.dataOf(In)),
                                     P.Slots[In].S, DType::F32);
        Tensor YV = Tensor::fromBlob(P.bufferData(Out), P.Slots[Out].S,
                                     DType::F32);
        reduceF32(XV, Reduced, YV, Mean);
      },
      [=](const Program &, const SlotShapes &New) {
        const Shape &NX = New[In];
        if (static_cast<int64_t>(NX.rank()) != R || NX.numel() == 0)
          return false;
        Shape Want;
        for (int64_t D = 0; D < R; ++D)
          if (!Reduced[D])
            Want.push_back(NX[D]);
          else if (KeepDims)
            Want.push_back(1);
        return New[Out] == Want;
      });
  return true;
}

} // namespace nng::backends::cpu
