//===- Lower.cpp - Specialise, fold and lower a graph into a Program -----===//
//
// compileProgram runs four named stages, each timed and reported in the
// stats and the printed schedule (ProgramStats::Stages): bind (inputs and
// initializers become slots), plan (the layout preference and the QDQ
// residual joins, decided over the whole graph before the walk), emit (one
// walk over the nodes in order) and memory (outputs marked, the arena laid
// out). In emit, a node whose inputs are all known at compile time is
// computed now by its reference kernel (Shape and Size need only their
// input's shape); every other node gets static output types from its
// inference function and is lowered through the kernel table, or runs in a
// fallback step on its node kernel, which writes straight into the node's
// arena buffers. Reshape-like nodes of plain buffers cost nothing: their
// output views the same bytes. A node a later one may fuse (a QDQ residual
// join's DequantizeLinear, planned before the walk) waits for it, and is
// lowered right after it when it was not fused.
//
//===----------------------------------------------------------------------===//

#include "InPlaceViews.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace nng::backends::cpu {

// --- LowerContext ------------------------------------------------------------

const Tensor *LowerContext::constantOf(const ir::Value *V) const {
  auto It = SlotOf.find(V);
  if (It == SlotOf.end())
    return nullptr;
  ValueSlot &S = B.P.Slots[It->second];
  if (S.Kind != SlotKind::Constant)
    return nullptr;
  S.Baked = true; // A lowering looked at its values.
  return &S.Const;
}

bool LowerContext::isF32(const ir::Value *V) const {
  return B.P.Slots[SlotOf.at(V)].Type == DType::F32;
}

const ir::Node *LowerContext::soleConsumer(const ir::Value *V) const {
  if (V->uses().size() != 1 || isOutput(V))
    return nullptr;
  const ir::Node *U = V->uses()[0].User;
  return Done.count(U) ? nullptr : U;
}

const Shape &LowerContext::shapeOf(const ir::Value *V) const {
  auto It = SlotOf.find(V);
  if (It != SlotOf.end())
    return B.P.Slots[It->second].S;
  return PendingTypes.at(V).second;
}

bool LowerContext::diesAt(const ir::Value *V, const ir::Node &Now,
                          const ir::Node *Except) const {
  if (isOutput(V))
    return false;
  size_t At = Order.at(&Now);
  // A deferred reader runs later than its place in the graph.
  auto Alive = [&](const ir::Node *U) {
    return U != Except && (Order.at(U) >= At || Deferred.count(U));
  };
  for (const ir::Use &U : V->uses())
    if (Alive(U.User))
      return false;
  int S = SlotOf.at(V);
  int Buf = B.P.Slots[S].Buffer;
  // Other slots on the same bytes: views of V, or values whose bytes an
  // in-place step took over earlier. Each must be dead by Now.
  std::unordered_set<int> Sharing;
  for (size_t I = 0; I < B.P.Slots.size(); ++I)
    if (static_cast<int>(I) != S && B.P.Slots[I].Kind == SlotKind::Buffer &&
        B.P.Slots[I].Buffer == Buf)
      Sharing.insert(static_cast<int>(I));
  if (Sharing.empty())
    return true;
  std::unordered_set<int> Known;
  for (const auto &[W, WS] : SlotOf) {
    if (!Sharing.count(WS))
      continue;
    Known.insert(WS);
    if (isOutput(W))
      return false;
    for (const ir::Use &U : W->uses())
      if (Alive(U.User))
        return false;
  }
  return Known.size() == Sharing.size(); // A slot of no value: keep it.
}

int LowerContext::defineBuffer(const ir::Value *V,
                               const dnnl::memory::desc &MD) {
  auto It = PendingTypes.find(V);
  NNG_CHECK(It != PendingTypes.end(), "internal: no type for %", V->name());
  int S = B.newBuffer(It->second.first, It->second.second, MD, V->name(), V);
  SlotOf[V] = S;
  return S;
}

namespace {

// --- Fallback: the node kernel, writing into the arena ----------------------

class NodeStep final : public Step {
public:
  NodeStep(const ir::Node &N, NodeKernel K) : N(N), K(std::move(K)) {}
  std::vector<int> In; ///< Slot per input, -1 when absent.
  std::vector<int> Out;
  std::vector<ir::TensorType> OutTypes;

  void bind(Program &P) override {
    RunBound.clear();
    C = std::make_unique<KernelContext>(KernelContext{N, {}, OutTypes, {}, {}});
    C->Inputs.resize(In.size());
    for (size_t I = 0; I < In.size(); ++I) {
      if (In[I] < 0)
        continue;
      if (P.runBound(In[I]))
        RunBound.push_back(I);
      else
        C->Inputs[I] = P.tensorOf(In[I]);
    }
    RunBoundOut.clear();
    for (size_t I = 0; I < Out.size(); ++I) {
      bool Later = P.runBound(Out[I]); // An output written in place.
      C->Preset.push_back(Later ? Tensor() : P.tensorOf(Out[I]));
      if (Later)
        RunBoundOut.push_back(I);
    }
  }

  std::string kind() const override { return "node kernel"; }

  /// Node kernels take their shapes from their operands at each run.
  bool fits(const Program &, const SlotShapes &) const override {
    return true;
  }
  bool adopt(Program &P) override {
    for (size_t I = 0; I < Out.size(); ++I)
      OutTypes[I] = ir::TensorType(P.Slots[Out[I]].Type, P.Slots[Out[I]].S);
    return true;
  }

  void run(Program &P) override {
    for (size_t I : RunBound)
      C->Inputs[I] = P.tensorOf(In[I]);
    for (size_t I : RunBoundOut)
      C->Preset[I] = P.tensorOf(Out[I]);
    C->Outputs.assign(Out.size(), Tensor());
    try {
      K(*C);
    } catch (Error &E) {
      if (E.context().empty())
        E.addContext("in " + N.describe());
      throw;
    }
    for (size_t I = 0; I < Out.size(); ++I) {
      Tensor &Got = C->Outputs[I];
      const Tensor &Want = C->Preset[I];
      if (!Got.defined())
        fail(ErrorKind::Internal, "cpu kernel of ", N.describe(),
             " produced no output ", I);
      if (Got.shape() != Want.shape() || Got.dtype() != Want.dtype())
        fail(ErrorKind::Internal, "cpu kernel of ", N.describe(), " produced ",
             dtypeName(Got.dtype()), Got.shape().toString(), " for output ",
             I, " but shape inference gives ", dtypeName(Want.dtype()),
             Want.shape().toString());
      // Kernels that allocate (or return views) wrote elsewhere.
      if (static_cast<const Tensor &>(Got).rawData() !=
              static_cast<const Tensor &>(Want).rawData() ||
          !Got.isContiguous())
        const_cast<Tensor &>(Want).copyFrom(Got);
    }
    for (size_t I : RunBound)
      C->Inputs[I] = Tensor();
    for (size_t I : RunBoundOut)
      C->Preset[I] = Tensor();
    C->Outputs.assign(Out.size(), Tensor());
  }

private:
  const ir::Node &N;
  NodeKernel K;
  std::unique_ptr<KernelContext> C;
  std::vector<size_t> RunBound;    ///< Inputs bound at each run.
  std::vector<size_t> RunBoundOut; ///< Outputs written in place.
};

void lowerFallback(LowerContext &C, const ir::Node &N,
                   const std::vector<ir::TensorType> &OutTypes) {
  // A transpose left for a product to read in place, or a view left for
  // an attention loop, is made real first.
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (N.hasInput(I) && C.slotOfValue(N.input(I)).TransposeOf >= 0)
      materializeTranspose(C, N.input(I));
  materializeInPlaceInputs(C, N);
  auto St = std::make_unique<NodeStep>(N, nodeKernelFor(N));
  St->Desc = C.describe(N);
  std::vector<int> In;
  for (size_t I = 0; I < N.numInputs(); ++I)
    In.push_back(N.hasInput(I) ? C.B.plainOf(C.slotOf(N.input(I))) : -1);
  for (int S : In)
    if (S >= 0)
      C.B.reads(S);
  for (size_t I = 0; I < N.numOutputs(); ++I) {
    int S = C.defineBuffer(N.output(I));
    C.B.writes(S);
    St->Out.push_back(S);
  }
  St->In = std::move(In);
  St->OutTypes = OutTypes;
  C.B.emit(std::move(St));
  C.program().Stats.Fallbacks.push_back(C.describe(N));
}

// --- Folding -----------------------------------------------------------------

/// Nodes never computed at compile time: they call out or draw random
/// numbers (the op table's traits).
bool isFoldable(const ir::Node &N) { return N.isPure(); }

/// Folded outputs larger than this stay run-time values.
constexpr int64_t MaxFoldBytes = int64_t(16) << 20;

/// A tensor with shape S and dtype T whose bytes are never read (Shape and
/// Size look only at the shape): one element, zero strides.
Tensor shapeOnly(const Shape &S, DType T) {
  std::vector<int64_t> Zero(S.rank(), 0);
  return Tensor(Storage::allocate(16), S, Strides(Zero), 0, T);
}

} // namespace

// --- compileProgram ----------------------------------------------------------

std::optional<NodeSpecialization>
specializeNode(const ir::Node &N,
               const std::vector<const ir::TensorType *> &InTypes,
               const std::vector<const Tensor *> &Values) {
  size_t NumIn = N.numInputs();
  bool AllConst = true;
  for (size_t I = 0; I < NumIn; ++I)
    if (InTypes[I])
      AllConst = AllConst && Values[I];
  // The node is described only when it fails: a compile or a reshape
  // specializes hundreds of nodes.
  ir::InferContext IC(N.schema(), N.attrs(), InTypes, Values, N.numOutputs(),
                      std::string());
  try {
    N.schema().Infer(IC);
  } catch (Error &E) {
    E.addContext("in " + N.describe());
    throw;
  }
  NodeSpecialization R;
  R.OutTypes = IC.outputTypes();
  bool Static = true;
  int64_t OutBytes = 0;
  for (const ir::TensorType &T : R.OutTypes) {
    std::optional<int64_t> Numel = T.staticNumel();
    if (!Numel) {
      Static = false;
      break;
    }
    OutBytes += *Numel * static_cast<int64_t>(dtypeSize(T.dtype()));
  }
  // ModuleCall's types come from outside: the declared ones.
  if (!Static && N.op() == ir::OpKind::ModuleCall) {
    Static = true;
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      R.OutTypes[I] = N.output(I)->type();
      Static = Static && R.OutTypes[I].isStatic();
    }
  }
  if (!Static)
    return std::nullopt; // A data-dependent shape: node by node.

  bool ShapeOnly = N.op() == ir::OpKind::Shape || N.op() == ir::OpKind::Size;
  if ((AllConst || ShapeOnly) && isFoldable(N) && OutBytes <= MaxFoldBytes) {
    KernelContext K{N, {}, R.OutTypes, {}, {}};
    K.Inputs.resize(NumIn);
    for (size_t I = 0; I < NumIn; ++I)
      if (InTypes[I])
        K.Inputs[I] = Values[I] ? *Values[I]
                                : shapeOnly(InTypes[I]->staticShape().value(),
                                            InTypes[I]->dtype());
    K.Outputs.resize(N.numOutputs());
    reference::getKernel(N.op())(K);
    R.Folded = std::move(K.Outputs);
  }
  return R;
}

bool lowerNode(LowerContext &C, const ir::Node &N) {
  Program &P = C.program();
  if (N.op() == ir::OpKind::If)
    if (std::optional<bool> Chosen = lowerChosenBranch(C, N))
      return *Chosen;
  size_t NumIn = N.numInputs();
  std::vector<ir::TensorType> InTypes(NumIn);
  std::vector<const ir::TensorType *> TypePtrs(NumIn, nullptr);
  std::vector<const Tensor *> Values(NumIn, nullptr);
  for (size_t I = 0; I < NumIn; ++I) {
    if (!N.hasInput(I))
      continue;
    const ValueSlot &S = C.slotOfValue(N.input(I));
    InTypes[I] = ir::TensorType(S.Type, S.S);
    TypePtrs[I] = &InTypes[I];
    if (S.Kind == SlotKind::Constant)
      Values[I] = &S.Const;
  }
  std::optional<NodeSpecialization> Sp = specializeNode(N, TypePtrs, Values);
  if (!Sp)
    return false;
  std::vector<ir::TensorType> &OutTypes = Sp->OutTypes;
  if (!Sp->Folded.empty()) {
    for (size_t I = 0; I < N.numOutputs(); ++I)
      C.SlotOf[N.output(I)] = C.B.newConstant(
          std::move(Sp->Folded[I]), N.output(I)->name(), N.output(I));
    ++P.Stats.FoldedNodes;
    return true;
  }

  C.PendingTypes.clear();
  for (size_t I = 0; I < N.numOutputs(); ++I)
    C.PendingTypes[N.output(I)] = {OutTypes[I].dtype(),
                                   *OutTypes[I].staticShape()};
  LowerFn F = lowerFnFor(N.op());
  if (F != lowerCopy && F != lowerAlias && F != lowerAttention)
    materializeInPlaceInputs(C, N); // Only those read views in place.
  bool Lowered = false;
  if (F) {
    try {
      Lowered = F(C, N);
    } catch (const dnnl::error &) {
      Lowered = false; // Unimplemented configuration: the node kernel.
    }
  }
  if (!Lowered)
    lowerFallback(C, N, OutTypes);
  return true;
}

namespace {

/// Times the stages of one compile into Stats.Stages, in order.
class StageClock {
public:
  explicit StageClock(ProgramStats &S) : Stats(S) {}
  /// Runs F as stage Name; F returns what it decided, in words.
  template <typename Fn> void run(const char *Name, Fn &&F) {
    auto Start = std::chrono::steady_clock::now();
    std::string Decided = F();
    double Ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - Start)
                    .count();
    Stats.Stages.push_back({Name, Ms, std::move(Decided)});
  }

private:
  ProgramStats &Stats;
};

/// Stage "bind": the graph's inputs (at the given dtypes and shapes) and
/// initializers become slots.
std::string bindValues(LowerContext &C, const std::vector<DType> &Types,
                       const std::vector<Shape> &Shapes) {
  const ir::Graph &G = C.G;
  Program &P = C.program();
  for (size_t I = 0; I < G.inputs().size(); ++I) {
    const ir::Value *V = G.inputs()[I];
    int S = C.B.newInput(I, Types[I], Shapes[I], V->name(), V);
    C.SlotOf[V] = S;
    P.InputSlots.push_back(S);
  }
  for (const ir::Value *V : G.initializers()) {
    if (!V->data().defined())
      fail(ErrorKind::InvalidArgument, "initializer %", V->name(),
           " has no data (it was elided when printed as text): load the "
           "weights before running");
    C.SlotOf[V] = C.B.newConstant(V->data(), V->name(), V);
  }
  numberNodes(C, G);
  return std::to_string(G.inputs().size()) + " inputs, " +
         std::to_string(G.initializers().size()) + " constants";
}

/// Stage "plan": the decisions the walk needs before it starts. Layouts:
/// convolutions write oneDNN's blocked layout when a 3x3 convolution may run
/// as Winograd's algorithm (its kernels take no other); residual joins: the
/// QDQ joins a QLinearConv may take in (planQLinearJoins), whose residual's
/// DequantizeLinear waits for the convolution.
std::string planStage(LowerContext &C) {
  std::string Blocked;
  for (const auto &NP : C.G.nodes())
    if (C.Speculate && winogradCandidate(C, *NP)) {
      C.PreferBlocked = true;
      Blocked = NP->output(0)->name();
      break;
    }
  planQLinearJoins(C);
  std::string Out = Blocked.empty()
                        ? "layouts oneDNN's choice"
                        : "layouts blocked (Winograd candidate %" + Blocked +
                              ")";
  if (!C.Joins.empty())
    Out += ", " + std::to_string(C.Joins.size()) + " residual join(s)";
  return Out;
}

/// Stage "emit": one walk over the nodes in order, each specialised and
/// folded, or lowered (with the nodes its lowering fuses), or a fallback.
/// False when a shape is only known at run time.
bool emitSteps(LowerContext &C) {
  std::vector<const ir::Node *> Waiting;
  for (const auto &NP : C.G.nodes()) {
    const ir::Node &N = *NP;
    if (!C.Done.count(&N) && !C.Deferred.count(&N) && !lowerNode(C, N))
      return false;
    // Nodes deferred until N, which did not fuse them: now (before any of
    // their readers, which come after N).
    Waiting.clear();
    for (const auto &[D, After] : C.Deferred)
      if (After == &N)
        Waiting.push_back(D);
    std::sort(Waiting.begin(), Waiting.end(),
              [&](const ir::Node *A, const ir::Node *B) {
                return C.Order.at(A) < C.Order.at(B);
              });
    for (const ir::Node *D : Waiting) {
      C.Deferred.erase(D);
      if (!C.Done.count(D) && !lowerNode(C, *D))
        return false;
    }
  }
  return true;
}

/// Stage "memory": the graph's outputs are marked (written in place where
/// they can be) and the arena laid out over the buffers' lifetimes.
std::string planMemory(LowerContext &C) {
  Program &P = C.program();
  for (const ir::Value *V : C.G.outputs()) {
    int S = C.B.plainOf(C.slotOf(V));
    C.B.readAtEnd(S);
    C.B.markOutput(S, P.OutputSlots.size());
    P.OutputSlots.push_back(S);
  }
  C.B.finalize(C.Shared.Arena);
  return "arena " + std::to_string(P.Stats.ArenaBytes) + " bytes";
}

} // namespace

std::unique_ptr<Program> compileProgram(const ir::Graph &G,
                                        const std::vector<DType> &Types,
                                        const std::vector<Shape> &Shapes,
                                        ProgramShared &Shared,
                                        bool Speculate) {
  auto P = std::make_unique<Program>();
  LowerContext C(G, *P, Shared);
  C.Speculate = Speculate;
  StageClock Clock(P->Stats);
  Clock.run("bind", [&] { return bindValues(C, Types, Shapes); });
  Clock.run("plan", [&] { return planStage(C); });
  bool Emitted = false;
  Clock.run("emit", [&] {
    Emitted = emitSteps(C);
    std::string Out = std::to_string(P->Steps.size()) + " steps";
    if (P->ChosenBranches)
      Out += ", " + std::to_string(P->ChosenBranches) +
             " If branch(es) chosen at these shapes";
    return Out;
  });
  if (!Emitted)
    return nullptr;
  P->InputTypes = Types;
  P->InputShapes = Shapes;
  Clock.run("memory", [&] { return planMemory(C); });
  return P;
}

// --- Primitive steps -----------------------------------------------------------

namespace {

/// emitPrimitive's step, with PD's scratchpad and weights layout when PD is
/// given; without it, a step for an own loop (PrimitiveStep::Own).
PrimitiveStep &emitPrimitiveStep(LowerContext &C, const ir::Node &N,
                                 dnnl::primitive Prim,
                                 const dnnl::primitive_desc_base *PD,
                                 std::vector<PrimitiveArg> Args,
                                 const std::vector<int> &Reads, int Out,
                                 std::vector<WeightToPack> Ws) {
  auto St = std::make_unique<PrimitiveStep>();
  St->Desc = C.describe(N);
  St->Prim = std::move(Prim);
  for (const PrimitiveArg &A : Args)
    St->arg(A.Arg, A.Slot, A.MD);
  for (WeightToPack &W : Ws) {
    dnnl::memory::desc Packed = W.PackedMD ? W.PackedMD : PD->weights_desc();
    St->Weights.emplace_back(W.Arg, C.Shared.Packs.get(W.T, W.UserMD, Packed));
    C.program().Stats.WeightBytes += static_cast<int64_t>(Packed.get_size());
  }
  for (int R : Reads)
    C.B.reads(R);
  size_t ScratchBytes = PD ? PD->scratchpad_desc().get_size() : 0;
  if (ScratchBytes) {
    St->Scratch = C.B.newBuffer(DType::U8, Shape({int64_t(ScratchBytes)}));
    St->ScratchMD = PD->scratchpad_desc();
    C.B.writes(St->Scratch);
  }
  C.B.writes(Out);
  PrimitiveStep &Made = *St;
  C.B.emit(std::move(St));
  ++(PD ? C.program().Stats.DnnlSteps : C.program().Stats.OwnKernels);
  return Made;
}

} // namespace

void emitPrimitive(LowerContext &C, const ir::Node &N, dnnl::primitive Prim,
                   const dnnl::primitive_desc_base &PD,
                   std::vector<PrimitiveArg> Args, const std::vector<int> &Reads,
                   int Out, std::vector<WeightToPack> Ws) {
  emitPrimitiveStep(C, N, std::move(Prim), &PD, std::move(Args), Reads, Out,
                    std::move(Ws));
}

PrimitiveStep &emitOwnLoopStep(LowerContext &C, const ir::Node &N,
                               std::vector<PrimitiveArg> Args,
                               const std::vector<int> &Reads, int Out,
                               std::vector<WeightToPack> Ws) {
  return emitPrimitiveStep(C, N, dnnl::primitive(), nullptr, std::move(Args),
                           Reads, Out, std::move(Ws));
}

// --- Reshape-like nodes ---------------------------------------------------------

bool lowerAlias(LowerContext &C, const ir::Node &N) {
  if (N.op() == ir::OpKind::Dropout && N.numOutputs() > 1 &&
      C.needed(N.output(1)))
    return false; // The mask is a second output: the kernel makes it.
  if (N.op() == ir::OpKind::Dropout &&
      (N.hasInput(2) && !(C.constantOf(N.input(2)) &&
                          C.constantOf(N.input(2))->getFlat(0) == 0)))
    return false; // Training mode, or not known to be off.
  if (lowerInPlaceView(C, N))
    return true;
  materializeInPlaceInputs(C, N);
  int In = C.slotOf(N.input(0));
  const auto &[T, S] = C.PendingTypes.at(N.output(0));
  if (C.slot(In).Kind == SlotKind::Input) {
    // The caller's input: its bytes copied into the arena by an own loop
    // (a fallback step's node kernel took 1.9 us for Silero's 2 KiB).
    if (T != C.slot(In).Type || T == DType::String)
      return false;
    int Out = C.defineBuffer(N.output(0));
    emitLoop(
        C, {In}, Out, C.describe(N) + " (a copy of the input)",
        [In, Out](Program &P) {
          const ValueSlot &Y = P.Slots[Out];
          std::memcpy(P.bufferData(Out), P.dataOf(In),
                      static_cast<size_t>(Y.S.numel()) * dtypeSize(Y.Type));
        },
        [In, Out](const Program &, const SlotShapes &New) {
          return New[In].numel() == New[Out].numel();
        });
    return true;
  }
  if (C.slot(In).Kind != SlotKind::Buffer)
    return false; // Constants: a copy into the arena.
  In = C.B.plainOf(In);
  if (T != C.slot(In).Type)
    return false;
  int Out = C.B.aliasOf(In, S, N.output(0)->name(), N.output(0));
  C.SlotOf[N.output(0)] = Out;
  // The alias shares the buffer: its readers extend the buffer's life.
  ++C.program().Stats.AliasNodes;
  return true;
}

} // namespace nng::backends::cpu
