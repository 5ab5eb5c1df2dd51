//===- OnnxSequences.h - ONNX sequences <-> packed pairs -----*- C++ -*-===//
//
// Private to the ONNX frontend. nngraph values are dense tensors, so an
// ONNX sequence value S becomes the pair (S, S.shapes) of
// ir/SequenceLayout.h and the ONNX sequence operators become the nng ops
// over pairs (nng.SequenceInsert, ...). Import rewrites the ModelProto's
// graph before it is built; export writes the nng ops back as the standard
// operators with one sequence value per pair, named after the pair's data.
// See OnnxSequences.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OnnxProto.h"
#include "nngraph/ir/Graph.h"

#include <string_view>

namespace nng::frontend::onnxio {

/// True for the ONNX operators import maps onto nng sequence ops
/// (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
/// SequenceAt, SequenceLength, SplitToSequence, ConcatFromSequence) in the
/// default domain ("" or "ai.onnx").
bool isOnnxSequenceOp(std::string_view Domain, std::string_view OpType);

/// Import: rewrites the sequence operators of GP (opset >= 13) into nng
/// nodes over (data, shapes) pairs: each sequence value S is read and
/// written as S plus a fresh S.shapes. Throws Error naming the model and
/// the node for what cannot be expressed: sequence-typed graph inputs and
/// outputs, sequences of sequences, a sequence read by a tensor operator, a
/// tensor where a sequence belongs.
void lowerOnnxSequences(::onnx::GraphProto &GP, const ModelSource &Src);

/// True when a graph input or output of GP is sequence-typed (import
/// refuses those).
bool hasSequenceGraphIo(const ::onnx::GraphProto &GP);

/// Throws Error(Unsupported) naming the first sequence-typed graph input or
/// output of GP. Import runs it before opset conversion too, since ONNX's
/// version converter does not keep sequence types.
void refuseSequenceGraphIo(const ::onnx::GraphProto &GP,
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
