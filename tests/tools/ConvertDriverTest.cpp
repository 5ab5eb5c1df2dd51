//===- ConvertDriverTest.cpp - nngraph-convert, run in-process ------------===//
//
// The driver's contract: all six direction pairs between .pt, safetensors
// and .npz (and same-format rewrites) keep keys, order, dtypes and values;
// --list and --json; --select on nested checkpoints written by writePt and
// by python torch (and torch.load(weights_only=True) reading what we
// write); the remapping report; bf16 and .npz; bad input (unknown
// extension, missing file, bad key path) with exit statuses; atomicity: a
// failing run leaves an existing OUT untouched and no temporary files.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ConvertDriver.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"
#include "nngraph/runtime/Half.h"
#include "common/Subprocess.h"
#include "common/TempDirTest.h"

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
using namespace nng::weights;
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

/// A state dict with several dtypes, in a deliberate (non-sorted) order.
TensorMap sample(bool WithBf16 = false) {
  TensorMap M;
  M.insert("fc.weight",
           rt::Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}));
  M.insert("fc.bias", rt::Tensor::fromVector<float>({-1, 1}, Shape{2}));
  M.insert("bn.num_batches_tracked", rt::Tensor::scalar<int64_t>(7));
  M.insert(
      "emb.half",
      rt::Tensor::fromVector<float>({0.5f, 1.5f}, Shape{2}).to(DType::F16));
  M.insert("mask", rt::Tensor::fromVector<bool>({true, false, true}, Shape{3}));
  M.insert("a.double", rt::Tensor::fromVector<double>({3.25}, Shape{1, 1}));
  M.insert("ids", rt::Tensor::fromVector<int32_t>({1, 2, 3}, Shape{3}));
  if (WithBf16)
    M.insert(
        "w.bf16",
        rt::Tensor::fromVector<float>({1.5f, -2.0f}, Shape{2}).to(DType::BF16));
  return M;
}

void expectSameMaps(const TensorMap &A, const TensorMap &B) {
  ASSERT_EQ(A.keys(), B.keys());
  for (const auto &[K, T] : A) {
    EXPECT_EQ(T.dtype(), B.at(K).dtype()) << K;
    EXPECT_TRUE(T.equals(B.at(K))) << K;
  }
}

/// A Python with torch ($NNGRAPH_PYTHON, else /usr/bin/python3, else
/// python3), or nullopt.
std::optional<std::string> torchPython() {
  const std::vector<std::string> Cands = pythonCandidates();
  for (const std::string &Py : Cands) {
    std::string Cmd = "'" + Py + "' -c 'import torch' >/dev/null 2>&1";
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
  std::string Cmd =
      "OMP_NUM_THREADS=1 '" + Py + "' '" + File.string() + "' 2>&1";
  FILE *P = ::popen(Cmd.c_str(), "r");
  std::string Output;
  char Buf[4096];
  while (size_t N = std::fread(Buf, 1, sizeof(Buf), P))
    Output.append(Buf, N);
  int Status = ::pclose(P);
  fs::remove(File);
  return {Status, Output};
}

class ConvertDriverTest : public test::TempDirTest {
protected:
  ConvertDriverTest() : TempDirTest("nngraph-convert-test") {}
  /// A nested checkpoint written by writePt.
  std::string writeCheckpoint() {
    std::string P = path("ckpt.pt");
    Object Opt = Object::dict(
        {{Object::string("state"),
          Object::dict(
              {{Object::integer(0),
                Object::dict(
                    {{Object::string("momentum_buffer"),
                      Object::tensor(rt::Tensor::scalar<float>(2))}})}})},
         {Object::string("lr"), Object::floating(0.1)}});
    writePt(P, Object::dict(
                   {{Object::string("model_state_dict"), toObject(sample())},
                    {Object::string("optimizer_state_dict"), Opt},
                    {Object::string("epoch"), Object::integer(3)}}));
    return P;
  }
};

const char *const Exts[] = {".pt", ".safetensors", ".npz"};

} // namespace

TEST_F(ConvertDriverTest, HelpExplainsOptionsWithExamples) {
  Result R = runConvert({"--help"});
  EXPECT_EQ(R.Status, 0);
  for (const char *Word :
       {"--list", "--json", "--select", "--strip-prefix", "--add-prefix",
        "--rename", "--strict-rename", "--bf16-to-f32", "--in-place",
        "e.g. nngraph-convert", "Exit status", "Examples"})
    EXPECT_NE(R.Out.find(Word), std::string::npos) << "missing " << Word;
}

TEST_F(ConvertDriverTest, AllDirectionPairsAndSameFormatRewrites) {
  TensorMap Src = sample();
  for (const char *From : Exts) {
    std::string In = path(std::string("in") + From);
    writeStateDict(In, Src);
    for (const char *To : Exts) {
      SCOPED_TRACE(std::string(From) + " -> " + To);
      std::string Out = path(std::string("out-") + (From + 1) + To);
      Result R = runConvert({In, Out});
      ASSERT_EQ(R.Status, 0) << R.Err;
      EXPECT_NE(R.Out.find("wrote " + Out), std::string::npos) << R.Out;
      EXPECT_NE(R.Out.find("7 tensors"), std::string::npos) << R.Out;
      expectSameMaps(readStateDict(Out), Src);
    }
  }
}

TEST_F(ConvertDriverTest, ListPrintsKeysDtypesShapesAndTotals) {
  std::string In = path("w.safetensors");
  writeStateDict(In, sample());
  Result R = runConvert({In, "--list"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("fc.weight"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("f32"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("[2, 3]"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("bool"), std::string::npos) << R.Out;
  // 6 + 2 + 1 + 2 + 3 + 1 + 3 elements; 24 + 8 + 8 + 4 + 3 + 8 + 12 bytes.
  EXPECT_NE(R.Out.find("7 tensors, 18 parameters, 67 bytes"), std::string::npos)
      << R.Out;
  // Key order is the file's.
  EXPECT_LT(R.Out.find("fc.weight"), R.Out.find("fc.bias"));
  EXPECT_LT(R.Out.find("fc.bias"), R.Out.find("bn.num_batches_tracked"));
}

TEST_F(ConvertDriverTest, JsonListing) {
  std::string In = path("w.npz");
  writeStateDict(In, sample());
  Result R = runConvert({In, "--list", "--json"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  nlohmann::json J = nlohmann::json::parse(R.Out);
  EXPECT_EQ(J["input_format"], "npz");
  EXPECT_EQ(J["count"], 7);
  EXPECT_EQ(J["parameters"], 18);
  EXPECT_EQ(J["bytes"], 67);
  ASSERT_EQ(J["tensors"].size(), 7u);
  EXPECT_EQ(J["tensors"][0]["key"], "fc.weight");
  EXPECT_EQ(J["tensors"][0]["dtype"], "f32");
  EXPECT_EQ(J["tensors"][0]["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(J["tensors"][2]["shape"], nlohmann::json::array());
}

TEST_F(ConvertDriverTest, JsonConversionResultWithRemapReport) {
  std::string In = path("w.safetensors"), Out = path("w.pt");
  writeStateDict(In, sample());
  Result R = runConvert(
      {In, Out, "--json", "--add-prefix", "m.", "--rename", "zzz=y"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  nlohmann::json J = nlohmann::json::parse(R.Out);
  EXPECT_EQ(J["output"], Out);
  EXPECT_EQ(J["output_format"], "pt");
  ASSERT_EQ(J["remap"].size(), 2u);
  EXPECT_EQ(J["remap"][0]["step"], "rename 'zzz=y'");
  EXPECT_EQ(J["remap"][0]["changed"], 0);
  EXPECT_EQ(J["remap"][1]["changed"], 7);
  EXPECT_EQ(J["unmatched"], nlohmann::json::array({"rename 'zzz=y'"}));
  EXPECT_EQ(readStateDict(Out).keys().front(), "m.fc.weight");
}

TEST_F(ConvertDriverTest, SelectPicksASubDictOfANestedCheckpoint) {
  std::string In = writeCheckpoint(), Out = path("model.safetensors");
  Result R = runConvert({In, Out, "--select", "model_state_dict"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  expectSameMaps(readStateDict(Out), sample());

  R = runConvert({In, "--list", "--select", "optimizer_state_dict/state/0"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("momentum_buffer"), std::string::npos) << R.Out;
}

TEST_F(ConvertDriverTest, CheckpointWithoutRootTensorsNeedsSelect) {
  std::string In = writeCheckpoint(), Out = path("model.safetensors");
  Result R = runConvert({In, Out});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("no tensors at its root"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("--select"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("'model_state_dict'"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("'epoch'"), std::string::npos) << R.Err;
  EXPECT_FALSE(fs::exists(Out));
  // --list shows everything, with a note.
  R = runConvert({In, "--list"});
  EXPECT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("model_state_dict.fc.weight"), std::string::npos);
  EXPECT_NE(R.Err.find("note:"), std::string::npos) << R.Err;
}

TEST_F(ConvertDriverTest, BadKeyPathListsTheKeysThere) {
  std::string In = writeCheckpoint();
  Result R = runConvert({In, path("o.npz"), "--select", "model"});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("has no key 'model'"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("'model_state_dict'"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("ckpt.pt"), std::string::npos) << R.Err;
  // --select on a flat format is a command-line error.
  std::string Flat = path("w.npz");
  writeStateDict(Flat, sample());
  R = runConvert({Flat, "--list", "--select", "model"});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("drop --select"), std::string::npos) << R.Err;
}

TEST_F(ConvertDriverTest, RemapReportsUnmatchedRules) {
  TensorMap Src;
  Src.insert("module.fc.weight", rt::Tensor::scalar<float>(1));
  Src.insert("module.fc.bias", rt::Tensor::scalar<float>(2));
  std::string In = path("dp.pt"), Out = path("plain.safetensors");
  writeStateDict(In, Src);
  Result R = runConvert({In, Out, "--strip-prefix", "module.", "--rename",
                         "^fc\\.=head.", "--rename", "^encoder=enc"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(readStateDict(Out).keys(),
            (std::vector<std::string>{"head.weight", "head.bias"}));
  EXPECT_NE(R.Err.find("warning: rename '^encoder=enc' changed no key"),
            std::string::npos)
      << R.Err;
  EXPECT_NE(R.Err.find("strip-prefix 'module.': 2 keys changed"),
            std::string::npos)
      << R.Err;

  // --strict-rename: an error, nothing written.
  std::string Out2 = path("strict.safetensors");
  R = runConvert({In, Out2, "--rename", "^encoder=enc", "--strict-rename"});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("changed no key"), std::string::npos) << R.Err;
  EXPECT_FALSE(fs::exists(Out2));

  // A collision names both keys.
  R = runConvert({In, Out2, "--rename", "(weight|bias)$=x"});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("'module.fc.weight' and 'module.fc.bias'"),
            std::string::npos)
      << R.Err;
  EXPECT_FALSE(fs::exists(Out2));

  // A bad rule is a command-line error.
  R = runConvert({In, Out2, "--rename", "(oops=x"});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("(oops"), std::string::npos) << R.Err;
}

TEST_F(ConvertDriverTest, Bf16ToNpzIsRefusedUnlessConverted) {
  std::string In = path("w.safetensors"), Out = path("w.npz");
  writeStateDict(In, sample(/*WithBf16=*/true));
  Result R = runConvert({In, Out});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("'w.bf16'"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("--bf16-to-f32"), std::string::npos) << R.Err;
  EXPECT_FALSE(fs::exists(Out));

  R = runConvert({In, Out, "--bf16-to-f32"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  TensorMap Back = readStateDict(Out);
  EXPECT_EQ(Back.at("w.bf16").dtype(), DType::F32);
  EXPECT_EQ(Back.at("w.bf16").getFlat(0), 1.5);
  EXPECT_EQ(Back.at("emb.half").dtype(), DType::F16);
  // bf16 survives .pt and .safetensors.
  R = runConvert({In, path("w.pt")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(readStateDict(path("w.pt")).at("w.bf16").dtype(), DType::BF16);
}

TEST_F(ConvertDriverTest, UnsignedToPtIsRefusedNamingTheKey) {
  TensorMap M = sample();
  M.insert("idx", rt::Tensor::fromVector<uint32_t>({1, 2}, Shape{2}));
  std::string In = path("u.safetensors"), Out = path("u.pt");
  writeStateDict(In, M);
  Result R = runConvert({In, Out});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("'idx' (u32)"), std::string::npos) << R.Err;
  EXPECT_FALSE(fs::exists(Out));
  R = runConvert({In, path("u.npz")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(readStateDict(path("u.npz")).at("idx").dtype(), DType::U32);
}

TEST_F(ConvertDriverTest, BadInputAndCommandLine) {
  std::string In = path("w.safetensors");
  writeStateDict(In, sample());
  // Unknown extension (output, then input): command-line error.
  Result R = runConvert({In, path("w.h5")});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("'.h5'"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find(".safetensors"), std::string::npos) << R.Err;
  R = runConvert({path("w.onnx"), "--list"});
  EXPECT_EQ(R.Status, 2);
  // Missing file: input error naming it.
  R = runConvert({path("missing.pt"), path("o.npz")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("missing.pt"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("nngraph-convert: error: "), std::string::npos);
  // Not a weight file.
  rt::writeFileAtomic(path("junk.npz"), "this is not a zip archive");
  R = runConvert({path("junk.npz"), "--list"});
  EXPECT_EQ(R.Status, 1);
  EXPECT_NE(R.Err.find("junk.npz"), std::string::npos) << R.Err;
  // Nothing to do.
  R = runConvert({In});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("nothing to do"), std::string::npos) << R.Err;
  // No arguments.
  EXPECT_EQ(runConvert({}).Status, 2);
}

TEST_F(ConvertDriverTest, InPlaceNeedsAFlag) {
  std::string In = path("w.safetensors");
  writeStateDict(In, sample());
  Result R = runConvert({In, In, "--add-prefix", "x."});
  EXPECT_EQ(R.Status, 2);
  EXPECT_NE(R.Err.find("--in-place"), std::string::npos) << R.Err;
  EXPECT_EQ(readStateDict(In).keys().front(), "fc.weight");
  R = runConvert({In, In, "--add-prefix", "x.", "--in-place"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_EQ(readStateDict(In).keys().front(), "x.fc.weight");
  EXPECT_EQ(files(), (std::vector<std::string>{"w.safetensors"}));
}

TEST_F(ConvertDriverTest, FailedRunLeavesExistingOutputUntouched) {
  std::string In = path("w.safetensors");
  writeStateDict(In, sample(/*WithBf16=*/true));
  for (const char *Name : {"out.npz", "out.pt", "out.safetensors"}) {
    SCOPED_TRACE(Name);
    rt::writeFileAtomic(path(Name), "precious");
    // Fails before writing (bf16 for npz, collision for the others).
    Result R = Name == std::string("out.npz")
                   ? runConvert({In, path(Name)})
                   : runConvert({In, path(Name), "--rename", ".*=k"});
    EXPECT_EQ(R.Status, 1) << R.Err;
    EXPECT_EQ(rt::readFile(path(Name)), "precious");
  }
  // A write that fails (OUT's folder does not exist): no file anywhere.
  Result R = runConvert({In, path("no/such/dir/out.pt")});
  EXPECT_EQ(R.Status, 1);
  EXPECT_EQ(files(),
            (std::vector<std::string>{"out.npz", "out.pt", "out.safetensors",
                                      "w.safetensors"}));
}

TEST_F(ConvertDriverTest, TorchCheckpointsInAndOut) {
  std::optional<std::string> Py = torchPython();
  if (!Py)
    GTEST_SKIP() << "no Python with torch ($NNGRAPH_PYTHON, /usr/bin/python3, "
                    "python3)";
  std::string Ckpt = path("torch_ckpt.pt"), Out = path("model.pt"),
              St = path("model.safetensors");
  auto [Status, Output] = runPython(*Py, Dir, R"(
import torch, collections
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
net = torch.nn.DataParallel(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
net(torch.randn(4, 3)).sum().backward()
opt.step()
torch.save({'model_state_dict': net.state_dict(),
            'optimizer_state_dict': opt.state_dict(), 'epoch': 3},
           ')" + Ckpt + R"(')
)");
  ASSERT_EQ(Status, 0) << Output;

  Result R = runConvert({Ckpt, "--list"});
  EXPECT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Err.find("'model_state_dict'"), std::string::npos) << R.Err;

  R = runConvert(
      {Ckpt, Out, "--select", "model_state_dict", "--strip-prefix", "module."});
  ASSERT_EQ(R.Status, 0) << R.Err;
  R = runConvert({Out, St});
  ASSERT_EQ(R.Status, 0) << R.Err;

  auto [Status2, Output2] = runPython(*Py, Dir, R"(
import torch
ck = torch.load(')" + Ckpt + R"(')['model_state_dict']
ours = torch.load(')" + Out + R"(', weights_only=True)
want = [k[len('module.'):] for k in ck.keys()]
assert list(ours.keys()) == want, (list(ours.keys()), want)
for k in want:
    a, b = ck['module.' + k], ours[k]
    assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), k
print('OK', len(want))
)");
  EXPECT_EQ(Status2, 0) << Output2;
  EXPECT_NE(Output2.find("OK 7"), std::string::npos) << Output2;
  TensorMap Back = readStateDict(St);
  EXPECT_EQ(Back.keys().front(), "0.weight");
  EXPECT_TRUE(Back.contains("1.num_batches_tracked"));
}
