//===- WindowGeometry.h - Conv and pool windows, resolved -------*- C++ -*-===//
//
// The sliding-window geometry of Conv, ConvTranspose, the pools and their
// relatives (FusedConv, ConvInteger, QLinearConv, ConvGradWeight, the pool
// gradients, MaxUnpool), in one place for shape inference, the reference
// kernels and the cpu backend. readWindowAttrs reads a node's
// kernel_shape, strides, dilations, pads, auto_pad, ceil_mode (and
// ConvTranspose's output_padding and output_shape) with the op table's
// defaults and checks them; forwardWindow and transposedWindow resolve them
// for given input extents into per-axis begin/end pads and output extents.
// ONNX opset 17 semantics; ceil_mode drops a last window that would start
// inside the end padding, as PyTorch and ONNX Runtime do. Errors are values
// (a message), which each caller reports with its own context or turns
// into a fallback.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nng::ir {

class AttrMap;
struct OpSchema;
class TensorType;

/// An extent that is not known: a symbolic input dim, or what follows from
/// one (or from an unknown kernel).
inline constexpr int64_t UnknownExtent = -1;

/// The R spatial extents of X (dims 2..; UnknownExtent where a dim is not
/// static, and everywhere when X's rank is unknown).
std::vector<int64_t> spatialExtents(const TensorType &X, size_t R);

/// The auto_pad attribute.
enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// A node's window attributes for R spatial axes, defaults filled in and
/// checked. An attribute the op does not have reads as its neutral value
/// (no dilation, no ceil_mode, no output_padding).
struct WindowAttrs {
  /// Kernel extents (kernel_shape, or the weight's); empty when unknown.
  std::vector<int64_t> Kernel;
  std::vector<int64_t> Strides, Dilations; ///< R entries, each >= 1.
  /// R begin pads then R end pads, each >= 0; zeros unless auto_pad is
  /// NOTSET.
  std::vector<int64_t> Pads;
  AutoPad Pad = AutoPad::NotSet;
  bool CeilMode = false;
  std::vector<int64_t> OutputPadding; ///< R entries, each >= 0.
  /// ConvTranspose's output_shape: R spatial extents, or empty.
  std::vector<int64_t> OutputShape;
  /// Why the attributes are invalid; empty when they are fine.
  std::string Error;

  size_t rank() const { return Strides.size(); }
  bool ok() const { return Error.empty(); }
};

/// Reads and checks the window attributes of an op with schema S (for its
/// defaults) from Attrs, for R spatial axes. Kernel is the kernel extents
/// when the caller knows them from a weight (empty when not); kernel_shape,
/// when given, is used instead, and the caller checks that the two agree.
WindowAttrs readWindowAttrs(const OpSchema &S, const AttrMap &Attrs, size_t R,
                            std::vector<int64_t> Kernel = {});

/// A window resolved for input extents: kernel extents, strides, dilations,
/// pads (begin and end per axis) and output extents over the spatial axes.
/// For a transposed window PadBegin and PadEnd are cropped from the full
/// result, output_padding counting as negative end padding, so that
/// Out = Strides * (In - 1) + (Kernel - 1) * Dilations + 1 - PadBegin -
/// PadEnd. Where In or the kernel is unknown, Out is UnknownExtent (unless
/// output_shape gives it) and the pads are 0.
struct WindowGeometry {
  std::vector<int64_t> In, Kernel, Strides, Dilations, PadBegin, PadEnd, Out;
  /// Why there is no geometry (bad attributes, a kernel larger than the
  /// padded input, a negative output extent); empty when there is one.
  std::string Error;

  size_t rank() const { return In.size(); }
  bool ok() const { return Error.empty(); }
  /// The product of Out (static extents only).
  int64_t outNumel() const;
  /// The product of Kernel.
  int64_t kernelNumel() const;
};

/// The window of Conv and the pools over input extents In (UnknownExtent
/// where not known): output extents floor (or with ceil_mode ceil) of
/// (In + pads - dilated kernel) / stride + 1; for SAME_* ceil(In / stride)
/// with the padding split evenly, the odd one at the end for SAME_UPPER and
/// at the beginning for SAME_LOWER.
WindowGeometry forwardWindow(const WindowAttrs &A,
                             const std::vector<int64_t> &In);

/// The window of ConvTranspose (and MaxUnpool's default output, the inverse
/// of MaxPool's window) over input extents In: output extents
/// output_shape when given, In * stride for SAME_*, else stride * (In - 1)
/// + output_padding + dilated kernel - pads; with output_shape or SAME_*
/// the padding that gets there is split evenly (the odd one at the end for
/// SAME_UPPER, else at the beginning).
WindowGeometry transposedWindow(const WindowAttrs &A,
                                const std::vector<int64_t> &In);

} // namespace nng::ir
