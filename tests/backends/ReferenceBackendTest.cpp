//===- ReferenceBackendTest.cpp - The interpreter around the kernels -----===//
//
// Multi-node graphs (values flowing between kernels, shape-computing
// subgraphs, symbolic input dims), and the interpreter's errors: a kernel
// error names the node, bad inputs are rejected.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

using namespace nng;
using namespace nng::reftest;

namespace {

TEST(RefInterpreter, MultiNodeGraph) {
  // y = Relu(x @ w + b), then reshaped to x's batch by a Shape/Gather/Concat
  // subgraph: Reshape(y, Concat(Gather(Shape(x), 0), [-1])).
  ir::Graph G;
  ir::Value *X =
      G.addInput("x", ir::TensorType(DType::F32, {ir::Dim::symbol("N"), 2}));
  ir::Value *W = G.addInitializer("w", f32({1, -1, 2, 0}, {2, 2}));
  ir::Value *B = G.addInitializer("b", f32({0, 1}));
  ir::Value *Mm = G.addNode(OpKind::MatMul, {X, W}, {"mm"})->output();
  ir::Value *Add = G.addNode(OpKind::Add, {Mm, B}, {"add"})->output();
  ir::Value *Y = G.addNode(OpKind::Relu, {Add}, {"y"})->output();
  ir::Value *Sh = G.addNode(OpKind::Shape, {X}, {"shape"})->output();
  ir::Value *Zero = G.addInitializer("zero", i64({0}));
  ir::Value *N = G.addNode(OpKind::Gather, {Sh, Zero}, {"n"})->output();
  ir::Value *MinusOne = G.addInitializer("minus_one", i64({-1}));
  ir::AttrMap A;
  A.set("axis", int64_t(0));
  ir::Value *Target =
      G.addNode(OpKind::Concat, {N, MinusOne}, {"target"}, A)->output();
  ir::Value *Out = G.addNode(OpKind::Reshape, {Y, Target}, {"out"})->output();
  G.addOutput(Out);
  G.addOutput(Sh);
  ir::inferTypes(G);
  // x = [[1, 2], [3, -4]]: x @ w = [[5, -1], [-5, -3]]; + b; relu.
  auto R = backends::runReference(G, {f32({1, 2, 3, -4}, {2, 2})});
  EXPECT_TENSOR(R[0], f32({5, 0, 0, 0}, {2, 2}));
  EXPECT_TENSOR(R[1], i64({2, 2}));
  // The same graph with another batch size.
  R = backends::runReference(G, {f32({1, 1}, {1, 2})});
  EXPECT_TENSOR(R[0], f32({3, 0}, {1, 2}));
}

TEST(RefInterpreter, RunIntoCopiesIntoTheCallersTensors) {
  // The default Executable::runInto: runs, then copies into the tensors
  // given; an undefined one gets the run's; a wrong shape or a strided
  // tensor is refused with a message naming the output.
  ir::Graph G;
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape({2, 2})));
  G.addOutput(G.addNode(OpKind::Relu, {X}, {"y"})->output());
  G.addOutput(G.addNode(OpKind::Neg, {X}, {"z"})->output());
  ir::inferTypes(G);
  auto Exe = backends::getBackend("reference").compile(G);
  std::vector<Tensor> In{f32({1, -2, 3, -4}, {2, 2})};
  std::vector<Tensor> Outs{Tensor::empty(Shape({2, 2}), DType::F32), Tensor()};
  const void *Where = static_cast<const Tensor &>(Outs[0]).rawData();
  Exe->runInto(In, Outs);
  EXPECT_EQ(static_cast<const Tensor &>(Outs[0]).rawData(), Where);
  EXPECT_TENSOR(Outs[0], f32({1, 0, 3, 0}, {2, 2}));
  EXPECT_TENSOR(Outs[1], f32({-1, 2, -3, 4}, {2, 2}));
  auto Refused = [&](std::vector<Tensor> Bad, const std::string &Says) {
    try {
      Exe->runInto(In, Bad);
      ADD_FAILURE() << "accepted; wanted: " << Says;
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find(Says), std::string::npos)
          << E.what();
    }
  };
  Refused({Tensor::empty(Shape({4}), DType::F32), Tensor()},
          "output #0 was given a f32[4] tensor but this run produces f32[2, 2]");
  Refused({Tensor(), Tensor::empty(Shape({2, 2}), DType::F32).permute({1, 0})},
          "output #1 was given a tensor that is not contiguous");
  Refused({Tensor()}, "the model has 2 outputs but 1 tensors were given");
}

TEST(RefInterpreter, KernelErrorNamesTheNode) {
  ir::Graph G;
  ir::Value *D = G.addInput("data", ir::TensorType(DType::F32, Shape{3}));
  ir::Value *I = G.addInput("idx", ir::TensorType(DType::I64, Shape{1}));
  ir::Node *N = G.addNode(OpKind::Gather, {D, I}, {"g"});
  N->setName("the_gather");
  G.addOutput(N->output());
  ir::inferTypes(G);
  try {
    backends::runReference(G, {f32({1, 2, 3}), i64({5})});
    FAIL() << "no error";
  } catch (const Error &E) {
    std::string What = E.what();
    EXPECT_NE(What.find("index 5 is out of range"), std::string::npos) << What;
    EXPECT_NE(What.find("the_gather"), std::string::npos) << What;
  }
  // A wrongly shaped input is refused before any kernel runs.
  EXPECT_THROW(backends::runReference(G, {f32({1, 2}), i64({0})}), Error);
}

} // namespace
