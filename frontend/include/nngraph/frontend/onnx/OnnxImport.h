//===- OnnxImport.h - ONNX models into the graph IR -----------------------===//
//
// importOnnx() reads an ONNX ModelProto into an ir::Graph: opsets 13-17 map
// 1:1 onto the op table (ONNX opset-17 semantics); older opsets are first
// converted to opset 13 with ONNX's version converter. Initializers keep
// their names (the state_dict keys), node names are kept, dim_params become
// symbolic dims, external data is read from the model's folder only.
// Unsupported operators are reported all at once; subgraph operators (If,
// Loop, Scan) are refused. See docs/onnx.md for what is supported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nng::frontend {

struct OnnxGraphSignature;

/// How importOnnx() works.
struct OnnxImportOptions {
  /// The folder that external-data locations are relative to. importOnnx()
  /// uses the model file's folder when this is empty; for
  /// importOnnxFromBytes() an empty BaseDir refuses external data.
  std::string BaseDir;
  /// Run shape/type inference over the imported graph (merging with the
  /// model's declared value_info).
  bool InferTypes = true;
  /// Verify the imported graph.
  bool Verify = true;
  /// When set, receives how the ONNX graph's inputs and outputs map onto
  /// the imported graph's: a sequence- or optional-typed one becomes
  /// several tensor inputs or outputs (OnnxValue.h).
  OnnxGraphSignature *Signature = nullptr;
};

/// Reads the ONNX model at Path. Throws nng::Error naming the model and the
/// node or tensor: Error(IO) when the file cannot be read, Error(Parse) for
/// a malformed model, Error(Unsupported) listing every unsupported operator
/// (type, count, first node names), Error(ShapeMismatch) / Error(Verify)
/// when the graph is inconsistent.
std::unique_ptr<ir::Graph> importOnnx(const std::string &Path,
                                      const OnnxImportOptions &O = {});

/// Imports a serialized ModelProto; ModelName names it in messages.
std::unique_ptr<ir::Graph> importOnnxFromBytes(std::string_view Bytes,
                                               std::string_view ModelName,
                                               const OnnxImportOptions &O = {});

/// The operators a model uses, as "op_type" for the default domain and
/// "domain.op_type" otherwise, sorted, each once (including those inside
/// subgraphs). Throws Error(IO) / Error(Parse) like importOnnx().
std::vector<std::string> onnxModelOperators(const std::string &Path);

/// True when import maps the ONNX operator (Domain "" or "ai.onnx" for the
/// default domain) onto the op table: the ops of the table, the sequence
/// operators (as nng ops over packed pairs), Optional, OptionalGetElement,
/// OptionalHasElement and SequenceMap (rewritten over tensor parts).
bool onnxOperatorSupported(std::string_view Domain, std::string_view OpType);

/// The value features import refuses that a model uses, by name, sorted;
/// none today (sequence- and optional-typed graph inputs and outputs
/// import as tensor parts, OnnxValue.h). The conformance runner skips
/// tests by these, like by operators. Throws
/// Error(IO) / Error(Parse) like importOnnx().
std::vector<std::string> onnxModelFeatures(const std::string &Path);

/// Every name onnxModelFeatures() may return.
std::vector<std::string> onnxRefusedFeatures();

} // namespace nng::frontend
