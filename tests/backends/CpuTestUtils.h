//===- CpuTestUtils.h - Cases run on both backends -------------*- C++ -*-===//
//
// A Case is a one-node graph (op, inputs, attributes) with who must serve
// it on the cpu backend: oneDNN, the f32 loops, or the reference kernel.
// check() runs it on both backends, compares (|cpu - ref| <= 1e-4 *
// max(1, max |ref|), NaN matching NaN), checks the call counters and that a
// second run hits the plan cache. Without oneDNN, REQUIRE_ONEDNN() skips
// with the reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "RefTestUtils.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace nng::cputest {

using namespace nng::reftest;

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

#define REQUIRE_ONEDNN()                                                       \
  do {                                                                         \
    if (!NNGRAPH_HAVE_ONEDNN)                                                  \
      GTEST_SKIP() << "SKIPPED: built without oneDNN "                         \
                      "(NNGRAPH_ENABLE_ONEDNN=OFF), there is no cpu backend";  \
  } while (0)

/// Adds a one-output node K(In) named Out to G; returns its result.
inline ir::Value *add(ir::Graph &G, ir::OpKind K, std::vector<ir::Value *> In,
                      const std::string &Out, ir::AttrMap A = {}) {
  return G.addNode(K, std::move(In), {Out}, std::move(A))->output();
}

/// Uniform [Lo, Hi) values of dtype T.
inline Tensor rnd(Shape S, unsigned Seed, double Lo = -1, double Hi = 1,
           DType T = DType::F32) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<double> U(Lo, Hi);
  Tensor R = Tensor::empty(S, T);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I, U(Gen));
  return R;
}

/// Small integers in [0, K): many ties for max pools.
inline Tensor ties(Shape S, unsigned Seed, int K = 3) {
  std::mt19937 Gen(Seed);
  Tensor R = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < R.numel(); ++I)
    R.setFlat(I, static_cast<double>(Gen() % K));
  return R;
}

/// A linear layer for the product epilogue rule, added to G: MatMul of an
/// input x f32[N, S, K] (N, S symbolic) by W [K, NOut] then the Add of a
/// bias b, or Gemm of x f32[N, K] by W [NOut, K] (transB) with C = b; then,
/// when Residual, the Add of an input r of the result's shape. W's values
/// are in [-WeightBound, WeightBound). Returns the last result (not yet an
/// output).
inline ir::Value *addLinearLayer(ir::Graph &G, bool Gemm, bool Residual,
                                 int64_t K, int64_t NOut, double WeightBound) {
  std::vector<ir::Dim> XD = {ir::Dim::symbol("N")};
  if (!Gemm)
    XD.push_back(ir::Dim::symbol("S"));
  std::vector<ir::Dim> RD = XD;
  XD.push_back(ir::Dim(K));
  RD.push_back(ir::Dim(NOut));
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, XD));
  ir::Value *R =
      Residual ? G.addInput("r", ir::TensorType(DType::F32, RD)) : nullptr;
  ir::Value *B = G.addInitializer("b", rnd({NOut}, 2));
  ir::Value *Y;
  if (Gemm) {
    ir::AttrMap A;
    A.set("transB", int64_t(1));
    ir::Value *W =
        G.addInitializer("w", rnd({NOut, K}, 1, -WeightBound, WeightBound));
    Y = add(G, ir::OpKind::Gemm, {X, W, B}, "y0", A);
  } else {
    ir::Value *W =
        G.addInitializer("w", rnd({K, NOut}, 1, -WeightBound, WeightBound));
    Y = add(G, ir::OpKind::Add, {add(G, ir::OpKind::MatMul, {X, W}, "xw"), B},
            "y0");
  }
  return R ? add(G, ir::OpKind::Add, {Y, R}, "y1") : Y;
}

/// Expects Exe (G compiled for a backend) to give the reference backend's
/// single output on In within 1e-5 + 1e-4 |want|; What names the case.
inline void expectSameAsReference(const ir::Graph &G, backends::Executable &Exe,
                                  const std::vector<Tensor> &In,
                                  const std::string &What) {
  std::vector<Tensor> Want = backends::runReference(G, In);
  std::vector<Tensor> Got = Exe.run(In);
  ASSERT_EQ(Got.size(), 1u);
  ASSERT_EQ(Got[0].shape(), Want[0].shape());
  for (int64_t I = 0; I < Want[0].numel(); ++I)
    ASSERT_NEAR(Got[0].getFlat(I), Want[0].getFlat(I),
                1e-5 + 1e-4 * std::fabs(Want[0].getFlat(I)))
        << What << " element " << I;
}

/// Who must compute a case on the cpu backend.
enum class Expect { Dnnl, Fallback, Reference, Fast };

/// A one-node graph run on both backends.
struct Case {
  ir::OpKind Op;
  std::vector<Tensor> Ins; ///< Undefined: absent optional input.
  std::vector<std::pair<std::string, ir::Attribute>> Attrs;
  Expect Who = Expect::Dnnl;
  size_t NumOutputs = 1;
  std::vector<bool> Const; ///< Inputs given as initializers.

  Case &attr(std::string Name, ir::Attribute A) {
    Attrs.emplace_back(std::move(Name), std::move(A));
    return *this;
  }
  Case &expect(Expect E) {
    Who = E;
    return *this;
  }

  std::unique_ptr<ir::Graph> graph(std::vector<Tensor> &Feeds) const {
    auto G = std::make_unique<ir::Graph>();
    G->setName("cpu_case");
    std::vector<ir::Value *> Vs;
    for (size_t I = 0; I < Ins.size(); ++I) {
      std::string Name = "in" + std::to_string(I);
      if (!Ins[I].defined()) {
        Vs.push_back(nullptr);
      } else if (I < Const.size() && Const[I]) {
        Vs.push_back(G->addInitializer(Name, Ins[I]));
      } else {
        Vs.push_back(
            G->addInput(Name, ir::TensorType(Ins[I].dtype(), Ins[I].shape())));
        Feeds.push_back(Ins[I]);
      }
    }
    ir::AttrMap AM;
    for (const auto &[K, V] : Attrs)
      AM.setByName(K, V);
    std::vector<std::string> Outs;
    for (size_t I = 0; I < NumOutputs; ++I)
      Outs.push_back("out" + std::to_string(I));
    ir::Node *N = G->addNode(Op, Vs, Outs, AM);
    for (ir::Value *V : N->outputs())
      G->addOutput(V);
    ir::inferTypes(*G);
    return G;
  }
  std::string describe() const {
    std::string S = std::string(ir::getOpSchema(Op).Name) + "(";
    for (size_t I = 0; I < Ins.size(); ++I)
      S += (I ? ", " : "") + (Ins[I].defined()
                                  ? std::string(dtypeName(Ins[I].dtype())) +
                                        Ins[I].shape().toString()
                                  : std::string("none"));
    S += ")";
    for (const auto &[K, V] : Attrs)
      S += " " + K;
    return S;
  }
};

/// |Got - Want| <= 1e-4 * max(1, max |Want|) elementwise; NaN matches NaN,
/// infinities must match.
inline ::testing::AssertionResult closeTo(const Tensor &Got, const Tensor &Want) {
  if (Got.dtype() != Want.dtype() || Got.shape() != Want.shape())
    return ::testing::AssertionFailure()
           << "got " << Got.toString() << ", want " << Want.toString();
  double Mag = 1;
  for (int64_t I = 0; I < Want.numel(); ++I)
    if (std::isfinite(Want.getFlat(I)))
      Mag = std::max(Mag, std::fabs(Want.getFlat(I)));
  double Tol = 1e-4 * Mag;
  for (int64_t I = 0; I < Want.numel(); ++I) {
    double G = Got.getFlat(I), W = Want.getFlat(I);
    bool Ok = (std::isnan(G) && std::isnan(W)) || G == W ||
              (std::isfinite(W) && std::fabs(G - W) <= Tol);
    if (!Ok)
      return ::testing::AssertionFailure()
             << "element " << I << ": cpu " << G << ", reference " << W
             << " (tolerance " << Tol << ")";
  }
  return ::testing::AssertionSuccess();
}

#if NNGRAPH_HAVE_ONEDNN
/// Runs C on both backends, compares, and checks who served it: the
/// compiled schedule (what the cpu backend runs) and the node kernel its
/// fallback steps use (run node by node, where the counters tell who
/// served it) must both match the reference.
inline void check(const Case &C) {
  SCOPED_TRACE(C.describe());
  std::vector<Tensor> Feeds;
  std::unique_ptr<ir::Graph> G = C.graph(Feeds);
  std::vector<Tensor> Want = backends::runReference(*G, Feeds);
  {
    std::unique_ptr<backends::Executable> Compiled =
        backends::getBackend("cpu").compile(*G);
    std::vector<Tensor> Got = Compiled->run(Feeds);
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Want.size(); ++I)
      EXPECT_TRUE(closeTo(Got[I], Want[I])) << "compiled, output " << I;
    std::vector<Tensor> Again = Compiled->run(Feeds);
    for (size_t I = 0; I < Want.size(); ++I)
      EXPECT_TRUE(Again[I].equals(Got[I]))
          << "compiled, second run differs, output " << I;
  }
  std::unique_ptr<backends::Executable> Exe =
      backends::compileCpu(*G, backends::CpuMode::NodeByNode);
  backends::CpuCallCounts Before = backends::cpuCallCounts();
  std::vector<Tensor> Got = Exe->run(Feeds);
  backends::CpuCallCounts After = backends::cpuCallCounts();
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(closeTo(Got[I], Want[I])) << "output " << I;
  bool Served = backends::cpuServesWithDnnl(*G->nodes()[0]);
  switch (C.Who) {
  case Expect::Dnnl:
    EXPECT_TRUE(Served);
    EXPECT_EQ(After.Dnnl - Before.Dnnl, 1) << "oneDNN did not serve it";
    break;
  case Expect::Fallback:
    EXPECT_TRUE(Served);
    EXPECT_EQ(After.Fallback - Before.Fallback, 1)
        << "the reference kernel did not serve it";
    break;
  case Expect::Reference:
    EXPECT_FALSE(Served);
    break;
  case Expect::Fast:
    EXPECT_EQ(After.Fast - Before.Fast, 1) << "the f32 loops did not serve it";
    EXPECT_EQ(After.Dnnl - Before.Dnnl, 0);
    break;
  }
  // A second run hits the plan cache and gives the same answer.
  std::vector<Tensor> Again = Exe->run(Feeds);
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_TRUE(Again[I].equals(Got[I])) << "second run differs, output " << I;
}
#else
inline void check(const Case &) {}
#endif

inline Case mk(ir::OpKind K, std::vector<Tensor> Ins) {
  Case C;
  C.Op = K;
  C.Ins = std::move(Ins);
  return C;
}


} // namespace nng::cputest
