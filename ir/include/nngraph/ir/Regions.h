//===- Regions.h - Subgraphs owned by nodes (If, Loop) ----------*- C++ -*-===//
//
// A region is a graph attribute of a node (ONNX's GRAPH attribute): If's
// branches, Loop's body. Its graph inputs are its block arguments, its graph
// outputs its results, and it reads values of enclosing scopes through
// captures (Value::Kind::Capture): each is named like the outer value and
// bound to one of the owning node's implicit inputs (Node::addImplicitInput),
// so use lists, DCE, CSE and scheduling see every outer value a region
// reads as used by the node that owns the region. These helpers type
// regions and make them runnable graphs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace nng::ir {

class InferContext;

/// What two types of one value on different paths share (If's branches, a
/// loop-carried value across iterations): the dtype of A; dims that agree
/// stay, others become unknown; an unknown rank when the ranks differ.
TensorType joinTypes(const TensorType &A, const TensorType &B);

/// A copy of Region typed for one use: its captures take the types of the
/// owning node's inputs they are bound to (InTypes, indexed like the node's
/// inputs; a null or missing entry keeps the written type), its block
/// arguments ArgTypes when given (one per graph input), and every node's
/// types are inferred again. Throws Error(ShapeMismatch) naming Where.
std::unique_ptr<Graph>
instantiateRegion(const Graph &Region,
                  const std::vector<const TensorType *> &InTypes,
                  const std::vector<TensorType> *ArgTypes,
                  const std::string &Where);

/// Retypes N's regions in place from N's input types (their captures; Loop's
/// iteration number and condition, and loop-carried arguments left untyped)
/// and infers their nodes afresh.
void inferRegionTypes(Node &N);

/// A standalone graph of Region to compile and run: a copy whose captures
/// are graph inputs after its own (so inputs are the block arguments, then
/// the captured values in Region.captures() order). Its inputs keep their
/// dtypes and ranks but not their dims (one executable serves iterations
/// whose loop-carried values change shape), and its nodes are typed again.
std::unique_ptr<Graph> liftRegion(const Graph &Region);

/// Adds a capture of Outer to Region, the region of node Owner, and binds it
/// to Owner's implicit input holding Outer (added when there is none yet).
/// Returns the capture; an existing capture of Outer is reused.
Value *captureValue(Node &Owner, Graph &Region, Value *Outer);

} // namespace nng::ir
