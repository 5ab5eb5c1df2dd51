//===- TraceState.h - The state of one running trace ------------*- C++ -*-===//
//
// Private to frontend/lib/fx. TraceState is the DispatchMode that a trace
// installs: it turns every dispatched op into a node of the graph being
// built (inputs looked up or captured: proxies -> their values, parameters
// and buffers -> initializers under their state_dict keys, other tensors ->
// Constant nodes), infers the output types (symbolic dims kept), runs the
// op eagerly on the example data so proxies carry consistent example
// shapes, and returns the proxies. It also tracks what small i64 values
// hold (shape "content": static extents, symbols) so Reshape/Expand fed by
// Shape/Gather/Concat keep symbolic dims in their output types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/ir/Graph.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nng::fx::detail {

class TraceState : public dispatch::DispatchMode, public nn::ModuleCallMode {
public:
  TraceState(Tracer &T, nn::ModuleBase &Root);
  ~TraceState() override;

  std::vector<Tensor> call(const dispatch::OpCall &C) override;
  /// Outside the eager runs of leaf modules tensors are proxies.
  bool symbolic() const override { return EagerDepth == 0; }
  /// A leaf module's call (Tracer::is_leaf_module) becomes one
  /// nng.ModuleCall node; other modules run their forward (traced op by op).
  bool callModule(nn::ModuleBase &M, const std::string &Path,
                  const std::vector<nn::Value> &Inputs,
                  nn::Value &Out) override;

  /// A graph input for Spec (named Name) and its proxy.
  Tensor addInput(const InputSpec &Spec, const std::string &Name);
  /// The IR value T stands for: a proxy's value, a parameter's or buffer's
  /// initializer, or a new Constant node for any other tensor.
  ir::Value *valueOf(const Tensor &T);
  /// Appends a node of Op scoped with the current module; output types are
  /// left to the caller.
  ir::Node *newNode(ir::OpKind Op, std::vector<ir::Value *> Ins,
                    const ir::AttrMap &Attrs, unsigned NumOutputs);
  /// A proxy standing for V with example data Example.
  Tensor makeProxy(ir::Value *V, rt::Tensor Example);
  /// size(D) of proxy T.
  SymInt size(const Tensor &T, int64_t D);
  /// A SymInt as a 0-d i64 value (a Constant when concrete).
  ir::Value *symValue(const SymInt &S);
  /// The proxy of the 0-d value behind a symbolic SymInt.
  Tensor symProxy(const SymInt &S);
  /// Records a leaf-module call (see TraceLeaf.cpp).
  nn::Value leafCall(nn::ModuleBase &M, const std::string &Path,
                     const std::vector<nn::Value> &Inputs);
  /// "layer1.0.conv1 (Conv2d)" or "<root> (Net)".
  std::string where() const;
  /// True when V is a value this trace made a proxy for.
  bool ownsValue(const void *V) const;
  /// Graph outputs and the output structure from forward's result.
  OutputStructure addOutputs(const nn::Value &Out);

  Tracer &TheTracer;
  nn::ModuleBase &Root;
  std::shared_ptr<ir::Graph> G;
  /// Leaf callbacks and what they hold.
  std::vector<std::shared_ptr<void>> KeepAlive;
  /// > 0 while a leaf module runs eagerly on example inputs.
  int EagerDepth = 0;
  /// Example extent of each dynamic dim symbol.
  std::map<std::string, int64_t> SymbolExtents;
  /// The graph inputs and every value computed from one.
  std::unordered_set<const ir::Value *> InputDependent;

private:
  /// Zero example results of the shapes Types give (symbolic dims at their
  /// example extents), when every result is floating point and has such a
  /// shape; nullopt when the op must run eagerly on the example data.
  std::optional<std::vector<rt::Tensor>>
  examplesFromTypes(const std::vector<ir::TensorType> &Types) const;

  void trackContent(ir::Node *N);
  void refineShapeOutput(ir::Node *N, ir::TensorType &T) const;
  std::string constantName();

  std::unordered_set<const void *> OwnValues;
  /// Parameters/buffers (by impl) -> initializer; captured constants.
  std::unordered_map<const TensorImpl *, ir::Value *> Captured;
  std::vector<std::shared_ptr<TensorImpl>> KeepImpls;
  /// What small i64 values hold, entry by entry.
  std::unordered_map<const ir::Value *, std::vector<ir::Dim>> Content;
  std::map<std::pair<const ir::Value *, int64_t>, SymInt> SizeCache;
  std::unordered_map<const ir::Value *, ir::Value *> ShapeCache;
  int NumConstants = 0;
  int NumNodes = 0;
};

/// The trace running on this thread (null outside traces and during the
/// eager run of a leaf module).
TraceState *activeTrace();
/// The trace running on this thread, even inside a leaf's eager run.
TraceState *anyTrace();
/// Makes S the thread's trace (null ends it).
void setCurrent(TraceState *S);
/// Throws TraceError: What needs a value the trace does not have.
[[noreturn]] void failTrace(const std::string &What);
/// Installs the tracer's answers to eager tensors (TraceHooks.cpp).
void installTraceHooks();

} // namespace nng::fx::detail
