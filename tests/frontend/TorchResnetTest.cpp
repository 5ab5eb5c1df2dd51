//===- TorchResnetTest.cpp - A PyTorch-exported resnet18 on the reference ===//
//
// PyTorch as the oracle for a real model: tests/frontend/scripts/
// export_resnet18.py builds torchvision's resnet18 with a fixed seed (random
// weights, nothing downloaded), exports it with torch.onnx.export (opset 17,
// dynamic batch axis) and saves a deterministic input and PyTorch's output
// at batch 1 and 2. This test imports the model, runs it on the reference
// backend at both batch sizes and compares with PyTorch's output. Without a
// Python that can import torch, torchvision and onnx it is SKIPPED with the
// reason.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/runtime/Error.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;
using namespace nng;
using namespace nng::test; // runCommand, shellQuote, pythonCandidates
using nng::rt::Tensor;

namespace {

/// Tolerances against PyTorch's output (float32 accumulation order differs).
constexpr double Atol = 1e-4, Rtol = 1e-3;

/// What running the export script gave.
struct ExportResult {
  bool Exported = false;
  /// Why no interpreter could export (one line per interpreter tried).
  std::string SkipReasons;
};

/// Runs export_resnet18.py into Dir with the first Python that can import
/// torch: $NNGRAPH_PYTHON, else /usr/bin/python3 (Debian's, where
/// python3-torch installs), else python3 from PATH. A script failure other
/// than "cannot import" fails the test.
ExportResult exportResnet(const fs::path &Dir) {
  const std::vector<std::string> Pythons = pythonCandidates();
  ExportResult R;
  for (const std::string &Py : Pythons) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      R.SkipReasons += Py + " does not exist\n";
      continue;
    }
    // OpenBLAS 0.3.21 does not recognise this CPU (DESIGN.md).
    std::string Cmd = "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 '" + Py +
                      "' '" NNGRAPH_SOURCE_DIR
                      "/tests/frontend/scripts/export_resnet18.py' '" +
                      Dir.string() + "'";
    std::string Out;
    int Status = runCommand(Cmd, Out);
    if (Status == 0) {
      std::cout << Out;
      R.Exported = true;
      return R;
    }
    if (Status == 127 && Out.find("export_resnet18") == std::string::npos) {
      R.SkipReasons += Py + ": command not found\n"; // The shell's status.
      continue;
    }
    if (Status != OracleSkipStatus) {
      ADD_FAILURE() << "export_resnet18.py failed (exit status " << Status
                    << ") with " << Py << ":\n"
                    << Out;
      return R;
    }
    R.SkipReasons += Out;
  }
  return R;
}

/// "" when Got matches Want within Atol + Rtol * |want|, else the worst
/// element and how many differ.
std::string compareOutputs(const Tensor &Got, const Tensor &Want) {
  if (Got.dtype() != Want.dtype() || Got.shape() != Want.shape())
    return "got " + std::string(dtypeName(Got.dtype())) +
           Got.shape().toString() + ", expected " +
           std::string(dtypeName(Want.dtype())) + Want.shape().toString();
  std::vector<double> G = Got.toDoubleVector(), W = Want.toDoubleVector();
  int64_t Bad = 0, Worst = -1;
  double WorstErr = 0;
  for (size_t I = 0; I < G.size(); ++I) {
    double Err = std::fabs(G[I] - W[I]);
    if (!(Err <= Atol + Rtol * std::fabs(W[I]))) {
      ++Bad;
      if (Worst < 0 || !(Err <= WorstErr)) {
        Worst = static_cast<int64_t>(I);
        WorstErr = Err;
      }
    }
  }
  if (!Bad)
    return "";
  std::ostringstream OS;
  OS << Bad << " of " << G.size() << " values differ beyond atol " << Atol
     << ", rtol " << Rtol << "; worst at index " << Worst << ": got "
     << G[Worst] << ", expected " << W[Worst];
  return OS.str();
}

/// The largest absolute difference between two tensors of the same shape.
double maxAbsError(const Tensor &A, const Tensor &B) {
  std::vector<double> X = A.toDoubleVector(), Y = B.toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < X.size() && I < Y.size(); ++I)
    M = std::max(M, std::fabs(X[I] - Y[I]));
  return M;
}

} // namespace

TEST(TorchResnet18, MatchesPyTorchAtBatch1And2) {
  fs::path Dir = test::freshDir("torch-resnet18");
  ExportResult R = exportResnet(Dir);
  if (!R.Exported) {
    if (::testing::Test::HasFailure())
      return;
    GTEST_SKIP() << "SKIPPED: no Python can run the PyTorch export (install "
                    "python3-torch, python3-torchvision and python3-onnx, or "
                    "set NNGRAPH_PYTHON):\n"
                 << R.SkipReasons;
  }

  std::unique_ptr<ir::Graph> G;
  ASSERT_NO_THROW(G = frontend::importOnnx((Dir / "resnet18.onnx").string()));
  ASSERT_EQ(G->inputs().size(), 1u);
  ASSERT_EQ(G->outputs().size(), 1u);
  // The dynamic batch axis arrives as the symbolic dim 'N'.
  EXPECT_EQ(G->inputs()[0]->type().toString(), "f32[N,3,224,224]");
  EXPECT_EQ(G->outputs()[0]->type().toString(), "f32[N,1000]");
  EXPECT_GT(G->initializers().size(), 20u);

  for (int Batch : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(Batch));
    std::string B = std::to_string(Batch);
    Tensor X = frontend::readOnnxTensorFile(
        (Dir / ("input_b" + B + ".pb")).string());
    Tensor Want = frontend::readOnnxTensorFile(
        (Dir / ("output_b" + B + ".pb")).string());
    ASSERT_EQ(X.size(0), Batch);
    auto Start = std::chrono::steady_clock::now();
    std::vector<Tensor> Outs;
    try {
      Outs = backends::runReference(*G, {X});
    } catch (const Error &E) {
      FAIL() << E.what();
    }
    double Secs = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
    ASSERT_EQ(Outs.size(), 1u);
    EXPECT_EQ(compareOutputs(Outs[0], Want), "");
    std::cout << "[ torch resnet18 ] batch " << Batch << ": reference backend "
              << Secs << " s, max abs error vs PyTorch "
              << maxAbsError(Outs[0], Want) << "\n";
  }
  if (!::testing::Test::HasFailure())
    fs::remove_all(Dir);
}
