//===- FunctionalInternal.h - Helpers of the nng::F files -------*- C++ -*-===//
//
// Argument checks shared by the functional files: per-axis expansion of
// stride/padding/dilation lists, input validation with the op's name, and
// the loss reduction switch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/detail/EagerInternal.h"

#include <string>
#include <vector>

namespace nng::F::detail {

/// V with one value per spatial axis (a single value repeats); the error
/// names Op and What.
std::vector<int64_t> expandArg(const char *Op, const char *What,
                               const std::vector<int64_t> &V, size_t N);
/// ONNX pads [b0, b1, ..., e0, e1, ...] from symmetric per-axis padding.
std::vector<int64_t> onnxPads(const std::vector<int64_t> &P);
/// Throws unless X is defined and floating point.
void requireFloat(const char *Op, const char *What, const Tensor &X);
/// "mean" -> mean, "sum" -> sum, "none" -> L; else an error naming Op.
Tensor reduceLoss(const char *Op, const Tensor &L, const std::string &R);
/// Throws unless R is "mean", "sum" or "none".
void checkReduction(const char *Op, const std::string &R);

} // namespace nng::F::detail
