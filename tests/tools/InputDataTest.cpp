//===- InputDataTest.cpp - Model inputs and outputs as .npz files ---------===//
//
// matchInputData / loadInputData: arrays come back in graph-input order
// whatever the file's order, symbolic dims are bound (and must agree across
// inputs), unknown dims and ranks take anything, and each refusal (missing
// input, unknown key, dtype, rank, static dim, symbolic dim, unreadable
// file) says what and where. splitBatches: sizes, values, the remainder
// batch, and its refusals. saveOutputsNpz: a round trip, a repeated output
// name, and atomicity (a failed write leaves an existing file untouched).
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/InputData.h"
#include "common/TempDirTest.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/FileIO.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

using namespace nng;
using namespace nng::tools;
using nng::weights::TensorMap;

namespace {

/// Two inputs sharing the symbol N, an unknown dim, an initializer.
const char *TwoInputs = R"(graph "two" {
  input %x: f32[N,3]
  input %ids: i64[N,?]
  init %w: f32[3] = [1.0, 2.0, 3.0]
  %y: f32[N,3] = Mul(%x, %w)
  output %y
})";

std::unique_ptr<ir::Graph> twoInputs() { return ir::parseGraph(TwoInputs); }

rt::Tensor floats(int64_t Rows, int64_t Cols, float Start = 0) {
  std::vector<float> V(static_cast<size_t>(Rows * Cols));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = Start + static_cast<float>(I);
  return rt::Tensor::fromVector(V, Shape{Rows, Cols});
}

rt::Tensor ints(int64_t Rows, int64_t Cols) {
  std::vector<int64_t> V(static_cast<size_t>(Rows * Cols));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = static_cast<int64_t>(I);
  return rt::Tensor::fromVector(V, Shape{Rows, Cols});
}

/// The message of the nng::Error that F throws ("" when it throws none).
std::string errorOf(const std::function<void()> &F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

/// Expects Msg to contain every one of Parts.
void expectMentions(const std::string &Msg,
                    std::initializer_list<std::string> Parts) {
  ASSERT_FALSE(Msg.empty()) << "no error was thrown";
  for (const std::string &P : Parts)
    EXPECT_NE(Msg.find(P), std::string::npos)
        << "'" << P << "' missing in: " << Msg;
}

class InputDataFileTest : public test::TempDirTest {
protected:
  InputDataFileTest() : TempDirTest("nngraph-inputdata-test") {}
};

} // namespace

TEST(InputDataTest, ReturnsArraysInGraphInputOrderAndBindsSymbols) {
  auto G = twoInputs();
  TensorMap M; // The file's order differs from the graph's.
  M.insert("ids", ints(4, 7));
  M.insert("x", floats(4, 3));
  InputData D = matchInputData(M, *G, "data.npz");
  EXPECT_EQ(D.Source, "data.npz");
  ASSERT_EQ(D.Names, (std::vector<std::string>{"x", "ids"}));
  ASSERT_EQ(D.Tensors.size(), 2u);
  EXPECT_TRUE(D.Tensors[0].equals(floats(4, 3)));
  EXPECT_TRUE(D.Tensors[1].equals(ints(4, 7)));
  ASSERT_EQ(D.Dims.size(), 1u); // "?" binds nothing.
  EXPECT_EQ(D.Dims.at("N"), 4);
  EXPECT_EQ(D.DimOrigins.at("N"), "input 'x', axis 0");
}

TEST(InputDataTest, NonContiguousArraysComeBackContiguous) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(3, 2).permute({1, 0})); // Like a Fortran-order .npy.
  M.insert("ids", ints(2, 1));
  InputData D = matchInputData(M, *G, "data.npz");
  EXPECT_TRUE(D.Tensors[0].isContiguous());
  EXPECT_TRUE(D.Tensors[0].equals(floats(3, 2).permute({1, 0})));
}

TEST(InputDataTest, InputsOfUnknownRankTakeAnyShape) {
  auto G = ir::parseGraph(R"(graph "any" {
  input %a: f32[*]
  %b: f32[*] = Relu(%a)
  output %b
})");
  for (const Shape &S : {Shape{}, Shape{5}, Shape{2, 3, 4}}) {
    TensorMap M;
    M.insert("a", rt::Tensor::empty(S, DType::F32));
    EXPECT_EQ(matchInputData(M, *G, "d.npz").Tensors[0].shape(), S);
  }
}

TEST(InputDataTest, MissingInputIsNamedWithTheFilesKeys) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(2, 3));
  M.insert("other", floats(2, 3));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"'data.npz'", "no array for graph input 'ids'",
                  "holds 'x', 'other'", "numpy.savez"});
  expectMentions(errorOf([&] { matchInputData(TensorMap(), *G, "e.npz"); }),
                 {"'e.npz'", "graph inputs 'x', 'ids'", "holds no arrays"});
}

TEST(InputDataTest, UnknownKeysAreNamedWithTheGraphsInputs) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(2, 3));
  M.insert("ids", ints(2, 1));
  M.insert("label", ints(2, 1));
  M.insert("w", floats(1, 3));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"'data.npz'", "arrays 'label', 'w' name no graph input",
                  "the graph's inputs: 'x', 'ids'", "'w' is an initializer",
                  "remove them"});
}

TEST(InputDataTest, DtypeMismatchNamesBoth) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(2, 3).to(DType::F64));
  M.insert("ids", ints(2, 1));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"'data.npz'", "input 'x'", "the array is f64",
                  "the input is f32", "astype(numpy.float32)"});
  TensorMap M2;
  M2.insert("x", floats(2, 3));
  M2.insert("ids", ints(2, 1).to(DType::I32));
  expectMentions(errorOf([&] { matchInputData(M2, *G, "data.npz"); }),
                 {"input 'ids'", "the array is i32", "the input is i64"});
}

TEST(InputDataTest, RankMismatchIsNamed) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", rt::Tensor::empty(Shape{2, 3, 1}, DType::F32));
  M.insert("ids", ints(2, 1));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"input 'x' (f32[N,3])", "the array has rank 3", "[2, 3, 1]",
                  "the input has rank 2"});
}

TEST(InputDataTest, StaticDimMismatchNamesAxisExpectedAndGot) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(2, 4));
  M.insert("ids", ints(2, 1));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"'data.npz'", "input 'x'", "axis 1", "expected 3", "got 4"});
}

TEST(InputDataTest, SymbolMustTakeOneSizeAcrossInputs) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(2, 3));
  M.insert("ids", ints(5, 1));
  expectMentions(errorOf([&] { matchInputData(M, *G, "data.npz"); }),
                 {"'data.npz'", "input 'ids'", "axis 0 (N)", "expected 2",
                  "input 'x', axis 0", "got 5"});
}

TEST_F(InputDataFileTest, LoadsAFileAndNamesAnUnreadableOne) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(3, 3));
  M.insert("ids", ints(3, 2));
  weights::writeNpz(path("in.npz"), M);
  InputData D = loadInputData(path("in.npz"), *G);
  EXPECT_EQ(D.Source, path("in.npz"));
  EXPECT_TRUE(D.Tensors[0].equals(floats(3, 3)));
  EXPECT_EQ(D.Dims.at("N"), 3);
  EXPECT_NE(errorOf([&] {
              loadInputData(path("absent.npz"), *G);
            }).find(path("absent.npz")),
            std::string::npos);
  rt::writeFileAtomic(path("junk.npz"), "not a zip archive");
  EXPECT_NE(errorOf([&] {
              loadInputData(path("junk.npz"), *G);
            }).find(path("junk.npz")),
            std::string::npos);
}

TEST(InputDataTest, SplitsIntoBatchesWithASmallerLastOne) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(5, 3));
  M.insert("ids", ints(5, 2));
  InputData D = matchInputData(M, *G, "data.npz");
  EXPECT_EQ(sampleCount(D), 5);
  auto Batches = splitBatches(D, 2);
  ASSERT_EQ(Batches.size(), 3u);
  const int64_t Sizes[] = {2, 2, 1};
  for (size_t B = 0; B < 3; ++B) {
    ASSERT_EQ(Batches[B].size(), 2u);
    int64_t Rows = Sizes[B], First = static_cast<int64_t>(B) * 2;
    EXPECT_TRUE(
        Batches[B][0].equals(floats(Rows, 3, static_cast<float>(First * 3))))
        << Batches[B][0].toString();
    EXPECT_EQ(Batches[B][1].shape(), (Shape{Rows, 2}));
    EXPECT_EQ(Batches[B][1].getFlatInt(0), First * 2);
  }
  // A batch size beyond the samples: one batch with all of them.
  auto One = splitBatches(D, 64);
  ASSERT_EQ(One.size(), 1u);
  EXPECT_TRUE(One[0][0].equals(floats(5, 3)));
  EXPECT_EQ(splitBatches(D, 1).size(), 5u);
}

TEST(InputDataTest, SplitRefusesBadBatchSizesAndUnevenSamples) {
  auto G = twoInputs();
  TensorMap M;
  M.insert("x", floats(4, 3));
  M.insert("ids", ints(4, 2));
  InputData D = matchInputData(M, *G, "data.npz");
  expectMentions(errorOf([&] { splitBatches(D, 0); }),
                 {"'data.npz'", "batch size 0"});

  // Inputs whose dim 0 are different dims of the graph.
  auto G2 = ir::parseGraph(R"(graph "two" {
  input %a: f32[N,2]
  input %b: f32[M,2]
  %c: f32[N,2] = Relu(%a)
  output %c
})");
  TensorMap M2;
  M2.insert("a", floats(3, 2));
  M2.insert("b", floats(4, 2));
  InputData D2 = matchInputData(M2, *G2, "uneven.npz");
  expectMentions(errorOf([&] { splitBatches(D2, 2); }),
                 {"'uneven.npz'", "inputs 'a' and 'b'",
                  "different numbers of samples along dim 0 (3 and 4)"});

  // A scalar input has no dim 0.
  auto G3 = ir::parseGraph(R"(graph "scalar" {
  input %s: f32[]
  %t: f32[] = Relu(%s)
  output %t
})");
  TensorMap M3;
  M3.insert("s", rt::Tensor::scalar<float>(1));
  InputData D3 = matchInputData(M3, *G3, "s.npz");
  expectMentions(errorOf([&] { splitBatches(D3, 1); }),
                 {"'s.npz'", "input 's' is a scalar"});

  // No samples at all, and no inputs at all.
  TensorMap M4;
  M4.insert("x", floats(0, 3));
  M4.insert("ids", ints(0, 2));
  InputData D4 = matchInputData(M4, *G, "empty.npz");
  EXPECT_EQ(sampleCount(D4), 0);
  expectMentions(errorOf([&] { splitBatches(D4, 8); }),
                 {"'empty.npz'", "no samples", "input 'x'"});
  InputData None;
  None.Source = "none.npz";
  expectMentions(errorOf([&] { splitBatches(None, 8); }),
                 {"'none.npz'", "no inputs"});
}

TEST_F(InputDataFileTest, SavesOutputsByNameAndRoundTrips) {
  rt::Tensor Y = floats(2, 3), Z = ints(1, 4);
  saveOutputsNpz(path("out.npz"), {"y", "z", "y"}, {Y, Z, Y});
  TensorMap Back = weights::readNpz(path("out.npz"));
  ASSERT_EQ(Back.keys(), (std::vector<std::string>{"y", "z"}));
  EXPECT_TRUE(Back.at("y").equals(Y));
  EXPECT_TRUE(Back.at("z").equals(Z));
}

TEST_F(InputDataFileTest, AnyOutputNameIsSaved) {
  // torch names values "/layer/Add_output_0": a zip entry cannot begin
  // with '/', so such names are percent-encoded; the others stay.
  EXPECT_EQ(npzEntryNames({"y", "a/b", "/layer/Add_output_0", "../up",
                           "x/../y", "50%", "/50%", std::string("n\0ul", 4),
                           "w\\in", ""}),
            (std::vector<std::string>{"y", "a/b", "%2Flayer/Add_output_0",
                                      "%2E%2E/up", "x/%2E%2E/y", "50%",
                                      "%2F50%25", "n%00ul", "w%5Cin", "%"}));
  rt::Tensor Y = floats(2, 3), Z = ints(1, 4);
  saveOutputsNpz(path("out.npz"), {"/m/y", "z"}, {Y, Z});
  TensorMap Back = weights::readNpz(path("out.npz"));
  ASSERT_EQ(Back.keys(), (std::vector<std::string>{"%2Fm/y", "z"}));
  EXPECT_TRUE(Back.at("%2Fm/y").equals(Y));
  // Two names that would share an entry: refused, naming both.
  expectMentions(errorOf([&] { npzEntryNames({"/a", "%2Fa"}); }),
                 {"'/a'", "'%2Fa'", "rename one"});
}

TEST_F(InputDataFileTest, FailedSavesLeaveTheFileUntouched) {
  rt::writeFileAtomic(path("out.npz"), "old contents");
  auto Contents = [&] {
    std::ifstream In(path("out.npz"), std::ios::binary);
    std::stringstream SS;
    SS << In.rdbuf();
    return SS.str();
  };
  // Two different outputs under one name.
  expectMentions(errorOf([&] {
                   saveOutputsNpz(path("out.npz"), {"y", "y"},
                                  {floats(1, 1), floats(1, 1, 5)});
                 }),
                 {"two different outputs are named 'y'"});
  // A dtype numpy lacks.
  expectMentions(errorOf([&] {
                   saveOutputsNpz(path("out.npz"), {"y"},
                                  {floats(1, 2).to(DType::BF16)});
                 }),
                 {path("out.npz"), "bf16"});
  EXPECT_EQ(Contents(), "old contents");
  EXPECT_EQ(files(), (std::vector<std::string>{"out.npz"}));
  // Not an .npz name.
  expectMentions(errorOf([&] {
                   saveOutputsNpz(path("model.nng"), {"y"}, {floats(1, 1)});
                 }),
                 {"model.nng", "FILE.npz"});
  EXPECT_EQ(files(), (std::vector<std::string>{"out.npz"}));
}
