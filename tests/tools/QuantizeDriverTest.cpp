//===- QuantizeDriverTest.cpp - nngraph-quantize, run in-process ----------===//
//
// nngraph-quantize on the bundled small CNN: static quantization with an
// .npz calibration set writes an ONNX QDQ file that loads back with s8
// weights and runs close to the float model; --report and --json are
// parseable; --keep-float, --keep-sensitive and --mode dynamic (MatMul,
// and LSTM/GRU with and without --no-contrib-ops) do what they say; bad
// calibration data, a missing calibration set and a model with nothing
// quantizable are errors (status 1) that name the problem and leave no
// output file.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/QuantizeDriver.h"
#include "DriverTestUtils.h"
#include "nngraph/ir/Inputs.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/BuildConfig.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nng;
namespace fs = std::filesystem;

namespace {

using test::SmallCnn;
using Result = test::DriverResult;

Result runQuantize(std::vector<std::string> Args) {
  return test::runDriver(tools::runQuantizeDriver, "nngraph-quantize", std::move(Args));
}

class QuantizeDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = fs::temp_directory_path() /
          ("nngraph-quantize-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(Dir);
    fs::create_directories(Dir);
  }
  void TearDown() override { fs::remove_all(Dir); }

  /// N random samples for the small CNN's input x, as an .npz.
  std::string calibration(int64_t N, const std::string &Key = "x") {
    auto G = frontend::loadModel(SmallCnn);
    auto In = ir::makeDeterministicInputs(*G, {{"N", N}}, 5);
    std::string Path = (Dir / ("calib-" + Key + ".npz")).string();
    weights::TensorMap M;
    M.insert(Key, In[0]);
    weights::writeNpz(Path, M);
    return Path;
  }

  std::string path(const std::string &Name) { return (Dir / Name).string(); }

  fs::path Dir;
};

} // namespace

TEST_F(QuantizeDriverTest, StaticWritesQdqOnnxThatRunsCloseToFloat) {
  std::string Out = path("small.int8.onnx"), Report = path("report.json");
  Result R = runQuantize({SmallCnn, "-o", Out, "--calibration",
                          calibration(24), "--batch-size", "10", "--report",
                          Report});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("quantized 4 nodes (static, minmax over 24 samples)"),
            std::string::npos)
      << R.Out;
  EXPECT_NE(R.Err.find("calibration pass 1"), std::string::npos) << R.Err;
  auto Q = frontend::loadModel(Out);
  int64_t Qs = 0, I8 = 0;
  for (const auto &N : Q->nodes())
    Qs += N->op() == ir::OpKind::QuantizeLinear;
  for (const ir::Value *V : Q->initializers())
    I8 += V->type().dtype() == DType::I8 && V->type().rank() > 1;
  EXPECT_GE(Qs, 4);
  EXPECT_EQ(I8, 3); // Both convolutions and the classifier.
  auto Float = frontend::loadModel(SmallCnn);
  auto In = ir::makeDeterministicInputs(*Float, {{"N", 4}}, 99);
  auto A = backends::runReference(*Float, In);
  auto B = backends::runReference(*Q, In);
  double Err = 0, Mag = 0;
  for (int64_t I = 0; I < A[0].numel(); ++I) {
    Err = std::max(Err, std::fabs(A[0].getFlat(I) - B[0].getFlat(I)));
    Mag = std::max(Mag, std::fabs(A[0].getFlat(I)));
  }
  EXPECT_LT(Err, 0.05 * Mag);
  std::ifstream RS(Report);
  nlohmann::json J = nlohmann::json::parse(RS);
  EXPECT_EQ(J["quantized_nodes"], 4);
  EXPECT_EQ(J["calibration_samples"], 24);
  EXPECT_EQ(J["method"], "minmax");
  EXPECT_TRUE(J["ranges"].contains("x"));
}

TEST_F(QuantizeDriverTest, OptionsKeepFloatSensitivityAndJson) {
  std::string Calib = calibration(8);
  Result R = runQuantize({SmallCnn, "-o", path("a.nng"), "--calibration",
                          Calib, "--keep-float", "fc", "--method",
                          "percentile", "--json"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  nlohmann::json J = nlohmann::json::parse(R.Out);
  EXPECT_EQ(J["quantized_nodes"], 3);
  EXPECT_EQ(J["float_nodes"], 1);
  EXPECT_EQ(J["method"], "percentile");

  R = runQuantize({SmallCnn, "-o", path("b.nng"), "--calibration", Calib,
                   "--sensitivity", "--keep-sensitive", "1", "--report",
                   path("b.json")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("output SQNR"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("1 quantizable nodes kept float"), std::string::npos)
      << R.Out;
  std::ifstream RS(path("b.json"));
  nlohmann::json Rep = nlohmann::json::parse(RS);
  EXPECT_EQ(Rep["sensitivity"]["layers"].size(), 3u);

  R = runQuantize({SmallCnn, "-o", path("d.onnx"), "--mode", "dynamic"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("quantized 1 nodes (dynamic)"), std::string::npos)
      << R.Out;
}

TEST_F(QuantizeDriverTest, DynamicLstmAndGru) {
  // An LSTM and a GRU with constant weights, an LSTM whose W is an input.
  std::string Model = path("rnn.nng");
  std::ofstream(Model)
      << "graph \"rnn\" {\n  input %x: f32[3,1,2]\n  input %wf: f32[1,4,2]\n"
         "  init %w: f32[1,4,2] = [0.5, -1.0, 0.25, 2.0, -0.5, 1.0, 0.0, "
         "-2.0]\n"
         "  init %r: f32[1,4,1] = [0.5, -0.25, 1.0, 0.125]\n"
         "  init %gw: f32[1,3,2] = [0.5, -1.0, 0.25, 2.0, -0.5, 1.0]\n"
         "  init %gr: f32[1,3,1] = [0.5, -0.25, 1.0]\n"
         "  %y, %yh = LSTM(%x, %w, %r) {hidden_size = 1} name(\"lstm\")\n"
         "  %g = GRU(%x, %gw, %gr) {hidden_size = 1} name(\"gru\")\n"
         "  %f = LSTM(%x, %wf, %r) {hidden_size = 1} name(\"float_lstm\")\n"
         "  output %yh, %g, %f\n}\n";
  auto Count = [](const ir::Graph &G, ir::OpKind K) {
    int N = 0;
    for (const auto &Node : G.nodes())
      N += Node->op() == K;
    return N;
  };
  Result R = runQuantize({Model, "-o", path("q.onnx"), "--mode", "dynamic",
                          "--report", path("q.json")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("quantized 2 nodes (dynamic); 1 quantizable nodes "
                       "kept float"),
            std::string::npos)
      << R.Out;
  EXPECT_NE(R.Out.find("gru (GRU): weight-only"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("float: float_lstm (LSTM): weight W is not a constant"),
            std::string::npos)
      << R.Out;
  std::ifstream RS(path("q.json"));
  nlohmann::json Rep = nlohmann::json::parse(RS);
  bool Noted = false;
  for (const auto &N : Rep["nodes"])
    Noted |= N["node"] == "gru" && N.contains("note");
  EXPECT_TRUE(Noted) << Rep.dump(2);
  auto Q = frontend::loadModel(path("q.onnx"));
  EXPECT_EQ(Count(*Q, ir::OpKind::DynamicQuantizeLSTM), 1);
  EXPECT_EQ(Count(*Q, ir::OpKind::GRU), 1);

  // Standard ONNX only: both LSTMs stay LSTM, the quantized one weight-only.
  R = runQuantize(
      {Model, "-o", path("s.onnx"), "--mode", "dynamic", "--no-contrib-ops"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("lstm (LSTM): weight-only"), std::string::npos) << R.Out;
  auto S = frontend::loadModel(path("s.onnx"));
  EXPECT_EQ(Count(*S, ir::OpKind::DynamicQuantizeLSTM), 0);
  EXPECT_EQ(Count(*S, ir::OpKind::LSTM), 2);
  EXPECT_EQ(Count(*S, ir::OpKind::DequantizeLinear), 4);
}

TEST_F(QuantizeDriverTest, BadInputIsAnErrorAndWritesNothing) {
  std::string Out = path("never.onnx");
  Result R = runQuantize({SmallCnn, "-o", Out});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("needs calibration data"), std::string::npos) << R.Err;

  R = runQuantize({SmallCnn, "-o", Out, "--calibration",
                   calibration(4, "image")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("'x'"), std::string::npos) << R.Err;

  R = runQuantize({SmallCnn, "-o", Out, "--calibration", calibration(0)});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("sample"), std::string::npos) << R.Err;

  std::string Plain = path("relu.nng");
  std::ofstream(Plain) << "graph \"relu\" {\n  input %x: f32[N,3]\n"
                          "  %y = Relu(%x)\n  output %y\n}\n";
  R = runQuantize({Plain, "-o", Out, "--random-calibration", "4"});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("nothing"), std::string::npos) << R.Err;

  R = runQuantize({SmallCnn, "-o", Out, "--method", "kl",
                   "--random-calibration", "4"});
  EXPECT_EQ(R.Status, 2);
  EXPECT_FALSE(fs::exists(Out));
}
