//===- OnnxProto.h - ONNX protobuf <-> IR conversions (internal) ----------===//
//
// Private to the ONNX frontend: the only header that includes ONNX's
// protobuf classes. Converts TensorProto <-> rt::Tensor (raw_data, the
// typed fields, external data confined to the model's folder), TypeProto <->
// ir::TensorType, and parses ModelProto / TensorProto bytes with errors that
// name the model and the tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/Type.h"
#include "nngraph/runtime/Tensor.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace nng::frontend::onnxio {

/// The ONNX code names the runtime's data tensor plainly.
using rt::Tensor;

/// The largest opset of the default domain that import and export know.
inline constexpr int MaxOpset = 17;
/// The smallest opset export can target (import converts older models).
inline constexpr int MinExportOpset = 13;

/// Where a model came from: its name in messages and the folder that
/// external data is resolved against (empty: external data is refused).
struct ModelSource {
  std::string Name;
  std::string BaseDir;
  /// What Name is, in messages.
  std::string Kind = "ONNX model";
};

/// "FLOAT", "INT64", ... for a TensorProto.DataType number ("type 42" when
/// unknown).
std::string onnxDataTypeName(int DataType);

/// The dtype for an ONNX data type; throws Error(Unsupported) naming What
/// (e.g. "initializer 'w'") when nngraph has no such dtype.
DType dtypeForOnnx(int DataType, const ModelSource &Src, std::string_view What);

/// Converts a TensorProto (raw_data, the typed fields or external data) into
/// a tensor. What names the tensor in messages ("initializer 'conv.weight'",
/// "attribute 'value' of node 'c0'"). Throws Error(Parse / Unsupported / IO)
/// naming the model, the tensor and the problem.
rt::Tensor tensorFromProto(const ::onnx::TensorProto &P,
                            const ModelSource &Src, std::string_view What);

/// Fills P's data_type, dims and raw_data from T (name is left alone).
void tensorToProto(const rt::Tensor &T, ::onnx::TensorProto &P);

/// Converts a value's TypeProto; a missing shape gives an unknown rank,
/// dim_param a symbolic dim and an unset dim an unknown one. Throws
/// Error(Unsupported) naming What for sequence, map and optional types.
ir::TensorType typeFromProto(const ::onnx::TypeProto &T, const ModelSource &Src,
                             std::string_view What);

/// Writes T into P as a tensor type (the shape only when the rank is known).
void typeToProto(const ir::TensorType &T, ::onnx::TypeProto &P);

/// Parses a ModelProto; throws Error(Parse) naming Src when the bytes are
/// not one (truncated, garbage, over 2 GB).
void parseModel(std::string_view Bytes, ::onnx::ModelProto &M,
                const ModelSource &Src);
/// Parses the ModelProto of file Path as it is read (the file's bytes are
/// never all in memory beside the message); throws Error(IO) when it cannot
/// be read, Error(Parse) as parseModel.
void parseModelFile(const std::string &Path, ::onnx::ModelProto &M,
                    const ModelSource &Src);

/// "INTS", "GRAPH", ... for an AttributeProto type number.
std::string onnxAttrTypeName(int T);

/// The type of A; for old models that leave 'type' unset, from the field
/// that is set.
int attrProtoType(const ::onnx::AttributeProto &A);

/// Converts A, checking it against the op table's Schema for it; NodeDesc
/// names the node in messages ("node 'conv1' (Conv)"). Throws Error(Parse)
/// when the ONNX type is not the table's, Error(Unsupported) for graph,
/// sparse-tensor and type attributes.
ir::Attribute attributeFromProto(const ::onnx::AttributeProto &A,
                                 const ir::AttrSchema &Schema,
                                 const ModelSource &Src,
                                 const std::string &NodeDesc);

/// Writes A as an AttributeProto named Name.
void attributeToProto(const std::string &Name, const ir::Attribute &A,
                      ::onnx::AttributeProto &P);

/// Gives the nodes of M (default-domain opset Opset, subgraphs included)
/// whose defaults changed after it, up to opset 17, those defaults
/// explicitly: RoiAlign before opset 16 samples with
/// coordinate_transformation_mode "output_half_pixel" (opset 16's default
/// is "half_pixel").
void keepOpsetDefaults(::onnx::ModelProto &M, int Opset);

/// Converts M (default-domain opset From) to opset Target with ONNX's
/// version converter; throws Error(Unsupported) naming Src with the
/// converter's reason when it cannot.
void convertOpset(::onnx::ModelProto &M, int From, int Target,
                  const ModelSource &Src);

/// Runs ONNX's shape inference on M, best effort (what it cannot infer
/// stays unknown), after refusing with Error(Parse) naming Src the attribute
/// values ONNX 1.12 would divide by zero with (non-positive strides and
/// blocksize, subgraphs included).
void inferShapesGuarded(::onnx::ModelProto &M, const ModelSource &Src);

/// Node indices in dependency order by Kahn's algorithm, stable: always the
/// earliest ready node next. Users[I] lists the nodes that read an output of
/// node I; Pending[I] counts node I's inputs that nodes produce. Nodes on a
/// cycle are left out (callers compare the size to report it).
std::vector<int> stableTopologicalOrder(
    const std::vector<std::vector<int>> &Users, std::vector<int> Pending);

/// Throws Error(K) "ONNX model 'NAME': MESSAGE" (the shared message shape).
[[noreturn]] void modelError(ErrorKind K, const ModelSource &Src,
                             const std::string &Msg);

/// Every name graph G uses (initializers, inputs, outputs, value_info,
/// nodes and the values they read and write): what a rewrite that adds
/// nodes must not reuse. Nested subgraphs are not looked into.
std::unordered_set<std::string> namesIn(const ::onnx::GraphProto &G);

} // namespace nng::frontend::onnxio
