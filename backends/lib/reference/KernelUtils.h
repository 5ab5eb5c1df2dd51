//===- KernelUtils.h - Helpers shared by the reference kernels ------------===//
//
// Internal to the reference backend: walking strided and broadcast tensors in
// row-major order, typed element access, wrap-around integer arithmetic,
// attribute and input checks that fail with the offending values, and
// ir's window geometry (WindowGeometry.h) for Conv, ConvTranspose and the
// pools, read from a kernel's node. Kernels stay simple loops on top of
// these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Kernels.h"
#include "nngraph/ir/WindowGeometry.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Parallel.h"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace nng::backends::reference {

/// Minimum elements per parallel chunk in elementwise loops.
inline constexpr int64_t ElemGrain = 1 << 14;

/// True for the floating element types, f16 and bf16 included.
template <typename T>
inline constexpr bool IsFloatElem =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
    std::is_same_v<T, BFloat16>;

/// True for the integer element types (bool excluded).
template <typename T>
inline constexpr bool IsIntElem =
    std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The element type's value widened to a type that arithmetic on it uses:
/// double for floats, the type itself for integers and bool.
template <typename T>
using CalcType = std::conditional_t<IsFloatElem<T>, double, T>;

/// Converts to the calculation type of T.
template <typename T> inline CalcType<T> toCalc(T V) {
  if constexpr (IsFloatElem<T>)
    return toDouble(V);
  else
    return V;
}

/// Converts a calculation value back to T.
template <typename T> inline T fromCalc(CalcType<T> V) {
  if constexpr (IsFloatElem<T>)
    return fromDouble<T>(V);
  else
    return V;
}

/// Integer arithmetic that wraps around (two's complement) instead of
/// overflowing, which C++ leaves undefined for signed types.
template <typename T> struct Wrap {
  using U =
      std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  static T add(T A, T B) { return static_cast<T>(U(A) + U(B)); }
  static T sub(T A, T B) { return static_cast<T>(U(A) - U(B)); }
  static T mul(T A, T B) { return static_cast<T>(U(A) * U(B)); }
  static T neg(T A) { return static_cast<T>(U(0) - U(A)); }
};

/// Converts a double to integer type T: truncates toward zero, saturates at
/// T's range and maps NaN to 0 (C++ leaves out-of-range conversions
/// undefined).
template <typename T> inline T saturateCast(double V) {
  static_assert(std::is_integral_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    return V != 0.0;
  } else {
    if (std::isnan(V))
      return T(0);
    constexpr double Lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double Hi = static_cast<double>(std::numeric_limits<T>::max());
    if (V <= Lo)
      return std::numeric_limits<T>::lowest();
    if (V >= Hi)
      return std::numeric_limits<T>::max();
    return static_cast<T>(V);
  }
}

/// Typed read-only pointer to the first element of a view.
template <typename T> inline const T *ptr(const Tensor &X) {
  return X.data<T>();
}
/// Typed pointer to the first element of a view.
template <typename T> inline T *mutPtr(Tensor &X) { return X.data<T>(); }

/// Walks the row-major positions [Begin, End) of shape S. For each operand k
/// it keeps the element offset under strides St[k] and calls F(Flat, Offs),
/// where Offs[k] is that operand's offset at flat position Flat.
template <typename Fn>
void walkStrided(const Shape &S, const std::vector<Strides> &St, int64_t Begin,
                 int64_t End, Fn &&F) {
  if (Begin >= End)
    return;
  size_t R = S.rank(), K = St.size();
  std::vector<int64_t> Idx(R, 0), Offs(K, 0);
  int64_t Rem = Begin;
  for (size_t D = R; D-- > 0;) {
    Idx[D] = Rem % S[D];
    Rem /= S[D];
    for (size_t Op = 0; Op < K; ++Op)
      Offs[Op] += Idx[D] * St[Op][D];
  }
  for (int64_t I = Begin; I < End; ++I) {
    F(I, static_cast<const int64_t *>(Offs.data()));
    for (size_t D = R; D-- > 0;) {
      if (++Idx[D] < S[D]) {
        for (size_t Op = 0; Op < K; ++Op)
          Offs[Op] += St[Op][D];
        break;
      }
      for (size_t Op = 0; Op < K; ++Op)
        Offs[Op] -= (S[D] - 1) * St[Op][D];
      Idx[D] = 0;
    }
  }
}

/// walkStrided over all of S, in parallel chunks.
template <typename Fn>
void parallelWalk(const Shape &S, const std::vector<Strides> &St, Fn &&F) {
  parallelFor(0, S.numel(), ElemGrain,
              [&](int64_t B, int64_t E) { walkStrided(S, St, B, E, F); });
}

/// Numpy broadcasting of several inputs: the common shape and each input as
/// a view of that shape (stride 0 on broadcast axes).
struct BroadcastViews {
  Shape Out;
  std::vector<Tensor> Views;
  /// The strides of each view, for walkStrided.
  std::vector<Strides> strides() const;
};

/// Broadcasts Ins together; throws Error(ShapeMismatch) naming the shapes.
BroadcastViews broadcastInputs(const std::vector<Tensor> &Ins);

/// Calls F(Out[i], A[i], B[i]) elementwise over the broadcast of A and B
/// (element types TA, TB) into a new output 0 of dtype OutT.
template <typename TA, typename TB, typename TO, typename Fn>
void binaryLoop(KernelContext &C, const Tensor &A, const Tensor &B, DType OutT,
                Fn &&F) {
  BroadcastViews BV = broadcastInputs({A, B});
  Tensor &Out = C.allocOutput(0, BV.Out, OutT);
  const TA *PA = ptr<TA>(BV.Views[0]);
  const TB *PB = ptr<TB>(BV.Views[1]);
  TO *PO = mutPtr<TO>(Out);
  parallelWalk(BV.Out, BV.strides(), [&](int64_t I, const int64_t *O) {
    PO[I] = F(PA[O[0]], PB[O[1]]);
  });
}

/// A contiguous f64 copy of X (the way float kernels read their inputs).
Tensor toF64(const Tensor &X);

/// Fails unless X has a floating dtype.
void requireFloat(const KernelContext &C, const Tensor &X, const char *What);
/// Fails unless X and Y have the same dtype.
void requireSameDType(const KernelContext &C, const Tensor &X, const Tensor &Y,
                      const char *WhatX, const char *WhatY);
/// Fails unless X has rank R.
void requireRank(const KernelContext &C, const Tensor &X, size_t R,
                 const char *What);
/// Normalizes Axis for Rank, failing with the node and values when it is out
/// of range.
int64_t normAxis(const KernelContext &C, int64_t Axis, int64_t Rank,
                 const char *What = "axis");
/// The int64 values of a 1-D (or scalar) integer tensor input.
std::vector<int64_t> intsOf(const KernelContext &C, const Tensor &X,
                            const char *What);
/// Inverse of a permutation.
std::vector<int64_t> inversePerm(const std::vector<int64_t> &P);
/// Row-major multi-index of flat position I in shape Dims (size Dims.size()).
void unflatten(int64_t I, const std::vector<int64_t> &Dims, int64_t *Idx);

/// The spatial geometry of a windowed op (Conv, ConvTranspose, the pools)
/// over the spatial axes 2.. of its input: ir's, in one place for inference
/// and every kernel.
using Window = ir::WindowGeometry;

/// C's node's window over an input of shape XShape (N, C, spatial...), by
/// ir::forwardWindow: strides, dilations, pads, auto_pad and ceil_mode as
/// its attributes and the op table say. Kernel is the weight's spatial
/// extents (Conv), or empty to read kernel_shape (the pools). Fails naming
/// the node on bad attributes or a kernel larger than the padded input.
Window forwardWindow(const KernelContext &C, const Shape &XShape,
                     const std::vector<int64_t> &Kernel = {});

/// The same for ConvTranspose (ir::transposedWindow: output_padding and
/// output_shape too).
Window transposedWindow(const KernelContext &C, const Shape &XShape,
                        const std::vector<int64_t> &Kernel);

/// Output 0 = X converted to To where X or To is str (KernelsString.cpp):
/// numbers print as numpy's astype(str) does, strings parse like strtod.
void castWithStrings(KernelContext &C, const Tensor &X, DType To);

} // namespace nng::backends::reference
