//===- FuzzPtReader.cpp - libFuzzer target for the .pt reader -------------===//
//
// Feeds arbitrary bytes to weights::readPtFromBytes (zip container,
// restricted unpickler, tensor rebuilding). Any outcome but an object or an
// nng::Error (a crash, a sanitizer report, another exception) is a bug.
// Every element of every tensor read is touched, so a view reaching past
// its storage shows up under AddressSanitizer.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

namespace {

double touch(const nng::weights::Object &O) {
  using K = nng::weights::Object::Kind;
  double Sum = 0;
  switch (O.kind()) {
  case K::Tensor: {
    const nng::rt::Tensor &T = O.toTensor();
    int64_t N = T.numel() < 4096 ? T.numel() : 4096;
    for (int64_t I = 0; I < N; ++I)
      Sum += T.getFlat(I);
    break;
  }
  case K::List:
  case K::Tuple:
    for (const auto &E : O.elements())
      Sum += touch(E);
    break;
  case K::Dict:
    for (const auto &E : O.entries())
      Sum += touch(E.second);
    break;
  default:
    break;
  }
  return Sum;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  try {
    nng::weights::Object O = nng::weights::readPtFromBytes(Bytes, "<fuzz>");
    volatile double Sink = touch(O);
    (void)Sink;
    (void)O.summary();
  } catch (const nng::Error &) {
  }
  return 0;
}
