//===- TraceErrorsTest.cpp - TraceError, leaf modules, bad input specs -----===//
//
// What a trace refuses, and how it says so: reading a proxy's data (item(),
// to_vector(), data_ptr(), printing) throws TraceError naming the module
// path and the op and suggesting a leaf; a data-dependent branch throws,
// and traces once the module is a leaf (one nng.ModuleCall node run
// through a callback); converting a symbolic size to an int throws; an
// in-place change of a parameter throws; bad input specs name the input.
//
//===----------------------------------------------------------------------===//

#include "FxTestUtils.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/backends/Callbacks.h"
#include "nngraph/frontend/nn/NN.h"

#include <sstream>

using namespace nng;
using namespace nng::fxtest;
using fx::InputSpec;

namespace {

/// Throws unless Fn throws TraceError whose message has every Part.
template <typename Fn>
void expectTraceError(Fn &&F, const std::vector<std::string> &Parts) {
  try {
    F();
    ADD_FAILURE() << "no TraceError";
  } catch (const fx::TraceError &E) {
    std::string M = E.what();
    for (const std::string &P : Parts)
      EXPECT_NE(M.find(P), std::string::npos) << "'" << P << "' not in: " << M;
  }
}

struct Gate : nn::Module<Gate> {
  Tensor forward(const Tensor &x) {
    if (x.sum().item<float>() > 0)
      return x * 2.0;
    return -x;
  }
};

struct WithGate : nn::Module<WithGate> {
  std::shared_ptr<nn::Linear> fc = register_module("fc", nn::make<nn::Linear>(4, 4));
  std::shared_ptr<Gate> gate = register_module("gate", nn::make<Gate>());
  Tensor forward(const Tensor &x) { return (*gate)((*fc)(x)).relu(); }
};

struct GateLeaf : fx::Tracer {
  bool is_leaf_module(const nn::ModuleBase &M, const std::string &P) override {
    return P == "gate";
  }
};

struct Reader : nn::Module<Reader> {
  int What = 0;
  Tensor forward(const Tensor &x) {
    Tensor y = x + 1.0;
    if (What == 0)
      (void)y.to_vector<float>();
    else if (What == 1)
      (void)y.data_ptr<float>();
    else if (What == 2) {
      std::ostringstream OS;
      OS << y;
    } else if (What == 3) {
      int64_t N = y.size(0); // symbolic -> int
      return y * static_cast<double>(N);
    }
    return y;
  }
};

struct ParamInPlace : nn::Module<ParamInPlace> {
  Tensor w = register_parameter("w", ones({3}));
  Tensor forward(const Tensor &x) {
    NoGradGuard G;
    w.add_(x);
    return x;
  }
};

} // namespace

TEST(TraceErrors, DataDependentBranchThrows) {
  WithGate M;
  expectTraceError(
      [&] { fx::Tracer().trace_graph(M, {InputSpec({2, 4})}); },
      {"item()", "gate (Gate)", "ReduceSum", "leaf"});
  // Nothing of the failed trace stays installed.
  EXPECT_FALSE(fx::isTracing());
  Tensor X = randn({2, 4});
  EXPECT_EQ((*M.fc)(X).dim(), 2);
}

TEST(TraceErrors, DataDependentBranchAsLeaf) {
  manual_seed(20);
  WithGate M;
  GateLeaf T;
  fx::TraceResult R = T.trace_graph(M, {InputSpec({"N", 4})});
  ir::verifyOrThrow(*R.Graph);
  ASSERT_EQ(countOps(*R.Graph, ir::OpKind::ModuleCall), 1u);
  for (const auto &N : R.Graph->nodes())
    if (N->op() == ir::OpKind::ModuleCall) {
      EXPECT_EQ(N->attrString("module"), "gate");
      EXPECT_EQ(N->attrString("module_type"), "Gate");
      EXPECT_EQ(N->scope().Path, "gate");
      EXPECT_EQ(N->output()->type().toString(), "f32[N,4]");
    }
  // Both branches: the callback runs the module on real data.
  Tensor Pos = rand({3, 4}) + 1.0, Neg = rand({5, 4}) - 2.0;
  expectGraphEqualsEager(R, M, {Pos});
  expectGraphEqualsEager(R, M, {Neg});
  // Dropping the trace unregisters the callback.
  size_t Before = backends::numRegisteredCallbacks();
  R = fx::TraceResult();
  EXPECT_EQ(backends::numRegisteredCallbacks() + 1, Before);
}

TEST(TraceErrors, ReadingProxyData) {
  Reader M;
  for (int W : {0, 1, 2}) {
    M.What = W;
    expectTraceError([&] { fx::Tracer().trace_graph(M, {InputSpec({2})}); },
                     {"<root> (Reader)", "Add", "leaf"});
  }
  M.What = 3;
  expectTraceError([&] { fx::Tracer().trace_graph(M, {InputSpec({"N"})}); },
                   {"symbolic size", "C++ integer", "Reader"});
  // With a static dim the same code traces (the size is concrete).
  auto R = traceAndCompare(M, {InputSpec({3})}, {randn({3})});
  EXPECT_EQ(R.Graph->inputs().size(), 1u);
}

TEST(TraceErrors, InPlaceOnParameter) {
  ParamInPlace M;
  expectTraceError([&] { fx::Tracer().trace_graph(M, {InputSpec({3})}); },
                   {"add_", "in place", "ParamInPlace"});
  EXPECT_TRUE(allClose(M.w.data(), ones({3}), 0.0));
}

TEST(TraceErrors, BadInputSpecs) {
  nn::Conv2d C(3, 4, 3);
  auto Msg = [&](const std::vector<InputSpec> &S) {
    try {
      fx::Tracer().trace_graph(C, S);
    } catch (const Error &E) {
      return std::string(E.what());
    }
    return std::string("no error");
  };
  // Rank: conv2d needs 3-D or 4-D input.
  std::string M = Msg({InputSpec({3, 8})});
  EXPECT_NE(M.find("x: f32[3,8]"), std::string::npos) << M;
  // Dtype.
  M = Msg({InputSpec({1, 3, 8, 8}, DType::I64)});
  EXPECT_NE(M.find("x: i64[1,3,8,8]"), std::string::npos) << M;
  // Count.
  M = Msg({InputSpec({1, 3, 8, 8}), InputSpec({1, 3, 8, 8})});
  EXPECT_NE(M.find("x1: f32[1,3,8,8]"), std::string::npos) << M;
  EXPECT_EQ(M.find("no error"), std::string::npos);
  // Malformed specs.
  M = Msg({InputSpec({1, -2, 8, 8})});
  EXPECT_NE(M.find("dim 1 has extent -2"), std::string::npos) << M;
  M = Msg({InputSpec({"1N", 3, 8, 8})});
  EXPECT_NE(M.find("identifier"), std::string::npos) << M;
  M = Msg({InputSpec({1, 3, 8, 8}, DType::F32, "weight")});
  EXPECT_NE(M.find("state_dict key"), std::string::npos) << M;
  M = Msg({InputSpec({1}, DType::F32, "a"), InputSpec({1}, DType::F32, "a")});
  EXPECT_NE(M.find("unique name"), std::string::npos) << M;
}
