//===- Engine.cpp - Running the backward graph ---------------------------===//
//
// backward() and grad(): find the nodes reachable from the roots, count
// each node's incoming edges, then run nodes whose gradients are complete,
// latest-created first, summing gradients that meet at one input. grad()
// captures the gradients flowing into the requested tensors instead of
// accumulating into leaves. Without retain_graph every node run frees its
// saved tensors.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/runtime/Error.h"

#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace nng::autograd {

namespace {

struct ByLatest {
  bool operator()(const Node *A, const Node *B) const {
    return A->sequenceNr() < B->sequenceNr();
  }
};

/// Gradients gathered for one node's inputs.
struct Buffer {
  std::vector<Tensor> Grads;
  void add(size_t I, const Tensor &G, size_t N) {
    if (Grads.size() < N)
      Grads.resize(N);
    Grads[I] = Grads[I].defined() ? Grads[I] + G : G;
  }
};

/// Where grad() wants gradients: (node, input number) -> result slot.
using CaptureMap = std::map<std::pair<const Node *, uint32_t>, size_t>;

void execute(const std::vector<Edge> &Roots, const std::vector<Tensor> &Grads,
             bool RetainGraph, const CaptureMap *Capture,
             std::vector<Tensor> *Captured) {
  // Dependencies: the number of edges into each reachable node.
  std::unordered_map<const Node *, int> Deps;
  std::vector<Node *> Stack;
  std::unordered_set<const Node *> Seen;
  for (const Edge &E : Roots)
    if (E.valid() && Seen.insert(E.Fn.get()).second)
      Stack.push_back(E.Fn.get());
  while (!Stack.empty()) {
    Node *N = Stack.back();
    Stack.pop_back();
    for (const Edge &E : N->nextEdges()) {
      if (!E.valid())
        continue;
      ++Deps[E.Fn.get()];
      if (Seen.insert(E.Fn.get()).second)
        Stack.push_back(E.Fn.get());
    }
  }

  std::unordered_map<const Node *, Buffer> Buffers;
  // Keeps nodes alive while they wait in the queue.
  std::unordered_map<const Node *, std::shared_ptr<Node>> Alive;
  std::priority_queue<Node *, std::vector<Node *>, ByLatest> Ready;
  for (size_t I = 0; I < Roots.size(); ++I) {
    const Edge &E = Roots[I];
    if (!E.valid())
      continue;
    Buffers[E.Fn.get()].add(E.InputNr, Grads[I], E.Fn->numInputs());
    Alive[E.Fn.get()] = E.Fn;
  }
  for (auto &[N, Ptr] : Alive)
    if (Deps[N] == 0)
      Ready.push(Ptr.get());

  while (!Ready.empty()) {
    Node *N = Ready.top();
    Ready.pop();
    std::shared_ptr<Node> Keep = Alive[N];
    Alive.erase(N);
    Buffer B = std::move(Buffers[N]);
    Buffers.erase(N);
    B.Grads.resize(N->numInputs());
    bool IsLeafSink = dynamic_cast<AccumulateGrad *>(N) != nullptr;
    if (Capture) {
      for (uint32_t I = 0; I < B.Grads.size(); ++I)
        if (auto It = Capture->find({N, I}); It != Capture->end())
          (*Captured)[It->second] = B.Grads[I];
      // grad() never touches leaves' .grad().
      if (IsLeafSink)
        continue;
    }
    std::vector<Tensor> Out = N->run(std::move(B.Grads));
    if (!RetainGraph && !IsLeafSink)
      N->release();
    const auto &Next = N->nextEdges();
    for (size_t I = 0; I < Next.size(); ++I) {
      const Edge &E = Next[I];
      if (!E.valid())
        continue;
      if (I < Out.size() && Out[I].defined()) {
        Buffers[E.Fn.get()].add(E.InputNr, Out[I], E.Fn->numInputs());
      }
      Alive.emplace(E.Fn.get(), E.Fn);
      if (--Deps[E.Fn.get()] == 0)
        Ready.push(E.Fn.get());
    }
  }
}

/// The root gradients: given ones, or ones for one-element roots.
std::vector<Tensor> rootGrads(const std::vector<Tensor> &Roots,
                              const std::vector<Tensor> &Grads) {
  std::vector<Tensor> Out;
  for (size_t I = 0; I < Roots.size(); ++I) {
    const Tensor &R = Roots[I];
    if (!R.requires_grad())
      fail(ErrorKind::InvalidArgument, "element ", I,
           " of the tensors to differentiate does not require grad and has "
           "no grad_fn: set requires_grad on an input, and compute outside "
           "NoGradGuard");
    if (I < Grads.size() && Grads[I].defined()) {
      if (Grads[I].shape() != R.shape())
        fail(ErrorKind::ShapeMismatch, "gradient ", I, " has shape ",
             Grads[I].shape().toString(), " but the tensor has shape ",
             R.shape().toString());
      Out.push_back(Grads[I].detach());
      continue;
    }
    if (R.numel() != 1)
      fail(ErrorKind::InvalidArgument,
           "grad can be implicitly created only for one-element outputs; "
           "this one has shape ",
           R.shape().toString(), ": pass a gradient");
    Out.push_back(ones_like(R));
  }
  return Out;
}

} // namespace

void backward(const std::vector<Tensor> &Roots,
              const std::vector<Tensor> &Grads, bool RetainGraph) {
  std::vector<Tensor> G = rootGrads(Roots, Grads);
  std::vector<Edge> Edges;
  for (const Tensor &R : Roots)
    Edges.push_back(gradientEdge(R));
  NoGradGuard NoGrad;
  execute(Edges, G, RetainGraph, nullptr, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor> &Outputs,
                         const std::vector<Tensor> &Inputs,
                         const std::vector<Tensor> &GradOutputs,
                         bool RetainGraph, bool AllowUnused) {
  std::vector<Tensor> G = rootGrads(Outputs, GradOutputs);
  std::vector<Edge> Edges;
  for (const Tensor &R : Outputs)
    Edges.push_back(gradientEdge(R));
  CaptureMap Capture;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Edge E = gradientEdge(Inputs[I]);
    if (!E.valid())
      fail(ErrorKind::InvalidArgument, "input ", I,
           " of grad() does not require grad");
    Capture[{E.Fn.get(), E.InputNr}] = I;
  }
  std::vector<Tensor> Result(Inputs.size());
  {
    NoGradGuard NoGrad;
    execute(Edges, G, RetainGraph, &Capture, &Result);
  }
  for (size_t I = 0; I < Result.size(); ++I)
    if (!Result[I].defined() && !AllowUnused)
      fail(ErrorKind::InvalidArgument, "input ", I,
           " of grad() was not used to compute the outputs: pass "
           "allow_unused=true to get an undefined gradient");
  return Result;
}

} // namespace nng::autograd
