//===- PtTest.cpp - .pt files against torch, both ways -----------*- C++ -*-===//
//
// The torch oracle (scripts/pt_oracle.py): torch.save'd files of every
// dtype, strided/offset/broadcast views of shared storages, a nested
// training checkpoint and a torchvision resnet18 state dict are read and
// compared exactly (values, key order, storage sharing); files written
// here are loaded by torch.load(weights_only=True) and compared the same
// way. Plus C++-only round trips that run without torch.
//
//===----------------------------------------------------------------------===//

#include "PtTestUtils.h"

#include "nngraph/frontend/weights/Formats.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::pttest;
namespace fs = std::filesystem;

namespace {

rt::Tensor pattern(DType T, const Shape &Sh) {
  rt::Tensor R = rt::Tensor::empty(Sh, T);
  for (int64_t I = 0; I < R.numel(); ++I) {
    double V = T == DType::Bool        ? double(I % 3 == 0)
               : isFloatingPoint(T)    ? I * 0.5 - 3
                                       : double(I * 7 - 11);
    if (T == DType::U8)
      V = double(static_cast<uint8_t>(I * 7 - 11));
    R.setFlat(I, V);
  }
  return R;
}

const DType PtDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                          DType::I64, DType::I32, DType::I16, DType::I8,
                          DType::U8,  DType::Bool};

/// A checkpoint tree exercising every kind torch 1.13's weights_only
/// loader accepts (no floats: it lacks BINFLOAT).
Object cppCheckpoint() {
  std::vector<Object::DictEntry> Sd;
  for (DType T : PtDTypes)
    Sd.emplace_back(Object::string("w_" + std::string(dtypeName(T))),
                    Object::tensor(pattern(T, Shape{2, 3, 4})));
  rt::Tensor Base = pattern(DType::F32, Shape{4, 6});
  Sd.emplace_back(Object::string("z.base"), Object::tensor(Base));
  Sd.emplace_back(Object::string("a.transposed"),
                  Object::tensor(Base.permute({1, 0})));
  Sd.emplace_back(Object::string("m.slice"),
                  Object::tensor(Base.slice(0, 1, 3).slice(1, 0, 6, 2)));
  // A lone strided view (no aliasing tensor): written compact.
  rt::Tensor Other = pattern(DType::F64, Shape{5, 4});
  Sd.emplace_back(Object::string("lone.strided"),
                  Object::tensor(Other.slice(1, 1, 4, 2)));
  Sd.emplace_back(Object::string("bcast"),
                  Object::tensor(pattern(DType::I32, Shape{3, 1})
                                     .broadcastTo(Shape{3, 4})));
  Sd.emplace_back(Object::string("scalar"),
                  Object::tensor(pattern(DType::F16, Shape{})));
  Sd.emplace_back(Object::string("empty"),
                  Object::tensor(pattern(DType::F32, Shape{0, 3})));
  Sd.emplace_back(Object::string("tied"), Object::tensor(Base));
  std::vector<Object::DictEntry> Opt;
  Opt.emplace_back(Object::integer(0),
                   Object::dict({{Object::string("step"), Object::integer(7)}}));
  std::vector<Object::DictEntry> Root;
  Root.emplace_back(Object::string("model_state_dict"), Object::dict(Sd));
  Root.emplace_back(Object::string("optimizer_state_dict"),
                    Object::dict({{Object::string("state"), Object::dict(Opt)},
                                  {Object::string("param_groups"),
                                   Object::list({Object::dict(
                                       {{Object::string("nesterov"),
                                         Object::boolean(false)},
                                        {Object::string("foreach"), Object()}})})}}));
  Root.emplace_back(Object::string("epoch"), Object::integer(3));
  Root.emplace_back(Object::string("ints"),
                    Object::tuple({Object::integer(-1), Object::integer(300),
                                   Object::integer(70000),
                                   Object::integer(-(int64_t(1) << 40)),
                                   Object::integer(INT64_MAX),
                                   Object::integer(INT64_MIN)}));
  Root.emplace_back(Object::string("name"), Object::string("run-1 \xc3\xa9"));
  return Object::dict(Root);
}

} // namespace

/// The folder of pt_oracle.py's torch.save files, made once per run; empty
/// with *Skip set when there is no torch.
fs::path torchFiles(std::string *Skip) {
  static fs::path Dir;
  static std::string Reason;
  static bool Done = false;
  if (!Done) {
    Done = true;
    fs::path D = freshDir();
    std::string Out;
    if (runOracle("save '" + D.string() + "' resnet", &Out, &Reason))
      Dir = D;
    else if (Reason.empty())
      Reason = "pt_oracle.py save failed (see the first failure)";
  }
  *Skip = Reason;
  return Dir;
}

TEST(PtTorch, TorchWritesCppReads) {
  std::string Skip;
  fs::path D = torchFiles(&Skip);
  if (D.empty())
    GTEST_SKIP() << Skip;
  for (const char *F : {"dtypes.pt", "views.pt", "checkpoint.pt", "resnet18.pt"}) {
    SCOPED_TRACE(F);
    Object O = readPt((D / F).string());
    expectMatchesManifest(O, (D / F).string());
  }
  // The views alias one storage.
  Object V = readPt((D / "views.pt").string());
  EXPECT_EQ(V.find("base")->toTensor().storage(),
            V.find("offset")->toTensor().storage());
  EXPECT_EQ(V.find("t")->toTensor().strides(), (Strides{1, 6}));
  EXPECT_EQ(V.find("offset")->toTensor().offset(), 5);
  Object C = readPt((D / "checkpoint.pt").string());
  EXPECT_EQ(C.find("epoch")->toInt(), 3);
  EXPECT_EQ(C.find("model_state_dict")->entries().size(), 4u);
}

TEST(PtTorch, CppWritesTorchReads) {
  fs::path D = freshDir();
  std::string Path = (D / "cpp.pt").string();
  Object Root = cppCheckpoint();
  writePt(Path, Root);
  writeManifest(Root, Path);
  std::string Out, Skip;
  if (!runOracle("check '" + Path + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  EXPECT_NE(Out.find("ok"), std::string::npos) << Out;
}

TEST(PtTorch, ResnetRoundTripThroughCpp) {
  std::string Skip, Out;
  fs::path D = torchFiles(&Skip);
  if (D.empty())
    GTEST_SKIP() << Skip;
  // Read torch's files, write them back, torch loads them with
  // weights_only=True and compares with its own manifest (floats excepted:
  // torch 1.13's weights_only loader lacks BINFLOAT).
  std::string Args = "check";
  for (const char *F : {"dtypes.pt", "views.pt", "resnet18.pt"}) {
    SCOPED_TRACE(F);
    std::string Src = (D / F).string(), Dst = (D / (std::string("re-") + F)).string();
    writePt(Dst, readPt(Src));
    fs::copy_file(Src + ".json", Dst + ".json", fs::copy_options::overwrite_existing);
    fs::copy_file(Src + ".raw", Dst + ".raw", fs::copy_options::overwrite_existing);
    Args += " '" + Dst + "'";
  }
  EXPECT_TRUE(runOracle(Args, &Out, &Skip)) << Out;
  EXPECT_NE(Out.find("re-resnet18.pt"), std::string::npos) << Out;
}

TEST(PtTorch, LegacyAndTorchScriptFilesAreRefused) {
  fs::path D = freshDir();
  std::string Out, Skip;
  if (!runOracle("save-other '" + D.string() + "'", &Out, &Skip)) {
    if (!Skip.empty())
      GTEST_SKIP() << Skip;
    return;
  }
  expectError([&] { readPt((D / "legacy.pt").string()); },
              {"legacy.pt", "legacy", "torch >= 1.6", "torch.save"});
  expectError([&] { readPt((D / "script.pt").string()); },
              {"script.pt", "TorchScript", "state_dict"});
}

TEST(PtRoundTrip, CppWritesCppReads) {
  fs::path D = freshDir();
  std::string Path = (D / "rt.pt").string();
  Object Root = cppCheckpoint();
  std::vector<Object::DictEntry> E = Root.entries();
  E.emplace_back(Object::string("lr"), Object::floating(0.1));
  E.emplace_back(Object::string("huge"), Object::floating(-1.5e300));
  Root = Object::dict(E);
  writePt(Path, Root);
  writeManifest(Root, Path);
  Object Back = readPt(Path);
  expectMatchesManifest(Back, Path);
  // Views of one storage still alias after the round trip.
  const Object *Sd = Back.find("model_state_dict");
  ASSERT_TRUE(Sd);
  EXPECT_EQ(Sd->find("z.base")->toTensor().storage(),
            Sd->find("a.transposed")->toTensor().storage());
  EXPECT_EQ(Sd->find("z.base")->toTensor().storage(),
            Sd->find("tied")->toTensor().storage());
  EXPECT_EQ(Sd->find("a.transposed")->toTensor().strides(), (Strides{1, 6}));
  // The bytes API reads the same.
  Object FromBytes = readPtFromBytes(slurp(Path), "rt.pt");
  expectMatchesManifest(FromBytes, Path);
}

TEST(PtRoundTrip, WriterRefusesUnsupportedDType) {
  fs::path D = freshDir();
  std::string Path = (D / "u16.pt").string();
  Object Root = Object::dict(
      {{Object::string("w"), Object::tensor(pattern(DType::U16, Shape{2}))}});
  expectError([&] { writePt(Path, Root); }, {"u16", "u16.pt"});
  EXPECT_FALSE(fs::exists(Path));
}

TEST(PtRoundTrip, SummaryAndAccessors) {
  Object O = cppCheckpoint();
  std::string S = O.summary();
  EXPECT_NE(S.find("'epoch': 3"), std::string::npos) << S;
  EXPECT_NE(S.find("tensor(f32[2, 3, 4])"), std::string::npos) << S;
  expectError([&] { O.toInt(); }, {"int", "dict"});
  EXPECT_EQ(O.find("nope"), nullptr);
}
