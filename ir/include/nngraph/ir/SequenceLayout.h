//===- SequenceLayout.h - Sequences packed in two tensors ---*- C++ -*-===//
//
// nngraph values are dense tensors, so an ONNX sequence travels as a pair:
// 'data', a 1-D tensor of the element dtype holding every element's values
// flattened and concatenated in order, and 'shapes', a 1-D i64 tensor
// holding per element its rank followed by its dims. Elements may differ in
// rank and shape; an empty sequence is data [0] + shapes [0]. The sequence
// ops' inference functions (ir/lib/InferSequence.cpp), their reference
// kernels and ONNX import/export read and write the pair through these
// helpers, which check a pair without ever reading out of bounds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Shape.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nng::ir {

/// The elements of a packed sequence: each one's shape and where its values
/// start in 'data'.
struct SequenceLayout {
  std::vector<Shape> Shapes;
  /// Offsets[i] is element i's first position in 'data'; Offsets.back() is
  /// the total (one more entry than Shapes).
  std::vector<int64_t> Offsets{0};

  size_t size() const { return Shapes.size(); }
  int64_t dataLength() const { return Offsets.back(); }
  /// Appends an element of shape S.
  void push(const Shape &S);
  /// The 'shapes' encoding: per element its rank, then its dims.
  std::vector<int64_t> encode() const;
};

/// Decodes a 'shapes' tensor's values. When DataLength >= 0 the elements
/// must hold exactly that many values. Returns nullopt and sets Why (what is
/// wrong, with the offending entry) for a malformed encoding: a negative or
/// truncated rank, a negative dim, an element count that overflows or does
/// not match DataLength.
std::optional<SequenceLayout>
decodeSequenceShapes(const std::vector<int64_t> &Encoded, int64_t DataLength,
                     std::string &Why);

/// Resolves an ONNX sequence position against a sequence of Length
/// elements: valid are -Length .. Length-1, and Length itself when
/// AllowEnd (SequenceInsert inserts at the back). Returns nullopt when out
/// of range.
std::optional<int64_t> resolveSequencePosition(int64_t Pos, int64_t Length,
                                               bool AllowEnd);

/// "position 5 is out of range for a sequence of length 3 (valid: -3 to 2)".
std::string sequencePositionError(int64_t Pos, int64_t Length, bool AllowEnd);

/// The extents SplitToSequence cuts an axis of extent D into: D ones
/// without 'split' (Split null); for a scalar 'split' L (ScalarSplit),
/// parts of L and the remainder; for a 1-D 'split', its entries, which must
/// be non-negative and add up to D. Returns nullopt and sets Why ("split 0
/// must be positive", "split [1, 2] adds up to 3 but the axis has extent
/// 4") when 'split' does not fit. Shared by inference and the kernel.
std::optional<std::vector<int64_t>>
sequenceSplitSizes(int64_t D, const std::vector<int64_t> *Split,
                   bool ScalarSplit, std::string &Why);

} // namespace nng::ir
