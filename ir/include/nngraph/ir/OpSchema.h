//===- OpSchema.h - The op table: one description per operator -*- C++ -*-===//
//
// Every operator is described once, in Ops.def: domain and name, the ONNX
// opset version whose semantics it follows, its inputs and outputs (with
// optional and variadic markers), typed attributes with defaults, its shape
// and type inference function, and a one-line doc. OpKind, the verifier, the
// text format, ONNX import/export and the docs all read this table.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Attribute.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir {

/// Every operator of the op table.
enum class OpKind : uint16_t {
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc)  \
  Enum,
#include "nngraph/ir/Ops.def"
};

inline constexpr int NumOpKinds = 0
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc)  \
  +1
#include "nngraph/ir/Ops.def"
    ;

class InferContext;
using InferFn = void (*)(InferContext &);

/// One formal input or output of an operator.
struct OperandSchema {
  std::string Name;
  bool Optional = false; ///< May be absent (an empty name in ONNX).
  bool Variadic = false; ///< Repeats; only the last operand may be variadic.
};

/// One attribute of an operator.
struct AttrSchema {
  std::string Name;
  AttrType Type = AttrType::Int;
  bool Required = false;
  /// The default when absent; nullopt when there is none (optional attribute
  /// without a default, or a required one).
  std::optional<Attribute> Default;
};

/// The description of one operator.
struct OpSchema {
  OpKind Kind;
  std::string_view Domain; ///< "" for the ONNX default domain, "nng" ours.
  std::string_view Name;   ///< "Conv"; the ONNX op_type for domain "".
  int SinceVersion;        ///< The ONNX opset version of its semantics.
  std::vector<OperandSchema> Inputs, Outputs;
  std::vector<AttrSchema> Attrs;
  InferFn Infer;
  std::string_view Doc;

  size_t minInputs() const;
  size_t maxInputs() const; ///< SIZE_MAX when variadic.
  size_t minOutputs() const;
  size_t maxOutputs() const;
  const AttrSchema *findAttr(std::string_view N) const;
  /// "Conv" or "nng.Gelu": the name used in the text format.
  std::string qualifiedName() const;
};

/// The schema of K.
const OpSchema &getOpSchema(OpKind K);
/// Looks up an op by qualified text name ("Conv", "nng.Gelu").
const OpSchema *lookupOp(std::string_view QualifiedName);
/// Looks up an op by ONNX domain ("" or "ai.onnx" or "nng") and op_type.
const OpSchema *lookupOp(std::string_view Domain, std::string_view Name);
/// All schemas, in table order.
const std::vector<OpSchema> &allOpSchemas();

} // namespace nng::ir
