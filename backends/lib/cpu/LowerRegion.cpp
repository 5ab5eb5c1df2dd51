//===- LowerRegion.cpp - nng.FusedRegion as one JIT-compiled kernel -------===//
//
// A fused region (ir/FusedRegion.h) whose inputs are f32 becomes one step
// running its kernel: the body instantiated with the static shapes of this
// compile, translated to the kernel IR (backends/kernel/RegionKernel.h) and
// compiled by the LLVM ORC JIT (KernelJit.h; cached in memory and on disk).
// Operands are plain buffers; strides are computed here once (and again
// when a reshaped program takes new shapes: the same kernel, new extents,
// no compile). A region that maps elements one to one (every operand of
// the region's shape, or a single element) keeps the layout its operands
// share (a convolution's channels-last or blocked output, without padding):
// it runs over their bytes as one flat range and writes its results in
// that layout, so no reorder to the plain layout and back surrounds it
// (PaddleOCR's detector had 64 of them, 29% of its time). An elementwise
// node the backend has no loop of its own for (Sigmoid, Exp, Pow, Neg) is
// lowered the same way, as a region holding it alone. Without LLVM,
// or when the translator or the JIT declines, the node kernel runs the body
// node by node (a fallback step, listed by --stats).
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/ir/FusedRegion.h"

#include <algorithm>

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

/// Which axes of S are 1: the kernel (its merged domain, each input's
/// broadcast) depends on nothing else of the shapes.
std::vector<char> unitAxes(const Shape &S) {
  std::vector<char> U(S.rank());
  for (size_t I = 0; I < S.rank(); ++I)
    U[I] = S[I] == 1;
  return U;
}
RegionAt regionAt(const std::string &BodyText, const std::vector<Shape> &Shapes,
                  const std::string &Desc) {
  std::vector<ir::TensorType> Types;
  for (const Shape &S : Shapes)
    Types.emplace_back(DType::F32, S);
  std::vector<const ir::TensorType *> Ptrs;
  for (const ir::TensorType &T : Types)
    Ptrs.push_back(&T);
  RegionAt R;
  std::unique_ptr<ir::Graph> Body =
      ir::instantiateRegionBody(BodyText, Ptrs, Desc);
  R.RK = kernel::buildRegionKernel(*Body, "region");
  R.K = KernelJit::global().compile(R.RK.K);
  R.Strides = kernel::rowMajorStrides(R.RK.K, R.RK.Sizes);
  return R;
}

/// What the region's step runs: kept apart so a reshaped program swaps it.
/// With it, what the kernel was made for: the unit axes of the inputs and
/// of the region's shape, and its merged domain (RegionKernel::Groups).
struct RegionState {
  std::shared_ptr<const JitKernel> K;
  std::vector<int64_t> Sizes, Strides;
  std::shared_ptr<const kernel::Kernel> IR;
  std::vector<std::vector<char>> UnitIn;
  std::vector<char> UnitOut;
  std::vector<std::vector<size_t>> Groups;

  /// Takes R (a kernel made at In, of region shape Out).
  void take(RegionAt R, const std::vector<Shape> &In, const Shape &Out) {
    K = std::move(R.K);
    Sizes = std::move(R.RK.Sizes);
    Strides = std::move(R.Strides);
    Groups = std::move(R.RK.Groups);
    IR = std::make_shared<const kernel::Kernel>(std::move(R.RK.K));
    UnitIn.clear();
    for (const Shape &S : In)
      UnitIn.push_back(unitAxes(S));
    UnitOut = unitAxes(Out);
  }

  /// New extents for the same kernel when In and Out have the unit axes it
  /// was made for (no instance of the body, no translation); false else.
  bool extend(const std::vector<Shape> &In, const Shape &Out) {
    if (UnitOut != unitAxes(Out) || In.size() != UnitIn.size())
      return false;
    for (size_t I = 0; I < In.size(); ++I)
      if (UnitIn[I] != unitAxes(In[I]))
        return false;
    std::vector<int64_t> NewSizes;
    for (const std::vector<size_t> &G : Groups) {
      int64_t Size = 1;
      for (size_t A : G)
        Size *= Out[A];
      NewSizes.push_back(Size);
    }
    if (Groups.empty())
      NewSizes = {1}; // A domain of one point.
    Strides = kernel::rowMajorStrides(*IR, NewSizes);
    Sizes = std::move(NewSizes);
    return true;
  }
};

/// The layout that region N's operands share when it maps elements one to
/// one: its body is elementwise ops only (no row reduction, no transpose),
/// every input of the region's shape (its outputs') is in that one
/// non-plain layout, without padding, and the others are single elements;
/// none of its outputs is a graph output. Empty otherwise (plain operands).
dnnl::memory::desc sharedLayout(LowerContext &C, const ir::Node &N,
                                const std::string &BodyText) {
  const Shape Out = C.shapeOf(N.output(0));
  for (const ir::Value *Y : N.outputs())
    if (C.isOutput(Y) || C.shapeOf(Y) != Out)
      return {};
  std::vector<ir::TensorType> Types;
  for (size_t I = 0; I < N.numInputs(); ++I)
    Types.emplace_back(DType::F32, C.shapeOf(N.input(I)));
  std::vector<const ir::TensorType *> Ptrs;
  for (const ir::TensorType &T : Types)
    Ptrs.push_back(&T);
  try {
    std::unique_ptr<ir::Graph> Body = ir::instantiateRegionBody(
        BodyText, Ptrs, C.describe(N));
    for (const auto &BN : Body->nodes())
      if (!kernel::regionCanHoldElementwise(*BN))
        return {};
  } catch (const Error &) {
    return {};
  }
  dnnl::memory::desc MD;
  for (size_t I = 0; I < N.numInputs(); ++I) {
    const Shape &S = C.shapeOf(N.input(I));
    if (S.numel() == 1 && Out.numel() != 1)
      continue;
    const ValueSlot &V = C.slotOfValue(N.input(I));
    if (S != Out || !V.Blocked || V.Kind == SlotKind::Constant ||
        V.MD.get_size() != static_cast<size_t>(S.numel()) * 4 ||
        (MD && V.MD != MD))
      return {};
    MD = V.MD;
  }
  return MD;
}

/// The body of a region holding node N alone (its inputs the region's, in
/// order; its outputs the region's).
std::string singleNodeBody(const ir::Node &N) {
  ir::Graph Body;
  std::vector<ir::Value *> Ins;
  for (size_t I = 0; I < N.numInputs(); ++I)
    Ins.push_back(Body.addInput(N.input(I)->name(), N.input(I)->type()));
  std::vector<std::string> Names;
  for (const ir::Value *V : N.outputs())
    Names.push_back(V->name());
  ir::Node *M = Body.addNode(N.op(), std::move(Ins), std::move(Names),
                             N.attrs());
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    M->output(I)->setType(N.output(I)->type());
    Body.addOutput(M->output(I));
  }
  return ir::printRegionBody(Body);
}

/// Node N as the region whose body is BodyText (N's inputs the region's
/// inputs, N's outputs its outputs): one JIT-compiled kernel.
bool lowerRegion(LowerContext &C, const ir::Node &N,
                 std::shared_ptr<const std::string> BodyPtr) {
  const std::string &BodyText = *BodyPtr;
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (!N.hasInput(I) || !C.isF32(N.input(I)))
      return false;
  // In a shared layout, the body runs over the flat range of its elements.
  const dnnl::memory::desc Layout = sharedLayout(C, N, BodyText);
  const int64_t Flat = C.shapeOf(N.output(0)).numel();
  std::vector<Shape> Shapes;
  for (size_t I = 0; I < N.numInputs(); ++I) {
    const Shape &S = C.shapeOf(N.input(I));
    Shapes.push_back(Layout && S.numel() == Flat ? Shape({Flat}) : S);
  }
  RegionAt R;
  try {
    R = regionAt(BodyText, Shapes, C.describe(N));
  } catch (const Error &) {
    return false; // The node kernel runs the body (reported by --stats).
  }
  const kernel::RegionKernel &RK = R.RK;
  std::vector<int> Slots(RK.Binding.size());
  std::vector<int> Reads;
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] >= 0) {
      int S = C.slotOf(N.input(RK.Binding[B]));
      Slots[B] = Layout ? S : C.B.plainOf(S);
      Reads.push_back(Slots[B]);
    }
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] < 0)
      Slots[B] = C.defineBuffer(N.output(-1 - RK.Binding[B]), Layout);
  std::vector<int> InSlots;
  for (size_t I = 0; I < N.numInputs(); ++I)
    InSlots.push_back(C.slotOf(N.input(I)));
  for (int S : Reads)
    C.B.reads(S);
  for (size_t B = 0; B < RK.Binding.size(); ++B)
    if (RK.Binding[B] < 0)
      C.B.writes(Slots[B]);
  int OutSlot = Slots[std::find(RK.Binding.begin(), RK.Binding.end(), -1) -
                      RK.Binding.begin()];
  std::vector<int> Binding = RK.Binding;
  auto State = std::make_shared<RegionState>();
  State->take(std::move(R), Shapes, C.slot(OutSlot).S);
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
      // A reshaped program: the same kernel with new extents when the
      // unit axes did not change, else the body at the new shapes (the
      // kernel from the JIT's cache: no compile).
      [InSlots, Flat = bool(Layout)](const Program &P,
                                     const SlotShapes &New) {
        if (Flat)
          return false; // Its layout is not plain: made for these shapes.
        for (int S : InSlots)
          if (New[S].rank() != P.Slots[S].S.rank())
            return false;
        return true;
      },
      [BodyPtr, State, InSlots, OutSlot, Binding, Desc](Program &P) {
        std::vector<Shape> Now;
        for (int S : InSlots)
          Now.push_back(P.Slots[S].S);
        if (State->extend(Now, P.Slots[OutSlot].S))
          return true;
        try {
          RegionAt R = regionAt(*BodyPtr, Now, Desc);
          if (R.RK.Binding != Binding)
            return false;
          State->take(std::move(R), Now, P.Slots[OutSlot].S);
        } catch (const Error &) {
          return false;
        }
        return true;
      });
  St->Desc = C.describe(N) + (Layout ? " (JIT kernel, in its operands' "
                                       "layout)"
                                     : " (JIT kernel)");
  C.B.emit(std::move(St));
  ++C.program().Stats.OwnKernels;
  return true;
}

} // namespace

bool lowerFusedRegion(LowerContext &C, const ir::Node &N) {
  if (!kernelJitAvailable() ||
      !lowerRegion(C, N,
                   std::make_shared<const std::string>(N.attrString("body"))))
    return false;
  ++C.program().Stats.JitKernels;
  return true;
}

bool lowerElementwiseJit(LowerContext &C, const ir::Node &N) {
  if (!kernelJitAvailable() || !kernel::regionCanHoldElementwise(N))
    return false;
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (!N.hasInput(I))
      return false;
  return lowerRegion(C, N,
                     std::make_shared<const std::string>(singleNodeBody(N)));
}

} // namespace nng::backends::cpu
