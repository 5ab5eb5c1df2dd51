//===- OnnxTensor.h - ONNX TensorProto files ------------------------------===//
//
// Reading and writing single tensors in ONNX's TensorProto encoding, the
// format of the ONNX backend test data (test_data_set_*/input_*.pb). Keeps
// the protobuf classes out of sight: tensors in, bytes out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <string>
#include <string_view>

namespace nng::frontend {

/// Parses a serialized TensorProto; What names it in messages. Name, when
/// given, receives the tensor's name. Throws Error(Parse) for bytes that are
/// not a TensorProto, Error(Unsupported) for a dtype nngraph lacks (string,
/// complex), naming What.
rt::Tensor onnxTensorFromBytes(std::string_view Bytes, std::string_view What,
                                std::string *Name = nullptr);

/// Reads a TensorProto file (".pb"); throws Error(IO) when it cannot be read.
rt::Tensor readOnnxTensorFile(const std::string &Path,
                               std::string *Name = nullptr);

/// Serializes T as a TensorProto named Name (data in raw_data).
std::string onnxTensorToBytes(const rt::Tensor &T, const std::string &Name);

} // namespace nng::frontend
