//===- Autograd.h - Reverse-mode automatic differentiation -------*- C++ -*-===//
//
// Each differentiable operation run with grad mode on and an input that
// requires a gradient gets a Node: it knows how to turn the gradients of
// its outputs into gradients of its inputs, and holds Edges to the nodes
// that produced those inputs. Leaves that require grad end in an
// AccumulateGrad node that adds into their .grad(). backward() and grad()
// run the graph in reverse order of creation with dependency counting.
//
// The gradient of an op of the op table is a formula (a BackwardFn) written
// with tensor operations, registered per op in frontend/lib/autograd/
// Derivatives*.cpp. Custom differentiable functions (module backward hooks,
// user code) use FunctionNode with a std::function. Grad mode and its
// guards (NoGradGuard, InferenceMode) are in GradMode.h, included here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/GradMode.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/ir/Attribute.h"
#include "nngraph/ir/OpSchema.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nng::autograd {

/// Where a gradient flows: input InputNr of node Fn (Fn null: nowhere).
struct Edge {
  std::shared_ptr<Node> Fn;
  uint32_t InputNr = 0;
  bool valid() const { return Fn != nullptr; }
};

/// Shape and dtype of a forward output, for zero gradients.
struct OutputMeta {
  DType Type = DType::F32;
  Shape Sh;
};

/// A node of the backward graph. Its "inputs" are the gradients of the
/// forward outputs (NumInputs of them); apply() returns one gradient per
/// next edge (undefined when there is none).
class Node : public std::enable_shared_from_this<Node> {
public:
  explicit Node(std::string Name);
  virtual ~Node();

  const std::string &name() const { return Name; }
  uint64_t sequenceNr() const { return SequenceNr; }
  const std::vector<Edge> &nextEdges() const { return NextEdges; }
  void setNextEdges(std::vector<Edge> E) { NextEdges = std::move(E); }
  /// Metadata of the forward outputs (one per gradient input).
  const std::vector<OutputMeta> &outputMeta() const { return Outputs; }
  void setOutputMeta(std::vector<OutputMeta> M) { Outputs = std::move(M); }
  size_t numInputs() const { return Outputs.size(); }

  /// Computes input gradients from output gradients (undefined ones are
  /// replaced by zeros before the call).
  virtual std::vector<Tensor> apply(std::vector<Tensor> GradOutputs) = 0;
  /// Frees saved tensors after a backward without retain_graph.
  virtual void release() {}
  bool released() const { return Released; }
  void markReleased() { Released = true; }

  /// Hooks on the gradient of forward output Nr (tensor hooks); may
  /// replace it.
  int addTensorHook(uint32_t Nr, TensorHook H);
  void removeTensorHook(int Id);
  /// Non-leaf tensors that retain their gradient, by output number.
  std::map<uint32_t, std::weak_ptr<TensorImpl>> Retained;

  /// Called with (grad outputs) before apply; may replace them.
  using PreHook =
      std::function<std::vector<Tensor>(const std::vector<Tensor> &)>;
  /// Called with (grad inputs, grad outputs) after apply; may replace the
  /// grad inputs (return empty to keep them).
  using PostHook = std::function<std::vector<Tensor>(
      const std::vector<Tensor> &, const std::vector<Tensor> &)>;
  int addPreHook(PreHook H);
  int addPostHook(PostHook H);

  /// Runs tensor hooks, pre hooks, apply, post hooks (used by the engine).
  std::vector<Tensor> run(std::vector<Tensor> GradOutputs);

private:
  std::string Name;
  uint64_t SequenceNr;
  std::vector<Edge> NextEdges;
  std::vector<OutputMeta> Outputs;
  bool Released = false;
  int NextHookId = 0;
  std::vector<std::tuple<int, uint32_t, TensorHook>> TensorHooks;
  std::vector<std::pair<int, PreHook>> PreHooks;
  std::vector<std::pair<int, PostHook>> PostHooks;
};

/// The sink of a leaf: adds the incoming gradient into the leaf's grad.
class AccumulateGrad final : public Node {
public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> Leaf);
  std::vector<Tensor> apply(std::vector<Tensor> GradOutputs) override;
  const std::shared_ptr<TensorImpl> &leaf() const { return Leaf; }

private:
  std::shared_ptr<TensorImpl> Leaf;
};

/// A node whose backward is a std::function (custom functions, hooks).
class FunctionNode final : public Node {
public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor> &)>;
  FunctionNode(std::string Name, Fn Backward);
  std::vector<Tensor> apply(std::vector<Tensor> GradOutputs) override;
  void release() override;

private:
  Fn Backward;
};

/// What a backward formula sees.
struct BackwardContext {
  ir::OpKind Op;
  const ir::AttrMap &Attrs;
  /// The forward inputs and outputs (detached; undefined for absent
  /// optional inputs).
  const std::vector<Tensor> &Inputs;
  const std::vector<Tensor> &Outputs;
  /// Gradients of the outputs (zeros where an output got none).
  const std::vector<Tensor> &GradOutputs;
  /// Whether input I needs a gradient; a formula may skip the others.
  const std::vector<bool> &NeedsGrad;
  bool needs(size_t I) const { return I < NeedsGrad.size() && NeedsGrad[I]; }
};

/// Returns one gradient per forward input (undefined: none).
using BackwardFn = std::vector<Tensor> (*)(const BackwardContext &);

/// The formula registered for Op, or null.
BackwardFn getBackward(ir::OpKind Op);
/// Registers F for Op (done once by the Derivatives*.cpp tables).
void setBackward(ir::OpKind Op, BackwardFn F);

/// Records the backward of an op call: called by the dispatcher after an
/// eager run. Gives Outputs (floating ones only) a grad_fn when grad mode
/// is on and an input requires grad.
void recordOp(ir::OpKind Op, const ir::AttrMap &Attrs,
              const std::vector<Tensor> &Inputs, std::vector<Tensor> &Outputs);

/// The edge a gradient for T flows along (its grad_fn output, or its leaf
/// accumulator; invalid when T does not require grad).
Edge gradientEdge(const Tensor &T);
/// Makes Outputs the outputs of Fn (sets grad_fn, output numbers,
/// requires_grad and Fn's output metadata).
void setHistory(std::vector<Tensor> &Outputs, const std::shared_ptr<Node> &Fn);

/// Runs backward from Roots with the given gradients (undefined entries:
/// ones for one-element roots). Accumulates into leaves' grad().
void backward(const std::vector<Tensor> &Roots,
              const std::vector<Tensor> &Grads = {}, bool RetainGraph = false);

/// The gradients of Outputs with respect to Inputs (torch.autograd.grad);
/// leaves' grad() is not touched. An input the outputs do not depend on
/// gets an undefined tensor with AllowUnused, else an error.
std::vector<Tensor> grad(const std::vector<Tensor> &Outputs,
                         const std::vector<Tensor> &Inputs,
                         const std::vector<Tensor> &GradOutputs = {},
                         bool RetainGraph = false, bool AllowUnused = false);

} // namespace nng::autograd
