//===- OpDocs.h - Operator reference generated from the op table -*- C++ -*-===//
//
// Writes the operator reference (docs/ops.md) from Ops.def, so the docs can
// never drift from the table: one section per op with its domain, ONNX
// version, operands, attributes with types and defaults, and summary.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>

namespace nng::ir {

/// Writes the Markdown operator reference for every op in the table.
void printOpReference(std::ostream &OS);

} // namespace nng::ir
