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
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  Enum,
#include "nngraph/ir/Ops.def"
};

inline constexpr int NumOpKinds = 0
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  +1
#include "nngraph/ir/Ops.def"
    ;

/// Properties of an operator that passes and backends derive their op lists
/// from (the Traits column of Ops.def).
enum class OpTrait : uint32_t {
  Elementwise = 1u << 0,      ///< Output element i reads element i only.
  Commutative = 1u << 1,      ///< The first two inputs may swap.
  Compute = 1u << 2,          ///< Work grows faster than the tensors.
  Training = 1u << 3,         ///< Exists for backward passes.
  Impure = 1u << 4,           ///< Calls out (nng.ModuleCall).
  Random = 1u << 5,           ///< Draws random numbers.
  RandomInTraining = 1u << 6, ///< Random unless training_mode is off.
  Quantizable = 1u << 7,      ///< Has int8 kernels: static PTQ wraps it in Q/DQ.
  ValuePreserving = 1u << 8,  ///< Outputs copy input elements: a quantized
                              ///< tensor passes with its scale.
};

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
  uint32_t Traits = 0; ///< OpTrait bits.

  bool has(OpTrait T) const { return Traits & static_cast<uint32_t>(T); }
  /// The trait names, space-separated as in Ops.def ("" for none).
  std::string traitNames() const;

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
/// True when op K has trait T.
bool hasTrait(OpKind K, OpTrait T);
/// Looks up an op by qualified text name ("Conv", "nng.Gelu").
const OpSchema *lookupOp(std::string_view QualifiedName);
/// Looks up an op by ONNX domain ("" or "ai.onnx" or "nng") and op_type.
const OpSchema *lookupOp(std::string_view Domain, std::string_view Name);
/// All schemas, in table order.
const std::vector<OpSchema> &allOpSchemas();

} // namespace nng::ir
