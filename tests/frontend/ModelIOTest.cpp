//===- ModelIOTest.cpp - Loading and saving models by extension -----------===//
//
// Format selection, text and ONNX round trips through files, and the
// atomic writer: it replaces files whole, keeps their mode,
// and leaves neither the target nor a temporary file behind on failure.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/ModelIO.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

using namespace nng;
using namespace nng::frontend;
namespace fs = std::filesystem;

namespace {

constexpr const char *SmallModel = R"(graph "tiny" {
  input %x: f32[2,3]
  init %w: f32[3] = [1.0, 2.0, 3.0]
  %y: f32[2,3] = Add(%x, %w)
  output %y
}
)";

class ModelIOTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = fs::temp_directory_path() /
          ("nngraph-modelio-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(Dir);
    fs::create_directories(Dir);
  }
  void TearDown() override { fs::remove_all(Dir); }

  /// Files in Dir, to check that no temporary file is left.
  size_t numFiles() const {
    return std::distance(fs::directory_iterator(Dir), fs::directory_iterator());
  }

  fs::path Dir;
};

ErrorKind kindOf(const std::function<void()> &F) {
  try {
    F();
  } catch (const Error &E) {
    return E.kind();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorKind::Internal;
}

} // namespace

TEST_F(ModelIOTest, FormatComesFromTheExtension) {
  EXPECT_EQ(formatForPath("a/b/model.nng"), ModelFormat::Text);
  EXPECT_EQ(formatForPath("model.onnx"), ModelFormat::Onnx);
  EXPECT_EQ(kindOf([] { formatForPath("model.txt"); }),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kindOf([] { formatForPath("nng"); }), ErrorKind::InvalidArgument);
}

TEST_F(ModelIOTest, OnnxRoundTripsThroughAFile) {
  auto G = loadModelFromText(SmallModel, "<test>");
  std::string Path = (Dir / "m.onnx").string();
  saveModel(*G, Path);
  auto H = loadModel(Path);
  EXPECT_EQ(ir::printGraph(*H), ir::printGraph(*G));
  EXPECT_EQ(numFiles(), 1u);
  // The extension decides, unless the format is given.
  SaveOptions AsText;
  AsText.Format = ModelFormat::Text;
  saveModel(*G, Path, AsText);
  EXPECT_EQ(readFile(Path), ir::printGraph(*G));
  EXPECT_EQ(kindOf([&] { loadModel(Path); }), ErrorKind::Parse);
}

TEST_F(ModelIOTest, TextRoundTripsThroughAFile) {
  auto G = loadModelFromText(SmallModel, "<test>");
  std::string Path = (Dir / "m.nng").string();
  saveModel(*G, Path);
  EXPECT_EQ(readFile(Path), ir::printGraph(*G));
  auto H = loadModel(Path);
  EXPECT_EQ(ir::printGraph(*H), ir::printGraph(*G));
  EXPECT_EQ(numFiles(), 1u);
}

TEST_F(ModelIOTest, MissingFileIsAnIOErrorNamingThePath) {
  std::string Path = (Dir / "absent.nng").string();
  try {
    loadModel(Path);
    FAIL() << "no error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::IO);
    EXPECT_NE(std::string(E.what()).find(Path), std::string::npos);
  }
  EXPECT_EQ(kindOf([&] { readFile(Dir.string()); }), ErrorKind::IO);
}

TEST_F(ModelIOTest, AtomicWriteReplacesAndKeepsTheMode) {
  std::string Path = (Dir / "out.txt").string();
  writeFileAtomic(Path, "first");
  EXPECT_EQ(readFile(Path), "first");
  ASSERT_EQ(::chmod(Path.c_str(), 0640), 0);
  writeFileAtomic(Path, "second, longer contents");
  EXPECT_EQ(readFile(Path), "second, longer contents");
  struct stat St;
  ASSERT_EQ(::stat(Path.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0640u);
  EXPECT_EQ(numFiles(), 1u);
}

TEST_F(ModelIOTest, FailedWritesLeaveNothingBehind) {
  // The directory does not exist: no temporary file can be made.
  EXPECT_EQ(kindOf([&] {
              writeFileAtomic((Dir / "no" / "such" / "dir.nng").string(), "x");
            }),
            ErrorKind::IO);
  // The target is a directory: refused before anything is written.
  fs::create_directory(Dir / "sub");
  EXPECT_EQ(kindOf([&] { writeFileAtomic((Dir / "sub").string(), "x"); }),
            ErrorKind::IO);
  EXPECT_EQ(numFiles(), 1u); // Only "sub".
  EXPECT_TRUE(fs::is_empty(Dir / "sub"));
}
