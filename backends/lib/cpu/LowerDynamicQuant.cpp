//===- LowerDynamicQuant.cpp - DynamicQuantizeLinear as an own loop -------===//
//
// ONNX's DynamicQuantizeLinear (opset 11) becomes one step of the backend's
// own loop, bit for bit the reference kernel's (KernelsQuantizedLinalg.cpp):
// the range [min(x, 0), max(x, 0)] (a vectorized, parallel reduction; min
// and max do not depend on the order, and a zero of either sign gives the
// same scale and zero point), scale = (max - min) / 255 (1 when the range
// is empty), zero point = saturate(round_half_even(0 - min / scale)) in
// float, then y = saturate(round_half_even(x / scale) + zero point) by the
// QuantizeLinear loop (KernelsQuant.cpp), which computes exactly that. A NaN
// in x is an error, as in the reference; a range reaching infinity takes
// the reference's scalar formulas element by element. The loop is
// elementwise but for the range, so it runs in its operand's layout when
// that is dense (an int8 convolution's f32 nhwc result): y keeps that
// layout in u8, and the next ConvInteger reads it without a reorder.
//
//===----------------------------------------------------------------------===//

#include "LowerInteger.h"
#include "KernelsQuant.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

namespace nng::backends::cpu {

namespace {

using dnnl::memory;

typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

/// The range of X[0..N) together with 0, and whether X holds a NaN (which
/// the comparisons skip).
struct Range {
  float Lo = 0, Hi = 0;
  bool NaN = false;
};

NNG_VECTOR_CLONES
Range rangeWithZero(const float *X, int64_t N) {
  Floats16 Lo = {}, Hi = {};
  Ints16 Bad = {};
  int64_t I = 0;
  for (; I + 16 <= N; I += 16) {
    Floats16 V;
    std::memcpy(&V, X + I, sizeof(V));
    Lo = V < Lo ? V : Lo;
    Hi = V > Hi ? V : Hi;
    Bad |= V != V;
  }
  Range R;
  for (int K = 0; K < 16; ++K) {
    R.Lo = Lo[K] < R.Lo ? Lo[K] : R.Lo;
    R.Hi = Hi[K] > R.Hi ? Hi[K] : R.Hi;
    R.NaN = R.NaN || Bad[K] != 0;
  }
  for (; I < N; ++I) {
    float V = X[I];
    R.Lo = V < R.Lo ? V : R.Lo;
    R.Hi = V > R.Hi ? V : R.Hi;
    R.NaN = R.NaN || V != V;
  }
  return R;
}

/// rangeWithZero over the threads.
Range parallelRange(const float *X, int64_t N) {
  Range All;
  std::mutex M;
  parallelFor(0, N, int64_t(1) << 16, [&](int64_t B, int64_t E) {
    Range R = rangeWithZero(X + B, E - B);
    std::lock_guard<std::mutex> L(M);
    All.Lo = std::min(All.Lo, R.Lo);
    All.Hi = std::max(All.Hi, R.Hi);
    All.NaN = All.NaN || R.NaN;
  });
  return All;
}

/// Runs DynamicQuantizeLinear over the Count floats at X (in any order of
/// the elements): y into Y, the scale into *S and the zero point into *Z.
/// Where names the node; Plain says X is in logical order (for the index
/// of a NaN in the error).
void dynamicQuantize(const float *X, int64_t Count, uint8_t *Y, float *S,
                     uint8_t *Z, const std::string &Where, bool Plain) {
  Range R = parallelRange(X, Count);
  if (R.NaN) {
    int64_t At = 0;
    while (At < Count && X[At] == X[At])
      ++At;
    fail(ErrorKind::InvalidArgument, "in ", Where, ": x holds NaN at ",
         Plain ? "flat index " : "byte offset (in its blocked layout) ",
         Plain ? At : At * 4, "; its range is undefined");
  }
  // The reference's formulas, in its float operations.
  float Min = R.Lo, Max = R.Hi;
  float Scale = Max == Min ? 1.0f : (Max - Min) / 255.0f;
  float ZP = std::clamp(std::nearbyint(0.0f - Min / Scale), 0.0f, 255.0f);
  *S = Scale;
  *Z = static_cast<uint8_t>(ZP);
  if (!std::isfinite(Min) || !std::isfinite(Max)) {
    // An infinite range: the reference's expression, element by element.
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = static_cast<uint8_t>(
          std::clamp(std::nearbyint(X[I] / Scale) + ZP, 0.0f, 255.0f));
    return;
  }
  // quantizeFloats computes saturate(round_half_even(x / scale) + zp), the
  // same float operations (no NaN reaches it).
  QuantGeometry G;
  G.Scale = {Scale};
  G.ZeroPoint = {static_cast<int32_t>(ZP)};
  G.Inner = Count;
  quantizeFloats(X, Y, DType::U8, G);
}

} // namespace

bool lowerDynamicQuantize(LowerContext &C, const ir::Node &N) {
  const ir::Value *X = N.input(0);
  int In = C.slotOf(X);
  if (C.slot(In).Type != DType::F32 || N.numOutputs() != 3)
    return false; // The reference kernel reports what is wrong.
  const Shape XS = C.shapeOf(X);
  // The operand's own layout when the loop can walk it.
  memory::desc OutMD;
  bool Plain = true;
  const ValueSlot &XSlot = C.slot(In);
  if (XSlot.Blocked) {
    if (isDenseLayout(XSlot.MD, XS, DType::F32)) {
      OutMD = withType(XSlot.MD, memory::data_type::u8);
      Plain = false;
    } else {
      In = C.B.plainOf(In);
    }
  }
  int Y = C.defineBuffer(N.output(0), OutMD);
  int S = C.defineBuffer(N.output(1));
  int Z = C.defineBuffer(N.output(2));
  C.B.writes(S);
  C.B.writes(Z);
  int64_t Count = XS.numel();
  emitLoop(C, {In}, Y, C.describe(N),
           [In, Y, S, Z, Count, Plain, Where = C.describe(N)](Program &P) {
             dynamicQuantize(static_cast<const float *>(P.dataOf(In)), Count,
                             reinterpret_cast<uint8_t *>(P.bufferData(Y)),
                             reinterpret_cast<float *>(P.bufferData(S)),
                             reinterpret_cast<uint8_t *>(P.bufferData(Z)),
                             Where, Plain);
           });
  return true;
}

} // namespace nng::backends::cpu
