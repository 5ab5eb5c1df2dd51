//===- OnnxShapeInference.cpp - ONNX's shape inference, guarded ----------===//
//
// ONNX's own shape inference (libonnx 1.12) runs on models before they are
// checked by the importer (opset conversion, Gradient expansion). It trusts
// attribute values that it divides by, so a hostile model stops the process
// with SIGFPE. Those values are refused here first, in every subgraph too.
//
//===----------------------------------------------------------------------===//

#include "OnnxProto.h"

#include <onnx/shape_inference/implementation.h>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;

/// Integer attributes that ONNX 1.12's shape inference divides by: the
/// strides of Conv, ConvTranspose, the pools and their quantized forms
/// (convPoolShapeInference), and DepthToSpace / SpaceToDepth's blocksize.
bool isDivisorAttribute(const std::string &Name) {
  return Name == "strides" || Name == "blocksize";
}

void checkGraph(const GraphProto &G, const ModelSource &Src) {
  for (int I = 0; I < G.node_size(); ++I) {
    const NodeProto &N = G.node(I);
    for (const AttributeProto &A : N.attribute()) {
      for (const GraphProto &Sub : A.graphs())
        checkGraph(Sub, Src);
      if (A.has_g())
        checkGraph(A.g(), Src);
      if (!isDivisorAttribute(A.name()))
        continue;
      bool Positive = A.type() != AttributeProto::INT || A.i() > 0;
      for (int64_t V : A.ints())
        Positive = Positive && V > 0;
      if (Positive)
        continue;
      std::string Node = "node ";
      if (N.name().empty())
        Node += '#' + std::to_string(I);
      else
        Node += "'" + N.name() + "'";
      modelError(ErrorKind::Parse, Src,
                 Node + " (" + N.op_type() + "): attribute '" + A.name() +
                     "' must be positive; fix the exporter that wrote it");
    }
  }
}

} // namespace

void inferShapesGuarded(::onnx::ModelProto &M, const ModelSource &Src) {
  checkGraph(M.graph(), Src);
  try {
    ::onnx::shape_inference::InferShapes(M);
  } catch (const std::exception &) {
    // Best effort: whatever was inferred before the failure stays.
  }
}

} // namespace nng::frontend::onnxio
