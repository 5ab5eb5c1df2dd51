//===- OnnxAttributes.cpp - AttributeProto <-> ir::Attribute -------------===//
//
// Node attributes in both directions. Import checks each ONNX attribute
// against the op table: the name must be one of the op's attributes and the
// ONNX type must be the table's (an INTS where the table wants an int is an
// error naming the node and the attribute); attributes of kinds nngraph has
// no use for (lists of graphs, sparse tensors, type protos) are refused.
// Graph attributes (regions) are built by the importer's graph builder and
// written by the exporter's, not here. Export writes each attribute with its
// table type.
//
//===----------------------------------------------------------------------===//

#include "OnnxProto.h"
#include "nngraph/runtime/Error.h"

namespace nng::frontend::onnxio {

using ::onnx::AttributeProto;

std::string onnxAttrTypeName(int T) {
  if (AttributeProto::AttributeType_IsValid(T))
    return AttributeProto::AttributeType_Name(
        static_cast<AttributeProto::AttributeType>(T));
  return "type " + std::to_string(T);
}

int attrProtoType(const AttributeProto &A) {
  if (A.type() != AttributeProto::UNDEFINED)
    return A.type();
  // IR versions before 2 did not set 'type': tell from the field that is set.
  if (A.has_f())
    return AttributeProto::FLOAT;
  if (A.has_i())
    return AttributeProto::INT;
  if (A.has_s())
    return AttributeProto::STRING;
  if (A.has_t())
    return AttributeProto::TENSOR;
  if (A.has_g())
    return AttributeProto::GRAPH;
  if (A.floats_size())
    return AttributeProto::FLOATS;
  if (A.ints_size())
    return AttributeProto::INTS;
  if (A.strings_size())
    return AttributeProto::STRINGS;
  if (A.graphs_size())
    return AttributeProto::GRAPHS;
  return AttributeProto::UNDEFINED;
}

namespace {
std::optional<ir::AttrType> irAttrType(int T) {
  switch (T) {
  case AttributeProto::INT:
    return ir::AttrType::Int;
  case AttributeProto::FLOAT:
    return ir::AttrType::Float;
  case AttributeProto::STRING:
    return ir::AttrType::String;
  case AttributeProto::INTS:
    return ir::AttrType::Ints;
  case AttributeProto::FLOATS:
    return ir::AttrType::Floats;
  case AttributeProto::STRINGS:
    return ir::AttrType::Strings;
  case AttributeProto::TENSOR:
    return ir::AttrType::Tensor;
  case AttributeProto::GRAPH:
    return ir::AttrType::Graph;
  default:
    return std::nullopt;
  }
}

int onnxAttrType(ir::AttrType T) {
  switch (T) {
  case ir::AttrType::Int:
    return AttributeProto::INT;
  case ir::AttrType::Float:
    return AttributeProto::FLOAT;
  case ir::AttrType::String:
    return AttributeProto::STRING;
  case ir::AttrType::Ints:
    return AttributeProto::INTS;
  case ir::AttrType::Floats:
    return AttributeProto::FLOATS;
  case ir::AttrType::Strings:
    return AttributeProto::STRINGS;
  case ir::AttrType::Tensor:
    return AttributeProto::TENSOR;
  case ir::AttrType::Graph:
    return AttributeProto::GRAPH;
  }
  return AttributeProto::UNDEFINED;
}
} // namespace

ir::Attribute attributeFromProto(const AttributeProto &A,
                                 const ir::AttrSchema &Schema,
                                 const ModelSource &Src,
                                 const std::string &NodeDesc) {
  std::string Where = NodeDesc + ": attribute '" + A.name() + "'";
  if (!A.ref_attr_name().empty())
    modelError(ErrorKind::Unsupported, Src,
               Where + " refers to function attribute '" + A.ref_attr_name() +
                   "'; model-local functions are not supported");
  int T = attrProtoType(A);
  std::optional<ir::AttrType> IT = irAttrType(T);
  if (!IT)
    modelError(T == AttributeProto::UNDEFINED ? ErrorKind::Parse
                                              : ErrorKind::Unsupported,
               Src,
               Where + " has type " + onnxAttrTypeName(T) +
                   ", which nngraph does not support");
  if (*IT != Schema.Type)
    modelError(ErrorKind::Parse, Src,
               Where + " is " + onnxAttrTypeName(T) + " but the op expects " +
                   onnxAttrTypeName(onnxAttrType(Schema.Type)) + " (" +
                   std::string(ir::attrTypeName(Schema.Type)) + ")");
  switch (*IT) {
  case ir::AttrType::Int:
    return ir::Attribute(static_cast<int64_t>(A.i()));
  case ir::AttrType::Float:
    return ir::Attribute(A.f());
  case ir::AttrType::String:
    return ir::Attribute(A.s());
  case ir::AttrType::Ints:
    return ir::Attribute(
        std::vector<int64_t>(A.ints().begin(), A.ints().end()));
  case ir::AttrType::Floats:
    return ir::Attribute(
        std::vector<float>(A.floats().begin(), A.floats().end()));
  case ir::AttrType::Strings:
    return ir::Attribute(
        std::vector<std::string>(A.strings().begin(), A.strings().end()));
  case ir::AttrType::Tensor:
    return ir::Attribute(tensorFromProto(A.t(), Src, Where));
  case ir::AttrType::Graph:
    break; // The graph builder builds regions.
  }
  modelError(ErrorKind::Internal, Src, Where + ": a graph attribute reached "
                                               "the attribute converter");
}

void attributeToProto(const std::string &Name, const ir::Attribute &A,
                      AttributeProto &P) {
  P.set_name(Name);
  P.set_type(
      static_cast<AttributeProto::AttributeType>(onnxAttrType(A.type())));
  switch (A.type()) {
  case ir::AttrType::Int:
    P.set_i(A.i());
    break;
  case ir::AttrType::Float:
    P.set_f(A.f());
    break;
  case ir::AttrType::String:
    P.set_s(A.s());
    break;
  case ir::AttrType::Ints:
    for (int64_t V : A.ints())
      P.add_ints(V);
    break;
  case ir::AttrType::Floats:
    for (float V : A.floats())
      P.add_floats(V);
    break;
  case ir::AttrType::Strings:
    for (const std::string &V : A.strings())
      P.add_strings(V);
    break;
  case ir::AttrType::Tensor:
    tensorToProto(A.t(), *P.mutable_t());
    break;
  case ir::AttrType::Graph:
    fail(ErrorKind::Internal, "attribute '", Name,
         "': regions are written by the graph exporter");
  }
}

} // namespace nng::frontend::onnxio
