//===- OnnxTextRoundTripTest.cpp - ONNX -> text -> ONNX over real models -===//
//
// Every model of the ONNX backend test data (node, simple,
// pytorch-converted, pytorch-operator) that imports: print it in the text
// format with every initializer inline, parse the text back, export the
// parsed graph (ONNX's checker and strict shape inference must accept it),
// import that, and require the same printed graph as the first import. So
// the text format carries everything an ONNX model gives the graph, and a
// graph parsed from text exports like one imported from ONNX. Models whose
// import is refused as unsupported are counted, never failed.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace nng;

namespace {

constexpr const char *DataRoot = "/usr/share/libonnx-testdata/data";

/// Every initializer inline, so the text holds all of the model's data.
ir::PrintOptions everythingInline() {
  ir::PrintOptions O;
  O.InlineLimit = -1;
  return O;
}

/// Runs import -> print -> parse -> export -> import on one model; adds a
/// failure naming the step that broke. Returns false when the model's
/// import is refused as unsupported.
bool textRoundTrip(const fs::path &Model, const std::string &Name) {
  std::unique_ptr<ir::Graph> G1;
  try {
    G1 = frontend::importOnnx(Model.string());
  } catch (const Error &E) {
    // Only operators and value kinds nngraph lacks may stop an import.
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported) << E.what();
    return false;
  }
  try {
    frontend::exportOnnxToBytes(*G1);
  } catch (const Error &E) {
    // Sequence-typed graph I/O imports as tensor parts but does not
    // export back (docs/onnx.md): counted like an unsupported import.
    EXPECT_EQ(E.kind(), ErrorKind::Unsupported) << E.what();
    return false;
  }
  const ir::PrintOptions Inline = everythingInline();
  std::string Text = ir::printGraph(*G1, Inline);
  std::unique_ptr<ir::Graph> Parsed;
  try {
    Parsed = ir::parseGraph(Text, Name + ".nng");
  } catch (const Error &E) {
    ADD_FAILURE() << "the printed graph does not parse: " << E.what() << "\n"
                  << Text;
    return true;
  }
  EXPECT_EQ(test::graphDiff(*G1, *Parsed), "") << "text -> graph";
  std::string Bytes;
  try {
    Bytes = frontend::exportOnnxToBytes(*Parsed);
    frontend::checkOnnxModelBytes(Bytes, Name + " (from text)");
  } catch (const Error &E) {
    ADD_FAILURE() << "the parsed graph does not export: " << E.what();
    return true;
  }
  std::unique_ptr<ir::Graph> G2;
  try {
    G2 = frontend::importOnnxFromBytes(Bytes, Name + " (from text)");
  } catch (const Error &E) {
    ADD_FAILURE() << "the exported graph does not import: " << E.what();
    return true;
  }
  EXPECT_EQ(test::graphDiff(*G1, *G2), "") << "ONNX -> text -> ONNX";
  EXPECT_EQ(Text, ir::printGraph(*G2, Inline));
  return true;
}

void textRoundTripFolder(const std::string &Folder, int MinRoundTripped) {
  fs::path Root = fs::path(DataRoot) / Folder;
  if (!fs::is_directory(Root))
    GTEST_SKIP() << "SKIPPED: " << Root << " is missing (libonnx-testdata)";
  std::vector<fs::path> Models;
  for (const auto &E : fs::directory_iterator(Root))
    if (fs::is_regular_file(E.path() / "model.onnx"))
      Models.push_back(E.path() / "model.onnx");
  std::sort(Models.begin(), Models.end());
  int RoundTripped = 0, Unsupported = 0;
  for (const fs::path &P : Models) {
    std::string Name = Folder + "/" + P.parent_path().filename().string();
    SCOPED_TRACE(Name);
    if (textRoundTrip(P, Name))
      ++RoundTripped;
    else
      ++Unsupported;
  }
  std::cout << "[ onnx text round trip ] " << Folder << ": " << RoundTripped
            << " round-tripped through text, " << Unsupported
            << " skipped (unsupported operators or value types)\n";
  ::testing::Test::RecordProperty("round_tripped", RoundTripped);
  ::testing::Test::RecordProperty("skipped_unsupported", Unsupported);
  EXPECT_GE(RoundTripped, MinRoundTripped);
}

} // namespace

// The minimums are those of OnnxRoundTripTest.cpp: every model that imports
// also goes through text.
TEST(OnnxTextRoundTrip, NodeModels) { textRoundTripFolder("node", 600); }
// simple: 7 before the sequence models imported, 15 with them.
TEST(OnnxTextRoundTrip, SimpleModels) { textRoundTripFolder("simple", 15); }
TEST(OnnxTextRoundTrip, PytorchConvertedModels) {
  textRoundTripFolder("pytorch-converted", 82);
}
TEST(OnnxTextRoundTrip, PytorchOperatorModels) {
  textRoundTripFolder("pytorch-operator", 35);
}
