//===- Shape.h - Tensor shapes and strides ----------------------*- C++ -*-===//
//
// Shape is a list of non-negative extents (a rank-0 shape is a scalar);
// Strides are element strides. Helpers compute element counts, contiguous
// strides, axis normalization and broadcasting, and check validity with
// errors that name the values involved.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nng {

/// Extents of a tensor, outermost first.
class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> Dims) : Dims(Dims) {}
  explicit Shape(std::vector<int64_t> Dims) : Dims(std::move(Dims)) {}
  template <typename It> Shape(It B, It E) : Dims(B, E) {}

  size_t rank() const { return Dims.size(); }
  int64_t operator[](size_t I) const { return Dims[I]; }
  int64_t &operator[](size_t I) { return Dims[I]; }
  /// Extent of axis I, where a negative I counts from the end.
  int64_t dim(int64_t I) const;
  /// Product of the extents (1 for a scalar).
  int64_t numel() const;
  const std::vector<int64_t> &dims() const { return Dims; }
  std::vector<int64_t> &dims() { return Dims; }
  auto begin() const { return Dims.begin(); }
  auto end() const { return Dims.end(); }
  void push_back(int64_t D) { Dims.push_back(D); }
  bool empty() const { return Dims.empty(); }
  /// "[2, 3, 4]".
  std::string toString() const;
  bool operator==(const Shape &O) const = default;

  /// Throws Error(InvalidArgument) if an extent is negative or the element
  /// count overflows int64.
  void validate() const;

private:
  std::vector<int64_t> Dims;
};

/// "[2, 3, 4]": a list of integers as messages and Shape::toString print
/// it.
std::string intsToString(const std::vector<int64_t> &V);

/// Element strides, outermost first.
using Strides = std::vector<int64_t>;

/// Row-major strides for S.
Strides contiguousStrides(const Shape &S);

/// Maps Axis in [-Rank, Rank) to [0, Rank); throws with the op context.
int64_t normalizeAxis(int64_t Axis, int64_t Rank, const char *What = "axis");

/// The numpy-broadcast shape of A and B; throws Error(ShapeMismatch) naming
/// both shapes when they are incompatible.
Shape broadcastShapes(const Shape &A, const Shape &B);

} // namespace nng
