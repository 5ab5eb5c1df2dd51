//===- Dispatch.h - The one dispatch point of tensor operations --*- C++ -*-===//
//
// Every tensor operation (a + b, nng::matmul, F::conv2d, the backward
// formulas) ends in dispatch::call with an op of the op table, its inputs
// and attributes. With no mode installed the call runs eagerly: it asks the
// eager backend ("cpu" when built, else "reference"; NNGRAPH_EAGER_BACKEND
// overrides) for a single-op executable, cached per thread by (op,
// attributes, input dtypes and ranks), runs it, and, when grad mode is on
// and an input requires a gradient, records the backward node (autograd).
// A DispatchMode installed with ModeGuard (the tracer) receives the call
// instead. Errors name the op and the module path being run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/ir/Attribute.h"
#include "nngraph/ir/OpSchema.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace nng::dispatch {

/// One operation: op, inputs (undefined for absent optional ones),
/// attributes, and how many outputs the caller wants.
struct OpCall {
  ir::OpKind Op;
  const std::vector<Tensor> &Inputs;
  const ir::AttrMap &Attrs;
  unsigned NumOutputs;
};

/// Builds an AttrMap from {name, value} pairs: attrs({{"axis", 1}}).
inline ir::AttrMap attrs(std::initializer_list<ir::AttrMap::Entry> Entries) {
  ir::AttrMap M;
  for (const ir::AttrMap::Entry &E : Entries)
    M.setByName(E.first, E.second);
  return M;
}

/// Runs Op; returns NumOutputs tensors.
std::vector<Tensor> call(ir::OpKind Op, const std::vector<Tensor> &Inputs,
                         const ir::AttrMap &Attrs = {},
                         unsigned NumOutputs = 1);
/// call() for single-output ops.
Tensor call1(ir::OpKind Op, const std::vector<Tensor> &Inputs,
             const ir::AttrMap &Attrs = {});

/// The eager path without autograd or modes: runs Op on data tensors. The
/// last NumImplicit inputs are the implicit inputs of an op with regions
/// (the values its regions capture, ir/Regions.h).
std::vector<rt::Tensor> runEager(ir::OpKind Op,
                                 const std::vector<rt::Tensor> &Inputs,
                                 const ir::AttrMap &Attrs,
                                 unsigned NumOutputs,
                                 unsigned NumImplicit = 0);

/// A mode that takes over dispatch (the tracer). Inside call() the mode is
/// popped while it runs, so a mode may itself call dispatch::call to run
/// eagerly.
class DispatchMode {
public:
  virtual ~DispatchMode();
  virtual std::vector<Tensor> call(const OpCall &C) = 0;
  /// True when tensors under this mode may stand for values without data
  /// (the tracer's proxies, outside the eager runs of leaf modules): code
  /// then skips value-dependent checks and state updates.
  virtual bool symbolic() const { return false; }
};

/// Installs M for the current thread for the guard's lifetime.
class ModeGuard {
public:
  explicit ModeGuard(DispatchMode &M);
  ~ModeGuard();
  ModeGuard(const ModeGuard &) = delete;
  ModeGuard &operator=(const ModeGuard &) = delete;
};

/// The innermost installed mode, or null.
DispatchMode *currentMode();
/// True when the innermost installed mode is symbolic (a trace runs).
bool inSymbolicMode();

/// Names the module being run (nn::Module::operator() pushes its path and
/// type), so errors can say where they happened.
class ModuleScope {
public:
  ModuleScope(std::string Path, std::string Type);
  ~ModuleScope();
  ModuleScope(const ModuleScope &) = delete;
  ModuleScope &operator=(const ModuleScope &) = delete;
};

/// "layer1.0.conv1 (Conv2d)" for the innermost module scope, or "".
std::string currentModuleDescription();
/// The stack of (path, type) scopes, outermost first.
const std::vector<std::pair<std::string, std::string>> &moduleScopes();

/// Name of the backend used for eager execution.
std::string eagerBackendName();
/// Number of cached single-op executables on this thread (for tests).
size_t eagerCacheSize();

} // namespace nng::dispatch
