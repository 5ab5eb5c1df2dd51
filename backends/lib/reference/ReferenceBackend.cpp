//===- ReferenceBackend.cpp - The interpreter ----------------------------===//
//
// Runs a graph node by node: computes each node's output types from the
// concrete inputs with the op's inference function, calls the op's kernel,
// checks what it produced against the inferred types, and frees values
// after their last use.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/reference/ReferenceBackend.h"
#include "Kernels.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>

namespace nng::backends {
namespace reference {

namespace {
constexpr KernelFn Kernels[] = {
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc)  \
  &kernel##Enum,
#include "nngraph/ir/Ops.def"
};
} // namespace

KernelFn getKernel(ir::OpKind K) { return Kernels[static_cast<size_t>(K)]; }

nng::Tensor &KernelContext::allocOutput(size_t I) {
  auto S = OutTypes.at(I).staticShape();
  if (!S)
    fail("output ", I, " has no static shape (", OutTypes[I].toString(),
         "); the kernel must give the shape");
  return allocOutput(I, *S, OutTypes[I].dtype());
}

nng::Tensor &KernelContext::allocOutput(size_t I, const Shape &S, DType T) {
  if (Outputs.size() <= I)
    Outputs.resize(I + 1);
  Outputs[I] = nng::Tensor::empty(S, T);
  return Outputs[I];
}

void KernelContext::throwError(const std::string &Msg) const {
  Error E(ErrorKind::InvalidArgument,
          N.schema().qualifiedName() + ": " + Msg);
  E.addContext("in " + N.describe());
  throw E;
}

namespace {

/// The kernels compute their output shapes themselves; a disagreement with
/// the op's inference function is a bug in one of the two.
void checkOutput(const ir::Node &N, size_t I, const nng::Tensor &T,
                 const ir::TensorType &Inferred) {
  // An unranked type (f32[*] is also what an unset type looks like) says
  // too little to check.
  if (!Inferred.hasRank())
    return;
  bool Same = T.dtype() == Inferred.dtype() &&
              Inferred.rank() == static_cast<int64_t>(T.rank());
  if (auto S = Inferred.staticShape())
    Same = Same && *S == T.shape();
  if (!Same)
    fail(ErrorKind::Internal, "reference kernel of ", N.describe(),
         " produced ", dtypeName(T.dtype()), T.shape().toString(),
         " for output ", I, " but shape inference gives ",
         Inferred.toString());
}

class Interpreter final : public Executable {
public:
  explicit Interpreter(std::unique_ptr<ir::Graph> G) : G(std::move(G)) {
    // Last use of each value, so its tensor can be freed early.
    for (size_t I = 0; I < this->G->nodes().size(); ++I)
      for (ir::Value *V : this->G->nodes()[I]->inputs())
        if (V)
          LastUse[V] = I;
  }

  std::vector<nng::Tensor> run(const std::vector<nng::Tensor> &Inputs) override {
    checkInputs(*G, Inputs);
    std::unordered_map<const ir::Value *, nng::Tensor> Env;
    for (size_t I = 0; I < Inputs.size(); ++I)
      Env[G->inputs()[I]] = Inputs[I];
    for (ir::Value *V : G->initializers()) {
      if (!V->data().defined())
        fail(ErrorKind::InvalidArgument, "initializer %", V->name(),
             " has no data (it was elided when printed as text): load the "
             "weights before running");
      Env[V] = V->data();
    }
    const auto &Nodes = G->nodes();
    for (size_t Idx = 0; Idx < Nodes.size(); ++Idx) {
      const ir::Node &N = *Nodes[Idx];
      KernelContext Ctx{N, {}, {}, {}};
      std::vector<const ir::TensorType *> TypePtrs;
      std::vector<ir::TensorType> Types;
      Types.reserve(N.numInputs());
      std::vector<const nng::Tensor *> ValPtrs;
      for (ir::Value *V : N.inputs()) {
        nng::Tensor T = V ? Env.at(V) : nng::Tensor();
        Ctx.Inputs.push_back(T);
        Types.push_back(T.defined() ? ir::TensorType(T.dtype(), T.shape())
                                    : ir::TensorType());
      }
      for (size_t I = 0; I < Types.size(); ++I) {
        TypePtrs.push_back(Ctx.Inputs[I].defined() ? &Types[I] : nullptr);
        ValPtrs.push_back(Ctx.Inputs[I].defined() ? &Ctx.Inputs[I] : nullptr);
      }
      ir::InferContext IC(N.schema(), N.attrs(), TypePtrs, ValPtrs,
                          N.numOutputs(), N.describe());
      N.schema().Infer(IC);
      Ctx.OutTypes = IC.outputTypes();
      Ctx.Outputs.resize(N.numOutputs());
      try {
        getKernel(N.op())(Ctx);
      } catch (Error &E) {
        // Errors from runtime helpers (shapes, views) do not name the node.
        if (E.context().empty())
          E.addContext("in " + N.describe());
        throw;
      }
      for (size_t I = 0; I < N.numOutputs(); ++I) {
        if (!Ctx.Outputs[I].defined())
          fail(ErrorKind::Internal, "reference kernel of ", N.describe(),
               " produced no output ", I);
        checkOutput(N, I, Ctx.Outputs[I], Ctx.OutTypes[I]);
        Env[N.output(I)] = std::move(Ctx.Outputs[I]);
      }
      for (ir::Value *V : N.inputs()) {
        auto It = LastUse.find(V);
        if (V && It != LastUse.end() && It->second == Idx && !G->isOutput(V) &&
            V->producer())
          Env.erase(V);
      }
    }
    std::vector<nng::Tensor> Outs;
    for (ir::Value *V : G->outputs())
      Outs.push_back(Env.at(V));
    return Outs;
  }

private:
  std::unique_ptr<ir::Graph> G;
  std::unordered_map<const ir::Value *, size_t> LastUse;
};

class ReferenceBackend final : public Backend {
public:
  std::string_view name() const override { return "reference"; }
  bool supportsOp(const ir::Node &) const override { return true; }
  std::unique_ptr<Executable> compile(const ir::Graph &G) override {
    ir::verifyOrThrow(G);
    return std::make_unique<Interpreter>(G.clone());
  }
};

} // namespace
} // namespace reference

Backend &referenceBackend() {
  static reference::ReferenceBackend B;
  return B;
}

std::vector<nng::Tensor> runReference(const ir::Graph &G,
                                      const std::vector<nng::Tensor> &Inputs) {
  return referenceBackend().compile(G)->run(Inputs);
}

} // namespace nng::backends
