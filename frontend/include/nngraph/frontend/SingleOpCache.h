//===- SingleOpCache.h - Cached single-op executables -----------*- C++ -*-===//
//
// One op run on its own: a one-node graph whose inputs carry only the
// call's dtypes and ranks (dims unknown, so one executable serves every
// shape), compiled once and cached under (op, attributes, input dtypes and
// ranks). Eager dispatch runs each call through one (per thread, on the
// eager backend); the fx Interpreter runs each node through one (on its
// backend).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Attribute.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/runtime/Tensor.h"

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nng::ir {
class Graph;
} // namespace nng::ir

namespace nng::backends {
class Executable;
} // namespace nng::backends

namespace nng::dispatch {

/// Single-op executables of one compiler, cached by call signature.
class SingleOpCache {
public:
  using CompileFn =
      std::function<std::unique_ptr<backends::Executable>(const ir::Graph &)>;
  explicit SingleOpCache(CompileFn Compile);
  ~SingleOpCache();
  SingleOpCache(const SingleOpCache &) = delete;
  SingleOpCache &operator=(const SingleOpCache &) = delete;

  /// Runs Op on Inputs (undefined entries: absent optional inputs) and
  /// returns NumOutputs tensors; the last NumImplicit inputs are implicit
  /// (captured by the op's regions). A call with a tensor or graph
  /// attribute is compiled each time (not cached).
  std::vector<rt::Tensor> run(ir::OpKind Op,
                              const std::vector<rt::Tensor> &Inputs,
                              const ir::AttrMap &Attrs, unsigned NumOutputs,
                              unsigned NumImplicit = 0);
  /// Number of cached executables.
  size_t size() const { return Map.size(); }

private:
  CompileFn Compile;
  std::unordered_map<std::string, std::unique_ptr<backends::Executable>> Map;
  std::string Key; ///< Reused buffer.
};

/// The one-node graph of Op with rank-only input types from Inputs (absent
/// inputs stay absent), named Name; its last NumImplicit inputs implicit.
std::unique_ptr<ir::Graph> singleOpGraph(ir::OpKind Op,
                                         const std::vector<rt::Tensor> &Inputs,
                                         const ir::AttrMap &Attrs,
                                         unsigned NumOutputs,
                                         const std::string &Name = "eager",
                                         unsigned NumImplicit = 0);

} // namespace nng::dispatch
