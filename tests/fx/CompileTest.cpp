//===- CompileTest.cpp - nng::compile: guards, cache, counters, fallback -===//
//
// nng::compile traces on the first call with a signature, hits its cache
// on a repeated one, compiles again on a changed shape (and, with the
// automatic dynamic policy, makes the changed dim symbolic so a third size
// hits), guards on dtype and the training flag, runs a pass pipeline, and
// falls back to eager (warning once) when tracing throws TraceError, or
// lets the error through when not asked to.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Compile.h"
#include "GraphModuleTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace nng;
using namespace nng::fx::testing;

namespace {

/// Reads a tensor's value in forward: cannot be traced.
struct Branchy : nn::Module<Branchy> {
  Tensor forward(const Tensor &X) {
    if (X.sum().item<float>() > 0)
      return X.relu();
    return X * 2.0;
  }
};

bool hasBackend(const std::string &Name) {
  auto Names = backends::backendNames();
  return std::find(Names.begin(), Names.end(), Name) != Names.end();
}

} // namespace

TEST(CompileTest, RecompilesOnANewShapeAndHitsOnARepeatedOne) {
  auto M = std::make_shared<Mlp>();
  CompiledModule C = nng::compile(M, {.Dynamic = DynamicShapes::Static});
  EXPECT_EQ(C.cache_size(), 0u);
  EXPECT_EQ(C.last_graph_module(), nullptr);
  Tensor X2 = input(2, 4), X5 = input(5, 4, 1);
  EXPECT_TRUE(allclose(C({X2}), (*M)(X2), 1e-5, 1e-5));
  EXPECT_EQ(C.stats().Misses, 1u);
  EXPECT_EQ(C.stats().Hits, 0u);
  EXPECT_GT(C.stats().CompileSeconds, 0.0);
  ASSERT_NE(C.last_graph_module(), nullptr);
  EXPECT_EQ(C.last_graph_module()->state_dict().keys(), M->state_dict().keys());
  C({input(2, 4, 3)});
  EXPECT_EQ(C.stats().Hits, 1u);
  EXPECT_EQ(C.stats().Misses, 1u);
  EXPECT_TRUE(allclose(C({X5}), (*M)(X5), 1e-5, 1e-5));
  EXPECT_EQ(C.stats().Misses, 2u);
  EXPECT_EQ(C.cache_size(), 2u);
  C({X2});
  C({X5});
  EXPECT_EQ(C.stats().Hits, 3u);
  EXPECT_EQ(C.stats().Misses, 2u);
  EXPECT_EQ(C.guards(), (std::vector<std::string>{"train=1 x0: f32[5,4]",
                                                  "train=1 x0: f32[2,4]"}));
}

TEST(CompileTest, AutomaticDynamicMakesTheChangedDimSymbolic) {
  auto M = std::make_shared<Mlp>();
  CompiledModule C = nng::compile(M); // DynamicShapes::Auto
  C({input(2, 4)});
  C({input(3, 4)}); // differs in dim 0: a new entry with dim 0 symbolic
  EXPECT_EQ(C.stats().Misses, 2u);
  EXPECT_EQ(C.guards().front(), "train=1 x0: f32[s0,4]");
  Tensor X7 = input(7, 4);
  EXPECT_TRUE(allclose(C({X7}), (*M)(X7), 1e-5, 1e-5));
  EXPECT_EQ(C.stats().Hits, 1u);
  EXPECT_EQ(C.stats().Misses, 2u);
  EXPECT_TRUE(
      C.last_graph_module()->graph().inputs()[0]->type().dim(0).isSymbolic());
}

TEST(CompileTest, BatchPolicyTracesDimZeroAsN) {
  auto M = std::make_shared<Mlp>();
  CompiledModule C = nng::compile(M, {.Dynamic = DynamicShapes::Batch});
  C({input(2, 4)});
  C({input(9, 4)});
  EXPECT_EQ(C.stats().Misses, 1u);
  EXPECT_EQ(C.stats().Hits, 1u);
  EXPECT_EQ(C.last_graph_module()->graph().inputs()[0]->type().toString(),
            "f32[N,4]");
}

TEST(CompileTest, GuardsOnDtypeRankAndTrainingFlag) {
  auto M = std::make_shared<Mlp>();
  CompiledModule C = nng::compile(M, {.Dynamic = DynamicShapes::Static});
  C({input(2, 4)});
  M->eval();
  Tensor X = input(2, 4);
  EXPECT_TRUE(allclose(C({X}), (*M)(X), 1e-5, 1e-5));
  EXPECT_EQ(C.stats().Misses, 2u);
  EXPECT_EQ(C.guards().front(), "train=0 x0: f32[2,4]");
  C({input(2, 4).to(DType::F64)});
  EXPECT_EQ(C.stats().Misses, 3u);
  EXPECT_EQ(C.guards().front(), "train=0 x0: f64[2,4]");
  C.reset();
  EXPECT_EQ(C.cache_size(), 0u);
  EXPECT_EQ(C.stats().Misses, 0u);
}

TEST(CompileTest, RunsThePipelineAndTheChosenBackend) {
  auto M = std::make_shared<Mlp>();
  std::string Backend = hasBackend("cpu") ? "cpu" : "reference";
  CompiledModule C = nng::compile(M, {.Backend = Backend, .Pipeline = "O2"});
  Tensor X = input(4, 4);
  EXPECT_TRUE(allclose(C({X}), (*M)(X), 1e-5, 1e-5));
  EXPECT_EQ(C.last_graph_module()->backend(), Backend);
  EXPECT_THROW(nng::compile(M, {.Pipeline = "no-such-pass"}), Error);
  EXPECT_THROW(nng::compile(M, {.Backend = "tpu"}), Error);
}

TEST(CompileTest, FallsBackToEagerWhenTracingFails) {
  auto M = std::make_shared<Branchy>();
  CompiledModule C = nng::compile(M, {.FallbackToEager = true});
  Tensor X = input(2, 3);
  ::testing::internal::CaptureStderr();
  Tensor Y = C({X});
  C({X});
  std::string Err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(allclose(Y, (*M)(X), 1e-6, 1e-6));
  EXPECT_TRUE(C.is_eager_fallback());
  EXPECT_NE(C.fallback_reason().find("item()"), std::string::npos)
      << C.fallback_reason();
  EXPECT_EQ(C.stats().EagerCalls, 2u);
  EXPECT_EQ(C.stats().Misses, 1u);
  // The warning is printed once.
  size_t First = Err.find("warning: nng::compile");
  ASSERT_NE(First, std::string::npos) << Err;
  EXPECT_EQ(Err.find("warning: nng::compile", First + 1), std::string::npos)
      << Err;
}

TEST(CompileTest, TraceErrorsPropagateWithoutFallback) {
  auto M = std::make_shared<Branchy>();
  CompiledModule C = nng::compile(M);
  try {
    C({input(2, 3)});
    FAIL() << "no TraceError";
  } catch (const fx::TraceError &E) {
    EXPECT_NE(std::string(E.what()).find("FallbackToEager"), std::string::npos)
        << E.what();
  }
  EXPECT_FALSE(C.is_eager_fallback());
}

TEST(CompileTest, CompilesAModuleHeldByReference) {
  Mlp M; // not owned by a shared_ptr: the CompiledModule refers to it
  CompiledModule C = nng::compile(M, {.Dynamic = DynamicShapes::Batch});
  Tensor X = input(3, 4);
  EXPECT_TRUE(allclose(C({X}), M(X), 1e-5, 1e-5));
  EXPECT_EQ(C.options().Dynamic, DynamicShapes::Batch);
  CompiledModule Copy = C; // copies share the cache
  Copy({input(6, 4)});
  EXPECT_EQ(C.stats().Hits, 1u);
}
