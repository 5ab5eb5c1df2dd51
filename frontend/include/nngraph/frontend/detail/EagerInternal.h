//===- EagerInternal.h - Helpers shared by the eager tensor ops -*- C++ -*-===//
//
// Small helpers used by the files of frontend/lib/eager, functional,
// autograd and fx (a detail header: eager declares it for the frontend
// libraries above it, which include it by this path, never by a relative
// one; not an API for users): constant index tensors for ops whose axes or
// shapes are inputs, scalars as 0-d tensors, axis normalization with the op
// in the message, "f32[2, 3]" descriptions for errors, and sumToShape, the
// reduction of a broadcast gradient back to an input's shape.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/frontend/TensorOps.h"

#include <string>
#include <vector>

namespace nng::detail {

/// A 1-D i64 tensor holding Values (shape and axes operands).
Tensor i64Tensor(const std::vector<int64_t> &Values);
/// The 1-D i64 shape operand for Sizes: a constant when every entry is
/// concrete, else (during a trace) a proxy computed by Unsqueeze/Concat
/// from the symbolic entries (the tracer's hooks, EagerHooks.h).
Tensor symShapeTensor(const SymIntList &Sizes);
/// A 0-d tensor holding V in the dtype A computes with V: A's dtype when it
/// can hold V (floating A, or an integral V with integral A), else f32.
Tensor scalarLike(const Tensor &A, Scalar V);
/// A 0-d tensor of dtype T holding V.
Tensor scalarOf(DType T, Scalar V);
/// Maps D in [-Rank, Rank) to [0, Rank); the error names Op and the rank.
int64_t normDim(int64_t D, int64_t Rank, const char *Op);
/// "f32[2, 3]" for messages.
std::string describe(const Tensor &T);
/// X, or an error naming Op when X is undefined or not floating point.
const Tensor &floatInput(const char *Op, const Tensor &X);
/// Sums the broadcast axes of G away so that the result has shape S.
Tensor sumToShape(const Tensor &G, const Shape &S);
/// Casts T to D (no-op when it already has D).
Tensor castTo(const Tensor &T, DType D);
/// Removes the size-1 axes Axes (sorted, normalized) of T.
Tensor squeezeDims(const Tensor &T, const std::vector<int64_t> &Axes);
/// Inserts size-1 axes at Axes (sorted, normalized in the result's rank).
Tensor unsqueezeDims(const Tensor &T, const std::vector<int64_t> &Axes);
/// True while a trace runs (outside the eager runs of leaf modules):
/// tensors may be proxies without values, so value-dependent checks are
/// skipped (dispatch::inSymbolicMode).
bool isTracing();
/// True when some input is on the meta device (MetaDispatch.cpp).
bool anyMeta(const std::vector<rt::Tensor> &Inputs);
/// Op on inputs of which some are meta: the output types from shape
/// inference, as meta tensors; an error when they depend on values.
std::vector<rt::Tensor> runMeta(ir::OpKind Op,
                                const std::vector<rt::Tensor> &Inputs,
                                const ir::AttrMap &Attrs, unsigned NumOutputs);
/// Dims of a Shape as a vector.
inline std::vector<int64_t> dimsOf(const Shape &S) { return S.dims(); }

} // namespace nng::detail
