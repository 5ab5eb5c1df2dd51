//===- FuzzNpzReader.cpp - libFuzzer target for the .npz reader -----------===//
//
// Feeds arbitrary bytes to weights::readNpzFromBytes (zip container, .npy
// headers, dtypes and shapes). Any outcome but a tensor map or an
// nng::Error is a bug. Every element of every tensor read is touched, so
// an array reaching past its entry shows up under AddressSanitizer.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  try {
    nng::weights::TensorMap M = nng::weights::readNpzFromBytes(Bytes, "<fuzz>");
    volatile double Sum = 0;
    for (const auto &[Key, T] : M) {
      int64_t N = T.numel() < 4096 ? T.numel() : 4096;
      for (int64_t I = 0; I < N; ++I)
        Sum = Sum + T.getFlat(I);
    }
  } catch (const nng::Error &) {
  }
  return 0;
}
