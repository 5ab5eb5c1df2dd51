//===- CpuHalfTest.cpp - f16 models on the cpu backend -------------------===//
//
// An f16 model (f16 input, weights and output: MatMul, Add, Relu, a Cast to
// f32 as a second output) compiles as the same graph in f32 (WidenHalf.h):
// its outputs keep their dtypes and names, agree with the reference
// backend's f16 run within f16's rounding, and no step runs on a node
// kernel (the entry and exit Casts are own loops, LowerCast.cpp). An f32
// graph that rounds through f16 inside (Cast to f16 and back) is not
// widened: its rounding is the reference's exactly.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

namespace nng {
namespace {

using namespace cputest;

#if NNGRAPH_HAVE_ONEDNN

ir::AttrMap castTo(DType T) {
  ir::AttrMap A;
  A.set("to", ir::Attribute(dtypeToOnnx(T)));
  return A;
}

TEST(CpuHalf, HalfModelRunsInFloatWithoutNodeKernels) {
  REQUIRE_ONEDNN();
  ir::Graph G;
  ir::Value *X = G.addInput(
      "x", ir::TensorType(DType::F16, std::vector<ir::Dim>{ir::Dim::symbol("N"),
                                                    ir::Dim(16)}));
  ir::Value *W = G.addInitializer("w", rnd({16, 8}, 1, -0.5, 0.5, DType::F16));
  ir::Value *B = G.addInitializer("b", rnd({8}, 2, -0.5, 0.5, DType::F16));
  ir::Value *M = add(G, ir::OpKind::MatMul, {X, W}, "m");
  ir::Value *S = add(G, ir::OpKind::Add, {M, B}, "s");
  ir::Value *Y = add(G, ir::OpKind::Relu, {S}, "y");
  G.addOutput(Y);
  G.addOutput(add(G, ir::OpKind::Cast, {Y}, "y32", castTo(DType::F32)));
  ir::inferTypes(G);
  auto Exe = backends::getBackend("cpu").compile(G);
  for (int64_t N : {1, 5}) {
    std::vector<Tensor> In = {rnd({N, 16}, 3, -1, 1, DType::F16)};
    std::vector<Tensor> Want = backends::runReference(G, In);
    std::vector<Tensor> Got = Exe->run(In);
    ASSERT_EQ(Got.size(), 2u);
    EXPECT_EQ(Got[0].dtype(), DType::F16);
    EXPECT_EQ(Got[1].dtype(), DType::F32);
    for (size_t O = 0; O < 2; ++O) {
      ASSERT_EQ(Got[O].shape(), Want[O].shape());
      for (int64_t I = 0; I < Want[O].numel(); ++I)
        EXPECT_NEAR(Got[O].getFlat(I), Want[O].getFlat(I),
                    2e-3 * std::max(1.0, std::fabs(Want[O].getFlat(I))))
            << "output " << O << " element " << I << " at N=" << N;
    }
  }
  backends::CpuExecutableStats St = *backends::cpuExecutableStats(*Exe);
  EXPECT_TRUE(St.Fallbacks.empty()) << St.Fallbacks.front();
  EXPECT_GT(St.DnnlSteps, 0);
}

TEST(CpuHalf, RoundingThroughHalfInsideAFloatGraphStays) {
  REQUIRE_ONEDNN();
  ir::Graph G;
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape{64}));
  ir::Value *H = add(G, ir::OpKind::Cast, {X}, "h", castTo(DType::F16));
  G.addOutput(add(G, ir::OpKind::Cast, {H}, "y", castTo(DType::F32)));
  ir::inferTypes(G);
  auto Exe = backends::getBackend("cpu").compile(G);
  std::vector<Tensor> In = {rnd({64}, 4, -3, 3)};
  std::vector<Tensor> Want = backends::runReference(G, In);
  std::vector<Tensor> Got = Exe->run(In);
  ASSERT_TRUE(Got[0].equals(Want[0]));
  EXPECT_FALSE(Got[0].equals(In[0])) << "the f16 rounding was dropped";
  EXPECT_TRUE(backends::cpuExecutableStats(*Exe)->Fallbacks.empty());
}

#else

TEST(CpuHalf, NeedsOneDnn) {
  GTEST_SKIP() << "SKIPPED: built without oneDNN (NNGRAPH_ENABLE_ONEDNN=OFF), "
                  "there is no cpu backend";
}

#endif

} // namespace
} // namespace nng
