//===- ToolSupportTest.cpp - Dim bindings and deterministic inputs --------===//
//
// parseDimBinding's accepted and rejected forms, concrete shapes for
// symbolic types, and the generator: same seed, same values; values in the
// documented ranges for each dtype family.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ToolSupport.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace nng;
using namespace nng::tools;

TEST(ToolSupportTest, ParsesDimBindings) {
  DimBindings D;
  parseDimBinding("N=4", D);
  parseDimBinding("seq_len=128", D);
  EXPECT_EQ(D.at("N"), 4);
  EXPECT_EQ(D.at("seq_len"), 128);
  for (const char *Bad : {"N", "=4", "N=", "N=-1", "N=0", "N=4x", "N=x"})
    EXPECT_THROW(parseDimBinding(Bad, D), Error) << Bad;
}

TEST(ToolSupportTest, ConcreteShapesBindSymbolsDefaultingToOne) {
  ir::TensorType T(DType::F32, {ir::Dim::symbol("N"), 3, ir::Dim::symbol("M"),
                                ir::Dim::unknown()});
  EXPECT_EQ(concreteShape(T, {{"N", 5}}, "x"), (Shape{5, 3, 1, 1}));
  EXPECT_THROW(concreteShape(ir::TensorType(DType::F32), {}, "x"), Error);
}

TEST(ToolSupportTest, DeterministicTensorsRepeatPerSeed) {
  Tensor A = deterministicTensor(DType::F32, Shape{64}, 1);
  Tensor B = deterministicTensor(DType::F32, Shape{64}, 1);
  Tensor C = deterministicTensor(DType::F32, Shape{64}, 2);
  EXPECT_TRUE(A.equals(B));
  EXPECT_FALSE(A.equals(C));
  for (double V : A.toDoubleVector()) {
    EXPECT_GE(V, -1.0);
    EXPECT_LT(V, 1.0);
  }
  for (double V :
       deterministicTensor(DType::I64, Shape{64}, 3).toDoubleVector()) {
    EXPECT_GE(V, 0.0);
    EXPECT_LT(V, 10.0);
  }
  for (double V :
       deterministicTensor(DType::Bool, Shape{64}, 3).toDoubleVector())
    EXPECT_TRUE(V == 0.0 || V == 1.0);
}

TEST(ToolSupportTest, InputsFollowTheGraph) {
  ir::Graph G;
  G.addInput("x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), 2}));
  G.addInput("ids", ir::TensorType(DType::I64, {ir::Dim::symbol("S")}));
  EXPECT_EQ(inputSymbols(G), (std::vector<std::string>{"N", "S"}));
  auto In = makeDeterministicInputs(G, {{"N", 3}, {"S", 7}}, 0);
  ASSERT_EQ(In.size(), 2u);
  EXPECT_EQ(In[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(In[1].shape(), (Shape{7}));
  EXPECT_EQ(In[1].dtype(), DType::I64);
}

TEST(ToolSupportTest, DataFilesComeFromTheSourceTreeElseTheInstalledShare) {
  namespace fs = std::filesystem;
  // The source tree's copy wins when it exists.
  std::string Source = std::string(NNGRAPH_SOURCE_DIR) + "/tests/conformance/skips.txt";
  EXPECT_EQ(dataFile(Source, "conformance/skips.txt"), Source);
  // Without it, <program dir>/../share/nngraph/<file> (an installed tree).
  fs::path Exe = fs::read_symlink("/proc/self/exe");
  std::string Rel = "probe-" + std::to_string(::getpid()) + "/data.txt";
  fs::path Installed = Exe.parent_path().parent_path() / "share" / "nngraph" / Rel;
  fs::create_directories(Installed.parent_path());
  std::ofstream(Installed) << "x\n";
  EXPECT_EQ(dataFile("/nonexistent/data.txt", Rel), Installed.string());
  fs::remove_all(Installed.parent_path());
  // Neither: the source path, for the message.
  EXPECT_EQ(dataFile("/nonexistent/data.txt", Rel), "/nonexistent/data.txt");
}
