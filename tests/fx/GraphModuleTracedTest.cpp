//===- GraphModuleTracedTest.cpp - GraphModules from symbolic_trace ------===//
//
// The GraphModule tests again on traced modules (fx::symbolic_trace): a
// traced MLP with a dynamic batch runs like the eager module at any batch,
// has the module's state_dict keys and values, prints a torch.fx table with
// scopes, saves as .onnx and .nng that reload and agree; a module returning
// a dict and a tuple gets the same structure back; the Interpreter's hook
// sees every traced node and ShapeProp annotates it for a concrete batch; a
// leaf module prints as a call_module row and runs node by node too.
//
//===----------------------------------------------------------------------===//

#include "GraphModuleTestUtils.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Interpreter.h"
#include "nngraph/frontend/fx/ShapeProp.h"
#include "nngraph/frontend/fx/Trace.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace nng;
using namespace nng::fx;
using namespace nng::fx::testing;

namespace {

/// Returns {"out": fc(x), "parts": (relu(x), x * 2, 7)}.
struct Structured : nn::Module<Structured> {
  std::shared_ptr<nn::testing::Lin> fc =
      register_module("fc", std::make_shared<nn::testing::Lin>(4, 2));
  nn::Value forward(const Tensor &X) {
    return nn::Value::dict(
        {{"out", nn::Value((*fc)(X))},
         {"parts", nn::Value::tuple({nn::Value(X.relu()), nn::Value(X * 2.0),
                                     nn::Value(7)})}});
  }
};

} // namespace

TEST(GraphModuleTracedTest, RunsLikeTheModuleAtAnyBatch) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  EXPECT_EQ(GM.source_type(), "Mlp");
  for (int64_t Batch : {1, 3, 6}) {
    Tensor X = input(Batch, 4, static_cast<int>(Batch));
    EXPECT_TRUE(allclose(GM({X}), M(X), 1e-5, 1e-5)) << "batch " << Batch;
  }
}

TEST(GraphModuleTracedTest, StateDictRoundTrips) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  nn::StateDict Mine = GM.state_dict(), Theirs = M.state_dict();
  EXPECT_EQ(Mine.keys(), Theirs.keys());
  for (const auto &[Key, T] : Theirs)
    EXPECT_TRUE(Mine.at(Key).data().equals(T.data())) << Key;
  // Loading new weights changes the graph module, not the source module.
  nn::StateDict Doubled;
  for (const auto &[Key, T] : Theirs)
    Doubled.insert(Key, T * 2.0);
  GM.load_state_dict(Doubled);
  for (const auto &[Key, T] : Doubled)
    EXPECT_TRUE(GM.state_dict().at(Key).data().equals(T.data())) << Key;
  EXPECT_TRUE(M.state_dict()
                  .at("fc1.weight")
                  .data()
                  .equals(Theirs.at("fc1.weight").data()));
  Mlp M2;
  M2.load_state_dict(Doubled);
  Tensor X = input(2, 4);
  EXPECT_TRUE(allclose(GM({X}), M2(X), 1e-5, 1e-5));
  // Strict errors name every key; nothing changes.
  nn::StateDict Bad = Doubled;
  Bad.insert("fc2.weight", zeros({3, 2}));
  Bad.erase("fc1.bias");
  try {
    GM.load_state_dict(Bad);
    FAIL() << "no error";
  } catch (const Error &E) {
    std::string W = E.what();
    EXPECT_NE(W.find("'fc2.weight': size mismatch, the state dict has [3, 2], "
                     "the module has f32[2,3]"),
              std::string::npos)
        << W;
    EXPECT_NE(W.find("missing key 'fc1.bias'"), std::string::npos) << W;
  }
  EXPECT_TRUE(allclose(GM({X}), M2(X), 1e-5, 1e-5));
}

TEST(GraphModuleTracedTest, PrintTabularGolden) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  std::vector<std::string> Want = {
      "opcode         name         target      args                  scope",
      "-------------  -----------  ----------  --------------------  ---------",
      "placeholder    x            x           ()",
      "get_attr       fc1.weight   fc1.weight  ()",
      "get_attr       fc1.bias     fc1.bias    ()",
      "get_attr       fc2.weight   fc2.weight  ()",
      "get_attr       fc2.bias     fc2.bias    ()",
      "call_function  transpose    Transpose   (fc1.weight,)         fc1 (Lin)",
      "call_function  matmul       MatMul      (x, transpose)        fc1 (Lin)",
      "call_function  add          Add         (matmul, fc1.bias)    fc1 (Lin)",
      "call_function  relu         Relu        (add,)                act (Act)",
      "call_function  transpose.1  Transpose   (fc2.weight,)         fc2 (Lin)",
      "call_function  matmul.1     MatMul      (relu, transpose.1)   fc2 (Lin)",
      "call_function  output       Add         (matmul.1, fc2.bias)  fc2 (Lin)",
      "output         output       output      (output,)",
  };
  EXPECT_EQ(lines(GM.print_tabular()), Want) << GM.print_tabular();
  EXPECT_NE(GM.code().find("input %x: f32[N,4]"), std::string::npos)
      << GM.code();
}

class GraphModuleTracedSaveTest : public TempDirTest {};

TEST_F(GraphModuleTracedSaveTest, SavesAndReloadsAtTwoBatchSizes) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  for (const char *Name : {"mlp.onnx", "mlp.nng"}) {
    std::string Path = (Dir / Name).string();
    GM.save(Path);
    GraphModule Back(frontend::loadModel(Path), OutputStructure{}, {}, "Mlp");
    EXPECT_EQ(Back.state_dict().keys(), M.state_dict().keys()) << Name;
    for (int64_t Batch : {1, 8}) {
      Tensor X = input(Batch, 4, 5);
      EXPECT_TRUE(allclose(Back({X}), M(X), 1e-5, 1e-5))
          << Name << " batch " << Batch;
    }
  }
}

TEST(GraphModuleTracedTest, RebuildsDictAndTupleOutputs) {
  Structured M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  Tensor X = input(3, 4);
  nn::Value Got = GM.forward({X});
  nn::Value Want = M(X);
  ASSERT_TRUE(Got.isDict()) << Got.toString();
  EXPECT_EQ(Got.keys(), Want.keys());
  EXPECT_TRUE(allclose(Got.at("out").toTensor(), Want.at("out").toTensor(),
                       1e-5, 1e-5));
  const nn::Value &Parts = Got.at("parts");
  ASSERT_TRUE(Parts.isTuple()) << Got.toString();
  ASSERT_EQ(Parts.size(), 3u);
  EXPECT_TRUE(allclose(Parts.elements()[0].toTensor(), X.relu(), 1e-6, 1e-6));
  EXPECT_TRUE(allclose(Parts.elements()[1].toTensor(), X * 2.0, 1e-6, 1e-6));
  EXPECT_EQ(Parts.elements()[2].toInt(), 7);
}

TEST(GraphModuleTracedTest, InterpreterSeesEveryTracedNode) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  struct Count : Interpreter {
    using Interpreter::Interpreter;
    std::vector<std::string> Ops;
    std::vector<rt::Tensor>
    run_node(const ir::Node &N, const std::vector<rt::Tensor> &In) override {
      Ops.push_back(N.schema().qualifiedName());
      return Interpreter::run_node(N, In);
    }
  } C(GM);
  Tensor X = input(5, 4);
  std::vector<rt::Tensor> Out = C.run({X.data()});
  EXPECT_EQ(C.Ops.size(), GM.graph().numNodes());
  EXPECT_TRUE(allclose(Tensor(Out[0]), M(X), 1e-5, 1e-5));
  Tensor H = (*M.fc1)(X);
  EXPECT_TRUE(
      allclose(Tensor(*C.valueOf(GM.graph().lookup("add"))), H, 1e-5, 1e-5));
}

TEST(GraphModuleTracedTest, ShapePropOnADynamicBatchTrace) {
  Mlp M;
  GraphModule GM = symbolic_trace(M, {InputSpec({"N", 4})});
  ShapeProp SP(GM);
  SP.propagate({input(6, 4).data()});
  for (const auto &N : GM.graph().nodes())
    EXPECT_TRUE(SP.shapeOf(N->output()).isStatic()) << N->output()->name();
  EXPECT_EQ(SP.shapeOf("relu").toString(), "f32[6,3]");
  EXPECT_EQ(GM.graph().lookup("relu")->type().toString(), "f32[N,3]");
}

TEST(GraphModuleTracedTest, LeafModuleIsACallModuleRowAndRunsNodeByNode) {
  struct LeafAct : Tracer {
    bool is_leaf_module(const nn::ModuleBase &M,
                        const std::string &Path) override {
      return Path == "act";
    }
  };
  Mlp M;
  GraphModule GM = LeafAct().trace(M, {InputSpec({"N", 4})});
  std::vector<std::string> Rows = lines(GM.print_tabular());
  EXPECT_NE(std::find(Rows.begin(), Rows.end(),
                      "call_module    modulecall   act         (add,)        "
                      "             act (Act)"),
            Rows.end())
      << GM.print_tabular();
  Tensor X = input(3, 4);
  EXPECT_TRUE(allclose(GM({X}), M(X), 1e-5, 1e-5));
  Interpreter I(GM);
  EXPECT_TRUE(allclose(Tensor(I.run({X.data()})[0]), M(X), 1e-5, 1e-5));
}
