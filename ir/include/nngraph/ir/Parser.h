//===- Parser.h - The text format: parsing -----------------------*- C++ -*-===//
//
// Parses the text format (*.nng) into a verified graph. Errors name
// file:line:column and what is wrong (unknown op, wrong arity, wrong
// attribute type, undefined or redefined value, a cycle, an incompatible
// shape) and are thrown as Error(Parse); nothing aborts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace nng::ir {

struct ParseOptions {
  /// Resolves the data of an elided initializer (name, type, hash); may
  /// return an undefined tensor to leave it elided.
  std::function<rt::Tensor(const std::string &, const TensorType &,
                            const std::string &)>
      ResolveElided;
};

/// Parses Text; BufferName is used in messages ("model.nng", "<stdin>").
std::unique_ptr<Graph> parseGraph(std::string_view Text,
                                  std::string_view BufferName = "<string>",
                                  const ParseOptions &O = {});
/// Reads and parses a file; throws Error(IO) when it cannot be read.
std::unique_ptr<Graph> parseGraphFile(const std::string &Path,
                                      const ParseOptions &O = {});

} // namespace nng::ir
