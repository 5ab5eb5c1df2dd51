//===- OnnxValue.h - ONNX values that are not tensors ------------*- C++ -*-===//
//
// ONNX graph inputs and outputs may be sequences of tensors or optionals (of
// a tensor or a sequence). nngraph values are dense tensors, so import
// splits each such value into parts: a sequence into its packed (data,
// shapes) pair (ir/SequenceLayout.h), an optional into its element's parts
// plus a `has` flag (a bool scalar; the parts of an empty optional are
// empty tensors). OnnxGraphSignature says which graph inputs and outputs
// of the imported graph are the parts of which ONNX value; OnnxValue holds
// such a value (read from the SequenceProto / OptionalProto files of ONNX's
// test data) and packs it into, or unpacks it from, those parts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <string>
#include <vector>

namespace nng::frontend {

/// What an ONNX graph input or output is.
enum class OnnxValueKind {
  Tensor,           ///< One part: the tensor.
  Sequence,         ///< Parts (data, shapes).
  OptionalTensor,   ///< Parts (value, has).
  OptionalSequence, ///< Parts (data, shapes, has).
};

/// "tensor", "sequence", "optional tensor", "optional sequence".
const char *onnxValueKindName(OnnxValueKind K);

/// One ONNX graph input or output and the names of the imported graph's
/// inputs or outputs that carry it, in part order.
struct OnnxIoBinding {
  std::string Name;
  OnnxValueKind Kind = OnnxValueKind::Tensor;
  std::vector<std::string> Parts;
};

/// The ONNX graph's inputs and outputs, in ONNX order.
struct OnnxGraphSignature {
  std::vector<OnnxIoBinding> Inputs, Outputs;
};

/// A value of an ONNX graph input or output.
struct OnnxValue {
  OnnxValueKind Kind = OnnxValueKind::Tensor;
  /// False for an empty optional.
  bool HasElement = true;
  /// The tensor (one), or the sequence's elements.
  std::vector<rt::Tensor> Elements;
};

/// Reads a TensorProto, SequenceProto or OptionalProto file, as Kind says;
/// Name (when given) receives the proto's name. Throws Error(IO) /
/// Error(Parse) naming the file; Error(Unsupported) for sequences of
/// non-tensors and maps.
OnnxValue readOnnxValueFile(const std::string &Path, OnnxValueKind Kind,
                            std::string *Name = nullptr);

/// The parts of V (see the file comment). Empty parts (an empty sequence,
/// an empty optional) take dtype ElemType; an empty optional tensor's value
/// has rank ElemRank (0 extents; rank 1 when ElemRank < 0).
std::vector<rt::Tensor> packOnnxValue(const OnnxValue &V, DType ElemType,
                                      int64_t ElemRank = -1);

/// The value that Parts (of kind K) carry. Throws Error(InvalidArgument)
/// naming What when the parts are malformed (count, dtypes, a shapes
/// encoding that does not fit the data).
OnnxValue unpackOnnxValue(OnnxValueKind K, const std::vector<rt::Tensor> &Parts,
                          const std::string &What);

} // namespace nng::frontend
