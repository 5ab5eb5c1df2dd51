//===- Node.cpp - Backward-graph nodes and op recording ------------------===//
//
// Node bookkeeping (sequence numbers, hooks), the leaf accumulator, custom
// function nodes, and recordOp: the autograd half of a
// dispatched call, which wraps the op's registered backward formula in an
// OpNode holding the saved inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <atomic>

namespace nng::autograd {

namespace {
std::atomic<uint64_t> NextSequenceNr{0};

std::vector<BackwardFn> &backwardTable() {
  static std::vector<BackwardFn> T(ir::allOpSchemas().size(), nullptr);
  return T;
}
} // namespace

void registerAllDerivatives(); // Derivatives.cpp

BackwardFn getBackward(ir::OpKind Op) {
  static bool Registered = (registerAllDerivatives(), true);
  (void)Registered;
  return backwardTable()[static_cast<size_t>(Op)];
}

void setBackward(ir::OpKind Op, BackwardFn F) {
  backwardTable()[static_cast<size_t>(Op)] = F;
}

Node::Node(std::string Name)
    : Name(std::move(Name)), SequenceNr(NextSequenceNr++) {}
Node::~Node() = default;

int Node::addTensorHook(uint32_t Nr, TensorHook H) {
  TensorHooks.emplace_back(NextHookId, Nr, std::move(H));
  return NextHookId++;
}

void Node::removeTensorHook(int Id) {
  std::erase_if(TensorHooks,
                [&](const auto &E) { return std::get<0>(E) == Id; });
}

int Node::addPreHook(PreHook H) {
  PreHooks.emplace_back(NextHookId, std::move(H));
  return NextHookId++;
}

int Node::addPostHook(PostHook H) {
  PostHooks.emplace_back(NextHookId, std::move(H));
  return NextHookId++;
}

std::vector<Tensor> Node::run(std::vector<Tensor> GradOutputs) {
  for (auto &[Id, Nr, H] : TensorHooks)
    if (Nr < GradOutputs.size() && GradOutputs[Nr].defined())
      if (Tensor R = H(GradOutputs[Nr]); R.defined())
        GradOutputs[Nr] = R;
  for (auto &[Nr, Weak] : Retained)
    if (auto Impl = Weak.lock(); Impl && Nr < GradOutputs.size() &&
                                 GradOutputs[Nr].defined()) {
      Tensor G = GradOutputs[Nr].detach();
      Impl->Grad = Impl->Grad ? (Tensor(Impl->Grad) + G).impl()
                              : G.clone().impl();
    }
  for (auto &[Id, H] : PreHooks) {
    std::vector<Tensor> R = H(GradOutputs);
    if (!R.empty())
      GradOutputs = std::move(R);
  }
  // Zeros for outputs that received no gradient.
  for (size_t I = 0; I < GradOutputs.size() && I < Outputs.size(); ++I)
    if (!GradOutputs[I].defined() && isFloatingPoint(Outputs[I].Type))
      GradOutputs[I] =
          zeros(std::vector<int64_t>(Outputs[I].Sh.dims().begin(),
                                     Outputs[I].Sh.dims().end()),
                Outputs[I].Type);
  std::vector<Tensor> GradInputs = apply(GradOutputs);
  for (auto &[Id, H] : PostHooks) {
    std::vector<Tensor> R = H(GradInputs, GradOutputs);
    if (!R.empty()) {
      if (R.size() != GradInputs.size())
        fail(ErrorKind::InvalidArgument, "backward hook on ", Name,
             " returned ", R.size(), " gradients; expected ",
             GradInputs.size());
      GradInputs = std::move(R);
    }
  }
  return GradInputs;
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> Leaf)
    : Node("AccumulateGrad"), Leaf(std::move(Leaf)) {
  setOutputMeta({{this->Leaf->Data.dtype(), this->Leaf->Data.shape()}});
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor> GradOutputs) {
  Tensor G = GradOutputs.at(0);
  for (auto &[Id, H] : Leaf->LeafHooks)
    if (Tensor R = H(G); R.defined())
      G = R;
  NoGradGuard NoGrad;
  if (G.shape() != Leaf->Data.shape())
    fail(ErrorKind::Internal, "gradient of shape ", G.shape().toString(),
         " for a leaf of shape ", Leaf->Data.shape().toString());
  if (!Leaf->Grad)
    Leaf->Grad = G.detach().clone().impl();
  else
    Leaf->Grad = (Tensor(Leaf->Grad) + G.detach()).impl();
  return {};
}

FunctionNode::FunctionNode(std::string Name, Fn Backward)
    : Node(std::move(Name)), Backward(std::move(Backward)) {}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor> GradOutputs) {
  if (!Backward)
    fail(ErrorKind::InvalidArgument, "trying to backward through ", name(),
         " a second time (its saved state was freed): pass "
         "retain_graph=true to the first backward");
  return Backward(GradOutputs);
}

void FunctionNode::release() {}

namespace {

/// The backward of one op-table call.
class OpNode final : public Node {
public:
  OpNode(ir::OpKind Op, ir::AttrMap Attrs, std::vector<Tensor> Inputs,
         std::vector<Tensor> Outputs, std::vector<bool> NeedsGrad)
      : Node(std::string(ir::getOpSchema(Op).qualifiedName()) + "Backward"),
        Op(Op), Attrs(std::move(Attrs)), Inputs(std::move(Inputs)),
        Outputs(std::move(Outputs)), NeedsGrad(std::move(NeedsGrad)) {}

  std::vector<Tensor> apply(std::vector<Tensor> GradOutputs) override {
    if (released())
      fail(ErrorKind::InvalidArgument, "trying to backward through ", name(),
           " a second time (its saved tensors were freed): pass "
           "retain_graph=true to the first backward");
    BackwardFn F = getBackward(Op);
    if (!F)
      fail(ErrorKind::Unsupported, "the derivative of ",
           ir::getOpSchema(Op).qualifiedName(),
           " is not implemented; detach its inputs or compute it under "
           "NoGradGuard");
    BackwardContext C{Op, Attrs, Inputs, Outputs, GradOutputs, NeedsGrad};
    std::vector<Tensor> R = F(C);
    R.resize(Inputs.size());
    for (size_t I = 0; I < R.size(); ++I)
      if (!NeedsGrad[I])
        R[I] = Tensor();
    return R;
  }

  void release() override {
    Inputs.clear();
    Outputs.clear();
    markReleased();
  }

private:
  ir::OpKind Op;
  ir::AttrMap Attrs;
  std::vector<Tensor> Inputs, Outputs;
  std::vector<bool> NeedsGrad;
};

} // namespace

Edge gradientEdge(const Tensor &T) {
  if (!T.defined() || !T.requires_grad())
    return {};
  const auto &Impl = T.impl();
  if (Impl->GradFn)
    return {Impl->GradFn, Impl->OutputNr};
  auto Acc = Impl->Accumulator.lock();
  if (!Acc) {
    Acc = std::make_shared<AccumulateGrad>(Impl);
    Impl->Accumulator = Acc;
  }
  return {Acc, 0};
}

void setHistory(std::vector<Tensor> &Outputs, const std::shared_ptr<Node> &Fn) {
  std::vector<OutputMeta> Meta;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    Tensor &T = Outputs[I];
    if (!T.defined()) {
      Meta.push_back({});
      continue;
    }
    Meta.push_back({T.dtype(), T.shape()});
    if (!isFloatingPoint(T.dtype()))
      continue;
    T.impl()->GradFn = Fn;
    T.impl()->OutputNr = static_cast<uint32_t>(I);
    T.impl()->RequiresGrad = true;
  }
  Fn->setOutputMeta(std::move(Meta));
}

void recordOp(ir::OpKind Op, const ir::AttrMap &Attrs,
              const std::vector<Tensor> &Inputs, std::vector<Tensor> &Outputs) {
  if (!isGradEnabled())
    return;
  std::vector<bool> Needs(Inputs.size());
  bool Any = false;
  for (size_t I = 0; I < Inputs.size(); ++I)
    Any |= (Needs[I] = Inputs[I].requires_grad());
  if (!Any)
    return;
  bool AnyFloat = std::any_of(Outputs.begin(), Outputs.end(), [](auto &T) {
    return T.defined() && isFloatingPoint(T.dtype());
  });
  if (!AnyFloat)
    return;
  std::vector<Tensor> SavedIn, SavedOut;
  for (const Tensor &T : Inputs)
    SavedIn.push_back(T.defined() ? T.detach() : Tensor());
  for (const Tensor &T : Outputs)
    SavedOut.push_back(T.detach());
  auto N = std::make_shared<OpNode>(Op, Attrs, std::move(SavedIn),
                                    std::move(SavedOut), Needs);
  std::vector<Edge> Edges;
  for (const Tensor &T : Inputs)
    Edges.push_back(gradientEdge(T));
  N->setNextEdges(std::move(Edges));
  setHistory(Outputs, N);
}

} // namespace nng::autograd
