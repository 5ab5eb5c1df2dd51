//===- EagerFastPath.h - Inline f32 elementwise ops of eager -*- C++ -*-===//
//
// The dispatcher's shortcut for the commonest eager calls (not installed):
// an f32 elementwise op on contiguous CPU tensors of one shape, or with a
// one-element operand, is computed inline (EagerFastPath.cpp) instead of
// through the eager backend's single-op executable, with no operand vectors,
// no cache lookup, no shape inference and, below a size threshold, no
// OpenMP parallel region. Results are bit-identical to the reference
// kernels (f32 +, -, *, /, sqrt and 1/x round exactly like the reference's
// double computation rounded to f32). Dispatch.cpp calls it after the mode
// check, so tracing still sees every op, and only when the eager backend is
// "cpu" (NNGRAPH_EAGER_BACKEND=reference keeps every op on the reference;
// NNGRAPH_EAGER_FAST_PATH=0 turns the shortcut off, to compare).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"
#include "nngraph/ir/OpSchema.h"

namespace nng::detail {

/// Computes the binary op Op (Add, Sub, Mul, Div) of A and B into Out when
/// the fast path serves it: both f32, contiguous, on the CPU, and of one
/// shape or one of them a single element of no greater rank. Returns false
/// (Out untouched) otherwise; the caller then dispatches normally, which
/// also reports any error.
bool fastBinary(ir::OpKind Op, const rt::Tensor &A, const rt::Tensor &B,
                rt::Tensor &Out);

/// Computes the unary op Op (Neg, Relu, Abs, Sqrt, Reciprocal) of a
/// contiguous f32 CPU tensor A into Out; false when it does not serve it.
bool fastUnary(ir::OpKind Op, const rt::Tensor &A, rt::Tensor &Out);

/// dispatch::call1(Op, {A, B}) without building the operand vector when no
/// mode is installed and the fast path serves the call (Dispatch.cpp).
Tensor dispatchBinary(ir::OpKind Op, const Tensor &A, const Tensor &B);

/// dispatch::call1(Op, {A}), likewise.
Tensor dispatchUnary(ir::OpKind Op, const Tensor &A);

} // namespace nng::detail
