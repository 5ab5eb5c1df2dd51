//===- GraphModuleTest.cpp - fx::GraphModule: run, weights, print, save --===//
//
// A GraphModule over the MLP graph (hand-written text IR that matches what
// tracing the Mlp module gives, with the module's weights loaded) runs like
// the eager module, checks its inputs, rebuilds structured outputs,
// exchanges state dicts under the module's keys (strict errors list every
// key and change nothing), prints torch.fx's table and saves as .nng and
// .onnx that load back and compute the same.
//
//===----------------------------------------------------------------------===//

#include "GraphModuleTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/ir/Printer.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace nng;
using namespace nng::fx;
using namespace nng::fx::testing;

namespace {

/// Runs Fn and returns the Error's message ("" when nothing was thrown).
template <typename F> std::string errorOf(F &&Fn) {
  try {
    Fn();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

bool hasBackend(const std::string &Name) {
  auto Names = backends::backendNames();
  return std::find(Names.begin(), Names.end(), Name) != Names.end();
}

} // namespace

TEST(GraphModuleTest, ForwardMatchesEagerAtAnyBatch) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  EXPECT_EQ(GM.backend(), "reference");
  EXPECT_EQ(GM.source_type(), "Mlp");
  for (int64_t Batch : {1, 5, 3}) {
    Tensor X = input(Batch, 4, static_cast<int>(Batch));
    Tensor Y = GM({X});
    Tensor Ref = M(X);
    ASSERT_EQ(Y.shape(), Ref.shape()) << "batch " << Batch;
    EXPECT_TRUE(allclose(Y, Ref, 1e-5, 1e-5)) << "batch " << Batch;
  }
}

TEST(GraphModuleTest, ForwardChecksInputsAndNamesThem) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  std::string E = errorOf([&] { GM({input(2, 5)}); });
  EXPECT_NE(E.find("input %x"), std::string::npos) << E;
  EXPECT_NE(E.find("f32[N,4]"), std::string::npos) << E;
  E = errorOf([&] { GM({ones({2, 4, 1})}); });
  EXPECT_NE(E.find("input %x"), std::string::npos) << E;
  E = errorOf([&] { GM({ones({2, 4}, DType::I64)}); });
  EXPECT_NE(E.find("input %x"), std::string::npos) << E;
  EXPECT_NE(E.find("i64"), std::string::npos) << E;
  E = errorOf([&] { GM({input(2, 4), input(2, 4)}); });
  EXPECT_NE(E.find("takes 1 inputs but 2"), std::string::npos) << E;
  E = errorOf([&] { GM({Tensor()}); });
  EXPECT_NE(E.find("undefined"), std::string::npos) << E;
}

TEST(GraphModuleTest, RebuildsDictTupleAndConstantOutputs) {
  std::shared_ptr<ir::Graph> G = frontend::loadModelFromText(R"(graph "two" {
  input %a: f32[2]
  input %b: f32[2]
  %s: f32[2] = Add(%a, %b)
  %p: f32[2] = Mul(%a, %b)
  output %s, %p
}
)",
                                                             "<two>");
  OutputStructure Sum;
  Sum.Index = 0;
  OutputStructure Prod;
  Prod.Index = 1;
  OutputStructure Three;
  Three.K = OutputStructure::Kind::Constant;
  Three.Constant = nn::Value(3);
  OutputStructure Rest;
  Rest.K = OutputStructure::Kind::Tuple;
  Rest.Children = {Prod, Three};
  OutputStructure Both;
  Both.K = OutputStructure::Kind::List;
  Both.Children = {Sum, Prod};
  OutputStructure Root;
  Root.K = OutputStructure::Kind::Dict;
  Root.Keys = {"sum", "rest", "both"};
  Root.Children = {Sum, Rest, Both};
  GraphModule GM(G, Root, {}, "Two");
  nn::Value V = GM.forward({tensor({1.0, 2.0}), tensor({3.0, 4.0})});
  ASSERT_TRUE(V.isDict());
  EXPECT_EQ(V.keys(), (std::vector<std::string>{"sum", "rest", "both"}));
  EXPECT_EQ(V.at("sum").toTensor().to_vector<float>(),
            (std::vector<float>{4, 6}));
  ASSERT_TRUE(V.at("rest").isTuple());
  EXPECT_EQ(V.at("rest").elements()[0].toTensor().to_vector<float>(),
            (std::vector<float>{3, 8}));
  EXPECT_EQ(V.at("rest").elements()[1].toInt(), 3);
  ASSERT_TRUE(V.at("both").isList());
  EXPECT_EQ(V.at("both").size(), 2u);
  std::string E = errorOf([&] {
    GM({tensor({1.0, 2.0}), tensor({3.0, 4.0})});
  });
  EXPECT_NE(E.find("call forward() instead"), std::string::npos) << E;
}

TEST(GraphModuleTest, StateDictHasTheModuleKeysAndValues) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  nn::StateDict Mine = GM.state_dict(), Theirs = M.state_dict();
  EXPECT_EQ(Mine.keys(), Theirs.keys());
  for (const auto &[Key, T] : Theirs) {
    ASSERT_TRUE(Mine.contains(Key)) << Key;
    EXPECT_TRUE(Mine.at(Key).data().equals(T.data())) << Key;
  }
}

TEST(GraphModuleTest, StrictLoadListsEveryBadKeyAndChangesNothing) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  nn::StateDict Before = GM.state_dict();
  nn::StateDict Bad = M.state_dict();
  Bad.insert("fc1.weight", zeros({4, 3})); // transposed: shape mismatch
  Bad.insert("fc1.bias", zeros({3}));      // fine, but must not be applied
  Bad.erase("fc2.bias");                   // missing
  Bad.insert("fc3.weight", zeros({7}));    // unexpected
  std::string E = errorOf([&] { GM.load_state_dict(Bad); });
  EXPECT_NE(E.find("'fc1.weight': size mismatch"), std::string::npos) << E;
  EXPECT_NE(E.find("[4, 3]"), std::string::npos) << E;
  EXPECT_NE(E.find("f32[3,4]"), std::string::npos) << E;
  EXPECT_NE(E.find("missing key 'fc2.bias'"), std::string::npos) << E;
  EXPECT_NE(E.find("unexpected key 'fc3.weight'"), std::string::npos) << E;
  EXPECT_NE(E.find("nothing was changed"), std::string::npos) << E;
  for (const auto &[Key, T] : Before)
    EXPECT_TRUE(GM.state_dict().at(Key).data().equals(T.data())) << Key;
  // A shape mismatch is an error even when not strict.
  E = errorOf([&] { GM.load_state_dict(Bad, /*Strict=*/false); });
  EXPECT_NE(E.find("'fc1.weight': size mismatch"), std::string::npos) << E;
  EXPECT_EQ(E.find("missing key"), std::string::npos) << E;
}

TEST(GraphModuleTest, NonStrictLoadReportsKeysAndLoadsTheRest) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  nn::StateDict SD;
  SD.insert("fc2.bias", tensor({5.0, 6.0}, TensorOptions().dtype(DType::F64)));
  SD.insert("extra", zeros({1}));
  nn::LoadStateDictResult R = GM.load_state_dict(SD, /*Strict=*/false);
  EXPECT_EQ(R.missing_keys,
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight"}));
  EXPECT_EQ(R.unexpected_keys, (std::vector<std::string>{"extra"}));
  Tensor B = GM.state_dict().at("fc2.bias");
  EXPECT_EQ(B.dtype(), DType::F32); // converted to the initializer's dtype
  EXPECT_EQ(B.to_vector<float>(), (std::vector<float>{5, 6}));
  // The next forward uses the new bias (the executable was dropped).
  // fc2's bias was [0, 0.01]: the output moves by [5, 5.99].
  Tensor X = input(2, 4);
  EXPECT_TRUE(allclose(GM({X}), M(X) + tensor({5.0, 5.99}), 1e-5, 1e-5));
}

TEST(GraphModuleTest, PrintTabularLikeTorchFx) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  std::vector<std::string> Want = {
      "opcode         name        target      args                       scope",
      "-------------  ----------  ----------  -------------------------  "
      "---------",
      "placeholder    x           x           ()",
      "get_attr       fc1.weight  fc1.weight  ()",
      "get_attr       fc1.bias    fc1.bias    ()",
      "get_attr       fc2.weight  fc2.weight  ()",
      "get_attr       fc2.bias    fc2.bias    ()",
      "call_function  h           Gemm        (x, fc1.weight, fc1.bias)  fc1 "
      "(Lin)",
      "call_function  r           Relu        (h,)                       act "
      "(Act)",
      "call_function  y           Gemm        (r, fc2.weight, fc2.bias)  fc2 "
      "(Lin)",
      "output         output      output      (y,)",
  };
  EXPECT_EQ(lines(GM.print_tabular()), Want) << GM.print_tabular();
}

TEST(GraphModuleTest, CodeIsTheTextIR) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  EXPECT_EQ(GM.code(), ir::printGraph(GM.graph()));
  EXPECT_NE(GM.code().find("Gemm(%x, %fc1.weight, %fc1.bias)"),
            std::string::npos)
      << GM.code();
}

class GraphModuleSaveTest : public TempDirTest {};

TEST_F(GraphModuleSaveTest, SavesNngAndOnnxThatReloadAndAgree) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  Tensor X = input(3, 4);
  Tensor Want = GM({X});
  for (const char *Name : {"mlp.nng", "mlp.onnx"}) {
    std::string Path = (Dir / Name).string();
    GM.save(Path);
    std::shared_ptr<ir::Graph> G = frontend::loadModel(Path);
    GraphModule Back(G, OutputStructure{}, {}, "Mlp");
    EXPECT_EQ(Back.state_dict().keys(), GM.state_dict().keys()) << Name;
    Tensor Got = Back({X});
    EXPECT_TRUE(allclose(Got, Want, 1e-6, 1e-6)) << Name;
    // The dynamic batch dim survives.
    EXPECT_EQ(G->inputs()[0]->type().dim(0).isSymbolic(), true) << Name;
  }
  std::string E = errorOf([&] { GM.save((Dir / "mlp.txt").string()); });
  EXPECT_NE(E.find("mlp.txt"), std::string::npos) << E;
  EXPECT_FALSE(std::filesystem::exists(Dir / "mlp.txt"));
}

TEST(GraphModuleTest, RunsOnTheCpuBackend) {
  if (!hasBackend("cpu"))
    GTEST_SKIP() << "this build has no 'cpu' backend";
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  GM.set_backend("cpu");
  EXPECT_EQ(GM.backend(), "cpu");
  Tensor X = input(4, 4);
  EXPECT_TRUE(allclose(GM({X}), M(X), 1e-5, 1e-5));
}

TEST(GraphModuleTest, UnknownBackendListsTheKnownOnes) {
  Mlp M;
  GraphModule GM = mlpGraphModule(M);
  std::string E = errorOf([&] { GM.set_backend("tpu"); });
  EXPECT_NE(E.find("tpu"), std::string::npos) << E;
  EXPECT_NE(E.find("reference"), std::string::npos) << E;
  EXPECT_EQ(GM.backend(), "reference");
}
