//===- ReferenceBackend.cpp - The interpreter ----------------------------===//
//
// Runs a graph node by node: computes each node's output types from the
// concrete inputs with the op's inference function (remembered for nodes
// with regions, whose inference types a copy of them), calls the node's
// kernel, checks what it produced against the inferred types, and frees
// values after their last use. The loop (makeInterpreter) takes the kernel of
// each node from a chooser, so the CPU backend runs it with its own kernels.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "Interpreter.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace nng::backends {
namespace reference {

namespace {
constexpr KernelFn Kernels[] = {
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  &kernel##Enum,
#include "nngraph/ir/Ops.def"
};
} // namespace

KernelFn getKernel(ir::OpKind K) { return Kernels[static_cast<size_t>(K)]; }

Tensor &KernelContext::allocOutput(size_t I) {
  auto S = OutTypes.at(I).staticShape();
  if (!S)
    fail("output ", I, " has no static shape (", OutTypes[I].toString(),
         "); the kernel must give the shape");
  return allocOutput(I, *S, OutTypes[I].dtype());
}

Tensor &KernelContext::allocOutput(size_t I, const Shape &S, DType T) {
  if (Outputs.size() <= I)
    Outputs.resize(I + 1);
  if (I < Preset.size() && Preset[I].defined() && Preset[I].dtype() == T &&
      Preset[I].shape() == S) {
    std::memset(Preset[I].rawData(), 0, Preset[I].nbytes());
    Outputs[I] = Preset[I];
    return Outputs[I];
  }
  Outputs[I] = Tensor::empty(S, T);
  return Outputs[I];
}

void KernelContext::throwError(const std::string &Msg) const {
  Error E(ErrorKind::InvalidArgument, N.schema().qualifiedName() + ": " + Msg);
  E.addContext("in " + N.describe());
  throw E;
}

namespace {

/// The kernels compute their output shapes themselves; a disagreement with
/// the op's inference function is a bug in one of the two.
void checkOutput(std::string_view Backend, const ir::Node &N, size_t I,
                 const Tensor &T, const ir::TensorType &Inferred) {
  // An unranked type (f32[*] is also what an unset type looks like) says
  // too little to check.
  if (!Inferred.hasRank())
    return;
  bool Same = T.dtype() == Inferred.dtype() &&
              Inferred.rank() == static_cast<int64_t>(T.rank());
  if (auto S = Inferred.staticShape())
    Same = Same && *S == T.shape();
  if (!Same)
    fail(ErrorKind::Internal, Backend, " kernel of ", N.describe(),
         " produced ", dtypeName(T.dtype()), T.shape().toString(),
         " for output ", I, " but shape inference gives ", Inferred.toString());
}

class Interpreter final : public Executable {
public:
  Interpreter(std::unique_ptr<ir::Graph> G, const KernelChooser &Choose,
              std::string_view Name)
      : G(std::move(G)), Name(Name) {
    // Every value gets a slot in the run's environment (a vector, so a run
    // does no hashing); each node knows its operands' slots and which
    // slots die after it (their last use), so tensors are freed early.
    std::unordered_map<const ir::Value *, size_t> Slot;
    auto SlotOf = [&](const ir::Value *V) {
      return Slot.try_emplace(V, Slot.size()).first->second;
    };
    for (const ir::Value *V : this->G->inputs())
      InputSlots.push_back(SlotOf(V));
    for (const ir::Value *V : this->G->initializers())
      InitSlots.push_back(SlotOf(V));
    const auto &Nodes = this->G->nodes();
    std::unordered_map<const ir::Value *, size_t> LastUse;
    Steps.resize(Nodes.size());
    for (size_t I = 0; I < Nodes.size(); ++I) {
      Step &S = Steps[I];
      for (const ir::Value *V : Nodes[I]->inputs()) {
        S.In.push_back(V ? static_cast<int64_t>(SlotOf(V)) : -1);
        if (V)
          LastUse[V] = I;
      }
      for (const ir::Value *V : Nodes[I]->outputs())
        S.Out.push_back(SlotOf(V));
      S.Desc = Nodes[I]->describe();
      if (Nodes[I]->hasRegions())
        S.Memo = std::make_unique<InferMemo>();
    }
    for (const auto &[V, I] : LastUse)
      if (!this->G->isOutput(V) && V->producer())
        Steps[I].Dead.push_back(Slot.at(V));
    for (const ir::Value *V : this->G->outputs())
      OutputSlots.push_back(SlotOf(V));
    NumSlots = Slot.size();
    for (const auto &N : Nodes)
      NodeKernels.push_back(Choose(*N));
  }

  std::vector<Tensor>
  run(const std::vector<Tensor> &Inputs) override {
    checkInputs(*G, Inputs);
    std::vector<Tensor> Env(NumSlots);
    for (size_t I = 0; I < Inputs.size(); ++I)
      Env[InputSlots[I]] = Inputs[I];
    const auto &Inits = G->initializers();
    for (size_t I = 0; I < Inits.size(); ++I) {
      if (!Inits[I]->data().defined())
        fail(ErrorKind::InvalidArgument, "initializer %", Inits[I]->name(),
             " has no data (it was elided when printed as text): load the "
             "weights before running");
      Env[InitSlots[I]] = Inits[I]->data();
    }
    const auto &Nodes = G->nodes();
    std::vector<const ir::TensorType *> TypePtrs;
    std::vector<ir::TensorType> Types;
    std::vector<const Tensor *> ValPtrs;
    for (size_t Idx = 0; Idx < Nodes.size(); ++Idx) {
      const ir::Node &N = *Nodes[Idx];
      const Step &S = Steps[Idx];
      KernelContext Ctx{N, {}, {}, {}, {}};
      size_t NumIn = S.In.size();
      Ctx.Inputs.resize(NumIn);
      Types.assign(NumIn, ir::TensorType());
      TypePtrs.assign(NumIn, nullptr);
      ValPtrs.assign(NumIn, nullptr);
      for (size_t I = 0; I < NumIn; ++I) {
        if (S.In[I] < 0)
          continue;
        const Tensor &T = Env[S.In[I]];
        Ctx.Inputs[I] = T;
        if (!T.defined())
          continue;
        Types[I] = ir::TensorType(T.dtype(), T.shape());
        TypePtrs[I] = &Types[I];
        ValPtrs[I] = &Ctx.Inputs[I];
      }
      if (!S.Memo || !S.Memo->find(Types, Ctx.Inputs, Ctx.OutTypes)) {
        ir::InferContext IC(N.schema(), N.attrs(), TypePtrs, ValPtrs,
                            N.numOutputs(), S.Desc);
        N.schema().Infer(IC);
        Ctx.OutTypes = IC.outputTypes();
        if (S.Memo)
          S.Memo->add(Types, Ctx.Inputs, Ctx.OutTypes);
      }
      Ctx.Outputs.resize(N.numOutputs());
      try {
        NodeKernels[Idx](Ctx);
      } catch (Error &E) {
        // Errors from runtime helpers (shapes, views) do not name the node.
        if (E.context().empty())
          E.addContext("in " + S.Desc);
        throw;
      }
      for (size_t I = 0; I < N.numOutputs(); ++I) {
        if (!Ctx.Outputs[I].defined())
          fail(ErrorKind::Internal, Name, " kernel of ", S.Desc,
               " produced no output ", I);
        checkOutput(Name, N, I, Ctx.Outputs[I], Ctx.OutTypes[I]);
        Env[S.Out[I]] = std::move(Ctx.Outputs[I]);
      }
      for (size_t Dead : S.Dead)
        Env[Dead] = Tensor();
    }
    std::vector<Tensor> Outs;
    Outs.reserve(OutputSlots.size());
    for (size_t Sl : OutputSlots)
      Outs.push_back(Env[Sl]);
    return Outs;
  }

private:
  /// The output types a node with regions (If, Loop, Scan) was inferred to
  /// have, by its inputs' types and the values of its scalar inputs (the
  /// condition, the trip count: all its inference reads): inferring it
  /// types a copy of its regions, which costs more than a small branch's
  /// run (a streaming model's If on its sample rate, every chunk).
  class InferMemo {
  public:
    bool find(const std::vector<ir::TensorType> &In,
              const std::vector<Tensor> &Values,
              std::vector<ir::TensorType> &Out) const {
      std::lock_guard<std::mutex> Lock(Mu);
      for (const Entry &E : Entries)
        if (E.In == In && sameScalars(E.Scalars, Values)) {
          Out = E.Out;
          return true;
        }
      return false;
    }
    void add(const std::vector<ir::TensorType> &In,
             const std::vector<Tensor> &Values,
             const std::vector<ir::TensorType> &Out) {
      std::lock_guard<std::mutex> Lock(Mu);
      if (Entries.size() == MaxEntries)
        Entries.erase(Entries.begin());
      Entries.push_back({In, scalarsOf(Values), Out});
    }

  private:
    static constexpr size_t MaxEntries = 8;
    struct Entry {
      std::vector<ir::TensorType> In;
      std::vector<Tensor> Scalars; ///< Copies; undefined for the others.
      std::vector<ir::TensorType> Out;
    };
    static std::vector<Tensor> scalarsOf(const std::vector<Tensor> &Values) {
      std::vector<Tensor> S(Values.size());
      for (size_t I = 0; I < Values.size(); ++I)
        if (Values[I].defined() && Values[I].numel() == 1)
          S[I] = Values[I].contiguous().clone();
      return S;
    }
    static bool sameScalars(const std::vector<Tensor> &Kept,
                            const std::vector<Tensor> &Values) {
      for (size_t I = 0; I < Kept.size(); ++I) {
        if (!Kept[I].defined())
          continue;
        const Tensor V = Values[I].contiguous();
        if (V.dtype() != Kept[I].dtype() ||
            std::memcmp(V.rawData(), Kept[I].rawData(), V.nbytes()) != 0)
          return false;
      }
      return true;
    }
    mutable std::mutex Mu;
    std::vector<Entry> Entries;
  };

  /// One node's operands as environment slots.
  struct Step {
    std::vector<int64_t> In; ///< -1 for an absent optional input.
    std::vector<size_t> Out;
    std::vector<size_t> Dead; ///< Slots whose last use is this node.
    std::string Desc;         ///< N.describe(), for messages.
    std::unique_ptr<InferMemo> Memo; ///< Nodes with regions only.
  };
  std::unique_ptr<ir::Graph> G;
  std::string Name;
  std::vector<Step> Steps;
  std::vector<size_t> InputSlots, InitSlots, OutputSlots;
  size_t NumSlots = 0;
  std::vector<NodeKernel> NodeKernels; ///< One per node, in order.
};

class ReferenceBackend final : public Backend {
public:
  std::string_view name() const override { return "reference"; }
  bool supportsOp(const ir::Node &) const override { return true; }
  std::unique_ptr<Executable> compile(const ir::Graph &G) override {
    ir::verifyOrThrow(G);
    return makeInterpreter(
        G.clone(),
        [](const ir::Node &N) { return NodeKernel(getKernel(N.op())); },
        name());
  }
  /// -O2 forms fused regions here too (their bodies run on the
  /// interpreter), so the oracle runs the graph the cpu backend runs.
  std::vector<std::string> pipelinePasses(int Level) const override {
    if (Level >= 2)
      return {"form-fused-regions"};
    return {};
  }
};

} // namespace

std::unique_ptr<Executable> makeInterpreter(std::unique_ptr<ir::Graph> G,
                                            const KernelChooser &Choose,
                                            std::string_view Name) {
  return std::make_unique<Interpreter>(std::move(G), Choose, Name);
}

} // namespace reference

Backend &referenceBackend() {
  static reference::ReferenceBackend B;
  return B;
}

std::vector<Tensor>
runReference(const ir::Graph &G, const std::vector<Tensor> &Inputs) {
  return referenceBackend().compile(G)->run(Inputs);
}

} // namespace nng::backends
