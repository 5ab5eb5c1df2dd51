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
#include <unordered_set>

namespace nng::backends::cpu {

namespace {

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

  // The first slot of each value (twins and reorders share its shape).
  if (ValueSlots.empty())
    for (size_t S = 0; S < Slots.size(); ++S)
      if (Slots[S].Of)
        ValueSlots.emplace(Slots[S].Of, static_cast<int>(S));
  auto SlotFor = [&](const ir::Value *V) -> const ValueSlot * {
    auto It = ValueSlots.find(V);
    return It == ValueSlots.end() ? nullptr : &Slots[It->second];
  };

  // The graph's types (and folded values) at the new shapes. A node none
  // of whose inputs changed keeps what its slots say (weights transformed
  // at compile time are not computed again); the others are inferred (and
  // folded) again, and their outputs changed unless their slots agree.
  std::unordered_map<const ir::Value *, ir::TensorType> Types;
  std::unordered_map<const ir::Value *, Tensor> Values;
  std::unordered_set<const ir::Value *> Dirty;
  size_t Expected = G.numNodes() * 2 + G.initializers().size() + Shapes.size();
  Types.reserve(Expected);
  Values.reserve(G.initializers().size() + G.numNodes() / 2);
  Dirty.reserve(Expected);
  for (size_t I = 0; I < Shapes.size(); ++I) {
    Types[G.inputs()[I]] = ir::TensorType(InputTypes[I], Shapes[I]);
    if (Shapes[I] != InputShapes[I])
      Dirty.insert(G.inputs()[I]);
  }
  for (const ir::Value *V : G.initializers()) {
    Types[V] = ir::TensorType(V->data().dtype(), V->data().shape());
    Values[V] = V->data();
  }
  std::vector<ir::TensorType> InTypes;
  std::vector<const Tensor *> InValues;
  for (const auto &NP : G.nodes()) {
    const ir::Node &N = *NP;
    bool Clean = true;
    for (size_t I = 0; I < N.numInputs() && Clean; ++I)
      Clean = !N.hasInput(I) || !Dirty.count(N.input(I));
    if (Clean) {
      bool AllSlots = true;
      for (size_t I = 0; I < N.numOutputs() && AllSlots; ++I)
        AllSlots = SlotFor(N.output(I)) != nullptr;
      if (AllSlots) {
        for (size_t I = 0; I < N.numOutputs(); ++I) {
          const ValueSlot &V = *SlotFor(N.output(I));
          Types[N.output(I)] = ir::TensorType(V.Type, V.S);
          if (V.Kind == SlotKind::Constant)
            Values[N.output(I)] = V.Const;
        }
        continue;
      }
    }
    InTypes.assign(N.numInputs(), ir::TensorType());
    InValues.assign(N.numInputs(), nullptr);
    for (size_t I = 0; I < N.numInputs(); ++I) {
      if (!N.hasInput(I))
        continue;
      auto T = Types.find(N.input(I));
      if (T == Types.end())
        return "internal: %" + N.input(I)->name() + " has no type";
      InTypes[I] = T->second;
      auto V = Values.find(N.input(I));
      if (V != Values.end())
        InValues[I] = &V->second;
    }
    std::optional<NodeSpecialization> Sp;
    try {
      Sp = specializeNode(N, InTypes, InValues, Shared.describe(N));
    } catch (const Error &E) {
      return std::string("at these shapes ") + E.what();
    }
    if (!Sp)
      return "a shape depends on the data at " + Shared.describe(N);
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      const ir::Value *Out = N.output(I);
      Types[Out] = Sp->OutTypes[I];
      // Unchanged: its slot holds the same kind of value with the same
      // type and shape (and, folded, the same values).
      const ValueSlot *V = SlotFor(Out);
      bool Folded = !Sp->Folded.empty();
      bool Same = V && V->Type == Sp->OutTypes[I].dtype() &&
                  Sp->OutTypes[I].staticShape() == V->S &&
                  (V->Kind == SlotKind::Constant) == Folded &&
                  (!Folded || sameConstant(Sp->Folded[I], V->Const));
      if (Folded)
        Values[Out] = std::move(Sp->Folded[I]);
      if (!Same)
        Dirty.insert(Out);
    }
  }

  // Every slot's new shape, and what changed. Nothing changes yet.
  SlotShapes New(Slots);
  std::vector<char> Changed(Slots.size(), 0); // Its shape.
  std::vector<char> Rebound(Slots.size(), 0); // Its bytes or their place.
  std::vector<std::pair<int, Tensor>> NewConsts;
  for (size_t S = 0; S < Slots.size(); ++S) {
    const ValueSlot &V = Slots[S];
    if (!V.Of)
      continue; // Scratch, or a constant a lowering made: fixed.
    auto TypeIt = Types.find(V.Of);
    if (TypeIt == Types.end())
      return "internal: %" + V.Name + " has no type";
    const ir::TensorType &T = TypeIt->second;
    if (V.Kind == SlotKind::Constant) {
      auto It = Values.find(V.Of);
      if (It == Values.end())
        return "%" + V.Name + " was computed at compile time but is not now";
      if (sameConstant(It->second, V.Const))
        continue;
      // A value computed from the input shapes (a Reshape's target, a
      // position index): fine unless a lowering used its values (then they
      // are in a step: packed, a bound, a view's geometry); steps read the
      // others at run time.
      if (V.Baked)
        return "%" + V.Name +
               ", computed from the input shapes, was used by a lowering";
      NewConsts.emplace_back(static_cast<int>(S), It->second);
      Rebound[S] = 1;
      if (It->second.shape() != V.S) {
        New.set(static_cast<int>(S), It->second.shape());
        Changed[S] = 1;
      }
      continue;
    }
    if (T.dtype() != V.Type)
      return "internal: %" + V.Name + " changed dtype";
    std::optional<Shape> Sh = T.staticShape();
    if (!Sh || *Sh == V.S)
      continue;
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

  // Apply: the slots, the steps, the arena.
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
