//===- OnnxSequences.h - ONNX sequences <-> packed pairs -----*- C++ -*-===//
//
// Private to the ONNX frontend. nngraph values are dense tensors, so an
// ONNX sequence value S becomes the pair (S, S.shapes) of
// ir/SequenceLayout.h and the ONNX sequence operators become the nng ops
// over pairs (nng.SequenceInsert, ...). Import rewrites the ModelProto's
// graph before it is built (OnnxComposites.cpp, with optionals); export writes the nng ops back as the standard
// operators with one sequence value per pair, named after the pair's data.
// See OnnxSequences.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OnnxProto.h"
#include "nngraph/frontend/onnx/OnnxValue.h"
#include "nngraph/ir/Graph.h"

#include <string_view>

namespace nng::frontend::onnxio {

/// One ONNX sequence operator: whether input 0 is a sequence and whether
/// output 0 is one.
struct SeqOpInfo {
  std::string_view Name;
  bool ConsumesSeq;
  bool ProducesSeq;
};

/// The sequence operator OpType of the default domain ("" or "ai.onnx"),
/// or null.
const SeqOpInfo *findSeqOp(std::string_view Domain, std::string_view Op);

/// True for the ONNX operators import maps onto nng sequence ops
/// (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
/// SequenceAt, SequenceLength, SplitToSequence, ConcatFromSequence) in the
/// default domain ("" or "ai.onnx").
bool isOnnxSequenceOp(std::string_view Domain, std::string_view OpType);

/// True for the operators lowerOnnxComposites() rewrites: the sequence
/// operators, Optional, OptionalGetElement, OptionalHasElement and
/// SequenceMap (default domain).
bool isOnnxValueOp(std::string_view Domain, std::string_view OpType);

/// Import, after opset conversion: splits every sequence and optional
/// value of GP and its If/Loop subgraphs into tensor parts and rewrites the
/// operators on them (OnnxComposites.cpp). Returns how GP's inputs and
/// outputs map onto the parts. Throws Error naming the node or value for
/// what the parts cannot carry.
OnnxGraphSignature lowerOnnxComposites(::onnx::GraphProto &GP,
                                       const ModelSource &Src);

/// True for the nng sequence ops.
bool isSequenceOp(ir::OpKind K);
/// True for the nng sequence ops that produce a (data, shapes) pair.
bool producesSequence(ir::OpKind K);

/// Export, on the lowered copy: checks that every pair a sequence op reads
/// is one sequence op's output pair, and turns pairs of constants (left by
/// constant folding) into a SequenceConstruct of Constants (SequenceEmpty
/// when empty). Throws Error(Unsupported) naming the node when a pair
/// cannot be expressed in ONNX (a pair half read as a tensor, a graph input
/// or output).
void prepareSequencesForOnnx(ir::Graph &G);

/// Export: writes the nng sequence op N as the ONNX operator, its pairs as
/// one sequence value named after the data half.
void sequenceNodeToProto(const ir::Node &N, ::onnx::NodeProto &P);

} // namespace nng::frontend::onnxio
