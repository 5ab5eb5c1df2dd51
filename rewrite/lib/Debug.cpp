//===- Debug.cpp - --debug-only output of passes -------------------------===//

#include "nngraph/rewrite/Debug.h"

#include <algorithm>
#include <iostream>

namespace nng::passes {

namespace {
std::vector<std::string> &enabled() {
  static std::vector<std::string> Names;
  return Names;
}
std::ostream *&stream() {
  static std::ostream *OS = nullptr;
  return OS;
}
} // namespace

void setDebugOnly(std::vector<std::string> PassNames) {
  enabled() = std::move(PassNames);
}

bool debugEnabled(std::string_view PassName) {
  const auto &E = enabled();
  return std::any_of(E.begin(), E.end(), [&](const std::string &N) {
    return N == PassName || N == "all" || N == "*";
  });
}

std::ostream &debugStream() { return stream() ? *stream() : std::cerr; }

void setDebugStream(std::ostream *OS) { stream() = OS; }

} // namespace nng::passes
