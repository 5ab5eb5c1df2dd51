//===- OnnxRoundTripTest.cpp - import -> export -> import over real models ===//
//
// Every model of the ONNX backend test data (node, simple, pytorch-converted,
// pytorch-operator): import it, export it (ONNX's checker and strict shape
// inference must accept the result), import that again, and require the
// same graph (structurally and as printed text). Models that use operators
// nngraph does not support (or non-tensor values) are skipped and counted.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace nng;

namespace {

constexpr const char *DataRoot = "/usr/share/libonnx-testdata/data";

struct Tally {
  int RoundTripped = 0, Unsupported = 0;
};

void roundTripFolder(const std::string &Folder, int MinRoundTripped) {
  fs::path Root = fs::path(DataRoot) / Folder;
  if (!fs::is_directory(Root))
    GTEST_SKIP() << "SKIPPED: " << Root << " is missing (libonnx-testdata)";
  std::vector<fs::path> Models;
  for (const auto &E : fs::directory_iterator(Root))
    if (fs::is_regular_file(E.path() / "model.onnx"))
      Models.push_back(E.path() / "model.onnx");
  std::sort(Models.begin(), Models.end());
  Tally T;
  for (const fs::path &P : Models) {
    std::string Name = Folder + "/" + P.parent_path().filename().string();
    SCOPED_TRACE(Name);
    std::unique_ptr<ir::Graph> G1;
    try {
      G1 = frontend::importOnnx(P.string());
    } catch (const Error &E) {
      // Only operators and value kinds nngraph lacks may stop an import.
      EXPECT_EQ(E.kind(), ErrorKind::Unsupported) << E.what();
      ++T.Unsupported;
      continue;
    }
    std::string Bytes;
    try {
      Bytes = frontend::exportOnnxToBytes(*G1);
    } catch (const Error &E) {
      // Sequence-typed graph I/O imports as tensor parts but does not
      // export back (docs/onnx.md): counted like an unsupported import.
      EXPECT_EQ(E.kind(), ErrorKind::Unsupported) << E.what();
      ++T.Unsupported;
      continue;
    }
    try {
      frontend::checkOnnxModelBytes(Bytes, Name);
    } catch (const Error &E) {
      ADD_FAILURE() << E.what();
      continue;
    }
    std::unique_ptr<ir::Graph> G2;
    try {
      G2 = frontend::importOnnxFromBytes(Bytes, Name + " (exported)");
    } catch (const Error &E) {
      ADD_FAILURE() << E.what();
      continue;
    }
    EXPECT_EQ(test::graphDiff(*G1, *G2), "");
    EXPECT_EQ(ir::printGraph(*G1), ir::printGraph(*G2));
    ++T.RoundTripped;
  }
  std::cout << "[ onnx round trip ] " << Folder << ": " << T.RoundTripped
            << " round-tripped, " << T.Unsupported
            << " skipped (unsupported operators or value types)\n";
  ::testing::Test::RecordProperty("round_tripped", T.RoundTripped);
  ::testing::Test::RecordProperty("skipped_unsupported", T.Unsupported);
  EXPECT_GE(T.RoundTripped, MinRoundTripped);
}

} // namespace

// The minimums are what import supported when these tests were written;
// they only guard against import silently losing models.
TEST(OnnxRoundTrip, NodeModels) { roundTripFolder("node", 600); }
// simple: 7 before the sequence models imported, 15 with them.
TEST(OnnxRoundTrip, SimpleModels) { roundTripFolder("simple", 15); }
TEST(OnnxRoundTrip, PytorchConvertedModels) {
  roundTripFolder("pytorch-converted", 82);
}
TEST(OnnxRoundTrip, PytorchOperatorModels) {
  roundTripFolder("pytorch-operator", 35);
}
