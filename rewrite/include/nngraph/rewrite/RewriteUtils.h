//===- RewriteUtils.h - Helpers of the simplification passes -*- C++ -*-===//
//
// Small queries and edits that canonicalize, cse, dedup-initializers,
// fuse-transposes, fuse-reshapes and the rule passes share: constant data
// as integers, splat tests, axis normalization, Transpose permutations and
// the initializers a rewrite orphaned; for the passes and the backends'
// rules alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"
#include "nngraph/rewrite/PatternRewriter.h"

#include <optional>
#include <unordered_set>
#include <vector>

namespace nng::passes::detail {

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

/// The initializers nothing uses (and that are not graph outputs).
std::unordered_set<const ir::Value *> unusedInitializers(const ir::Graph &G);
/// Erases the initializers nothing uses any more (and that are not graph
/// outputs) but those of UnusedBefore; returns how many. With
/// UnusedBefore = unusedInitializers(G) taken before a rewrite, erases what
/// the rewrite orphaned, including constants it created and then replaced.
int64_t eraseNewlyUnusedInitializers(
    ir::Graph &G, const std::unordered_set<const ir::Value *> &UnusedBefore);

/// Canonicalize's constant-folding rules (ConstantFolding.cpp): Shape/Size
/// of static types, Gather of static dims of a Shape, and any op with
/// constant inputs whose results have at most MaxElements elements.
RewritePatternList constantFoldingRules(int64_t MaxElements);

/// Canonicalize's control-flow rules (ControlFlowRules.cpp): an If with a
/// constant condition becomes the nodes of the branch it takes.
RewritePatternList controlFlowRules();

} // namespace nng::passes::detail
