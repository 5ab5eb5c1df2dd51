//===- TorchAttentionTest.cpp - fuse-attention on PyTorch exports ---------===//
//
// tests/frontend/scripts/export_attention.py exports small transformers
// with torch.onnx.export as bench/dynamic/export_models.py does: an
// nn.TransformerEncoder (with and without a float mask) and a GPT-2-style
// decoder step with a KV cache. After -O2 every layer's attention must be
// one nng.Attention, the optimized graph must give what the imported one
// gives on the reference backend (1e-4), and the cpu backend must give the
// same on the optimized graph at several lengths from one executable.
// Without a Python that can import torch it is SKIPPED with the reason.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "common/Subprocess.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;
using namespace nng;
using namespace nng::test;
using nng::rt::Tensor;

namespace {

/// Runs the export script into Dir; "" on success, else why it was
/// skipped (a failure other than a missing torch fails the test).
std::string exportModels(const fs::path &Dir) {
  std::string Why;
  for (const std::string &Py : pythonCandidates()) {
    if (Py.find('/') != std::string::npos && !fs::exists(Py)) {
      Why += Py + " does not exist\n";
      continue;
    }
    std::string Out;
    int Status = runCommand("OMP_NUM_THREADS=2 '" + Py +
                                "' '" NNGRAPH_SOURCE_DIR
                                "/tests/frontend/scripts/export_attention.py' '" +
                                Dir.string() + "'",
                            Out);
    if (Status == 0)
      return "";
    if (Status == OracleSkipStatus || Status == 127) {
      Why += Py + ": " + Out;
      continue;
    }
    ADD_FAILURE() << "export_attention.py failed (exit status " << Status
                  << ") with " << Py << ":\n"
                  << Out;
    return "failed";
  }
  return Why.empty() ? "no Python found" : Why;
}

Tensor uniform(const Shape &S, std::mt19937 &Gen) {
  std::uniform_real_distribution<double> U(-1, 1);
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, U(Gen));
  return T;
}

/// A causal float mask [S, S] (-1e4 above the diagonal), as the export's.
Tensor causal(int64_t S) {
  Tensor T = Tensor::empty(Shape{S, S}, DType::F32);
  for (int64_t I = 0; I < S; ++I)
    for (int64_t J = 0; J < S; ++J)
      T.setFlat(I * S + J, J > I ? -1e4 : 0.0);
  return T;
}

size_t countOp(const ir::Graph &G, ir::OpKind K) {
  size_t N = 0;
  for (const auto &Node : G.nodes())
    N += Node->op() == K;
  return N;
}

/// |Got - Want| <= 1e-4 * max(1, |Want|) elementwise.
::testing::AssertionResult close(const Tensor &Got, const Tensor &Want) {
  if (Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "shape " << Got.shape().toString() << ", want "
           << Want.shape().toString();
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    if (!(std::fabs(G - W) <= 1e-4 * std::max(1.0, std::fabs(W))))
      return ::testing::AssertionFailure()
             << "element " << I << ": " << G << ", want " << W;
  }
  return ::testing::AssertionSuccess();
}

/// The inputs of model Name at batch N and length S (cache P for the
/// decoder).
std::vector<Tensor> inputsFor(const std::string &Name, int64_t N, int64_t S,
                              int64_t P, std::mt19937 &Gen) {
  std::vector<Tensor> In = {uniform({N, S, 32}, Gen)};
  if (Name == "encoder_mask")
    In.push_back(causal(S));
  if (Name == "decoder")
    for (int I = 0; I < 4; ++I)
      In.push_back(uniform({N, 4, P, 8}, Gen));
  return In;
}

TEST(TorchAttention, FusedAfterO2AndEqualToTheImportedGraph) {
  fs::path Dir = freshDir("torch-attention");
  std::string Why = exportModels(Dir);
  if (!Why.empty()) {
    if (::testing::Test::HasFailure())
      return;
    GTEST_SKIP() << "SKIPPED: no Python can run the PyTorch export (install "
                    "python3-torch, or set NNGRAPH_PYTHON):\n"
                 << Why;
  }
  for (const std::string Name : {"encoder", "encoder_mask", "decoder"}) {
    SCOPED_TRACE(Name);
    std::unique_ptr<ir::Graph> G =
        frontend::importOnnx((Dir / (Name + ".onnx")).string());
    std::unique_ptr<ir::Graph> O2 = G->clone();
    passes::PassManager PM;
    PM.addPipeline(passes::presetPipeline(2));
    PM.run(*O2);
    // Two layers: two attentions, no Softmax left.
    EXPECT_EQ(countOp(*O2, ir::OpKind::Attention), 2u);
    EXPECT_EQ(countOp(*O2, ir::OpKind::Softmax), 0u);
#if NNGRAPH_HAVE_ONEDNN
    auto Exe = backends::getBackend("cpu").compile(*O2);
#endif
    std::mt19937 Gen(5);
    struct Len {
      int64_t N, S, P;
    };
    for (Len L : std::vector<Len>{{2, 5, 3}, {1, 1, 17}, {3, 9, 1}, {1, 1, 40}}) {
      SCOPED_TRACE("N=" + std::to_string(L.N) + " S=" + std::to_string(L.S) +
                   " P=" + std::to_string(L.P));
      std::vector<Tensor> In = inputsFor(Name, L.N, L.S, L.P, Gen);
      std::vector<Tensor> Want = backends::runReference(*G, In);
      std::vector<Tensor> Got = backends::runReference(*O2, In);
      ASSERT_EQ(Got.size(), Want.size());
      for (size_t I = 0; I < Want.size(); ++I)
        EXPECT_TRUE(close(Got[I], Want[I])) << "-O2, output " << I;
#if NNGRAPH_HAVE_ONEDNN
      std::vector<Tensor> Cpu = Exe->run(In);
      for (size_t I = 0; I < Want.size(); ++I)
        EXPECT_TRUE(close(Cpu[I], Want[I])) << "cpu, output " << I;
#endif
    }
#if NNGRAPH_HAVE_ONEDNN
    auto Stats = backends::cpuExecutableStats(*Exe);
    ASSERT_TRUE(Stats);
    for (const std::string &F : Stats->Fallbacks)
      EXPECT_EQ(F.find("Attention"), std::string::npos)
          << "attention ran on its node kernel: " << F;
#endif
  }
  if (!::testing::Test::HasFailure())
    fs::remove_all(Dir);
}

} // namespace
