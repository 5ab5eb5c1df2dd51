//===- LowerRegion.cpp - nng.FusedRegion as one JIT-compiled kernel -------===//
//
// A fused region (ir/FusedRegion.h) whose inputs are f32 becomes one step
// running its kernel: the body instantiated with the static shapes of this
// compile, translated to the kernel IR (backends/kernel/RegionKernel.h) and
// compiled by the LLVM ORC JIT (KernelJit.h; cached in memory and on disk).
// Operands are plain buffers; strides are computed here once. Without LLVM,
// or when the translator or the JIT declines, the node kernel runs the body
// node by node (a fallback step, listed by --stats).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/ir/FusedRegion.h"

namespace nng::backends::cpu {

bool lowerFusedRegion(LowerContext &C, const ir::Node &N) {
  if (!kernelJitAvailable())
    return false;
  std::vector<ir::TensorType> Types;
  for (size_t I = 0; I < N.numInputs(); ++I) {
    if (!N.hasInput(I) || !C.isF32(N.input(I)))
      return false;
    Types.emplace_back(DType::F32, C.shapeOf(N.input(I)));
  }
  std::vector<const ir::TensorType *> Ptrs;
  for (const ir::TensorType &T : Types)
    Ptrs.push_back(&T);
  std::shared_ptr<const JitKernel> K;
  kernel::RegionKernel RK;
  try {
    std::unique_ptr<ir::Graph> Body =
        ir::instantiateRegionBody(N.attrString("body"), Ptrs, C.describe(N));
    RK = kernel::buildRegionKernel(*Body, "region");
    K = KernelJit::global().compile(RK.K);
  } catch (const Error &) {
    return false; // The node kernel runs the body (reported by --stats).
  }
  std::vector<int> Slots(RK.Binding.size());
  std::vector<int> Reads;
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] >= 0) {
      Slots[B] = C.B.plainOf(C.slotOf(N.input(RK.Binding[B])));
      Reads.push_back(Slots[B]);
    }
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] < 0)
      Slots[B] = C.defineBuffer(N.output(-1 - RK.Binding[B]));
  std::vector<int64_t> Strides = kernel::rowMajorStrides(RK.K, RK.Sizes);
  for (int S : Reads)
    C.B.reads(S);
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] < 0)
      C.B.writes(Slots[B]);
  auto St = std::make_unique<LoopStep>(
      [K, Slots, Sizes = RK.Sizes, Strides](Program &P) {
        void *Ptrs[16];
        std::vector<void *> Many;
        void **Bufs = Ptrs;
        if (Slots.size() > 16) {
          Many.resize(Slots.size());
          Bufs = Many.data();
        }
        for (size_t B = 0; B < Slots.size(); ++B)
          Bufs[B] = const_cast<void *>(P.dataOf(Slots[B]));
        K->run(std::span<void *const>(Bufs, Slots.size()), Sizes, Strides);
      });
  St->Desc = C.describe(N) + " (JIT kernel)";
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
  ++C.program().Stats.JitKernels;
  return true;
}

} // namespace nng::backends::cpu
