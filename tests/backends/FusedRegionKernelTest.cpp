//===- FusedRegionKernelTest.cpp - nng.FusedRegion on the backends --------===//
//
// The reference kernel runs a region's body (with the node's concrete input
// types, more concrete than the body's written ones), reports bodies that
// do not parse or do not match the node, and the cpu backend serves a
// region with one JIT kernel (when built with LLVM) that matches it.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/runtime/Error.h"

#include <cmath>

namespace nng {
namespace {

using namespace cputest;

const char *AddRelu = "graph { input %a: f32[N,3] input %b: f32[3] "
                      "%s: f32[N,3] = Add(%a, %b) %y: f32[N,3] = Relu(%s) "
                      "output %y }";

TEST(FusedRegionKernel, RunsTheBody) {
  auto Out = reftest::OpTest(OpKind::FusedRegion)
                 .in(reftest::f32({1, -2, 3, -4, 5, -6}, {2, 3}))
                 .in(reftest::f32({0.5, 0.5, 0.5}))
                 .attr("body", ir::Attribute(std::string(AddRelu)))
                 .run();
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Out[0].toDoubleVector(),
            (std::vector<double>{1.5, 0, 3.5, 0, 5.5, 0}));
}

TEST(FusedRegionKernel, ReportsBadBodies) {
  auto Run = [](std::string Body, size_t Inputs) {
    reftest::OpTest T(OpKind::FusedRegion);
    for (size_t I = 0; I < Inputs; ++I)
      T.in(reftest::f32({1, 2, 3}));
    T.attr("body", ir::Attribute(std::move(Body)));
    try {
      T.run();
    } catch (const Error &E) {
      return std::string(E.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(Run("graph { input %a: f32[3] %y = Frob(%a) output %y }", 1)
                .find("does not parse"),
            std::string::npos);
  EXPECT_NE(Run(AddRelu, 1).find("has 1 inputs but its body 2"),
            std::string::npos)
      << Run(AddRelu, 1);
  std::string Mismatch =
      Run("graph { input %a: i32[3] %y: i32[3] = Neg(%a) output %y }", 1);
  EXPECT_NE(Mismatch.find("input 0 of the fused region is f32[3] but its "
                          "body's %a is i32[3]"),
            std::string::npos)
      << Mismatch;
}

#if NNGRAPH_HAVE_ONEDNN
TEST(FusedRegionKernel, CpuBackendCompilesOneKernel) {
  ir::Graph G;
  ir::Value *A = G.addInput(
      "a", ir::TensorType(DType::F32,
                          std::vector<ir::Dim>{ir::Dim::symbol("N"), ir::Dim(3)}));
  ir::Value *B = G.addInitializer("b", reftest::f32({0.5, -0.5, 1}));
  ir::AttrMap Attrs;
  Attrs.set("body", ir::Attribute(std::string(AddRelu)));
  G.addOutput(G.addNode(OpKind::FusedRegion, {A, B}, {"y"}, Attrs)->output());
  ir::inferTypes(G);
  std::vector<Tensor> In{rnd({67, 3}, 5, -2, 2)};
  In[0].setFlat(4, std::nan(""));
  Tensor Want = backends::runReference(G, In).at(0);
  auto Cpu = backends::getBackend("cpu").compile(G);
  Tensor Got = Cpu->run(In).at(0);
  ASSERT_EQ(Got.shape(), Want.shape());
  for (int64_t I = 0; I < Want.numel(); ++I) {
    if (std::isnan(Want.getFlat(I)))
      EXPECT_TRUE(std::isnan(Got.getFlat(I))) << I;
    else
      EXPECT_FLOAT_EQ(Got.getFlat(I), Want.getFlat(I)) << I;
  }
  auto S = backends::cpuExecutableStats(*Cpu);
  ASSERT_TRUE(S);
  if (!backends::cpu::kernelJitAvailable()) {
    EXPECT_EQ(S->JitKernels, 0);
    GTEST_SKIP() << "SKIPPED: built without LLVM (NNGRAPH_ENABLE_LLVM=OFF): "
                    "the region ran as its nodes";
  }
  EXPECT_EQ(S->JitKernels, 1);
  EXPECT_TRUE(S->Fallbacks.empty());
}

TEST(FusedRegionKernel, CpuBackendRunsWhatTheTranslatorDeclines) {
  // Floor has no kernel-IR form: the region runs its body node by node in a
  // fallback step, with the reference's results, and --stats names it
  // (without LLVM: as its nodes, each on its own kernel).
  ir::Graph G;
  ir::Value *A = G.addInput("a", ir::TensorType(DType::F32, Shape{2, 3}));
  ir::AttrMap Attrs;
  Attrs.set("body", ir::Attribute(std::string(
                        "graph { input %a: f32[2,3] %f: f32[2,3] = Floor(%a) "
                        "%y: f32[2,3] = Relu(%f) output %y }")));
  G.addOutput(G.addNode(OpKind::FusedRegion, {A}, {"y"}, Attrs)->output());
  ir::inferTypes(G);
  std::vector<Tensor> In{reftest::f32({-1.5, 0.5, 2.5, -0.25, 3.75, 1}, {2, 3})};
  auto Cpu = backends::getBackend("cpu").compile(G);
  EXPECT_EQ(Cpu->run(In).at(0).toDoubleVector(),
            (std::vector<double>{0, 0, 2, 0, 3, 1}));
  auto S = backends::cpuExecutableStats(*Cpu);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->JitKernels, 0);
  if (!backends::cpu::kernelJitAvailable()) {
    // Without LLVM the backend runs regions as their nodes.
    EXPECT_TRUE(S->Fallbacks.empty());
    return;
  }
  ASSERT_EQ(S->Fallbacks.size(), 1u);
  EXPECT_NE(S->Fallbacks[0].find("FusedRegion"), std::string::npos)
      << S->Fallbacks[0];
}
#endif

} // namespace
} // namespace nng
