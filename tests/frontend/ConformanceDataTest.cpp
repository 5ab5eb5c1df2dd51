//===- ConformanceDataTest.cpp - What the conformance runner relies on ---===//
//
// The pieces of the frontend that nngraph-onnx-conformance uses: TensorProto
// files read back what was written, for every dtype; every input/output file
// of the ONNX backend test data either loads or fails with an nng::Error
// (string and sequence data); and the skip list names only operators that
// nngraph lacks, each with a reason.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nng;
using nng::rt::Tensor;
namespace fs = std::filesystem;

TEST(ConformanceData, TensorBytesRoundTripEveryDType) {
  for (DType T : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                  DType::U8, DType::I16, DType::U16, DType::I32, DType::U32,
                  DType::I64, DType::U64, DType::Bool}) {
    SCOPED_TRACE(std::string(dtypeName(T)));
    Tensor X = Tensor::empty(Shape{2, 3}, T);
    for (int64_t I = 0; I < X.numel(); ++I)
      X.setFlat(I, T == DType::Bool ? I % 2 : I + 1);
    std::string Name;
    Tensor Y = frontend::onnxTensorFromBytes(
        frontend::onnxTensorToBytes(X, "t0"), "mem", &Name);
    EXPECT_EQ(Name, "t0");
    EXPECT_TRUE(Y.equals(X));
  }
  // Scalars and empty tensors.
  Tensor S = Tensor::scalar<int64_t>(-5);
  EXPECT_TRUE(
      frontend::onnxTensorFromBytes(frontend::onnxTensorToBytes(S, ""), "mem")
          .equals(S));
  Tensor E = Tensor::empty(Shape{0, 4}, DType::F32);
  EXPECT_TRUE(
      frontend::onnxTensorFromBytes(frontend::onnxTensorToBytes(E, ""), "mem")
          .equals(E));
}

TEST(ConformanceData, EveryTestDataFileLoadsOrFailsCleanly) {
  fs::path Root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::is_directory(Root))
    GTEST_SKIP() << "SKIPPED: libonnx-testdata is not installed";
  int Loaded = 0, Refused = 0;
  for (const auto &E : fs::recursive_directory_iterator(Root)) {
    if (E.path().extension() != ".pb")
      continue;
    try {
      frontend::readOnnxTensorFile(E.path().string());
      ++Loaded;
    } catch (const Error &Err) {
      ++Refused; // Strings, sequences, optionals.
      EXPECT_NE(std::string(Err.what()).find(E.path().string()),
                std::string::npos)
          << Err.what();
    }
  }
  EXPECT_GT(Loaded, 2000);
  EXPECT_LT(Refused, 100);
}

TEST(ConformanceData, SkipListNamesOnlyUnsupportedOperators) {
  std::ifstream In(NNGRAPH_SOURCE_DIR "/tests/conformance/skips.txt");
  ASSERT_TRUE(In) << "tests/conformance/skips.txt is missing";
  std::string Line;
  int Entries = 0;
  while (std::getline(In, Line)) {
    if (Line.empty() || Line[0] == '#')
      continue;
    size_t Colon = Line.find(": ");
    ASSERT_NE(Colon, std::string::npos) << Line;
    EXPECT_GT(Line.size(), Colon + 10) << "no reason given: " << Line;
    std::stringstream Ops(Line.substr(0, Colon));
    for (std::string Op; std::getline(Ops, Op, ',');) {
      Op.erase(0, Op.find_first_not_of(' '));
      if (Op.rfind("feature:", 0) == 0) {
        std::vector<std::string> Known = frontend::onnxRefusedFeatures();
        EXPECT_NE(std::find(Known.begin(), Known.end(), Op.substr(8)),
                  Known.end())
            << Op << " is not a feature that import refuses";
        ++Entries;
        continue;
      }
      size_t Dot = Op.rfind('.');
      std::string Domain = Dot == std::string::npos ? "" : Op.substr(0, Dot);
      std::string Name = Dot == std::string::npos ? Op : Op.substr(Dot + 1);
      EXPECT_EQ(ir::lookupOp(Domain, Name), nullptr)
          << Op << " is supported: it must not be skipped";
      EXPECT_FALSE(frontend::onnxOperatorSupported(Domain, Name))
          << Op << " is imported: it must not be skipped";
      ++Entries;
    }
  }
  EXPECT_GT(Entries, 0);
}
