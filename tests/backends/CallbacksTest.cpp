//===- CallbacksTest.cpp - nng.ModuleCall and its callback registry ------===//
//
// The callback registry (register, look up, unregister on handle
// destruction, unique ids), nng.ModuleCall in the IR (declared output types
// kept by inference and accepted by the verifier, the text round trip), and
// running it on the reference and cpu backends: the callback sees the
// inputs and its outputs flow on; expired and foreign callback ids, outputs
// that contradict the declared types and callbacks that throw give errors
// naming the node and the module.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"
#include "nngraph/backends/Callbacks.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/BuildConfig.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <gtest/gtest.h>

#include <set>

using namespace nng;
using namespace nng::ir;
using nng::backends::CallbackHandle;
using nng::backends::registerCallback;
using nng::rt::Tensor;

namespace {

bool has(const std::string &S, const std::string &Sub) {
  return S.find(Sub) != std::string::npos;
}

/// y = Relu(ModuleCall(x)) where the leaf module "body.gate" (Gate) returns
/// (2*x + 1, row sums as i64) for x: f32[N,3]; output types f32[N,3] and
/// i64[N] are declared, as the tracer declares them.
std::unique_ptr<Graph> leafGraph(int64_t Callback) {
  auto G = std::make_unique<Graph>();
  G->setName("leaf");
  Value *X = G->addInput(
      "x", TensorType(DType::F32, std::vector<Dim>{Dim::symbol("N"), Dim(3)}));
  AttrMap A;
  A.set("module", Attribute(std::string("body.gate")));
  A.set("module_type", Attribute(std::string("Gate")));
  A.set("callback", Attribute(Callback));
  Node *Call = G->addNode(OpKind::ModuleCall, {X}, {"h", "sums"}, A);
  Call->setName("gate_call");
  Call->output(0)->setType(
      TensorType(DType::F32, std::vector<Dim>{Dim::symbol("N"), Dim(3)}));
  Call->output(1)->setType(
      TensorType(DType::I64, std::vector<Dim>{Dim::symbol("N")}));
  Node *R = G->addNode(OpKind::Relu, {Call->output(0)}, {"y"});
  G->addOutput(R->output());
  G->addOutput(Call->output(1));
  inferTypes(*G);
  return G;
}

/// The Gate module's forward, counting its calls.
backends::ModuleCallback gate(int *Calls) {
  return [Calls](const std::vector<Tensor> &In) {
    ++*Calls;
    const Tensor &X = In.at(0);
    int64_t N = X.size(0);
    Tensor H = Tensor::empty(X.shape(), DType::F32);
    Tensor S = Tensor::empty(Shape{N}, DType::I64);
    for (int64_t I = 0; I < N; ++I) {
      double Sum = 0;
      for (int64_t J = 0; J < 3; ++J) {
        double V = X.getFlat(I * 3 + J);
        H.setFlat(I * 3 + J, 2 * V + 1);
        Sum += V;
      }
      S.setFlat(I, static_cast<double>(static_cast<int64_t>(Sum)));
    }
    return std::vector<Tensor>{H, S};
  };
}

Tensor input2x3() {
  return Tensor::fromVector<float>({-3, 0.5f, 2, 4, -1, 1}, Shape{2, 3});
}

void expectGateResult(const std::vector<Tensor> &Out) {
  ASSERT_EQ(Out.size(), 2u);
  EXPECT_EQ(Out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Out[0].toDoubleVector(),
            (std::vector<double>{0, 2, 5, 9, 0, 3})); // relu(2x+1)
  EXPECT_EQ(Out[1].dtype(), DType::I64);
  EXPECT_EQ(Out[1].toIntVector(), (std::vector<int64_t>{0, 4}));
}

std::string runError(backends::Backend &B, const Graph &G,
                     const std::vector<Tensor> &In) {
  try {
    B.compile(G)->run(In);
  } catch (const Error &E) {
    return E.what();
  }
  return "(no error)";
}

TEST(Callbacks, RegisterLookUpAndUnregister) {
  size_t Before = backends::numRegisteredCallbacks();
  int Calls = 0;
  auto H1 = registerCallback(gate(&Calls));
  auto H2 = registerCallback(gate(&Calls));
  EXPECT_NE(H1->id(), H2->id());
  EXPECT_EQ(backends::numRegisteredCallbacks(), Before + 2);
  ASSERT_TRUE(static_cast<bool>(backends::lookupCallback(H1->id())));
  backends::lookupCallback(H1->id())({input2x3()});
  EXPECT_EQ(Calls, 1);
  int64_t Id = H1->id();
  H1.reset();
  EXPECT_FALSE(static_cast<bool>(backends::lookupCallback(Id)));
  EXPECT_TRUE(backends::isCallbackIdFromThisProcess(Id));
  EXPECT_FALSE(backends::isCallbackIdFromThisProcess(7));
  EXPECT_EQ(backends::numRegisteredCallbacks(), Before + 1);
  // Ids are never reused.
  auto H3 = registerCallback(gate(&Calls));
  EXPECT_NE(H3->id(), Id);
  EXPECT_THROW(registerCallback(backends::ModuleCallback()), Error);
}

TEST(Callbacks, InferenceKeepsDeclaredTypesAndVerifierAccepts) {
  auto G = leafGraph(1);
  const Node &Call = *G->nodes()[0];
  EXPECT_EQ(Call.op(), OpKind::ModuleCall);
  EXPECT_EQ(Call.output(0)->type().toString(), "f32[N,3]");
  EXPECT_EQ(Call.output(1)->type().toString(), "i64[N]");
  EXPECT_TRUE(verifyGraph(*G).empty());
  std::vector<TensorType> T = inferNodeTypes(Call);
  EXPECT_EQ(T[1].toString(), "i64[N]");
  // Text round trip keeps the node, its attributes and types.
  std::string Text = printGraph(*G);
  EXPECT_TRUE(has(Text, "nng.ModuleCall(%x)")) << Text;
  auto P = parseGraph(Text);
  EXPECT_EQ(printGraph(*P), Text);
  // A missing 'module' attribute is a verifier error.
  G->nodes()[0]->attrs().erase("module");
  auto D = verifyGraph(*G);
  ASSERT_FALSE(D.empty());
  EXPECT_TRUE(has(D[0].Message, "module")) << D[0].Message;
}

TEST(Callbacks, ReferenceBackendCallsTheModule) {
  int Calls = 0;
  auto H = registerCallback(gate(&Calls));
  auto G = leafGraph(H->id());
  auto Exe = backends::referenceBackend().compile(*G);
  expectGateResult(Exe->run({input2x3()}));
  EXPECT_EQ(Calls, 1);
  // Another batch size (the declared dims are symbolic).
  auto Out = Exe->run({Tensor::empty(Shape{5, 3}, DType::F32)});
  EXPECT_EQ(Out[0].shape(), (Shape{5, 3}));
  EXPECT_EQ(Calls, 2);
}

TEST(Callbacks, OpTestBuildsAModuleCall) {
  // The one-node form of the reference kernel tests (OpCoverageTest).
  auto H = registerCallback([](const std::vector<Tensor> &In) {
    return std::vector<Tensor>{In.at(0).clone()};
  });
  auto Out = reftest::OpTest(OpKind::ModuleCall)
                 .in(reftest::f32({1, 2}, {2}))
                 .attr("module", Attribute(std::string("id")))
                 .attr("module_type", Attribute(std::string("Identity")))
                 .attr("callback", Attribute(H->id()))
                 .run();
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].toDoubleVector(), (std::vector<double>{1, 2}));
}

TEST(Callbacks, CpuBackendCallsTheModule) {
#if NNGRAPH_HAVE_ONEDNN
  int Calls = 0;
  auto H = registerCallback(gate(&Calls));
  auto G = leafGraph(H->id());
  expectGateResult(backends::cpuBackend().compile(*G)->run({input2x3()}));
  EXPECT_EQ(Calls, 1);
#else
  GTEST_SKIP() << "built without oneDNN: no cpu backend";
#endif
}

TEST(Callbacks, ExpiredCallbackNamesNodeAndModule) {
  int Calls = 0;
  auto H = registerCallback(gate(&Calls));
  auto G = leafGraph(H->id());
  auto Exe = backends::referenceBackend().compile(*G);
  H.reset();
  std::string Msg;
  try {
    Exe->run({input2x3()});
  } catch (const Error &E) {
    Msg = E.what();
  }
  EXPECT_TRUE(has(Msg, "the GraphModule that owned this leaf module was "
                       "destroyed"))
      << Msg;
  EXPECT_TRUE(has(Msg, "'body.gate' (Gate)")) << Msg;
  EXPECT_TRUE(has(Msg, "gate_call")) << Msg;
  EXPECT_EQ(Calls, 0);
}

TEST(Callbacks, ForeignCallbackIdSaysReloadedGraphsCannotRun) {
  // An id this process never handed out: a graph saved and reloaded.
  auto G = leafGraph(3);
  std::string Msg = runError(backends::referenceBackend(), *G, {input2x3()});
  EXPECT_TRUE(has(Msg, "graphs with nng.ModuleCall cannot run after being "
                       "saved and reloaded: trace without leaf modules"))
      << Msg;
  EXPECT_TRUE(has(Msg, "'body.gate' (Gate)")) << Msg;
  auto P = parseGraph(printGraph(*G));
  EXPECT_TRUE(has(runError(backends::referenceBackend(), *P, {input2x3()}),
                  "saved and reloaded"));
}

TEST(Callbacks, OutputsMustMatchTheDeclaredTypes) {
  auto Run = [](backends::ModuleCallback F) {
    auto H = registerCallback(std::move(F));
    auto G = leafGraph(H->id());
    return runError(backends::referenceBackend(), *G, {input2x3()});
  };
  auto Good = [](const std::vector<Tensor> &In) {
    int Calls = 0;
    return gate(&Calls)(In);
  };
  std::string Count = Run([&](const std::vector<Tensor> &In) {
    return std::vector<Tensor>{Good(In)[0]};
  });
  EXPECT_TRUE(has(Count, "returned 1 tensors but the graph declares 2"))
      << Count;
  EXPECT_TRUE(has(Count, "'body.gate' (Gate)")) << Count;
  std::string Dtype = Run([&](const std::vector<Tensor> &In) {
    auto O = Good(In);
    O[1] = O[1].to(DType::I32);
    return O;
  });
  EXPECT_TRUE(has(Dtype, "i32[2] for output 1 but the graph declares i64[N]"))
      << Dtype;
  std::string Dim = Run([&](const std::vector<Tensor> &In) {
    auto O = Good(In);
    O[0] = Tensor::empty(Shape{2, 4}, DType::F32);
    return O;
  });
  EXPECT_TRUE(has(Dim, "dim 1 differs")) << Dim;
  std::string Undef = Run([&](const std::vector<Tensor> &In) {
    auto O = Good(In);
    O[0] = Tensor();
    return O;
  });
  EXPECT_TRUE(has(Undef, "an undefined tensor")) << Undef;
}

TEST(Callbacks, ThrowingCallbackGetsContext) {
  auto H1 = registerCallback([](const std::vector<Tensor> &) -> std::vector<Tensor> {
    fail(ErrorKind::InvalidArgument, "data-dependent branch failed");
  });
  std::string Msg =
      runError(backends::referenceBackend(), *leafGraph(H1->id()), {input2x3()});
  EXPECT_TRUE(has(Msg, "data-dependent branch failed")) << Msg;
  EXPECT_TRUE(has(Msg, "'body.gate' (Gate) called by")) << Msg;
  auto H2 = registerCallback([](const std::vector<Tensor> &) -> std::vector<Tensor> {
    throw std::runtime_error("boom");
  });
  Msg = runError(backends::referenceBackend(), *leafGraph(H2->id()),
                 {input2x3()});
  EXPECT_TRUE(has(Msg, "threw: boom")) << Msg;
}

} // namespace
