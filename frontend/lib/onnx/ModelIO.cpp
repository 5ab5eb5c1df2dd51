//===- ModelIO.cpp - Loading and saving models by file extension ----------===//
//
// Format selection by extension (ONNX goes to onnx/OnnxImport.cpp and
// OnnxExport.cpp); files are read and written atomically through
// runtime/FileIO.h.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"


namespace nng::frontend {
namespace {

bool endsWith(std::string_view S, std::string_view Suffix) {
  return S.size() >= Suffix.size() &&
         S.substr(S.size() - Suffix.size()) == Suffix;
}

} // namespace

ModelFormat formatForPath(std::string_view Path) {
  if (endsWith(Path, ".nng"))
    return ModelFormat::Text;
  if (endsWith(Path, ".onnx"))
    return ModelFormat::Onnx;
  fail(ErrorKind::InvalidArgument, "cannot tell the model format of '", Path,
       "' from its extension: use .nng (text) or .onnx");
}

std::unique_ptr<ir::Graph> loadModel(const std::string &Path) {
  if (formatForPath(Path) == ModelFormat::Onnx)
    return importOnnx(Path);
  return loadModelFromText(readFile(Path), Path);
}

std::unique_ptr<ir::Graph> loadModelFromText(std::string_view Text,
                                             std::string_view BufferName) {
  std::unique_ptr<ir::Graph> G = ir::parseGraph(Text, BufferName);
  ir::verifyOrThrow(*G);
  return G;
}

void saveModel(const ir::Graph &G, const std::string &Path,
               const SaveOptions &O) {
  ModelFormat F = O.Format ? *O.Format : formatForPath(Path);
  if (F == ModelFormat::Onnx) {
    exportOnnx(G, Path); // Atomic too, side file (if any) first.
    return;
  }
  ir::PrintOptions PO;
  PO.InlineLimit = O.InlineLimit;
  // Print fully before touching the file system: a printing error must not
  // leave anything behind.
  writeFileAtomic(Path, ir::printGraph(G, PO));
}

} // namespace nng::frontend
