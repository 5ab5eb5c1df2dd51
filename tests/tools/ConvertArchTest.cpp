//===- ConvertArchTest.cpp - nngraph-convert --arch, run in-process -------===//
//
// The export mode of nngraph-convert: zoo architecture + weights -> ONNX.
// Every zoo model: weights saved from a C++ model -> --arch -> the ONNX
// file imports with our importer, has the dynamic batch dim N (or the fixed
// --batch), and runs on the reference backend with the eager model's
// output. torchvision's resnet18 (python, torch.save of its state_dict) ->
// --arch resnet18 -> matches torchvision's output at batch 1 and 2 (atol
// 1e-4); SKIPPED without a Python that imports torch and torchvision. Bad
// input: unknown architecture (lists the names), weights of another
// architecture (lists the keys), shape mismatches, bad --batch and output
// extension; a failed run writes nothing.
//
//===----------------------------------------------------------------------===//

#include "common/Subprocess.h"
#include "common/TempDirTest.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/tools/ConvertDriver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

using namespace nng;
using namespace nng::test; // runCommand, shellQuote, pythonCandidates
namespace fs = std::filesystem;

namespace {

struct Result {
  int Status;
  std::string Out, Err;
};

Result runConvert(std::vector<std::string> Args) {
  Args.insert(Args.begin(), "nngraph-convert");
  std::ostringstream Out, Err;
  int Status = tools::runConvertDriver(Args, Out, Err);
  return {Status, Out.str(), Err.str()};
}

/// A Python with torch and torchvision ($NNGRAPH_PYTHON, else
/// /usr/bin/python3, else python3), or nullopt.
std::optional<std::string> torchvisionPython() {
  const std::vector<std::string> Cands = pythonCandidates();
  for (const std::string &Py : Cands) {
    std::string Cmd =
        "'" + Py + "' -c 'import torch, torchvision' >/dev/null 2>&1";
    if (std::system(Cmd.c_str()) == 0)
      return Py;
  }
  return std::nullopt;
}

/// Runs Script with Py; returns (exit status, output).
std::pair<int, std::string> runPython(const std::string &Py,
                                      const fs::path &Dir,
                                      const std::string &Script) {
  fs::path File = Dir / "script.py";
  {
    std::ofstream OS(File);
    OS << Script;
  }
  std::string Cmd = "cd '" + Dir.string() + "' && OMP_NUM_THREADS=1 '" + Py +
                    "' '" + File.string() + "' 2>&1";
  FILE *P = ::popen(Cmd.c_str(), "r");
  std::string Output;
  char Buf[4096];
  while (size_t N = std::fread(Buf, 1, sizeof(Buf), P))
    Output.append(Buf, N);
  int Status = ::pclose(P);
  return {Status, Output};
}

/// Runs the ONNX file at Path on the reference backend.
rt::Tensor runOnnx(const std::string &Path, const rt::Tensor &X) {
  std::unique_ptr<ir::Graph> G = frontend::loadModel(Path);
  auto Exe = backends::getBackend("reference").compile(*G);
  std::vector<rt::Tensor> Out = Exe->run({X});
  EXPECT_EQ(Out.size(), 1u);
  return Out.at(0);
}

double maxAbsDiff(const rt::Tensor &A, const rt::Tensor &B) {
  EXPECT_EQ(A.shape(), B.shape());
  if (A.shape() != B.shape())
    return 1e30;
  return (Tensor(A) - Tensor(B)).abs().max().item<double>();
}

class ConvertArchTest : public test::TempDirTest {
protected:
  ConvertArchTest() : TempDirTest("nngraph-convert-arch-test") {}

  /// Builds zoo model Name (eval), saves its weights to Dir/WeightsName,
  /// exports it with --arch (plus Extra) to Dir/Name.onnx and checks the
  /// file against the eager model at batch sizes Batches.
  void checkExport(const std::string &Name, const std::string &WeightsName,
                   const std::vector<int64_t> &Batches,
                   std::vector<std::string> Extra = {}) {
    SCOPED_TRACE(Name);
    manual_seed(0);
    nn::ModulePtr M = zoo::create(Name);
    M->eval();
    std::string W = path(WeightsName), Onnx = path(Name + ".onnx");
    weights::saveWeights(*M, W);
    std::vector<std::string> Args = {"--arch", Name, "--weights",
                                     W,        "-o", Onnx};
    Args.insert(Args.end(), Extra.begin(), Extra.end());
    Result R = runConvert(Args);
    ASSERT_EQ(R.Status, 0) << R.Err;
    EXPECT_NE(R.Out.find("wrote " + Onnx + " (onnx): " + Name),
              std::string::npos)
        << R.Out;

    std::unique_ptr<ir::Graph> G = frontend::loadModel(Onnx);
    ASSERT_EQ(G->inputs().size(), 1u);
    const ir::TensorType &In = G->inputs()[0]->type();
    const std::vector<int64_t> &Ref = zoo::info(Name).InputShape;
    ASSERT_TRUE(In.hasRank());
    ASSERT_EQ(In.rank(), static_cast<int64_t>(Ref.size()));
    bool Dynamic = Extra.empty();
    if (Dynamic) {
      EXPECT_TRUE(In.dim(0).isSymbolic()) << In.toString();
      if (In.dim(0).isSymbolic())
        EXPECT_EQ(In.dim(0).symbol(), "N");
    }
    for (size_t I = 1; I < Ref.size(); ++I)
      EXPECT_EQ(In.dim(static_cast<int64_t>(I)).value(), Ref[I]) << I;

    auto Exe = backends::getBackend("reference").compile(*G);
    NoGradGuard NoGrad;
    for (int64_t B : Batches) {
      std::vector<int64_t> S = Ref;
      S[0] = B;
      manual_seed(static_cast<uint64_t>(B));
      Tensor X = randn(S);
      Tensor Eager = (*M)(X).toTensor();
      std::vector<rt::Tensor> Out = Exe->run({X.data()});
      ASSERT_EQ(Out.size(), 1u);
      // float32 sums in a different order: the tolerance scales with the
      // logits (resnet34's reach about 200 with random weights and differ by
      // about 2e-4, 1e-6 relative).
      double Scale = 1.0 + Eager.abs().max().item<double>();
      EXPECT_LE(maxAbsDiff(Out[0], Eager.data()), 1e-4 * Scale)
          << "batch " << B << ", max |logit| " << Scale - 1.0;
    }
  }
};

} // namespace

TEST_F(ConvertArchTest, HelpExplainsArchWithAnExample) {
  Result R = runConvert({"--help"});
  EXPECT_EQ(R.Status, 0);
  for (const char *S : {"--arch", "--weights", "--batch", "-o",
                        "nngraph-convert --arch resnet18 --weights "
                        "resnet18.pt -o resnet18.onnx",
                        "transformer_encoder"})
    EXPECT_NE(R.Out.find(S), std::string::npos) << S;
}

TEST_F(ConvertArchTest, Resnet18DynamicBatchMatchesEager) {
  checkExport("resnet18", "resnet18.pt", {1, 2});
}

TEST_F(ConvertArchTest, Resnet34) {
  checkExport("resnet34", "w.safetensors", {1});
}
TEST_F(ConvertArchTest, Resnet50) { checkExport("resnet50", "w.npz", {1}); }
TEST_F(ConvertArchTest, MobilenetV2) {
  checkExport("mobilenet_v2", "w.safetensors", {2});
}
TEST_F(ConvertArchTest, Vgg11Bn) {
  checkExport("vgg11_bn", "w.safetensors", {1});
}
TEST_F(ConvertArchTest, Mlp) { checkExport("mlp", "w.pt", {1, 3}); }
TEST_F(ConvertArchTest, TransformerEncoder) {
  checkExport("transformer_encoder", "w.safetensors", {1, 2});
}

TEST_F(ConvertArchTest, FixedBatch) {
  checkExport("mlp", "w.safetensors", {4}, {"--batch", "4"});
  std::unique_ptr<ir::Graph> G = frontend::loadModel(path("mlp.onnx"));
  EXPECT_EQ(G->inputs()[0]->type().toString(), "f32[4,784]");
  // A fixed batch refuses another size.
  auto Exe = backends::getBackend("reference").compile(*G);
  EXPECT_THROW(Exe->run({randn({2, 784}).data()}), Error);
}

TEST_F(ConvertArchTest, JsonResultAndNng) {
  manual_seed(0);
  nn::ModulePtr M = zoo::create("mlp");
  weights::saveWeights(*M, path("mlp.pt"));
  Result R = runConvert({"--arch", "mlp", "--weights", path("mlp.pt"), "-o",
                         path("mlp.nng"), "--json"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  nlohmann::json J = nlohmann::json::parse(R.Out);
  EXPECT_EQ(J["arch"], "mlp");
  EXPECT_EQ(J["output_format"], "nng");
  EXPECT_EQ(J["batch"], "dynamic");
  EXPECT_EQ(J["inputs"][0]["type"], "f32[N,784]");
  EXPECT_EQ(J["outputs"][0]["type"], "f32[N,10]");
  EXPECT_EQ(J["parameters"], M->num_parameters());
  EXPECT_GE(J["initializers"].get<int64_t>(), 4); // + traced constants
  std::unique_ptr<ir::Graph> G = frontend::loadModel(path("mlp.nng"));
  for (const char *K : {"0.weight", "0.bias", "2.weight", "2.bias"})
    EXPECT_NE(G->lookup(K), nullptr) << K;
}

TEST_F(ConvertArchTest, RemappingAndSelectApply) {
  // A DataParallel-style checkpoint: {'model': {'module.0.weight': ..}}.
  manual_seed(0);
  nn::ModulePtr M = zoo::create("mlp");
  weights::TensorMap SD = weights::fromStateDict(M->state_dict());
  weights::TensorMap Prefixed;
  for (const auto &[K, V] : SD)
    Prefixed.insert("module." + K, V);
  weights::writePt(
      path("ckpt.pt"),
      weights::Object::dict(
          {{weights::Object::string("model"), weights::toObject(Prefixed)},
           {weights::Object::string("epoch"), weights::Object::integer(3)}}));
  // Without the remapping: the key list, exit 1, nothing written.
  Result Bad = runConvert({"--arch", "mlp", "--weights", path("ckpt.pt"),
                           "--select", "model", "-o", path("m.onnx")});
  EXPECT_EQ(Bad.Status, 1);
  EXPECT_NE(Bad.Err.find("module.0.weight"), std::string::npos) << Bad.Err;
  EXPECT_FALSE(fs::exists(path("m.onnx")));
  Result R =
      runConvert({"--arch", "mlp", "--weights", path("ckpt.pt"), "--select",
                  "model", "--strip-prefix", "module.", "-o", path("m.onnx")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  NoGradGuard NoGrad;
  M->eval();
  Tensor X = randn({2, 784});
  EXPECT_LE(
      maxAbsDiff(runOnnx(path("m.onnx"), X.data()), (*M)(X).toTensor().data()),
      1e-5);
}

TEST_F(ConvertArchTest, UnknownArchListsTheNames) {
  Result R = runConvert(
      {"--arch", "resnet19", "--weights", path("w.pt"), "-o", path("m.onnx")});
  EXPECT_EQ(R.Status, 2);
  for (const std::string &N : zoo::names())
    EXPECT_NE(R.Err.find(N), std::string::npos) << N << ": " << R.Err;
  EXPECT_NE(R.Err.find("resnet19"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("m.onnx")));
}

TEST_F(ConvertArchTest, WrongWeightsListTheKeysAndWriteNothing) {
  manual_seed(0);
  nn::ModulePtr M = zoo::create("mlp");
  weights::saveWeights(*M, path("mlp.safetensors"));
  // An existing output stays untouched.
  {
    std::ofstream OS(path("r.onnx"));
    OS << "old";
  }
  Result R = runConvert({"--arch", "resnet18", "--weights",
                         path("mlp.safetensors"), "-o", path("r.onnx")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("conv1.weight"), std::string::npos) << R.Err; // missing
  EXPECT_NE(R.Err.find("0.weight"), std::string::npos) << R.Err; // unexpected
  EXPECT_NE(R.Err.find("mlp.safetensors"), std::string::npos) << R.Err;
  std::ifstream IS(path("r.onnx"));
  std::string Content((std::istreambuf_iterator<char>(IS)), {});
  EXPECT_EQ(Content, "old");
  EXPECT_EQ(files(), (std::vector<std::string>{"mlp.safetensors", "r.onnx"}));

  // Same keys, one shape changed: the mismatch names the key and shapes.
  weights::TensorMap SD = weights::fromStateDict(M->state_dict());
  SD.insert("2.bias", rt::Tensor::fromVector<float>(std::vector<float>(7, 0.0f),
                                                    Shape{7}));
  weights::writeStateDict(path("bad.safetensors"), SD);
  Result S = runConvert({"--arch", "mlp", "--weights", path("bad.safetensors"),
                         "-o", path("m.onnx")});
  EXPECT_EQ(S.Status, 1);
  EXPECT_NE(S.Err.find("2.bias"), std::string::npos) << S.Err;
  EXPECT_FALSE(fs::exists(path("m.onnx")));
}

TEST_F(ConvertArchTest, BadCommandLines) {
  manual_seed(0);
  weights::saveWeights(*zoo::create("mlp"), path("w.pt"));
  struct Case {
    std::vector<std::string> Args;
    const char *Expect;
  } Cases[] = {
      {{"--arch", "mlp", "-o", path("m.onnx")}, "--weights"},
      {{"--arch", "mlp", "--weights", path("w.pt")}, "-o"},
      {{"--arch", "mlp", "--weights", path("w.pt"), "-o", path("m.txt")},
       ".onnx"},
      {{"--arch", "mlp", "--weights", path("w.pt"), "-o", path("m.onnx"),
        "--batch", "0"},
       "--batch"},
      {{"--arch", "mlp", "--weights", path("w.pt"), "-o", path("m.onnx"),
        "--batch", "many"},
       "--batch"},
      {{"--arch", "mlp", "--weights", path("w.xyz"), "-o", path("m.onnx")},
       "w.xyz"},
      {{"--arch", "mlp", "--weights", path("w.pt"), "-o", path("m.onnx"),
        "--list"},
       "--list"},
      {{"--weights", path("w.pt"), "-o", path("m.onnx")}, "--arch"},
      {{}, "no input"},
  };
  for (const Case &C : Cases) {
    Result R = runConvert(C.Args);
    EXPECT_EQ(R.Status, 2) << C.Expect << ": " << R.Err;
    EXPECT_NE(R.Err.find(C.Expect), std::string::npos) << R.Err;
  }
  // A missing weights file is bad input.
  Result R = runConvert(
      {"--arch", "mlp", "--weights", path("none.pt"), "-o", path("m.onnx")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("none.pt"), std::string::npos) << R.Err;
  EXPECT_EQ(files(), (std::vector<std::string>{"w.pt"}));
}

TEST_F(ConvertArchTest, TorchvisionResnet18MatchesTorchvision) {
  std::optional<std::string> Py = torchvisionPython();
  if (!Py)
    GTEST_SKIP() << "no Python with torch and torchvision ($NNGRAPH_PYTHON, "
                    "/usr/bin/python3, python3)";
  auto [Status, Output] = runPython(*Py, Dir, R"(
import torch, torchvision
torch.manual_seed(0)
m = torchvision.models.resnet18()
with torch.no_grad():
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.weight.uniform_(0.5, 1.5)
            mod.bias.uniform_(-0.2, 0.2)
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
m.eval()
torch.save(m.state_dict(), 'resnet18.pt')
x1 = torch.randn(1, 3, 224, 224)
x2 = torch.randn(2, 3, 224, 224)
with torch.no_grad():
    io = {'x1': x1, 'y1': m(x1), 'x2': x2, 'y2': m(x2)}
torch.save(io, 'io.pt')
print('ok')
)");
  ASSERT_EQ(Status, 0) << Output;
  Result R = runConvert({"--arch", "resnet18", "--weights", path("resnet18.pt"),
                         "-o", path("resnet18.onnx")});
  ASSERT_EQ(R.Status, 0) << R.Err;

  std::unique_ptr<ir::Graph> G = frontend::loadModel(path("resnet18.onnx"));
  ASSERT_EQ(G->inputs().size(), 1u);
  EXPECT_EQ(G->inputs()[0]->type().toString(), "f32[N,3,224,224]");
  auto Exe = backends::getBackend("reference").compile(*G);
  weights::TensorMap IO = weights::readStateDict(path("io.pt"));
  for (const char *B : {"1", "2"}) {
    std::vector<rt::Tensor> Out = Exe->run({IO.at(std::string("x") + B)});
    ASSERT_EQ(Out.size(), 1u);
    double Err = maxAbsDiff(Out[0], IO.at(std::string("y") + B));
    EXPECT_LE(Err, 1e-4) << "batch " << B;
    std::printf("resnet18 batch %s: max |nngraph - torchvision| = %.3g\n", B,
                Err);
  }

  // The file itself (read by the onnx package when present) has dim_param N.
  auto [S2, O2] = runPython(*Py, Dir, R"(
try:
    import onnx
except ImportError:
    print('no onnx'); raise SystemExit(0)
m = onnx.load('resnet18.onnx')
onnx.checker.check_model(m)
d = m.graph.input[0].type.tensor_type.shape.dim[0]
print('dim_param', d.dim_param)
)");
  EXPECT_EQ(S2, 0) << O2;
  if (O2.find("no onnx") == std::string::npos)
    EXPECT_NE(O2.find("dim_param N"), std::string::npos) << O2;
}
