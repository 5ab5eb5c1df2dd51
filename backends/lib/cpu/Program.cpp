//===- Program.cpp - Running and building a compiled cpu schedule --------===//
//
// Program::run binds the inputs, runs the steps and copies the outputs out;
// ProgramBuilder records slots and liveness while lowering emits steps, then
// plans the arena (MemoryPlan.h) and binds the steps to it.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "nngraph/runtime/Allocator.h"
#include "nngraph/runtime/Error.h"

#include <chrono>
#include <cstring>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nng::backends::cpu {

Step::~Step() = default;

dnnl::memory::desc plainF32(const Shape &S) { return plainDesc(dimsOf(S)); }

dnnl::memory::desc plainDescOf(DType T, const Shape &S) {
  std::optional<dnnl::memory::data_type> D = dnnlType(T);
  return D ? plainDesc(dimsOf(S), *D) : dnnl::memory::desc();
}

// --- Program -----------------------------------------------------------------

char *Program::bufferData(int S) const {
  const ValueSlot &V = Slots[S];
  const BufferSlot &B = Buffers[V.Buffer];
  if (B.External >= 0)
    return static_cast<char *>(const_cast<void *>(
        static_cast<const Tensor &>(RunExternals[B.External]).rawData()));
  return static_cast<char *>(Arena->data()) + B.Offset;
}

const void *Program::dataOf(int S) const {
  const ValueSlot &V = Slots[S];
  switch (V.Kind) {
  case SlotKind::Input:
    return (*RunInputs)[V.InputIndex].rawData();
  case SlotKind::Constant:
    return V.Const.rawData();
  case SlotKind::Buffer:
    break;
  }
  return bufferData(S);
}

Tensor Program::tensorOf(int S) const {
  const ValueSlot &V = Slots[S];
  switch (V.Kind) {
  case SlotKind::Input:
    return (*RunInputs)[V.InputIndex];
  case SlotKind::Constant:
    return V.Const;
  case SlotKind::Buffer:
    break;
  }
  size_t Elem = dtypeSize(V.Type);
  const BufferSlot &B = Buffers[V.Buffer];
  if (B.External >= 0) {
    const Tensor &T = RunExternals[B.External];
    return Tensor(T.storage(), V.S, contiguousStrides(V.S), T.offset(),
                  V.Type);
  }
  size_t Offset = B.Offset;
  // Offsets are 64-byte aligned, so a multiple of every element size.
  return Tensor(Arena, V.S, contiguousStrides(V.S),
                static_cast<int64_t>(Offset / Elem), V.Type);
}

dnnl::memory::desc Program::layoutOf(int S) const {
  const ValueSlot &V = Slots[S];
  return V.MD ? V.MD : plainDescOf(V.Type, V.S);
}

dnnl::memory
Program::memoryOf(int S, const dnnl::memory::desc &MD,
                  std::vector<std::pair<dnnl::memory, int>> &RunBound) {
  const ValueSlot &V = Slots[S];
  const dnnl::memory::desc &D = MD ? MD : V.MD;
  if (runBound(S)) {
    dnnl::memory M(D, cpuEngine(), DNNL_MEMORY_NONE);
    RunBound.emplace_back(M, S);
    return M;
  }
  if (V.Kind == SlotKind::Constant)
    return dnnl::memory(D, cpuEngine(), const_cast<void *>(V.Const.rawData()));
  return dnnl::memory(D, cpuEngine(), bufferData(S));
}

void Program::bindRunMemories(
    const std::vector<std::pair<dnnl::memory, int>> &M) {
  for (const auto &[Mem, S] : M)
    Mem.set_data_handle(const_cast<void *>(dataOf(S)));
}

std::vector<DType> Program::outputTypes() const {
  std::vector<DType> Ts;
  for (int O : OutputSlots)
    Ts.push_back(Slots[O].Type);
  return Ts;
}

std::vector<Shape> Program::outputShapes() const {
  std::vector<Shape> Ss;
  for (int O : OutputSlots)
    Ss.push_back(Slots[O].S);
  return Ss;
}

bool Program::proofStale() {
  if (Stale)
    return true;
  for (ProofDep &D : ProofDeps) {
    uint64_t Now = D.T.storage()->version();
    if (Now == D.Version)
      continue;
    if (!(proofMeasure(D.T, D.M) <= D.Assumed)) {
      Stale = true;
      break;
    }
    D.Version = Now;
  }
  return Stale;
}

void Program::bindArena() {
  ArenaOwner->reserve(ArenaNeed);
  if (Arena == ArenaOwner->Block)
    return;
  Arena = ArenaOwner->Block;
  for (auto &St : Steps)
    St->bind(*this);
}

std::vector<Tensor> Program::run(const std::vector<Tensor> &Inputs,
                                 const std::vector<Tensor> *Outputs) {
  GuardTripped = false;
  bindArena();
  // The outputs written in place: the caller's tensors, else fresh ones
  // (not zeroed first: the steps write every element).
  RunExternals.clear();
  for (const ExternalBuffer &E : Externals) {
    const ValueSlot &V = Slots[OutputSlots[E.Output]];
    if (Outputs && (*Outputs)[E.Output].defined()) {
      RunExternals.push_back((*Outputs)[E.Output]);
      continue;
    }
    if (V.Type == DType::String) {
      RunExternals.push_back(Tensor::empty(V.S, V.Type));
      continue;
    }
    size_t Bytes = std::max<size_t>(
        static_cast<size_t>(V.S.numel()) * dtypeSize(V.Type), 1);
    Allocator &A = cpuAllocator();
    std::shared_ptr<Storage> St = Storage::wrap(
        A.allocate(Bytes), Bytes,
        [&A, Bytes](void *P) { A.deallocate(P, Bytes); });
    RunExternals.emplace_back(std::move(St), V.S, contiguousStrides(V.S), 0,
                              V.Type);
  }
  // Inputs that are views (strided) are made dense once for the run.
  std::vector<Tensor> Dense;
  const std::vector<Tensor> *In = &Inputs;
  for (const Tensor &T : Inputs)
    if (!T.isContiguous()) {
      Dense.reserve(Inputs.size());
      for (const Tensor &U : Inputs)
        Dense.push_back(U.isContiguous() ? U : U.contiguous());
      In = &Dense;
      break;
    }
  dnnl::stream &S = cpuStream();
  RunInputs = In;
  Stream = &S;
  struct Reset {
    Program &P;
    ~Reset() {
      P.RunInputs = nullptr;
      P.Stream = nullptr;
      P.RunExternals.clear();
    }
  } R{*this};
  if (Profile) {
    StepMs.resize(Steps.size());
    ++ProfiledRuns;
  }
  for (size_t I = 0; I < Steps.size(); ++I) {
    Step &St = *Steps[I];
    try {
      if (!Profile) {
        St.run(*this);
        continue;
      }
      auto Start = std::chrono::steady_clock::now();
      St.run(*this);
      StepMs[I] += std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
    } catch (const dnnl::error &E) {
      // Primitives were created at compile time: this is a bug, not input.
      fail(ErrorKind::Internal, "cpu backend: oneDNN failed in ", St.Desc,
           ": ", E.what());
    }
  }
  S.wait();
  std::vector<Tensor> Outs(OutputSlots.size());
  for (const ExternalBuffer &E : Externals)
    Outs[E.Output] = tensorOf(OutputSlots[E.Output]);
  for (size_t I = 0; I < OutputSlots.size(); ++I) {
    if (Outs[I].defined())
      continue;
    const ValueSlot &V = Slots[OutputSlots[I]];
    if (V.Kind == SlotKind::Input && !(Outputs && (*Outputs)[I].defined())) {
      Outs[I] = Inputs[V.InputIndex];
      continue;
    }
    // Outputs own their memory: the arena is reused by the next run.
    Tensor T = Outputs && (*Outputs)[I].defined() ? (*Outputs)[I]
                                                   : Tensor::empty(V.S, V.Type);
    const Tensor Src = tensorOf(OutputSlots[I]);
    std::memcpy(T.rawData(), Src.rawData(), T.nbytes());
    Outs[I] = std::move(T);
  }
  return Outs;
}

// --- ProgramBuilder ----------------------------------------------------------

namespace {
bool isPlainLayout(const dnnl::memory::desc &MD, DType T, const Shape &S) {
  return !MD || MD == plainDescOf(T, S);
}
} // namespace

int ProgramBuilder::newBuffer(DType T, const Shape &S,
                              const dnnl::memory::desc &MD, std::string Name,
                              const ir::Value *Of) {
  ValueSlot V;
  V.Of = Of;
  V.Kind = SlotKind::Buffer;
  V.Type = T;
  V.S = S;
  if (T == DType::F32)
    V.MD = MD ? MD : plainF32(S);
  else if (T == DType::U8 || T == DType::I8)
    V.MD = MD; // An int8 primitive's layout; empty: plain.
  V.Blocked = !isPlainLayout(V.MD, T, S);
  V.Name = std::move(Name);
  size_t Bytes = V.MD ? V.MD.get_size()
                      : static_cast<size_t>(S.numel()) * dtypeSize(T);
  P.Buffers.push_back(BufferSlot{Bytes});
  P.Buffers.back().Owner = static_cast<int>(P.Slots.size());
  V.Buffer = static_cast<int>(P.Buffers.size()) - 1;
  P.Slots.push_back(std::move(V));
  return static_cast<int>(P.Slots.size()) - 1;
}

int ProgramBuilder::aliasOf(int Of, const Shape &S, std::string Name,
                            const ir::Value *Value) {
  ValueSlot V = P.Slots[Of];
  V.Of = Value;
  V.ViewDense = nullptr;
  V.ViewOf = -1;
  V.TransposeOf = -1;
  V.InPlace = nullptr;
  NNG_CHECK(V.Kind == SlotKind::Buffer && !V.Blocked,
            "internal: alias of a blocked or non-buffer slot");
  V.S = S;
  V.MD = V.Type == DType::F32 ? plainF32(S) : dnnl::memory::desc();
  V.PlainTwin = -1;
  V.Name = std::move(Name);
  P.Slots.push_back(std::move(V));
  return static_cast<int>(P.Slots.size()) - 1;
}

int ProgramBuilder::newConstant(Tensor T, std::string Name,
                                const ir::Value *Of) {
  ValueSlot V;
  V.Of = Of;
  V.Kind = SlotKind::Constant;
  V.Type = T.dtype();
  V.S = T.shape();
  if (!T.isContiguous())
    T = T.contiguous();
  V.Const = std::move(T);
  if (V.Type == DType::F32)
    V.MD = plainF32(V.S);
  V.Name = std::move(Name);
  P.Slots.push_back(std::move(V));
  return static_cast<int>(P.Slots.size()) - 1;
}

int ProgramBuilder::newInput(size_t Index, DType T, const Shape &S,
                             std::string Name, const ir::Value *Of) {
  ValueSlot V;
  V.Of = Of;
  V.Kind = SlotKind::Input;
  V.InputIndex = Index;
  V.Type = T;
  V.S = S;
  if (T == DType::F32)
    V.MD = plainF32(S);
  V.Name = std::move(Name);
  P.Slots.push_back(std::move(V));
  return static_cast<int>(P.Slots.size()) - 1;
}

void ProgramBuilder::touch(int S) {
  const ValueSlot &V = P.Slots[S];
  if (V.Kind != SlotKind::Buffer)
    return;
  BufferSlot &B = P.Buffers[V.Buffer];
  int64_t At = nextStep();
  B.First = std::min(B.First, At);
  B.Last = std::max(B.Last, At);
}

void ProgramBuilder::reads(int S) {
  touch(S);
  PendingReads.push_back(S);
}
void ProgramBuilder::writes(int S) {
  touch(S);
  PendingWrites.push_back(S);
}

void ProgramBuilder::readAtEnd(int S) {
  const ValueSlot &V = P.Slots[S];
  if (V.Kind != SlotKind::Buffer)
    return;
  BufferSlot &B = P.Buffers[V.Buffer];
  B.Last = INT64_MAX - 1;
  B.First = std::min(B.First, B.Last);
}

void ProgramBuilder::markOutput(int S, size_t Index) {
  const ValueSlot &V = P.Slots[S];
  if (V.Kind != SlotKind::Buffer || V.Blocked)
    return;
  BufferSlot &B = P.Buffers[V.Buffer];
  // One output per buffer: a second (the same value twice, a reshape of
  // another output) is copied, so the caller's arrays never alias.
  if (B.External >= 0)
    return;
  B.External = static_cast<int>(P.Externals.size());
  P.Externals.push_back({V.Buffer, Index});
}

void ProgramBuilder::emit(std::unique_ptr<Step> St) {
  St->Reads = std::move(PendingReads);
  St->Writes = std::move(PendingWrites);
  PendingReads.clear();
  PendingWrites.clear();
  P.Steps.push_back(std::move(St));
}

void ProgramBuilder::emitReorder(int From, const dnnl::memory::desc &FromMD,
                                 int To, const dnnl::memory::desc &ToMD,
                                 std::string Desc) {
  // Emitted while a consumer records its operands: those stay its own.
  std::vector<int> Reads = std::move(PendingReads), Writes = std::move(PendingWrites);
  PendingReads.clear();
  PendingWrites.clear();
  reads(From);
  writes(To);
  emit(makeReorderStep(From, FromMD, To, ToMD));
  P.Steps.back()->Desc = std::move(Desc);
  PendingReads = std::move(Reads);
  PendingWrites = std::move(Writes);
}

int ProgramBuilder::plainOf(int S) {
  ValueSlot &V = P.Slots[S];
  if (!V.Blocked)
    return S;
  if (V.PlainTwin >= 0) {
    reads(V.PlainTwin);
    return V.PlainTwin;
  }
  std::string Name = V.Name;
  int Plain = newBuffer(V.Type, V.S, {}, Name, V.Of);
  dnnl::memory::desc From = P.Slots[S].MD;
  emitReorder(S, From, Plain, P.layoutOf(Plain),
              "reorder of %" + Name + " to the plain layout");
  ++P.Stats.Reorders;
  P.Slots[S].PlainTwin = Plain;
  return Plain;
}

int ProgramBuilder::inLayout(int S, const dnnl::memory::desc &MD) {
  dnnl::memory::desc From = P.layoutOf(S);
  if (From == MD)
    return S;
  // A plain request of a blocked slot: its twin serves every consumer.
  if (MD == plainDescOf(P.Slots[S].Type, P.Slots[S].S))
    return plainOf(S);
  std::string Name = P.Slots[S].Name;
  int To = newBuffer(P.Slots[S].Type, P.Slots[S].S, MD, Name, P.Slots[S].Of);
  emitReorder(S, From, To, MD, "reorder of %" + Name + " to its consumer's layout");
  ++P.Stats.Reorders;
  return To;
}

void Program::resizeScratch(int S, size_t Bytes) {
  ValueSlot &V = Slots[S];
  V.S = Shape({static_cast<int64_t>(Bytes)});
  Buffers[V.Buffer].Bytes = Bytes;
}

void Program::layOutArena() {
  std::vector<BufferLife> Lives;
  std::vector<size_t> Placed; // Buffers of the arena (not external).
  Lives.reserve(Buffers.size());
  int64_t End = static_cast<int64_t>(Steps.size());
  for (size_t I = 0; I < Buffers.size(); ++I) {
    const BufferSlot &B = Buffers[I];
    if (B.External >= 0)
      continue;
    // A buffer nobody touched (its producer was folded away) still gets a
    // place; one read at the end lives to the end.
    int64_t First = B.First == INT64_MAX ? 0 : B.First;
    int64_t Last = std::min(std::max(B.Last, First), End);
    // A buffer whose size varies with the shapes gets a quarter more.
    size_t Capacity = B.Varies ? B.Bytes + B.Bytes / 4 : B.Bytes;
    Lives.push_back(BufferLife{Capacity, First, Last});
    Placed.push_back(I);
  }
  ArenaPlan Plan = planArena(Lives);
  for (size_t I = 0; I < Placed.size(); ++I) {
    Buffers[Placed[I]].Offset = Plan.Offsets[I];
    Buffers[Placed[I]].Capacity = Lives[I].Bytes;
  }
  ArenaNeed = std::max<size_t>(Plan.PeakBytes, 64);
  Stats.ArenaBytes = static_cast<int64_t>(Plan.PeakBytes);
  Stats.NaiveBytes = static_cast<int64_t>(Plan.NaiveBytes);
}

void ProgramBuilder::finalize(const std::shared_ptr<SharedArena> &A) {
  P.layOutArena();
  P.ArenaOwner = A;
  P.Stats.Steps = static_cast<int64_t>(P.Steps.size());
  P.Stats.Compiled = true;
  P.bindArena();
}

// --- The state Programs share ------------------------------------------------

void SharedArena::reserve(size_t Need) {
  if (Block && Bytes >= Need)
    return;
  // Doubling: a sequence of growing shapes (a decoder's cache) moves the
  // block a logarithmic number of times.
  size_t Want = std::max(Need, 2 * Bytes);
#if defined(__linux__)
  // Whole pages; from 4 MiB whole huge pages (2 MiB), advised as such as
  // the allocator does. Fresh pages are zeros, as an allocated block's are.
  constexpr size_t Huge = size_t(2) << 20;
  const size_t Page = Want >= 2 * Huge ? Huge : 4096;
  Want = (Want + Page - 1) / Page * Page;
  void *P = Mapped ? mremap(Mapped, Bytes, Want, MREMAP_MAYMOVE)
                   : mmap(nullptr, Want, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (P != MAP_FAILED) {
#if defined(MADV_HUGEPAGE)
    if (Page == Huge)
      madvise(P, Want, MADV_HUGEPAGE);
#endif
    Mapped = P;
    Bytes = Want;
    // The mapping is the arena's: Programs bound to an older Block bind
    // again before they run (bindArena), so none reads through it.
    Block = Storage::wrap(P, Want, [](void *) {});
    return;
  }
  if (Mapped) { // Not grown: a block of its own from now on.
    munmap(Mapped, Bytes);
    Mapped = nullptr;
  }
#endif
  Bytes = Want;
  Block = Storage::allocate(Bytes);
}

SharedArena::~SharedArena() {
#if defined(__linux__)
  if (Mapped)
    munmap(Mapped, Bytes);
#endif
}

std::shared_ptr<PackedWeight> WeightPacks::get(const Tensor &Source,
                                               const dnnl::memory::desc &UserMD,
                                               const dnnl::memory::desc &MD) {
  auto &Same = Packs[Source.rawData()];
  for (const auto &W : Same)
    if (W->Source.storage() == Source.storage() && W->User.get_desc() == UserMD &&
        W->Packed.get_desc() == MD)
      return W;
  auto W = std::make_shared<PackedWeight>(Source, UserMD, MD);
  if (W->Reorder) { // Else the primitive reads the source where it lies.
    ++Made;
    Bytes += static_cast<int64_t>(MD.get_size());
  }
  Same.push_back(W);
  return W;
}

// --- Primitive steps ---------------------------------------------------------

void PrimitiveStep::bind(Program &P) {
  Args.clear();
  RunMems.clear();
  for (const auto &[Arg, W] : Weights)
    Args.emplace(Arg, W->Packed);
  for (const PrimitiveArg &A : Pending)
    Args.emplace(A.Arg, P.memoryOf(A.Slot, A.MD, RunMems));
  if (Scratch >= 0)
    Args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(ScratchMD, cpuEngine(), P.bufferData(Scratch)));
}

PackedWeight::PackedWeight(Tensor Src, const dnnl::memory::desc &UserMD,
                           const dnnl::memory::desc &MD)
    : Source(std::move(Src)) {
  const Tensor &C = Source;
  User = dnnl::memory(UserMD, cpuEngine(), const_cast<void *>(C.rawData()));
  Version = Source.storage()->version();
  if (UserMD == MD) {
    Packed = User;
    return;
  }
  size_t Size = MD.get_size();
  Bytes = std::shared_ptr<void>(cpuAllocator().allocate(Size), [Size](void *P) {
    cpuAllocator().deallocate(P, Size);
  });
  Packed = dnnl::memory(MD, cpuEngine(), Bytes.get());
  Reorder = dnnl::reorder(User, Packed);
  dnnl::stream S(cpuEngine());
  Reorder.execute(S, User, Packed);
  S.wait();
}

bool PackedWeight::refresh(dnnl::stream &S) {
  uint64_t Now = Source.storage()->version();
  if (Now == Version.load(std::memory_order_acquire))
    return false;
  std::lock_guard<std::mutex> Lock(Mu);
  if (Now == Version.load(std::memory_order_relaxed))
    return false; // Another lane's run repacked it meanwhile.
  if (Reorder) {
    Reorder.execute(S, User, Packed);
    S.wait();
  }
  Version.store(Now, std::memory_order_release);
  return true;
}

void PrimitiveStep::run(Program &P) {
  for (auto &[Arg, W] : Weights)
    if (W->refresh(*P.Stream))
      ++P.Stats.WeightRefreshes;
  if (Own) {
    Own(P);
    return;
  }
  if (!RunMems.empty())
    P.bindRunMemories(RunMems);
  Prim.execute(*P.Stream, Args);
  if (After) {
    P.Stream->wait();
    After(P);
  }
}

std::unique_ptr<PrimitiveStep> makeReorderStep(int From,
                                               const dnnl::memory::desc &FromMD,
                                               int To,
                                               const dnnl::memory::desc &ToMD) {
  auto St = std::make_unique<PrimitiveStep>();
  dnnl::reorder::primitive_desc PD(cpuEngine(), FromMD, cpuEngine(), ToMD);
  St->Prim = dnnl::reorder(PD);
  St->arg(DNNL_ARG_FROM, From, FromMD);
  St->arg(DNNL_ARG_TO, To, ToMD);
  St->Desc = "reorder";
  return St;
}

} // namespace nng::backends::cpu
