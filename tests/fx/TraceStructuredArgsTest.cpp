//===- TraceStructuredArgsTest.cpp - ArgPacker and sym_arange -------------===//
//
// Two tracer pieces a decoder with a cache needs:
//  - fx::ArgPacker: a forward taking (x, std::vector<Tensor> cache) is
//    traced from flat graph inputs grouped by the packer; the graph keeps
//    one input per spec and equals eager; a packer that returns the wrong
//    arguments is the module's arity error;
//  - sym_arange: [start, end) from symbolic sizes records a Range node fed
//    by the shapes, so positions after a cache of P are right for every P
//    and T (arange would capture the example extents); with concrete
//    bounds it is arange.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

/// x [N, T] plus the cache's lengths: positions P .. P+T-1 added to x,
/// where P is the length of every cache tensor ([N, P]).
struct Positions : nn::Module<Positions> {
  Tensor forward(const Tensor &x, const std::vector<Tensor> &cache) {
    SymInt P = cache.at(0).size(1), T = x.size(1);
    Tensor Pos = sym_arange(P, P + T).to(DType::F32);
    Tensor Sum = x + Pos;
    for (const Tensor &C : cache)
      Sum = Sum + C.sum({1}, true);
    return Sum;
  }
};

std::vector<nn::Value> packCache(const std::vector<Tensor> &In) {
  return {In[0],
          nn::Value::list(std::vector<nn::Value>(In.begin() + 1, In.end()))};
}

TEST(TraceStructuredArgs, PackerGroupsFlatInputsAndRangeFollowsTheShapes) {
  Positions M;
  fx::GraphModule GM = fx::symbolic_trace(
      M, {InputSpec({"N", "T"}), InputSpec({"N", "P"}), InputSpec({"N", "P"})},
      packCache);
  const ir::Graph &G = GM.graph();
  ASSERT_EQ(G.inputs().size(), 3u);
  EXPECT_EQ(countOps(G, ir::OpKind::Range), 1u);
  for (auto [N, T, P] :
       {std::tuple{1, 3, 0}, std::tuple{2, 1, 4}, std::tuple{3, 6, 9}}) {
    manual_seed(N + T + P);
    Tensor X = randn({N, T}), C0 = randn({N, P}), C1 = randn({N, P});
    Tensor Want = M.forward(X, {C0, C1});
    EXPECT_TRUE(allclose(GM({X, C0, C1}), Want, 1e-5, 1e-5))
        << "N " << N << ", T " << T << ", P " << P;
  }
}

TEST(TraceStructuredArgs, PackerWithTheWrongArgumentsIsAnError) {
  Positions M;
  try {
    fx::symbolic_trace(M, {InputSpec({"N", "T"}), InputSpec({"N", "P"})},
                       [](const std::vector<Tensor> &In) {
                         return std::vector<nn::Value>(In.begin(), In.end());
                       });
    ADD_FAILURE() << "a Tensor where forward takes a list was accepted";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("while tracing"), std::string::npos)
        << E.what();
  }
}

TEST(TraceStructuredArgs, SymArangeWithConcreteBoundsIsArange) {
  EXPECT_TRUE(equal(sym_arange(2, 6), arange(2, 6)));
  EXPECT_EQ(sym_arange(3, 3).numel(), 0);
  EXPECT_EQ(sym_arange(0, 4).dtype(), DType::I64);
}

} // namespace
