//===- FuzzSafetensorsReader.cpp - libFuzzer target for safetensors -------===//
//
// Feeds arbitrary bytes to weights::readSafetensorsFromBytes (JSON header,
// offsets, dtypes). Any outcome but a tensor map or an nng::Error is a bug.
// Every element of every tensor read is touched, so a tensor reaching past
// the data shows up under AddressSanitizer.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  try {
    nng::weights::Metadata Meta;
    nng::weights::TensorMap M =
        nng::weights::readSafetensorsFromBytes(Bytes, "<fuzz>", &Meta);
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
