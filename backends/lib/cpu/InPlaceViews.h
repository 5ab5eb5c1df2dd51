//===- InPlaceViews.h - Views an attention loop reads in place --*- C++ -*-===//
//
// An exported attention block slices the heads out of one projection and
// moves them into place: Slice -> Reshape -> Transpose -> nng.Attention
// (torch's multi-head attention: [S, N, 3E] -> [S, N*H, Dh] -> [N*H, S,
// Dh]). Each of those nodes is a view of the projection's bytes, so none
// needs a copy: the lowering leaves the chain unmaterialized (ValueSlot::
// InPlace) and the attention loop reads its operands where the projection
// wrote them, with their own row strides and per-batch offsets. A reader
// that cannot read a view gets a copy made where it reads it.
//
// The view of such a value is a GroupedView: a reshape that merges axes a
// slice left apart (the batch N and the heads H above) cannot be one
// strided axis, so a logical axis may span several strided axes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Lower.h"

namespace nng::backends::cpu {

/// A view of a dense buffer whose logical axes each span zero or more
/// strided axes: visiting the logical axes in row-major order visits Axes
/// in row-major order.
struct GroupedView {
  struct Axis {
    int64_t Size, Stride;
  };
  std::vector<Axis> Axes;
  /// Per logical axis, how many of Axes it spans (0: size 1).
  std::vector<int> Groups;
  int64_t Offset = 0;
};

/// The slot shapes a view is taken at: the slots' own, or the new ones of
/// a reshaped program.
using SlotShapeFn = std::function<const Shape &(int)>;

/// How a value left unmaterialized lies in the buffer of slot Root (a
/// dense f32 buffer), at any shapes of the slots.
struct InPlaceView {
  int Root = -1;
  std::function<std::optional<GroupedView>(const SlotShapeFn &)> At;
};

/// The dense row-major view of a buffer of shape S.
GroupedView denseView(const Shape &S);
/// V sliced by B (In: V's logical shape); a sliced axis must be one strided
/// axis, unless the slice keeps all of it. nullopt for bounds the node
/// kernel rejects (an axis out of range or repeated, a step of 0).
std::optional<GroupedView> sliceOf(GroupedView V, const SliceBounds &B,
                                   const Shape &In);
/// V with its logical axes permuted by PermAttr (Transpose's attribute).
std::optional<GroupedView> transposeOf(const GroupedView &V,
                                       const std::vector<int64_t> &PermAttr);
/// V read as logical shape To (same number of elements): the strided axes
/// in order, size-1 ones dropped and contiguous neighbours merged, are
/// split and grouped into To's axes; nullopt when an axis of To would cut
/// one of them unevenly.
std::optional<GroupedView> reshapeOf(const GroupedView &V, const Shape &To);
/// V as one strided view of its buffer (its strided axes, in order).
StridedView stridedOf(const GroupedView &V);
/// The logical shape of V.
Shape logicalShape(const GroupedView &V);

/// Q, K or V of an attention read in place: per batch entry (row-major
/// over the logical axes but the last two) the element offset of its
/// matrix, and the element strides of the matrix's rows and columns (0
/// along an axis of size 1).
struct MatrixView {
  std::vector<int64_t> Offsets;
  int64_t RowStride = 0, ColStride = 0;
};
/// V as a MatrixView; nullopt when one of its last two logical axes spans
/// several strided axes.
std::optional<MatrixView> matrixView(const GroupedView &V);

/// Lowers N (a Slice, Transpose or reshape-like node) as a view left
/// unmaterialized when its result reaches Q, K or V of an nng.Attention
/// through such nodes only, each the sole reader of the one before; false
/// when it does not (the caller lowers N itself, after materializing an
/// unmaterialized input).
bool lowerInPlaceView(LowerContext &C, const ir::Node &N);

/// Makes value Y, left unmaterialized, a real buffer written by a copy step
/// for a reader that cannot read it in place; returns its slot.
int materializeInPlace(LowerContext &C, const ir::Value *Y);

/// Materializes N's unmaterialized inputs (all of them, or only those
/// beyond the first Keep).
void materializeInPlaceInputs(LowerContext &C, const ir::Node &N,
                              size_t Keep = 0);

} // namespace nng::backends::cpu
