//===- Device.cpp - Device names ------------------------------------------===//

#include "nngraph/runtime/Device.h"
#include "nngraph/runtime/Error.h"

#include <charconv>

namespace nng {

Device Device::parse(std::string_view S) {
  if (S == "cpu")
    return cpu();
  if (S == "cuda")
    return cuda(0);
  if (S == "meta")
    return meta();
  if (S.substr(0, 5) == "cuda:") {
    std::string_view Num = S.substr(5);
    int I = -1;
    auto [Ptr, Ec] = std::from_chars(Num.data(), Num.data() + Num.size(), I);
    if (Ec == std::errc() && Ptr == Num.data() + Num.size() && I >= 0)
      return cuda(I);
  }
  fail(ErrorKind::InvalidArgument, "unknown device '", S,
       "': expected 'cpu', 'cuda', 'cuda:N' or 'meta'");
}

std::string Device::toString() const {
  if (isCPU())
    return "cpu";
  if (isMeta())
    return "meta";
  return "cuda:" + std::to_string(Index);
}

} // namespace nng
