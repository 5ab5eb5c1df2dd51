//===- LowerRegion.cpp - nng.FusedRegion as one JIT-compiled kernel -------===//
//
// A fused region (ir/FusedRegion.h) whose inputs are f32 becomes one step
// running its kernel: the body instantiated with the static shapes of this
// compile, translated to the kernel IR (backends/kernel/RegionKernel.h) and
// compiled by the LLVM ORC JIT (KernelJit.h; cached in memory and on disk).
// Operands are plain buffers; strides are computed here once (and again
// when a reshaped program takes new shapes: the same kernel, new extents,
// no compile). Without LLVM,
// or when the translator or the JIT declines, the node kernel runs the body
// node by node (a fallback step, listed by --stats).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/ir/FusedRegion.h"

namespace nng::backends::cpu {

namespace {

/// Region N's kernel at input shapes Shapes: the body instantiated at them,
/// translated and compiled (the JIT's cache holds one kernel per body,
/// whatever the extents, which are run-time arguments). Throws Error when
/// the translator or the JIT declines.
struct RegionAt {
  std::shared_ptr<const JitKernel> K;
  kernel::RegionKernel RK;
  std::vector<int64_t> Strides;
};
RegionAt regionAt(const ir::Node &N, const std::vector<Shape> &Shapes,
                  const std::string &Desc) {
  std::vector<ir::TensorType> Types;
  for (const Shape &S : Shapes)
    Types.emplace_back(DType::F32, S);
  std::vector<const ir::TensorType *> Ptrs;
  for (const ir::TensorType &T : Types)
    Ptrs.push_back(&T);
  RegionAt R;
  std::unique_ptr<ir::Graph> Body =
      ir::instantiateRegionBody(N.attrString("body"), Ptrs, Desc);
  R.RK = kernel::buildRegionKernel(*Body, "region");
  R.K = KernelJit::global().compile(R.RK.K);
  R.Strides = kernel::rowMajorStrides(R.RK.K, R.RK.Sizes);
  return R;
}

/// What the region's step runs: kept apart so a reshaped program swaps it.
struct RegionState {
  std::shared_ptr<const JitKernel> K;
  std::vector<int64_t> Sizes, Strides;
};

} // namespace

bool lowerFusedRegion(LowerContext &C, const ir::Node &N) {
  if (!kernelJitAvailable())
    return false;
  std::vector<Shape> Shapes;
  for (size_t I = 0; I < N.numInputs(); ++I) {
    if (!N.hasInput(I) || !C.isF32(N.input(I)))
      return false;
    Shapes.push_back(C.shapeOf(N.input(I)));
  }
  RegionAt R;
  try {
    R = regionAt(N, Shapes, C.describe(N));
  } catch (const Error &) {
    return false; // The node kernel runs the body (reported by --stats).
  }
  const kernel::RegionKernel &RK = R.RK;
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
  std::vector<int> InSlots;
  for (size_t I = 0; I < N.numInputs(); ++I)
    InSlots.push_back(C.slotOf(N.input(I)));
  for (int S : Reads)
    C.B.reads(S);
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] < 0)
      C.B.writes(Slots[B]);
  auto State = std::make_shared<RegionState>(
      RegionState{R.K, RK.Sizes, R.Strides});
  std::vector<int> Binding = RK.Binding;
  std::string Desc = C.describe(N);
  auto St = std::make_unique<LoopStep>(
      [State, Slots](Program &P) {
        void *Ptrs[16];
        std::vector<void *> Many;
        void **Bufs = Ptrs;
        if (Slots.size() > 16) {
          Many.resize(Slots.size());
          Bufs = Many.data();
        }
        for (size_t B = 0; B < Slots.size(); ++B)
          Bufs[B] = const_cast<void *>(P.dataOf(Slots[B]));
        State->K->run(std::span<void *const>(Bufs, Slots.size()),
                      State->Sizes, State->Strides);
      },
      // A reshaped program: the body at the new shapes, the same kernel
      // from the JIT's cache (no compile), new extents.
      [InSlots](const Program &P, const SlotShapes &New) {
        for (int S : InSlots)
          if (New[S].rank() != P.Slots[S].S.rank())
            return false;
        return true;
      },
      [&N, State, InSlots, Binding, Desc](Program &P) {
        std::vector<Shape> Now;
        for (int S : InSlots)
          Now.push_back(P.Slots[S].S);
        try {
          RegionAt R = regionAt(N, Now, Desc);
          if (R.RK.Binding != Binding)
            return false;
          *State = RegionState{R.K, R.RK.Sizes, R.Strides};
        } catch (const Error &) {
          return false;
        }
        return true;
      });
  St->Desc = C.describe(N) + " (JIT kernel)";
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
  ++C.program().Stats.JitKernels;
  return true;
}

} // namespace nng::backends::cpu
