//===- RewriteUtils.h - Helpers of the simplification passes -*- C++ -*-===//
//
// Small queries and edits that canonicalize, cse, dedup-initializers,
// fuse-transposes and fuse-reshapes share: whether a value may replace
// another without losing a graph output's name, constant data as integers,
// splat tests, axis normalization and Transpose permutations. Private to
// passes/lib.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/passes/PatternRewriter.h"

#include <optional>
#include <vector>

namespace nng::passes::detail {

/// Says why replacing every use of From by To would change the graph's
/// interface (a graph output would take another name or two outputs would
/// merge into one), or returns null when the replacement is safe.
const char *replaceBlocker(const ir::Graph &G, const ir::Value *From,
                           const ir::Value *To);

/// Replaces every use of Old (a node output) by a new initializer holding
/// Data that takes Old's name; Old is renamed out of the way. Returns the
/// initializer.
ir::Value *replaceWithInitializer(PatternRewriter &R, ir::Value *Old,
                                  rt::Tensor Data);

/// The data of V (initializer or Constant output) as integers, or nullopt
/// when V is absent, not constant or not of an integer dtype.
std::optional<std::vector<int64_t>> constantInts(const ir::Value *V);

/// The tensor a Constant node produces, whichever attribute holds it
/// (value, value_float(s), value_int(s)); undefined for string constants.
rt::Tensor constantNodeTensor(const ir::Node &N);

/// True when every element of T equals Scalar (a zero-size T is not a splat).
bool isSplat(const rt::Tensor &T, double Scalar);

/// Normalizes Axes (negative counts from the end) against Rank and sorts
/// them; nullopt when one is out of range or repeated.
std::optional<std::vector<int64_t>> normalizeAxes(std::vector<int64_t> Axes,
                                                  int64_t Rank);

/// The permutation of a Transpose node (its 'perm', or the reversal of its
/// input's known rank); nullopt when neither is known.
std::optional<std::vector<int64_t>> transposePerm(const ir::Node &N);

/// True when Perm is 0, 1, ..., n-1.
bool isIdentityPerm(const std::vector<int64_t> &Perm);

/// The composition of Transpose(Transpose(x, Inner), Outer) as one
/// permutation of x: C[i] = Inner[Outer[i]].
std::vector<int64_t> composePerms(const std::vector<int64_t> &Inner,
                                  const std::vector<int64_t> &Outer);

/// The shape of a static type as an i64 tensor of rank 1.
rt::Tensor shapeTensor(const std::vector<int64_t> &Dims);

/// Replaces every use of Old by New, a value just created by the pattern,
/// and gives New Old's name (Old is renamed out of the way), so rewritten
/// graphs keep readable names.
void replaceWithNewValue(PatternRewriter &R, ir::Value *Old, ir::Value *New);

/// Appends canonicalize's constant-folding patterns (ConstantFolding.cpp):
/// Shape/Size of static types, Gather of static dims of a Shape, and every
/// op with constant inputs whose results have at most MaxElements elements.
void populateConstantFoldingPatterns(
    std::vector<std::unique_ptr<RewritePattern>> &Patterns,
    int64_t MaxElements);

} // namespace nng::passes::detail
