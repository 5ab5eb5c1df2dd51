//===- EinsumEquation.h - Parsing Einsum equations --------------*- C++ -*-===//
//
// The Einsum op's equation ("bij,bjk->bik", "ii", "...ij,...jk") resolved
// against the ranks of the operands: one label per operand axis, with the
// axes an ellipsis covers given labels of their own (aligned from the right,
// numpy-style, so they broadcast), and the output's labels (explicit after
// "->", or implicit: the ellipsis axes, then the letters that occur exactly
// once, in alphabetical order). Shape inference and the reference kernel
// share it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir {

/// An Einsum equation resolved against operand ranks. Labels are numbered
/// 0..NumLabels-1: first the ellipsis axes (EllipsisRank of them, the
/// broadcast of every operand's ellipsis), then the letters in order of
/// first appearance.
struct EinsumPlan {
  int NumLabels = 0;
  int EllipsisRank = 0;
  /// Per operand, per axis: its label. An operand whose term repeats a
  /// letter names that label on several axes (a diagonal).
  std::vector<std::vector<int>> InputLabels;
  /// The output's labels, one per output axis (distinct).
  std::vector<int> OutputLabels;
  /// Per label, the text it came from ("i", or "...[0]" for ellipsis axes).
  std::vector<std::string> LabelNames;
};

/// Resolves Equation for operands of the given Ranks. On malformed input
/// returns false and sets Error to a message naming the problem.
bool planEinsum(std::string_view Equation, const std::vector<int64_t> &Ranks,
                EinsumPlan &Plan, std::string &Error);

} // namespace nng::ir
