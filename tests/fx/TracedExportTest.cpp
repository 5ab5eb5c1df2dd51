//===- TracedExportTest.cpp - Traced zoo exports in ORT and PyTorch -------===//
//
// The end-to-end check of the tracer's exports: the zoo's resnet18 (input
// {"N", 3, 64, 64}) and transformer_encoder ({"N", 16, 256}) are traced in
// eval mode with a dynamic batch dim and saved with GraphModule::save as
// ONNX (its graph input and output keep dim_param "N": checked by reading
// the file back), their weights written by our .pt writer
// (weights::saveWeights). From that ONE export, at batch 1 and 8, the model
// runs in ONNX Runtime (onnxruntime-node) and in PyTorch's ONNX-free check
// (torch_check.py: torchvision's resnet18 / torch.nn.TransformerEncoder with
// the .pt loaded strictly by key), and both match each other and the C++
// eager model. Skips with the reason when node, onnxruntime-node, or a
// Python with torch (and torchvision) is missing.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "OrtTestUtils.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/Zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

using namespace nng;
using nng::test::ExternalRun;

namespace {

/// Randomizes batch-norm statistics and affine parameters, and perturbs
/// every parameter a little so that the encoder's layers differ (loading by
/// key is then really checked).
void randomizeWeights(nn::ModuleBase &M) {
  fxtest::randomizeNorms(M);
  NoGradGuard G;
  for (const auto &[Key, P] : M.named_parameters())
    Tensor(P).add_(randn(P.sizes()) * 0.02);
}

/// max |x| over T.
double maxAbs(const rt::Tensor &T) {
  double M = 0;
  for (double V : T.toDoubleVector())
    M = std::max(M, std::fabs(V));
  return M;
}

void expectClose(const rt::Tensor &Got, const rt::Tensor &Want,
                 const std::string &What, double Atol, double Rtol) {
  EXPECT_EQ(test::compareTensors(Got, Want, Atol, Rtol), "") << What;
}

/// Traces zoo model Arch (input PerItem after the batch dim "N"), exports
/// it once, and checks ORT, PyTorch and eager C++ at batch 1 and 8.
void checkTracedExport(const std::string &Arch,
                       const std::vector<fx::Dim> &PerItem,
                       const std::string &OutType, double Atol, double Rtol) {
  manual_seed(21);
  nn::ModulePtr M = zoo::create(Arch);
  randomizeWeights(*M);
  M->eval();
  std::vector<fx::Dim> Dims{fx::Dim("N")};
  Dims.insert(Dims.end(), PerItem.begin(), PerItem.end());
  fx::GraphModule GM = fx::symbolic_trace(*M, {fx::InputSpec(Dims)});

  std::string Dir = test::freshTestDir(Arch);
  std::string Model = Dir + "/" + Arch + ".onnx";
  std::string Weights = Dir + "/" + Arch + ".pt";
  GM.save(Model);
  weights::saveWeights(*M, Weights);

  // The file itself has the dynamic batch dim (dim_param "N").
  std::unique_ptr<ir::Graph> Back = frontend::importOnnx(Model);
  ASSERT_EQ(Back->inputs().size(), 1u);
  ASSERT_EQ(Back->outputs().size(), 1u);
  std::string InType = Back->inputs()[0]->type().toString();
  EXPECT_EQ(InType.rfind("f32[N,", 0), 0u) << InType;
  EXPECT_EQ(Back->outputs()[0]->type().toString(), OutType);

  for (int64_t Batch : {1, 8}) {
    Shape S;
    S.dims().push_back(Batch);
    for (const fx::Dim &D : PerItem)
      S.dims().push_back(D.extent());
    rt::Tensor X = test::seededTensor(S, 1000 + Batch);
    rt::Tensor Eager;
    {
      NoGradGuard G;
      Tensor Y = (*M)(Tensor(X));
      Eager = Y.data().contiguous();
    }
    ExternalRun Ort = test::runOrt(Model, {X});
    if (Ort.skipped())
      GTEST_SKIP() << Ort.SkipReason;
    ExternalRun Torch = test::runTorchCheck(Arch, Weights, {X});
    if (Torch.skipped())
      GTEST_SKIP() << Torch.SkipReason;
    ASSERT_EQ(Ort.Outputs.size(), 1u);
    ASSERT_EQ(Torch.Outputs.size(), 1u);
    const rt::Tensor &O = Ort.Outputs[0].T, &P = Torch.Outputs[0].T;
    std::string B = ", batch " + std::to_string(Batch);
    std::cout << "[ TracedExport ] " << Arch << B << " (" << Ort.Version
              << ", " << Torch.Version << "): max |ORT - torch| "
              << test::maxAbsDiff(O, P) << ", |eager - torch| "
              << test::maxAbsDiff(Eager, P) << ", |ORT - eager| "
              << test::maxAbsDiff(O, Eager) << ", max |torch| "
              << maxAbs(P)
              << "\n";
    expectClose(O, P, Arch + ": ORT vs torch" + B, Atol, Rtol);
    expectClose(Eager, P, Arch + ": eager C++ vs torch" + B, Atol, Rtol);
    expectClose(O, Eager, Arch + ": ORT vs eager C++" + B, Atol, Rtol);
  }
}

TEST(TracedExport, Resnet18InOrtAndTorchAtBatch1And8FromOneExport) {
  checkTracedExport("resnet18", {fx::Dim(3), fx::Dim(64), fx::Dim(64)},
                    "f32[N,1000]", 1e-4, 1e-3);
}

TEST(TracedExport, TransformerEncoderInOrtAndTorchAtBatch1And8FromOneExport) {
  checkTracedExport("transformer_encoder", {fx::Dim(16), fx::Dim(256)},
                    "f32[N,16,256]", 1e-4, 1e-3);
}

} // namespace
