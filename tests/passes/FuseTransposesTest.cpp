//===- FuseTransposesTest.cpp - fuse-transposes keeps the numbers ---------===//
//
// fuse-transposes on the lit test graph and on random chains of
// permutations: outputs agree before and after on the reference backend and
// every chain ends up as at most one Transpose.
//
//===----------------------------------------------------------------------===//

#include "SimplifyTestUtils.h"
#include "nngraph/passes/Passes.h"

#include <algorithm>
#include <sstream>

using namespace nng;
using namespace nng::simplify_test;
using ir::OpKind;

TEST(FuseTransposesTest, LitGraphKeepsTheNumbers) {
  std::string Text = ir::printGraph(
      *ir::parseGraphFile(std::string(NNGRAPH_SOURCE_DIR) +
                          "/tests/lit/passes/fuse-transposes.nng"));
  auto P = passes::createFuseTransposesPass();
  auto G = expectSameOutputs(Text, *P);
  EXPECT_EQ(stat(*P, "compose-transposes"), 4);
  EXPECT_EQ(stat(*P, "remove-identity-transpose"), 1);
  EXPECT_GE(stat(*P, "declined: compose-transposes: graph output would be "
                     "renamed to an input or initializer"),
            1);
  P->clearStatistics();
  EXPECT_FALSE(P->run(*G));
}

TEST(FuseTransposesTest, RandomChainsCollapseToOne) {
  std::mt19937 Rng(7);
  for (int Trial = 0; Trial < 20; ++Trial) {
    std::ostringstream OS;
    OS << "graph {\n  input %x: f32[2,3,4,5]\n";
    std::string Prev = "x";
    int Len = 2 + Trial % 4;
    for (int I = 0; I < Len; ++I) {
      std::vector<int64_t> Perm = {0, 1, 2, 3};
      std::shuffle(Perm.begin(), Perm.end(), Rng);
      OS << "  %t" << I << " = Transpose(%" << Prev << ") {perm = [" << Perm[0]
         << ", " << Perm[1] << ", " << Perm[2] << ", " << Perm[3] << "]}\n";
      Prev = "t" + std::to_string(I);
    }
    OS << "  %y = Relu(%" << Prev << ")\n  output %y\n}\n";
    auto P = passes::createFuseTransposesPass();
    auto G = expectSameOutputs(OS.str(), *P);
    EXPECT_LE(countOps(*G, OpKind::Transpose), 1u) << OS.str();
  }
}
