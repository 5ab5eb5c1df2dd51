//===- Reshape.cpp - A compiled Program at new input shapes ---------------===//
//
// Program::reshape serves a new input shape without compiling: the graph's
// types are inferred again at the new shapes (folding what compile folds,
// through specializeNode), every slot takes its value's new shape, and the
// steps whose slots changed say whether they serve the new shapes
// (Step::fits: own loops that read their extents at run time, primitives
// made with run-time dims or made again from the executable's cache, node
// kernels) and adopt them; then the arena is laid out again and the steps
// bound to it. Checks come first and change nothing; a Program is refused
// (and a new one compiled) when a step was made for fixed shapes, a layout
// is blocked, a constant computed from a shape feeds a step, or an If's
// branch was chosen at compile time.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include <cstring>
#include <deque>
#include <unordered_set>

namespace nng::backends::cpu {

namespace {

/// True when T is static with shape S (T.staticShape() == S, without
/// making a Shape).
bool hasShape(const ir::TensorType &T, const Shape &S) {
  if (!T.hasRank() || static_cast<size_t>(T.rank()) != S.rank())
    return false;
  for (size_t I = 0; I < S.rank(); ++I)
    if (!T.dim(I).isStatic() || T.dim(I).value() != S[I])
      return false;
  return true;
}

/// True when A and B hold the same dtype, shape and bytes.
bool sameConstant(const Tensor &A, const Tensor &B) {
  if (A.dtype() != B.dtype() || A.shape() != B.shape())
    return false;
  if (A.storage() == B.storage() && A.offset() == B.offset() &&
      A.strides() == B.strides())
    return true;
  if (A.dtype() == DType::String)
    return A.toStrings() == B.toStrings();
  const Tensor CA = A.isContiguous() ? A : A.contiguous();
  const Tensor CB = B.isContiguous() ? B : B.contiguous();
  return std::memcmp(CA.rawData(), CB.rawData(), CA.nbytes()) == 0;
}

} // namespace

/// The graph as Program::reshape walks it: a dense index per value (the
/// graph's inputs, its initializers, the nodes' outputs), each node's
/// operands as indices (-1: absent, -2: not the graph's), the first slot
/// of each value (its twins and reorders share its shape) and the value of
/// each slot; and
/// the type (and folded value) at the program's shapes of each value that
/// has no slot (a product's result that a fused step consumes), so a node
/// whose inputs did not change is not inferred again for it.
struct ReshapeIndex {
  struct NodeRefs {
    const ir::Node *N;
    std::vector<int> In, Out;
  };
  std::vector<const ir::Value *> Values;
  std::vector<int> InputIndex;  ///< Per graph input.
  std::vector<int> SlotOf;      ///< Per value; -1: none.
  std::vector<int> ValueOfSlot; ///< Per slot; -1: scratch, or not a value.
  std::vector<NodeRefs> Nodes;
  size_t SlotCount = 0;
  /// Per value without a slot, once a reshape inferred it.
  std::vector<char> Known;
  std::vector<ir::TensorType> LastType;
  std::vector<Tensor> LastValue; ///< Undefined: not folded.

  ReshapeIndex(const ir::Graph &G, const std::deque<ValueSlot> &Slots)
      : SlotCount(Slots.size()) {
    std::unordered_map<const ir::Value *, int> Of;
    auto Add = [&](const ir::Value *V) {
      Of.emplace(V, static_cast<int>(Values.size()));
      Values.push_back(V);
    };
    for (const ir::Value *V : G.inputs()) {
      InputIndex.push_back(static_cast<int>(Values.size()));
      Add(V);
    }
    for (const ir::Value *V : G.initializers())
      Add(V);
    for (const auto &N : G.nodes())
      for (const ir::Value *V : N->outputs())
        Add(V);
    for (const auto &N : G.nodes()) {
      NodeRefs R{N.get(), {}, {}};
      for (size_t I = 0; I < N->numInputs(); ++I) {
        auto It = N->hasInput(I) ? Of.find(N->input(I)) : Of.end();
        R.In.push_back(!N->hasInput(I) ? -1 : It == Of.end() ? -2 : It->second);
      }
      for (const ir::Value *V : N->outputs())
        R.Out.push_back(Of.at(V));
      Nodes.push_back(std::move(R));
    }
    SlotOf.assign(Values.size(), -1);
    ValueOfSlot.assign(Slots.size(), -1);
    Known.assign(Values.size(), 0);
    LastType.resize(Values.size());
    LastValue.resize(Values.size());
    for (size_t S = 0; S < Slots.size(); ++S) {
      if (!Slots[S].Of)
        continue;
      auto It = Of.find(Slots[S].Of);
      if (It == Of.end())
        continue;
      ValueOfSlot[S] = It->second;
      if (SlotOf[It->second] < 0)
        SlotOf[It->second] = static_cast<int>(S);
    }
  }
};

std::string Program::reshape(const ir::Graph &G, ProgramShared &Shared,
                             const std::vector<Shape> &Shapes, bool &Broken) {
  Broken = false;
  if (Shapes.size() != InputShapes.size())
    return "the number of inputs changed";
  for (size_t I = 0; I < Shapes.size(); ++I)
    if (Shapes[I].rank() != InputShapes[I].rank())
      return "the rank of input %" + G.inputs()[I]->name() + " changed";
  if (ChosenBranches)
    return "an If's branch was chosen from the shapes of its compile";

  // The graph as dense indices, made once: per reshape, vectors instead of
  // maps keyed by values.
  if (!ReshapeIdx || ReshapeIdx->SlotCount != Slots.size())
    ReshapeIdx = std::make_shared<ReshapeIndex>(G, Slots);
  ReshapeIndex &X = *ReshapeIdx;
  const size_t NV = X.Values.size();

  // The graph's types (and folded values) at the new shapes. A node none
  // of whose inputs changed keeps what its slots say (weights transformed
  // at compile time are not computed again); the others are inferred (and
  // folded) again, and their outputs changed unless their slots agree.
  // Types and values of unchanged values are read from their slots (or the
  // initializers) only when a node inferred again reads them.
  std::vector<ir::TensorType> Types(NV);
  std::vector<char> Typed(NV, 0), Dirty(NV, 0);
  std::vector<const Tensor *> Val(NV, nullptr);
  std::deque<Tensor> Folded; // Val points into it (stable).
  for (size_t I = 0; I < Shapes.size(); ++I) {
    int V = X.InputIndex[I];
    Types[V] = ir::TensorType(InputTypes[I], Shapes[I]);
    Typed[V] = 1;
    Dirty[V] = Shapes[I] != InputShapes[I];
  }
  auto TypeOf = [&](int V) -> const ir::TensorType * {
    if (!Typed[V]) {
      if (const ir::Value *IV = X.Values[V]; IV->isInitializer())
        Types[V] = ir::TensorType(IV->data().dtype(), IV->data().shape());
      else if (X.SlotOf[V] >= 0)
        Types[V] =
            ir::TensorType(Slots[X.SlotOf[V]].Type, Slots[X.SlotOf[V]].S);
      else if (X.Known[V])
        return &X.LastType[V]; // Not changed before the loop ends.
      else
        return nullptr;
      Typed[V] = 1;
    }
    return &Types[V];
  };
  std::vector<char> Specialized(NV, 0);
  std::vector<const ir::TensorType *> InTypes;
  std::vector<const Tensor *> InValues;
  for (const ReshapeIndex::NodeRefs &R : X.Nodes) {
    const ir::Node &N = *R.N;
    bool Clean = true;
    for (int V : R.In)
      Clean = Clean && (V == -1 || (V >= 0 && !Dirty[V]));
    if (Clean) {
      bool AllKnown = true;
      for (int V : R.Out)
        AllKnown = AllKnown && (X.SlotOf[V] >= 0 || X.Known[V]);
      if (AllKnown)
        continue;
    }
    InTypes.assign(N.numInputs(), nullptr);
    InValues.assign(N.numInputs(), nullptr);
    for (size_t I = 0; I < N.numInputs(); ++I) {
      int V = R.In[I];
      if (V == -1)
        continue;
      const ir::TensorType *T = V < 0 ? nullptr : TypeOf(V);
      if (!T)
        return "internal: %" + N.input(I)->name() + " has no type";
      InTypes[I] = T;
      if (Val[V])
        InValues[I] = Val[V];
      else if (const ir::Value *IV = X.Values[V]; IV->isInitializer())
        InValues[I] = &IV->data();
      else if (!Specialized[V] && X.SlotOf[V] >= 0 &&
               Slots[X.SlotOf[V]].Kind == SlotKind::Constant)
        InValues[I] = &Slots[X.SlotOf[V]].Const;
      else if (!Specialized[V] && X.SlotOf[V] < 0 && X.Known[V] &&
               X.LastValue[V].defined())
        InValues[I] = &X.LastValue[V];
    }
    std::optional<NodeSpecialization> Sp;
    try {
      Sp = specializeNode(N, InTypes, InValues);
    } catch (const Error &E) {
      return std::string("at these shapes ") + E.what();
    }
    if (!Sp)
      return "a shape depends on the data at " + Shared.describe(N);
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      int Out = R.Out[I];
      // Unchanged: its slot holds the same kind of value with the same
      // type and shape (and, folded, the same values).
      const ValueSlot *V = X.SlotOf[Out] >= 0 ? &Slots[X.SlotOf[Out]] : nullptr;
      bool IsFolded = !Sp->Folded.empty();
      bool Same = V && V->Type == Sp->OutTypes[I].dtype() &&
                  hasShape(Sp->OutTypes[I], V->S) &&
                  (V->Kind == SlotKind::Constant) == IsFolded &&
                  (!IsFolded || sameConstant(Sp->Folded[I], V->Const));
      if (!V && X.Known[Out]) { // No slot: as the last reshape left it.
        const Tensor &Last = X.LastValue[Out];
        Same = X.LastType[Out] == Sp->OutTypes[I] &&
               Last.defined() == IsFolded &&
               (!IsFolded || sameConstant(Sp->Folded[I], Last));
      }
      Types[Out] = std::move(Sp->OutTypes[I]);
      Typed[Out] = 1;
      Specialized[Out] = 1;
      if (IsFolded) {
        Folded.push_back(std::move(Sp->Folded[I]));
        Val[Out] = &Folded.back();
      }
      Dirty[Out] = !Same;
    }
  }

  // Every slot's new shape, and what changed (values whose type or value
  // did: the others' slots stay). Nothing changes yet.
  SlotShapes New(Slots);
  std::vector<char> Changed(Slots.size(), 0); // Its shape.
  std::vector<char> Rebound(Slots.size(), 0); // Its bytes or their place.
  std::vector<std::pair<int, Tensor>> NewConsts;
  for (size_t S = 0; S < Slots.size(); ++S) {
    const ValueSlot &V = Slots[S];
    int Vi = X.ValueOfSlot[S];
    if (Vi < 0 || !Dirty[Vi])
      continue; // Scratch, a constant a lowering made, or unchanged.
    const ir::TensorType &T = Types[Vi];
    if (V.Kind == SlotKind::Constant) {
      if (!Val[Vi])
        return "%" + V.Name + " was computed at compile time but is not now";
      // A value computed from the input shapes (a Reshape's target, a
      // position index): fine unless a lowering used its values (then they
      // are in a step: packed, a bound, a view's geometry); steps read the
      // others at run time.
      if (V.Baked)
        return "%" + V.Name +
               ", computed from the input shapes, was used by a lowering";
      NewConsts.emplace_back(static_cast<int>(S), *Val[Vi]);
      Rebound[S] = 1;
      if (Val[Vi]->shape() != V.S) {
        New.set(static_cast<int>(S), Val[Vi]->shape());
        Changed[S] = 1;
      }
      continue;
    }
    if (T.dtype() != V.Type)
      return "internal: %" + V.Name + " changed dtype";
    if (!T.isStatic() || hasShape(T, V.S))
      continue;
    std::optional<Shape> Sh = T.staticShape();
    if (V.Blocked || (V.Type != DType::F32 && V.MD))
      return "%" + V.Name + " is in a blocked layout";
    New.set(static_cast<int>(S), std::move(*Sh));
    Changed[S] = Rebound[S] = 1;
  }
  // Views kept as aliases (size-1 axes moved) must still be their bytes.
  for (size_t S = 0; S < Slots.size(); ++S)
    if (Changed[S] && Slots[S].ViewDense &&
        !(*Slots[S].ViewDense)(New[Slots[S].ViewOf]))
      return "%" + Slots[S].Name + " is no longer a view of its input's bytes";
  std::vector<Step *> Affected;
  for (size_t I = 0; I < Steps.size(); ++I) {
    Step &St = *Steps[I];
    bool Touched = false;
    for (const std::vector<int> *L : {&St.Reads, &St.Writes})
      for (int S : *L)
        Touched = Touched || Changed[S];
    if (!Touched)
      continue;
    if (!St.fits(*this, New))
      return "step #" + std::to_string(I) + " (" + St.Desc +
             ") was made for fixed shapes";
    Affected.push_back(&St);
  }

  // Apply: the slots, the steps, the arena; and what the next reshape
  // knows of the values without slots.
  for (size_t V = 0; V < NV; ++V)
    if (Specialized[V] && X.SlotOf[V] < 0) {
      X.Known[V] = 1;
      X.LastType[V] = Types[V];
      X.LastValue[V] = Val[V] ? *Val[V] : Tensor();
    }
  bool Fits = true; // Every buffer within what the plan reserved.
  for (size_t S = 0; S < Slots.size(); ++S) {
    if (!Changed[S])
      continue;
    ValueSlot &V = Slots[S];
    V.S = New[static_cast<int>(S)];
    if (V.Type == DType::F32)
      V.MD = plainF32(V.S);
    if (V.Kind != SlotKind::Buffer || Buffers[V.Buffer].Owner != int(S))
      continue;
    BufferSlot &B = Buffers[V.Buffer];
    B.Bytes = V.MD ? V.MD.get_size()
                   : static_cast<size_t>(V.S.numel()) * dtypeSize(V.Type);
    B.Varies = true;
    Fits = Fits && (B.External >= 0 || B.Bytes <= B.Capacity);
  }
  for (auto &[S, T] : NewConsts)
    Slots[S].Const = T.isContiguous() ? T : T.contiguous();
  InputShapes = Shapes;
  std::vector<size_t> BytesBefore(Buffers.size());
  for (size_t B = 0; B < Buffers.size(); ++B)
    BytesBefore[B] = Buffers[B].Bytes;
  for (Step *St : Affected)
    if (!St->adopt(*this)) {
      Broken = true;
      return "step (" + St->Desc + ") could not adapt";
    }
  for (size_t B = 0; B < Buffers.size(); ++B)
    if (Buffers[B].Bytes != BytesBefore[B]) { // A primitive's scratchpad.
      Buffers[B].Varies = true;
      Fits = Fits && Buffers[B].Bytes <= Buffers[B].Capacity;
      Rebound[Buffers[B].Owner] = 1;
    }
  if (!Fits) {
    // Laid out again, with headroom for the buffers that vary: a cache
    // that grows by a position per step moves them rarely.
    layOutArena();
    Arena = nullptr; // Every step binds again.
    bindArena();
    return {};
  }
  // The plan holds: only the steps on changed slots bind again.
  bool Moved = ArenaOwner->Block != Arena;
  bindArena(); // All of them when the shared block moved.
  if (Moved)
    return {};
  for (auto &StP : Steps) {
    Step &St = *StP;
    bool Touched = false;
    for (const std::vector<int> *L : {&St.Reads, &St.Writes})
      for (int S : *L)
        Touched = Touched || Rebound[S];
    if (auto *PS = dynamic_cast<PrimitiveStep *>(&St))
      for (const PrimitiveArg &A : PS->Pending)
        Touched = Touched || Rebound[A.Slot];
    if (Touched)
      St.bind(*this);
  }
  return {};
}

} // namespace nng::backends::cpu
