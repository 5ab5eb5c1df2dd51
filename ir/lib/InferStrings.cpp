//===- InferStrings.cpp - Inference for the string ops -------------------===//
//
// Shape and type inference for StringNormalizer: a str input of shape [C] or
// [1, C] gives a str output of the same rank whose last extent depends on
// the data (how many stopwords are dropped), so it is unknown unless there
// are no stopwords. The attributes are checked here, so a bad
// case_change_action fails when the graph is built, not when it runs.
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"

#include <algorithm>

namespace nng::ir {

/// StringNormalizer(X): str [C] or [1, C] -> str [C'] or [1, C'].
void inferStringNormalizer(InferContext &C) {
  const TensorType &X = C.inputType(0);
  if (X.dtype() != DType::String)
    C.fail("input X must be a str tensor, got ", X.toString());
  const std::string &Action = C.attrString("case_change_action");
  if (Action != "NONE" && Action != "LOWER" && Action != "UPPER")
    C.fail("attribute case_change_action = '", Action,
           "' must be 'NONE', 'LOWER' or 'UPPER'");
  if (!X.hasRank()) {
    C.setOutputType(0, TensorType(DType::String));
    return;
  }
  if (X.rank() != 1 && X.rank() != 2)
    C.fail("input X must have shape [C] or [1, C], got ", X.toString());
  if (X.rank() == 2 && X.dim(0).isStatic() && X.dim(0).value() != 1)
    C.fail("input X of rank 2 must have shape [1, C], got ", X.toString());
  bool NoStopwords =
      !C.hasAttr("stopwords") || C.attr("stopwords").strings().empty();
  const Dim &Last = X.dim(X.rank() - 1);
  // Without stopwords nothing is dropped; an empty input still gives one
  // empty string.
  Dim Out = Dim::unknown();
  if (NoStopwords && Last.isStatic())
    Out = Dim(std::max<int64_t>(Last.value(), 1));
  std::vector<Dim> Dims;
  if (X.rank() == 2)
    Dims.push_back(Dim(1));
  Dims.push_back(Out);
  C.setOutputType(0, TensorType(DType::String, std::move(Dims)));
}

} // namespace nng::ir
