//===- Program.h - A compiled cpu schedule (internal) ----------*- C++ -*-===//
//
// What the cpu backend compiles a graph into, at the concrete input shapes
// it runs at now: a flat list of steps (oneDNN primitives with their
// memories bound once, the backend's own kernels, and node kernels for
// whatever has no compiled form) over value slots whose bytes live in one
// arena laid out by the static memory plan, or, for graph outputs, in the
// run's output tensors. run() binds the caller's inputs and outputs and runs
// the steps in order: no shape inference, no checks per node, no allocation
// per node, no scans of the data. reshape() (Reshape.cpp) moves it to other
// input shapes without compiling again.
//
// Lowering (Lower.cpp and the Lower*.cpp files of the op families) fills a
// Program through ProgramBuilder: it defines slots, records which step reads
// and writes them (the liveness the memory plan needs), and emits steps;
// finalize() plans the arena and binds every step's memories to it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "DnnlKernel.h"
#include "MemoryPlan.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Parallel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <any>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nng::backends::cpu {

using reference::KernelContext;
using reference::NodeKernel;

class Program;
struct InPlaceView;

/// Where a value's bytes are during a run.
enum class SlotKind {
  Input,    ///< The caller's input tensor (bound at each run).
  Constant, ///< An initializer, or a value computed at compile time.
  Buffer,   ///< A region of the arena.
};

/// One value of the compiled schedule.
struct ValueSlot {
  SlotKind Kind = SlotKind::Buffer;
  DType Type = DType::F32;
  Shape S;
  size_t InputIndex = 0; ///< SlotKind::Input.
  Tensor Const;          ///< SlotKind::Constant.
  int Buffer = -1;       ///< SlotKind::Buffer.
  /// The layout of the bytes: oneDNN's description (blocked or plain) for
  /// f32 slots; for u8 and i8 buffers the layout an int8 primitive or
  /// QuantizeLinear wrote (LowerQLinear.cpp, LowerQuant.cpp), or empty when
  /// plain; empty for other dtypes, which are always plain.
  /// Program::layoutOf fills in the plain description.
  dnnl::memory::desc MD;
  bool Blocked = false;  ///< MD is not the row-major layout of S.
  int PlainTwin = -1;    ///< Slot holding a plain copy (made once), or -1.
  std::string Name;      ///< The IR value's name (reorder messages).
  /// A constant whose values a lowering read (LowerContext::constantOf):
  /// weights it packed, bounds, indices; Program::reshape refuses when it
  /// changes. Others are read by steps at run time and may change.
  bool Baked = false;
  /// A view of slot ViewOf's bytes whose geometry was checked at these
  /// shapes (a transpose of size-1 axes): Program::reshape keeps it when
  /// ViewDense says the view of ViewOf's new shape still is its bytes in
  /// order; null for other slots.
  std::shared_ptr<const std::function<bool(const Shape &)>> ViewDense;
  int ViewOf = -1;
  /// Not materialized: the value is slot TransposeOf with its last two
  /// axes swapped, read in place by the one product that takes it
  /// (LowerCopy.cpp, LowerMatMul.cpp); -1 for other slots.
  int TransposeOf = -1;
  /// Not materialized: the value is a view of slot InPlace->Root's bytes,
  /// read in place by the attention loop it feeds (InPlaceViews.h); null
  /// for other slots.
  std::shared_ptr<const InPlaceView> InPlace;
  /// The IR value whose bytes the slot holds (in its own layout, or a plain
  /// twin's), so Program::reshape finds its shape at other input shapes;
  /// null for scratch buffers.
  const ir::Value *Of = nullptr;
};

/// A buffer of the arena: its size and liveness in step indices.
struct BufferSlot {
  size_t Bytes = 0;
  int64_t First = INT64_MAX, Last = -1;
  size_t Offset = 0; ///< Set by the plan.
  /// Index into Program::Externals when the buffer holds a graph output:
  /// its bytes are not the arena's but the run's output tensor, written in
  /// place (no copy out of the arena); -1 otherwise.
  int External = -1;
  int Owner = -1; ///< The slot it was made for (its size follows that one's).
  /// Bytes the arena plan reserved: Bytes, or more for a buffer whose size
  /// changed with the shapes (a reshape that fits keeps the plan).
  size_t Capacity = 0;
  bool Varies = false; ///< Its size changed at a reshape once.

};

/// What a program does per run: the public CpuExecutableStats (nngraph-run
/// --stats), filled while lowering and finalizing.
using ProgramStats = CpuExecutableStats;

/// The slot shapes Program::reshape proposes: each slot's own, except the
/// ones it changes.
class SlotShapes {
public:
  explicit SlotShapes(const std::deque<ValueSlot> &Slots)
      : Slots(Slots), Has(Slots.size(), 0), New(Slots.size()) {}
  const Shape &operator[](int S) const { return Has[S] ? New[S] : Slots[S].S; }
  void set(int S, Shape Sh) {
    Has[S] = 1;
    New[S] = std::move(Sh);
  }

private:
  const std::deque<ValueSlot> &Slots;
  std::vector<char> Has; ///< Per slot: New holds its shape.
  std::vector<Shape> New;
};

/// One entry of the schedule.
class Step {
public:
  virtual ~Step();
  /// Called after the arena is laid out, and again when it moved: create
  /// memories and views.
  virtual void bind(Program &P) {}
  /// Runs the step.
  virtual void run(Program &P) = 0;
  /// Program::reshape changed the shapes of some of the step's slots (to
  /// NewShapes[slot]; P's slots still hold the old ones): true
  /// when the step can run at them, after which adopt() is called with the
  /// slots updated and bind() follows. False (the default: a step made for
  /// fixed shapes, or a decision made at compile time that no longer
  /// holds): the executable compiles a Program for the new shapes instead.
  virtual bool fits(const Program &P, const SlotShapes &NewShapes) const {
    return false;
  }
  /// Takes the slots' new shapes (after fits() said yes); false when that
  /// failed after all (a primitive could not be made).
  virtual bool adopt(Program &P) { return true; }
  /// What runs, for the printed schedule: "oneDNN <primitive> <impl>",
  /// "loop" (the backend's own), "node kernel".
  virtual std::string kind() const { return "loop"; }
  /// For messages: the node(s) it runs, or what a reorder moves.
  std::string Desc;
  /// The slots it reads and writes (ProgramBuilder::emit).
  std::vector<int> Reads, Writes;
};

/// A step running one of the backend's own loops, a function of the
/// program that finds its operands with Program::dataOf/bufferData.
class LoopStep final : public Step {
public:
  /// Fits, when given, says whether the loop serves new slot shapes
  /// (Step::fits; Fn then reads its extents from its slots at each run, or
  /// Adopt takes them); without it Fn's extents are fixed at compile time.
  using FitsFn =
      std::function<bool(const Program &, const SlotShapes &)>;
  using AdoptFn = std::function<bool(Program &)>;
  explicit LoopStep(std::function<void(Program &)> Fn, FitsFn Fits = {},
                    AdoptFn Adopt = {})
      : Fn(std::move(Fn)), Fits(std::move(Fits)), Adopt(std::move(Adopt)) {}
  void run(Program &P) override { Fn(P); }
  bool fits(const Program &P, const SlotShapes &New) const override {
    return Fits && Fits(P, New);
  }
  bool adopt(Program &P) override { return !Adopt || Adopt(P); }

private:
  std::function<void(Program &)> Fn;
  FitsFn Fits;
  AdoptFn Adopt;
};

/// What a speculation assumed of a constant: that a measure of its values
/// stays at most Assumed. Checked again when the constant's storage
/// version moves.
struct ProofDep {
  enum Measure {
    MaxAbs, ///< max |x|.
    RowNorm ///< max over rows (first axis) of sum |x|.
  };
  Tensor T;
  Measure M = MaxAbs;
  double Assumed = 0;
  uint64_t Version = 0; ///< T's storage version when last checked.
};
/// Measure M of f32 tensor T; NaN (outside every bound) when T holds a NaN
/// or an infinity (ValueBounds.cpp).
double proofMeasure(const Tensor &T, ProofDep::Measure M);

/// A weight tensor reordered once into the layout a primitive chose. The
/// copy is redone before a run when the source's storage version moved (an
/// in-place update of the initializer: training, weights loaded again).
/// Shared by every Program of an executable that packs the same source into
/// the same layout (WeightPacks).
struct PackedWeight {
  Tensor Source;           ///< The initializer (plain).
  /// Source's storage version at the last pack; read by runs of several
  /// lanes at once, repacked under Mu.
  std::atomic<uint64_t> Version{0};
  std::mutex Mu;
  dnnl::memory User, Packed;
  dnnl::reorder Reorder;   ///< User -> Packed; empty when no reorder.
  /// Packed's bytes (cpuAllocator: huge pages for large ones), when a
  /// reorder made them.
  std::shared_ptr<void> Bytes;

  /// Packs Source (plain description UserMD) into layout MD.
  PackedWeight(Tensor Source, const dnnl::memory::desc &UserMD,
               const dnnl::memory::desc &MD);
  /// Repacks when the source changed; true when it did (one of the runs
  /// that see the change repacks, the others wait for it).
  bool refresh(dnnl::stream &S);
};

/// The weights an executable packed, whatever the shapes its Programs were
/// compiled for: a new input shape finds its weights packed already (a
/// decoder's cache grows every token; its weights do not change).
class WeightPacks {
public:
  /// Source packed into layout MD (its own layout UserMD): the pack made
  /// before for the same bytes and layouts, else a new one.
  std::shared_ptr<PackedWeight> get(const Tensor &Source,
                                    const dnnl::memory::desc &UserMD,
                                    const dnnl::memory::desc &MD);
  /// Packs made so far (reorders into layouts other than the source's),
  /// and their bytes.
  int64_t made() const { return Made; }
  int64_t packedBytes() const { return Bytes; }

private:
  /// By the first byte of the source.
  std::unordered_map<const void *, std::vector<std::shared_ptr<PackedWeight>>>
      Packs;
  int64_t Made = 0, Bytes = 0;
};

/// The arena the Programs of one lane of an executable run in (a lane runs
/// one run at a time, so one block serves all its shapes). It grows to the
/// largest plan (never shrinks); a Program binds its steps again when the
/// block moved. On Linux it is an anonymous mapping that grows by mremap:
/// the pages runs touched stay (a new length touches only what the bigger
/// plan adds), where a new block would be zeroed and touched anew.
struct SharedArena {
  std::shared_ptr<Storage> Block;
  size_t Bytes = 0;
  /// Makes the block hold at least Need bytes (a new block when it grows).
  void reserve(size_t Need);

  SharedArena() = default;
  SharedArena(const SharedArena &) = delete;
  SharedArena &operator=(const SharedArena &) = delete;
  ~SharedArena();

private:
  void *Mapped = nullptr; ///< The mapping Block wraps, when one.
};

/// The bytes of MD's description, for the keys of ProgramShared::primitive:
/// equal for descriptions made alike (oneDNN fills every field).
inline std::string descKey(const dnnl::memory::desc &MD) {
  return std::string(reinterpret_cast<const char *>(&MD.data),
                     sizeof(MD.data));
}

/// What the Programs of one executable share: packed weights, the oneDNN
/// primitives earlier compiles made, and the arena of the lane being
/// compiled for (the executable sets it before each compile; it serializes
/// compiles).
struct ProgramShared {
  WeightPacks Packs;
  std::shared_ptr<SharedArena> Arena = std::make_shared<SharedArena>();
  /// Primitives (with their descriptions) created, and found made already.
  int64_t Primitives = 0, PrimitiveHits = 0;
  /// True when a graph input has a dim that is not a constant: its shapes
  /// may vary, so the first compile also makes (and runs once) the
  /// primitives with run-time dims a reshape switches products to, and the
  /// first new shape generates no oneDNN kernel.
  bool ShapesVary = false;

  /// The primitive description and primitive an earlier compile made under
  /// Key, else Make()'s (kept). Key must name everything the primitive
  /// depends on (the lowering that builds it: its node, dims, fusions). A
  /// decoder's weight products have the same dims at every cache length,
  /// so oneDNN's implementation search runs once for them, not per token.
  template <class PD, class Prim, class MakeFn>
  std::pair<PD, Prim> primitive(const std::string &Name, MakeFn Make) {
    // oneDNN splits a primitive's work for the threads of its making.
    std::string Key = std::to_string(numThreads()) + "t " + Name;
    auto It = Prims.find(Key);
    if (It != Prims.end()) {
      ++PrimitiveHits;
      return std::any_cast<std::pair<PD, Prim>>(It->second);
    }
    std::pair<PD, Prim> Made = Make();
    ++Primitives;
    if (Prims.size() >= MaxPrimitives)
      Prims.clear(); // Bounded: a long tail of shapes starts over.
    Prims.emplace(Key, Made);
    return Made;
  }

  /// N.describe(), kept: every compile describes every node it lowers.
  const std::string &describe(const ir::Node &N) {
    auto It = Descs.find(&N);
    if (It == Descs.end())
      It = Descs.emplace(&N, N.describe()).first;
    return It->second;
  }

  /// True when node N was lowered before with an extent other than Extent
  /// (its first one is remembered): its shapes vary, so a primitive with
  /// run-time dims serves it better than one per extent.
  bool variesAt(const void *N, int64_t Extent) {
    auto [It, New] = FirstExtent.emplace(N, Extent);
    return !New && It->second != Extent;
  }

private:
  static constexpr size_t MaxPrimitives = 4096;
  std::unordered_map<const void *, int64_t> FirstExtent;
  std::unordered_map<const ir::Node *, std::string> Descs;
  std::unordered_map<std::string, std::any> Prims;
};

/// A compiled schedule for one input signature.
class Program {
public:
  /// Deques: lowering keeps references to slots while it adds more.
  std::deque<ValueSlot> Slots;
  std::deque<BufferSlot> Buffers;
  std::vector<std::unique_ptr<Step>> Steps;
  std::vector<int> InputSlots;  ///< Per graph input.
  /// The input dtypes and shapes the program runs at now (compiled for, or
  /// reshaped to).
  std::vector<DType> InputTypes;
  std::vector<Shape> InputShapes;
  std::vector<int> OutputSlots; ///< Per graph output.
  /// The buffers that hold graph outputs (BufferSlot::External), each with
  /// the output that owns it; other outputs are copied at the end of a run
  /// (constants, inputs passed through, a second output on one buffer).
  struct ExternalBuffer {
    int Buffer;
    size_t Output;
  };
  std::vector<ExternalBuffer> Externals;
  /// If nodes whose branch this compile chose from its shapes and lowered in
  /// place (LowerControlFlow.cpp): other shapes may choose the other branch,
  /// so reshape() refuses and a new shape compiles.
  int64_t ChosenBranches = 0;
  ProgramStats Stats;
  /// Profiling: time each step, summing into StepMs.
  bool Profile = false;
  std::vector<double> StepMs;
  int64_t ProfiledRuns = 0;
  /// The arena block the steps are bound to, the executable's shared
  /// arena, and the bytes this program's plan needs of it.
  std::shared_ptr<Storage> Arena;
  std::shared_ptr<SharedArena> ArenaOwner;
  size_t ArenaNeed = 0;
  /// Some clamp is oneDNN's on a value with a proven bound, or a
  /// convolution runs as Winograd's algorithm behind a guard
  /// (ValueBounds.cpp): a run is valid only when no guard tripped and the
  /// constants the bounds came from still keep them.
  bool Speculative = false;
  /// Set during a run by a guard that met a NaN or an out-of-range value.
  bool GuardTripped = false;
  /// What the bounds assumed of constants.
  std::vector<ProofDep> ProofDeps;
  /// True when a constant changed since compile so that a measure it was
  /// assumed to keep grew past it (it stays true: the executable runs the
  /// exact program from then on). A change within the assumed measures
  /// (weights updated by training, loaded again) keeps the program.
  bool proofStale();

private:
  bool Stale = false;

public:
  const std::vector<Tensor> *RunInputs = nullptr; ///< During run().
  /// During run(): per external buffer, the tensor holding its bytes.
  std::vector<Tensor> RunExternals;
  dnnl::stream *Stream = nullptr;                 ///< During run().

  /// Makes the program run at input shapes Shapes (same dtypes and ranks)
  /// without compiling again: G's shapes are inferred again, every slot
  /// takes its value's new shape, the steps whose slots changed adapt (own
  /// loops read their extents at run time, primitives with run-time dims
  /// take new descriptions) and the arena is laid out again. Returns an
  /// empty string on success, else why not (a step made for fixed shapes,
  /// a blocked layout, a constant computed from a shape that a step
  /// reads); the program is unchanged then, unless Broken is set (it
  /// failed half-way and must be dropped). Reshape.cpp.
  std::string reshape(const ir::Graph &G, ProgramShared &Shared,
                      const std::vector<Shape> &Shapes, bool &Broken);
  /// Makes scratch slot S (a primitive's) hold Bytes (a reshaped step's
  /// primitive needs another size).
  void resizeScratch(int S, size_t Bytes);
  /// The graph's values as dense indices, each node's operands among them
  /// and each value's first slot (made by the first reshape: Reshape.cpp).
  std::shared_ptr<struct ReshapeIndex> ReshapeIdx;
  /// Places the buffers (liveness from the steps, sizes from the slots) in
  /// the arena plan: ArenaNeed, the offsets and the arena statistics.
  void layOutArena();

  /// Runs the schedule (the caller serializes runs). Outputs, when given,
  /// holds one tensor per graph output: a defined one (the output's dtype
  /// and shape, contiguous; checkOutputs) is written in place, an undefined
  /// one is allocated; the returned tensors are those.
  std::vector<Tensor> run(const std::vector<Tensor> &Inputs,
                          const std::vector<Tensor> *Outputs = nullptr);
  /// Binds every step to the shared arena's block, reserving ArenaNeed
  /// bytes of it, when it is not bound to that block already.
  void bindArena();

  /// The dtypes and shapes of the graph outputs.
  std::vector<DType> outputTypes() const;
  std::vector<Shape> outputShapes() const;
  /// The bytes of buffer slot S: the arena's (valid after finalize), or
  /// during a run the output tensor's when its buffer is external.
  char *bufferData(int S) const;
  /// True when slot S's bytes change from run to run (an input, an output
  /// written in place): steps look them up at each run, not at bind().
  bool runBound(int S) const {
    const ValueSlot &V = Slots[S];
    return V.Kind == SlotKind::Input ||
           (V.Kind == SlotKind::Buffer && Buffers[V.Buffer].External >= 0);
  }
  /// The bytes of plain slot S: the arena's, the constant's or (during a
  /// run) the caller's input.
  const void *dataOf(int S) const;
  /// Slot S as a plain tensor: an arena view, the constant or (during a
  /// run) the caller's input. S must not be blocked.
  Tensor tensorOf(int S) const;
  /// The description of slot S's bytes: its MD, else the row-major one of
  /// its dtype (empty when oneDNN has no such dtype).
  dnnl::memory::desc layoutOf(int S) const;
  /// A oneDNN memory over slot S with description MD (its own MD when
  /// empty). Run-bound slots (inputs, outputs written in place) get their
  /// handle at each run through bindRunMemories(), which finds them in
  /// RunBound; constants and arena buffers point at their bytes now.
  dnnl::memory memoryOf(int S, const dnnl::memory::desc &MD,
                        std::vector<std::pair<dnnl::memory, int>> &RunBound);
  /// Points the memories of run-bound slots at this run's tensors.
  void bindRunMemories(const std::vector<std::pair<dnnl::memory, int>> &M);
};

/// Builds a Program during lowering.
class ProgramBuilder {
public:
  explicit ProgramBuilder(Program &P) : P(P) {}

  /// A new slot in a new arena buffer for a value of type T and shape S in
  /// layout MD (plain when empty; f32, u8 or i8 may be blocked), first
  /// written by the next emitted step.
  int newBuffer(DType T, const Shape &S, const dnnl::memory::desc &MD = {},
                std::string Name = {}, const ir::Value *Of = nullptr);
  /// A slot viewing the bytes of slot Of with another shape (a reshape of a
  /// plain buffer): it shares Of's buffer, whose life it extends.
  int aliasOf(int Of, const Shape &S, std::string Name = {},
              const ir::Value *V = nullptr);
  int newConstant(Tensor T, std::string Name = {}, const ir::Value *V = nullptr);
  int newInput(size_t Index, DType T, const Shape &S, std::string Name = {},
               const ir::Value *V = nullptr);

  /// Records that the next emitted step reads / writes slot S.
  void reads(int S);
  void writes(int S);
  /// Records that slot S is read after the last step (a graph output).
  void readAtEnd(int S);
  /// Makes slot S graph output Index: its buffer, when it has one of its
  /// own that no earlier output took, becomes external (written in place
  /// into the run's output tensor). Call after readAtEnd, before finalize.
  void markOutput(int S, size_t Index);
  /// Appends a step (the reads and writes recorded since the last one are
  /// its operands).
  void emit(std::unique_ptr<Step> St);
  int64_t nextStep() const { return static_cast<int64_t>(P.Steps.size()); }

  /// A plain copy of slot S (S itself when plain): a reorder step the first
  /// time, the same twin afterwards.
  int plainOf(int S);
  /// Slot S in layout MD: S itself when its layout already is MD, else a
  /// new buffer and a reorder step.
  int inLayout(int S, const dnnl::memory::desc &MD);

  /// Plans the arena, reserves it in the shared arena A and binds every
  /// step.
  void finalize(const std::shared_ptr<SharedArena> &A);

  Program &P;

private:
  void touch(int S);
  /// Emits a reorder step From -> To now, keeping the operands recorded
  /// for the step being built.
  void emitReorder(int From, const dnnl::memory::desc &FromMD, int To,
                   const dnnl::memory::desc &ToMD, std::string Desc);
  /// Operands recorded since the last emitted step.
  std::vector<int> PendingReads, PendingWrites;
};

/// The schedule of P as text: a header line, then one line per step (its
/// index, what runs, its description, the slots it reads and writes with
/// dtype, shape, place and layout). nngraph-run --print-schedule.
std::string printSchedule(const Program &P);

/// One argument of a primitive: which one, the slot bound to it and the
/// description it is read or written with.
struct PrimitiveArg {
  int Arg;
  int Slot;
  dnnl::memory::desc MD;
};

/// A step executing one oneDNN primitive with fixed arguments.
class PrimitiveStep : public Step {
public:
  dnnl::primitive Prim;
  /// Packed weights and the argument each is bound to; refreshed before
  /// each execution.
  std::vector<std::pair<int, std::shared_ptr<PackedWeight>>> Weights;
  std::unordered_map<int, dnnl::memory> Args;
  /// Memories over run-bound slots (Program::memoryOf).
  std::vector<std::pair<dnnl::memory, int>> RunMems;
  /// Arguments on slots, turned into memories by bind() (again after the
  /// arena moved).
  std::vector<PrimitiveArg> Pending;
  /// Scratchpad bytes (a buffer slot of the arena), or -1.
  int Scratch = -1;
  dnnl::memory::desc ScratchMD;
  /// For primitives made with run-time dims (or cheap to make again): says
  /// whether the step serves new slot shapes, and makes it do so (new
  /// argument descriptions, a primitive from the shared cache). Null: fixed
  /// shapes.
  std::function<bool(const Program &, const SlotShapes &)> Fits;
  std::function<bool(Program &, PrimitiveStep &)> Adopt;
  /// An own loop run after the primitive (a residual its post-op no longer
  /// adds), or null.
  std::function<void(Program &)> After;
  /// An own loop run instead of the primitive (the product of a linear
  /// layer whose rows vary, over weights packed in panels: packedGemm),
  /// or null; the weights above are still refreshed before it.
  std::function<void(Program &)> Own;

  void arg(int Arg, int Slot, const dnnl::memory::desc &MD) {
    Pending.push_back({Arg, Slot, MD});
  }
  void bind(Program &P) override;
  void run(Program &P) override;
  std::string kind() const override;
  bool fits(const Program &P, const SlotShapes &New) const override {
    return Fits && Fits(P, New);
  }
  bool adopt(Program &P) override { return !Adopt || Adopt(P, *this); }
};

/// A reorder between two layouts of the same tensor.
std::unique_ptr<PrimitiveStep> makeReorderStep(int From,
                                               const dnnl::memory::desc &FromMD,
                                               int To,
                                               const dnnl::memory::desc &ToMD);

/// The row-major f32 description of S (rank 0 as {1}).
dnnl::memory::desc plainF32(const Shape &S);
/// The row-major description of a T tensor of shape S; empty when oneDNN
/// has no dtype T.
dnnl::memory::desc plainDescOf(DType T, const Shape &S);

} // namespace nng::backends::cpu
