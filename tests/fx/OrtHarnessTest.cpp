//===- OrtHarnessTest.cpp - Exports checked in ONNX Runtime and PyTorch --===//
//
// Proves the check harness of OrtTestUtils.h: our ONNX export of a small
// graph runs in ONNX Runtime (onnxruntime-node) at batch 1 and 8 from one
// export and matches the reference backend; for resnet18 and the 4-layer
// transformer encoder, torch_check.py makes seeded weights and a torch.onnx
// export, which we import, reload by state-dict key, re-export and run in
// ORT, in PyTorch (same weights, no ONNX) and on the reference backend, at
// batch 1 and 8 (the import -> export round trip of PyTorch's own exports;
// the traced zoo models' exports are checked in TracedExportTest.cpp). A
// graph with a leaf-module call exports to the custom domain with a
// warning, which ORT refuses and our importer refuses with a clear message. Tests SKIP with the reason when node,
// onnxruntime-node or a Python with torch is missing.
//
//===----------------------------------------------------------------------===//

#include "OrtTestUtils.h"

#include "nngraph/backends/Callbacks.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace nng;
using nng::rt::Tensor;
using nng::test::ExternalRun;

namespace {

bool has(const std::string &S, const std::string &Sub) {
  return S.find(Sub) != std::string::npos;
}

/// x: f32[N,16] -> softmax(relu(x @ W + b)): f32[N,8].
std::unique_ptr<ir::Graph> smallGraph() {
  auto G = std::make_unique<ir::Graph>();
  G->setName("small");
  ir::Value *X = G->addInput(
      "x", ir::TensorType(DType::F32, std::vector<ir::Dim>{ir::Dim::symbol("N"),
                                                          ir::Dim(16)}));
  ir::Value *W = G->addInitializer("fc.weight",
                                   test::seededTensor(Shape{16, 8}, 11));
  ir::Value *B = G->addInitializer("fc.bias", test::seededTensor(Shape{8}, 12));
  ir::Node *M = G->addNode(ir::OpKind::MatMul, {X, W}, {"mm"});
  ir::Node *A = G->addNode(ir::OpKind::Add, {M->output(), B}, {"lin"});
  ir::Node *R = G->addNode(ir::OpKind::Relu, {A->output()}, {"act"});
  ir::AttrMap SA;
  SA.set("axis", ir::Attribute(int64_t(-1)));
  ir::Node *S = G->addNode(ir::OpKind::Softmax, {R->output()}, {"y"}, SA);
  G->addOutput(S->output());
  ir::inferTypes(*G);
  return G;
}

/// Runs G on the reference backend.
std::vector<Tensor> reference(const ir::Graph &G, const std::vector<Tensor> &In) {
  return backends::referenceBackend().compile(G)->run(In);
}

void expectClose(const Tensor &Got, const Tensor &Want, const std::string &What,
                 double Atol, double Rtol) {
  std::string D = test::compareTensors(Got, Want, Atol, Rtol);
  EXPECT_EQ(D, "") << What;
}

TEST(OrtHarness, SmallGraphRunsInOrtAtBatch1And8FromOneExport) {
  auto G = smallGraph();
  std::string Dir = test::freshTestDir("model");
  std::string Model = Dir + "/small.onnx";
  frontend::OnnxExportOptions O;
  O.Check = true;
  frontend::exportOnnx(*G, Model, O);
  for (int64_t Batch : {1, 8}) {
    Tensor X = test::seededTensor(Shape{Batch, 16}, 100 + Batch);
    ExternalRun R = test::runOrt(Model, {X});
    if (R.skipped())
      GTEST_SKIP() << R.SkipReason;
    ASSERT_EQ(R.Outputs.size(), 1u);
    EXPECT_EQ(R.Outputs[0].Name, "y");
    std::cout << "[ ORT ] " << R.Version << ", batch " << Batch
              << ": max |ORT - reference| "
              << test::maxAbsDiff(R.Outputs[0].T, reference(*G, {X})[0])
              << "\n";
    expectClose(R.Outputs[0].T, reference(*G, {X})[0],
                "ORT vs reference, batch " + std::to_string(Batch), 1e-6,
                1e-5);
  }
}

/// A graph whose middle is the leaf module "head" (Head) run by callback Id.
std::unique_ptr<ir::Graph> leafGraph(int64_t Id) {
  auto G = smallGraph();
  ir::Node *Last = G->nodes().back().get();
  ir::AttrMap A;
  A.set("module", ir::Attribute(std::string("head")));
  A.set("module_type", ir::Attribute(std::string("Head")));
  A.set("callback", ir::Attribute(Id));
  ir::Node *Call =
      G->addNode(ir::OpKind::ModuleCall, {Last->output()}, {"head_out"}, A);
  Call->output()->setType(Last->output()->type());
  G->setOutput(0, Call->output());
  ir::inferTypes(*G);
  return G;
}

TEST(OrtHarness, ModuleCallExportsToCustomDomainWithWarning) {
  auto H = backends::registerCallback([](const std::vector<Tensor> &In) {
    return std::vector<Tensor>{In.at(0).clone()};
  });
  auto G = leafGraph(H->id());
  // It runs here, through the callback.
  Tensor X = test::seededTensor(Shape{2, 16}, 5);
  auto Plain = reference(*smallGraph(), {X});
  expectClose(reference(*G, {X})[0], Plain[0], "leaf call", 0, 0);

  std::vector<std::string> Warnings;
  frontend::OnnxExportOptions O;
  O.Warnings = &Warnings;
  O.Check = true; // ONNX's checker accepts a custom domain.
  std::string Dir = test::freshTestDir("leaf");
  std::string Model = Dir + "/leaf.onnx";
  frontend::exportOnnx(*G, Model, O);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_TRUE(has(Warnings[0], "1 leaf-module call [head (Head)]")) << Warnings[0];
  EXPECT_TRUE(has(Warnings[0], "ai.nngraph.module.ModuleCall")) << Warnings[0];
  EXPECT_TRUE(has(Warnings[0], "needs a custom-op implementation")) << Warnings[0];
  std::vector<std::string> Ops = frontend::onnxModelOperators(Model);
  EXPECT_NE(std::find(Ops.begin(), Ops.end(), "ai.nngraph.module.ModuleCall"),
            Ops.end());

  // Our importer refuses it, saying why.
  try {
    frontend::importOnnx(Model);
    ADD_FAILURE() << "importing a model with a leaf-module call succeeded";
  } catch (const Error &E) {
    EXPECT_TRUE(has(E.what(), "graphs with nng.ModuleCall cannot run after "
                              "being saved and reloaded"))
        << E.what();
  }

  // ONNX Runtime has no kernel for it.
  try {
    ExternalRun R = test::runOrt(Model, {X});
    if (R.skipped())
      GTEST_SKIP() << R.SkipReason;
    ADD_FAILURE() << "ONNX Runtime ran a model with a leaf-module call";
  } catch (const Error &E) {
    EXPECT_TRUE(has(E.what(), "ModuleCall")) << E.what();
  }
}

/// A torch.onnx export of Arch through our importer and exporter: import,
/// load the weights by key, re-export with our exporter, and compare ORT,
/// PyTorch (same weights, no ONNX) and the reference backend at batch 1 and
/// 8. (TracedExportTest.cpp does the same for the traced zoo models.)
void checkArchitecture(const std::string &Arch, const std::string &Extra,
                       const Shape &PerItem, double Atol, double Rtol) {
  std::string Dir = test::freshTestDir(Arch);
  std::string Weights = Dir + "/weights", TorchModel = Dir + "/torch.onnx";
  std::string Why = test::makeTorchReference(Arch, Weights, TorchModel, Extra);
  if (!Why.empty())
    GTEST_SKIP() << Why;
  std::unique_ptr<ir::Graph> G = frontend::importOnnx(TorchModel);
  // The same weights, by state-dict key.
  size_t Loaded = 0;
  for (const test::NamedTensor &W : test::readTensorDir(Weights))
    if (ir::Value *V = G->lookup(W.Name); V && V->isInitializer()) {
      ASSERT_EQ(V->data().shape(), W.T.shape()) << W.Name;
      V->setData(W.T.to(V->data().dtype()));
      ++Loaded;
    }
  EXPECT_GT(Loaded, 0u) << "no initializer is named by a state-dict key";
  std::string Ours = Dir + "/ours.onnx";
  frontend::OnnxExportOptions O;
  O.Check = true;
  frontend::exportOnnx(*G, Ours, O);
  auto Exe = backends::referenceBackend().compile(*G);
  for (int64_t Batch : {1, 8}) {
    Shape S = PerItem;
    S.dims().insert(S.dims().begin(), Batch);
    Tensor X = test::seededTensor(S, 1000 + Batch);
    Tensor Ref = Exe->run({X})[0];
    ExternalRun Ort = test::runOrt(Ours, {X});
    if (Ort.skipped())
      GTEST_SKIP() << Ort.SkipReason;
    ExternalRun Torch = test::runTorchCheck(Arch, Weights, {X});
    if (Torch.skipped())
      GTEST_SKIP() << Torch.SkipReason;
    ASSERT_EQ(Ort.Outputs.size(), 1u);
    ASSERT_EQ(Torch.Outputs.size(), 1u);
    std::string B = ", batch " + std::to_string(Batch);
    std::cout << "[ ORT ] " << Arch << B << ": " << Ort.Version << ", "
              << Torch.Version << ", " << Loaded << " weights by key; max "
              << "|ORT - torch| "
              << test::maxAbsDiff(Ort.Outputs[0].T, Torch.Outputs[0].T)
              << ", |reference - torch| "
              << test::maxAbsDiff(Ref, Torch.Outputs[0].T) << ", max |torch| "
              << test::maxAbsDiff(Torch.Outputs[0].T,
                                  Tensor::empty(Torch.Outputs[0].T.shape(),
                                                DType::F32))
              << "\n";
    expectClose(Ort.Outputs[0].T, Torch.Outputs[0].T, "ORT vs torch" + B, Atol,
                Rtol);
    expectClose(Ref, Torch.Outputs[0].T, "reference vs torch" + B, Atol, Rtol);
  }
}

TEST(OrtHarness, Resnet18InOrtAndTorchWithTheSameWeights) {
  checkArchitecture("resnet18", "--size 64", Shape{3, 64, 64}, 1e-4, 1e-3);
}

TEST(OrtHarness, TransformerEncoderInOrtAndTorchWithTheSameWeights) {
  checkArchitecture("transformer_encoder", "--seq 16", Shape{16, 256}, 1e-4,
                    1e-3);
}

} // namespace
