//===- KernelsCast.cpp - Cast and CastLike -------------------------------===//
//
// Reference kernels converting between element types. Floating to integer
// truncates toward zero; values outside the target's range saturate and NaN
// becomes 0 (ONNX leaves these undefined, C++ too; we pick a defined answer).
// Anything to bool is "!= 0" (NaN is true); bool to anything is 0 or 1;
// f16 and bf16 round to nearest even. Casts from and to str are in
// KernelsString.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

namespace nng::backends::reference {

namespace {

/// One element from S to D.
template <typename D, typename S> D castElement(S V) {
  if constexpr (std::is_same_v<D, S>) {
    return V;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (IsFloatElem<S>)
      return toDouble(V) != 0.0;
    else
      return V != 0;
  } else if constexpr (IsIntElem<D>) {
    if constexpr (IsFloatElem<S>)
      return saturateCast<D>(toDouble(V));
    else
      return static_cast<D>(V); // Integer to integer wraps (modular).
  } else if constexpr (std::is_floating_point_v<D>) {
    if constexpr (IsFloatElem<S> && !std::is_floating_point_v<S>)
      return static_cast<D>(static_cast<float>(V));
    else
      return static_cast<D>(V);
  } else {
    // Half or BFloat16 targets round from float (f64 and wide integers
    // round to float first).
    return D(static_cast<float>(V));
  }
}

/// Output 0 = X converted to To.
void castTo(KernelContext &C, const Tensor &X, DType To) {
  if (isString(X.dtype()) || isString(To)) {
    castWithStrings(C, X, To);
    return;
  }
  Tensor Xc = X.contiguous();
  Tensor &Y = C.allocOutput(0, X.shape(), To);
  int64_t N = X.numel();
  visitDType(X.dtype(), [&](auto STag) {
    using S = typename decltype(STag)::type;
    visitDType(To, [&](auto DTag) {
      using D = typename decltype(DTag)::type;
      const S *PX = ptr<S>(Xc);
      D *PY = mutPtr<D>(Y);
      parallelFor(0, N, ElemGrain, [&](int64_t B, int64_t E) {
        for (int64_t I = B; I < E; ++I)
          PY[I] = castElement<D, S>(PX[I]);
      });
    });
  });
}

} // namespace

void kernelCast(KernelContext &C) {
  int64_t To = C.attrInt("to");
  std::optional<DType> T = dtypeFromOnnx(static_cast<int>(To));
  if (!T)
    C.fail("attribute 'to' = ", To,
           " is not a supported element type (ONNX TensorProto.DataType)");
  castTo(C, C.in(0), *T);
}

void kernelCastLike(KernelContext &C) { castTo(C, C.in(0), C.in(1).dtype()); }

} // namespace nng::backends::reference
