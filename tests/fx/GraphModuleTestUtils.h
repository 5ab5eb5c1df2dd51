//===- GraphModuleTestUtils.h - Graphs and modules for the fx tests ------===//
//
// Shared by the GraphModule, Interpreter, ShapeProp and compile tests: a
// small MLP as an eager module (the tiny Lin/Act modules of the nn tests)
// and as the graph a trace of it gives (hand-written text IR, weights
// loaded from the module's state dict), deterministic inputs, and a
// temporary folder per test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nn/ModuleTestUtils.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/fx/GraphModule.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <unistd.h>

namespace nng::fx::testing {

/// fc1 (Lin 4->3), act (relu), fc2 (Lin 3->2): forward(x) = fc2(act(fc1(x))).
struct Mlp : nn::Module<Mlp> {
  std::shared_ptr<nn::testing::Lin> fc1 =
      register_module("fc1", std::make_shared<nn::testing::Lin>(4, 3));
  std::shared_ptr<nn::testing::Act> act =
      register_module("act", std::make_shared<nn::testing::Act>());
  std::shared_ptr<nn::testing::Lin> fc2 =
      register_module("fc2", std::make_shared<nn::testing::Lin>(3, 2));
  Tensor forward(const Tensor &X) { return (*fc2)((*act)((*fc1)(X))); }
};

/// What tracing Mlp with input {"N", 4} gives, with zero weights.
constexpr const char *MlpText = R"(graph "Mlp" {
  input %x: f32[N,4]
  init %fc1.weight: f32[3,4] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
  init %fc1.bias: f32[3] = [0, 0, 0]
  init %fc2.weight: f32[2,3] = [0, 0, 0, 0, 0, 0]
  init %fc2.bias: f32[2] = [0, 0]
  %h: f32[N,3] = Gemm(%x, %fc1.weight, %fc1.bias) {transB = 1} scope("fc1", "Lin")
  %r: f32[N,3] = Relu(%h) scope("act", "Act")
  %y: f32[N,2] = Gemm(%r, %fc2.weight, %fc2.bias) {transB = 1} scope("fc2", "Lin")
  output %y
}
)";

/// The MLP graph module with M's weights loaded.
inline GraphModule mlpGraphModule(Mlp &M) {
  std::shared_ptr<ir::Graph> G = frontend::loadModelFromText(MlpText, "<mlp>");
  GraphModule GM(G, OutputStructure{}, {}, "Mlp");
  GM.load_state_dict(M.state_dict());
  return GM;
}

/// A deterministic [Rows, Cols] f32 tensor with values in [-1, 1).
inline Tensor input(int64_t Rows, int64_t Cols, int Seed = 0) {
  std::vector<double> V;
  for (int64_t I = 0; I < Rows * Cols; ++I)
    V.push_back(static_cast<double>((I * 37 + Seed * 11) % 23) / 11.5 - 1.0);
  return tensor(V, std::vector<int64_t>{Rows, Cols});
}

/// A fresh temporary folder for the current test, removed by the fixture.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = std::filesystem::temp_directory_path() /
          ("nngraph-fx-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(Dir);
    std::filesystem::create_directories(Dir);
  }
  void TearDown() override { std::filesystem::remove_all(Dir); }
  std::filesystem::path Dir;
};

/// The lines of S.
inline std::vector<std::string> lines(const std::string &S) {
  return nn::testing::lines(S);
}

} // namespace nng::fx::testing
