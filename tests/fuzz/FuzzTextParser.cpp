//===- FuzzTextParser.cpp - libFuzzer target for the text-IR parser ------===//
//
// Feeds arbitrary bytes to ir::parseGraph. Any outcome but a parsed graph or
// an nng::Error (a crash, an abort, a sanitizer report, another exception)
// is a bug. A parsed graph is printed and parsed again, which must succeed
// and print identically.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text(reinterpret_cast<const char *>(Data), Size);
  std::unique_ptr<nng::ir::Graph> G;
  try {
    G = nng::ir::parseGraph(Text, "<fuzz>");
  } catch (const nng::Error &) {
    return 0;
  }
  std::string First = nng::ir::printGraph(*G);
  std::string Second;
  try {
    Second = nng::ir::printGraph(*nng::ir::parseGraph(First, "<reprint>"));
  } catch (const nng::Error &E) {
    std::fprintf(stderr, "printed graph does not parse back: %s\n%s\n",
                 E.what(), First.c_str());
    std::abort();
  }
  if (First != Second) {
    std::fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", First.c_str(),
                 Second.c_str());
    std::abort();
  }
  return 0;
}
