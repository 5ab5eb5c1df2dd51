//===- TransposeRules.h - The Transpose rules of two passes -----*- C++ -*-===//
//
// Composing Transpose chains and removing identity Transposes: rules that
// canonicalize and fuse-transposes both list, defined once. Private to
// passes/lib.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/PatternRewriter.h"

namespace nng::passes::detail {

/// "compose-transposes" and "remove-identity-transpose", in that order.
RewritePatternList transposeRules();

} // namespace nng::passes::detail
