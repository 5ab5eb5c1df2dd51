//===- InferUtils.h - Helpers shared by the inference functions -*- C++ -*-===//
//
// Internal to ir/lib. Symbolic broadcasting of TensorTypes (static dims,
// named symbols, unknown dims, unknown rank), axis normalization and dtype
// checks that fail with messages naming the node and the values involved,
// reading known input values as integer lists, and symbolic products of dims
// (Flatten, Reshape). Every Infer*.cpp file includes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/ShapeInference.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir::infer {

/// Broadcasts one pair of dims: equal dims give that dim, a static 1 gives
/// the other, a static extent beats a symbol or unknown (the runtime checks
/// it), two different symbols or a symbol and an unknown give unknown.
/// Returns nullopt when two static extents (neither 1) differ.
std::optional<Dim> broadcastDim(const Dim &A, const Dim &B);

/// The numpy-broadcast type of A and B with A's dtype (the caller checks
/// dtypes). Unknown rank when either rank is unknown. Fails naming both
/// types and the axis when static extents conflict.
TensorType broadcastTypes(const InferContext &C, const TensorType &A,
                          const TensorType &B);

/// Broadcasts the types of inputs First.. (all present inputs) together.
TensorType broadcastInputs(const InferContext &C, size_t First = 0);

/// Fails unless inputs I and J (both present) have the same dtype, naming
/// the operands and both types.
void checkSameDType(const InferContext &C, size_t I, size_t J);

/// Fails unless input I (a fused node's residual Sum, when present) has
/// input 0's dtype and may have the shape of Y, the node's result: equal
/// ranks and compatible dims.
void checkResidualSum(const InferContext &C, size_t I, const TensorType &Y);

/// Fails unless input I has dtype T.
void checkDType(const InferContext &C, size_t I, DType T,
                std::string_view Why = "");

/// Fails unless input I is an integer type (i32 or i64 for indices/shapes).
void checkIndexDType(const InferContext &C, size_t I);

/// Fails unless input I is a floating-point type.
void checkFloatDType(const InferContext &C, size_t I);

/// The schema name of input I ("X", "shape", "data_0[2]").
std::string operandName(const InferContext &C, size_t I);

/// Maps Axis in [-Rank, Rank) to [0, Rank); fails naming What, the value,
/// the rank and the valid range.
int64_t normalizeAxis(const InferContext &C, int64_t Axis, int64_t Rank,
                      std::string_view What = "axis");

/// Normalizes a list of axes; fails on an out-of-range or repeated axis.
std::vector<int64_t> normalizeAxes(const InferContext &C,
                                   const std::vector<int64_t> &Axes,
                                   int64_t Rank,
                                   std::string_view What = "axes");

/// Input I's known value as int64s (any integer dtype), or nullopt when the
/// input is absent or its value is unknown. Fails when the value is not of
/// an integer dtype.
std::optional<std::vector<int64_t>> inputInts(const InferContext &C, size_t I);

/// The static length of a 1-D type (a shape or axes operand), or nullopt.
std::optional<int64_t> staticLength(const TensorType &T);

/// The attributes of C that op schema Of also has, copied (for running
/// another op's rules on C's attributes).
AttrMap attrsFor(const InferContext &C, const OpSchema &Of);

/// A type with Rank unknown dims.
TensorType unknownDims(DType T, int64_t Rank);

/// Fails unless T has a known rank >= MinRank (only checks known ranks).
void requireMinRank(const InferContext &C, size_t Input, int64_t MinRank,
                    std::string_view Why = "");

/// Fails unless input Input has exactly Rank dims (when its rank is known).
void requireRank(const InferContext &C, size_t Input, int64_t Rank,
                 std::string_view Why = "");

/// True when a and b might be the same extent (equal, or not both static).
bool dimsCompatible(const Dim &A, const Dim &B);

/// True when a and b might have one shape: a rank unknown, or equal ranks
/// with every pair of dims compatible.
bool shapesCompatible(const TensorType &A, const TensorType &B);

/// A product of dims kept symbolically: Coeff * Syms[0] * Syms[1] ...;
/// Unknown when a factor is unknown.
struct SymProduct {
  int64_t Coeff = 1;
  std::vector<std::string> Syms; ///< Sorted.
  bool Unknown = false;

  void mul(const Dim &D);
  /// The product as one Dim: static, a single symbol, or unknown. A static
  /// zero factor makes it 0.
  Dim toDim() const;
};

/// The product of Dims[Begin, End).
SymProduct productOf(const std::vector<Dim> &Dims, size_t Begin, size_t End);

} // namespace nng::ir::infer
