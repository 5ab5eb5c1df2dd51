//===- Derivatives.h - The per-area derivative tables ------------*- C++ -*-===//
//
// Each Derivatives*.cpp registers the backward formulas of one area of the
// op table with setBackward; registerAllDerivatives (Derivatives.cpp) calls
// them all once, on the first getBackward. Internal to the frontend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Autograd.h"

namespace nng::autograd {

/// Add, Sub, Mul, Div, Neg, Pow, unary math, Clip, Max/Min, Where, Cast,
/// Identity.
void registerArithmeticDerivatives();
/// Reductions, softmax, shape and indexing ops, MatMul.
void registerTensorDerivatives();
/// Activations, convolution, pooling, normalization and losses.
void registerNNDerivatives();

} // namespace nng::autograd
