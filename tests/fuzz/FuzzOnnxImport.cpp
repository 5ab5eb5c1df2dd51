//===- FuzzOnnxImport.cpp - libFuzzer target for the ONNX importer -------===//
//
// Feeds arbitrary bytes to frontend::importOnnxFromBytes. Any outcome but an
// imported graph or an nng::Error (a crash, an abort, a sanitizer report,
// another exception escaping from protobuf or ONNX's version converter) is a
// bug. An imported graph must also export (exportOnnxToBytes; a refusal
// as Unsupported is accepted, as for sequence-typed graph I/O) and import
// again, and the second import must print like the first (but for the
// graph's name: an unnamed graph is exported as "nngraph", since ONNX
// requires a name).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

/// Reports a finding and aborts, so libFuzzer saves the reproducer.
[[noreturn]] void finding(const char *What, const std::string &Detail,
                          const std::string &Graph) {
  std::fprintf(stderr, "%s: %s\n%s\n", What, Detail.c_str(), Graph.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  std::unique_ptr<nng::ir::Graph> G;
  try {
    G = nng::frontend::importOnnxFromBytes(Bytes, "<fuzz>");
  } catch (const nng::Error &) {
    return 0;
  }
  std::string First = nng::ir::printGraph(*G);
  std::string Exported;
  try {
    Exported = nng::frontend::exportOnnxToBytes(*G);
  } catch (const nng::Error &E) {
    // Sequence-typed graph I/O imports as tensor parts but is refused at
    // export as Unsupported (docs/onnx.md); anything else is a finding.
    if (E.kind() == nng::ErrorKind::Unsupported)
      return 0;
    finding("an imported graph does not export", E.what(), First);
  }
  std::unique_ptr<nng::ir::Graph> G2;
  try {
    G2 = nng::frontend::importOnnxFromBytes(Exported, "<fuzz: exported>");
  } catch (const nng::Error &E) {
    finding("an exported graph does not import again", E.what(), First);
  }
  G2->setName(G->name());
  std::string Second = nng::ir::printGraph(*G2);
  if (First != Second)
    finding("export and re-import change the graph", "second import:\n" + Second,
            "first import:\n" + First);
  return 0;
}
