//===- OnnxSequenceTest.cpp - ONNX sequences as packed pairs --------------===//
//
// Import of hand-built models with every ONNX sequence operator: each
// sequence value S becomes the pair (S, S.shapes) and each operator the nng
// op over pairs; the graph runs on the reference backend (elements of
// different shapes, negative positions, a position out of range names the
// node, the position and the length); export writes the standard operators
// back (ONNX's checker and strict shape inference accept it) and the
// re-import is the same graph; sequence- and optional-typed graph I/O as
// tensor parts. Also: what import refuses (sequences of sequences, tensor
// operators reading a sequence, a SequenceMap whose body does not fit),
// name collisions of the shapes halves, opset-12
// models (converted), and the export of a pair that constant folding made.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxValue.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;

namespace {

Tensor iotaF(const Shape &S, float Start) {
  Tensor T = Tensor::empty(S, DType::F32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.setFlat(I, Start + static_cast<float>(I));
  return T;
}

Tensor i64Scalar(int64_t V) { return Tensor::scalar<int64_t>(V); }

/// Every sequence operator: with X [2,3,4], Y [1,3,4], Z [3,3,4] and
/// runtime positions pos, pos_at:
///   s3 = insert(insert(insert(empty, X), Y), Z, pos)
///   out = s3[pos_at]; len = |s3|; cat = concat(s3, axis 0)
///   n2 = |split(cat, axis 0)|; stk = stack(erase([X, X]), axis 1)
///   rest = at(split(cat, [2, 4], axis 0), -1)
onnx::ModelProto allOpsModel(int Opset = 17) {
  onnx::ModelProto M = makeModel(Opset, Opset >= 15 ? 8 : 7);
  addInput(M, "X", {int64_t(2), int64_t(3), int64_t(4)});
  addInput(M, "Y", {int64_t(1), int64_t(3), int64_t(4)});
  addInput(M, "Z", {int64_t(3), int64_t(3), int64_t(4)});
  addInput(M, "pos", {}, onnx::TensorProto::INT64);
  addInput(M, "pos_at", {}, onnx::TensorProto::INT64);
  addNode(M, "SequenceEmpty", {}, {"s0"}, "empty");
  addNode(M, "SequenceInsert", {"s0", "X"}, {"s1"}, "ins1");
  addNode(M, "SequenceInsert", {"s1", "Y"}, {"s2"}, "ins2");
  addNode(M, "SequenceInsert", {"s2", "Z", "pos"}, {"s3"}, "ins3");
  addNode(M, "SequenceAt", {"s3", "pos_at"}, {"out"}, "at");
  addNode(M, "SequenceLength", {"s3"}, {"len"}, "length");
  addIntAttr(addNode(M, "ConcatFromSequence", {"s3"}, {"cat"}, "concat"),
             "axis", 0);
  addNode(M, "SplitToSequence", {"cat"}, {"parts"}, "split");
  addNode(M, "SequenceLength", {"parts"}, {"n2"}, "length2");
  addNode(M, "SequenceConstruct", {"X", "X"}, {"xx"}, "construct");
  addNode(M, "SequenceErase", {"xx"}, {"x1"}, "erase");
  onnx::NodeProto &Stack =
      addNode(M, "ConcatFromSequence", {"x1"}, {"stk"}, "stack");
  addIntAttr(Stack, "axis", 1);
  addIntAttr(Stack, "new_axis", 1);
  onnx::TensorProto &Sizes = *M.mutable_graph()->add_initializer();
  Sizes.set_name("sizes");
  Sizes.set_data_type(onnx::TensorProto::INT64);
  Sizes.add_dims(2);
  Sizes.add_int64_data(2);
  Sizes.add_int64_data(4);
  onnx::NodeProto &Split2 =
      addNode(M, "SplitToSequence", {"cat", "sizes"}, {"halves"}, "split2");
  addIntAttr(Split2, "axis", 0);
  addNode(M, "SequenceAt", {"halves", "minus1"}, {"rest"}, "at2");
  onnx::TensorProto &Minus1 = *M.mutable_graph()->add_initializer();
  Minus1.set_name("minus1");
  Minus1.set_data_type(onnx::TensorProto::INT64);
  Minus1.add_int64_data(-1);
  addOutput(M, "out", {std::monostate(), int64_t(3), int64_t(4)});
  addOutput(M, "len", {}, onnx::TensorProto::INT64);
  addOutput(M, "cat", {int64_t(6), int64_t(3), int64_t(4)});
  addOutput(M, "n2", {}, onnx::TensorProto::INT64);
  addOutput(M, "stk", {int64_t(2), int64_t(1), int64_t(3), int64_t(4)});
  addOutput(M, "rest", {int64_t(4), int64_t(3), int64_t(4)});
  return M;
}

std::vector<Tensor> allOpsInputs(int64_t Pos, int64_t PosAt) {
  return {iotaF(Shape{2, 3, 4}, 0), iotaF(Shape{1, 3, 4}, 100),
          iotaF(Shape{3, 3, 4}, 200), i64Scalar(Pos), i64Scalar(PosAt)};
}

/// The message of the Error F throws ("" and a test failure if none).
template <typename Fn> std::string errorOf(Fn &&F, ErrorKind Want) {
  try {
    F();
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), Want) << E.what();
    return E.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

bool has(const std::string &S, std::string_view Part) {
  return S.find(Part) != std::string::npos;
}

TEST(OnnxSequence, ImportMapsEveryOperatorToPairs) {
  auto G = frontend::importOnnxFromBytes(allOpsModel().SerializeAsString(),
                                         "seq.onnx");
  const ir::Value *S3 = G->lookup("s3"), *S3Shapes = G->lookup("s3.shapes");
  ASSERT_TRUE(S3 && S3Shapes);
  EXPECT_EQ(S3->producer(), S3Shapes->producer());
  EXPECT_EQ(S3->producer()->op(), ir::OpKind::SequenceInsert);
  EXPECT_EQ(S3->producer()->name(), "ins3");
  // Static inputs give the pair static lengths: 72 values, 3 x (1 + 3)
  // shape entries.
  EXPECT_EQ(S3->type().toString(), "f32[72]");
  EXPECT_EQ(S3Shapes->type().toString(), "i64[12]");
  EXPECT_EQ(G->lookup("xx")->type().toString(), "f32[48]");
  EXPECT_EQ(G->lookup("parts.shapes")->type().toString(), "i64[24]");
  // Constant split sizes: exact; an erase at an unknown position: not.
  EXPECT_EQ(G->lookup("halves.shapes")->type().toString(), "i64[8]");
  EXPECT_EQ(G->lookup("x1")->type().toString(), "f32[?]");
  EXPECT_EQ(G->lookup("len")->type().toString(), "i64[]");
  // Declared output types refine the unknown element type.
  EXPECT_EQ(G->lookup("out")->type().toString(), "f32[?,3,4]");
  std::string Text = ir::printGraph(*G);
  EXPECT_TRUE(has(Text, "nng.SequenceInsert(%s2, %s2.shapes, %Z, %pos)"))
      << Text;
}

TEST(OnnxSequence, RunsWithMixedShapesAndNegativePositions) {
  auto G = frontend::importOnnxFromBytes(allOpsModel().SerializeAsString(),
                                         "seq.onnx");
  // Z goes between X and Y: [X, Z, Y]; -2 is Z.
  auto Outs = backends::runReference(*G, allOpsInputs(1, -2));
  ASSERT_EQ(Outs.size(), 6u);
  EXPECT_TRUE(Outs[0].equals(iotaF(Shape{3, 3, 4}, 200)));
  EXPECT_EQ(Outs[1].getFlatInt(0), 3);
  ASSERT_EQ(Outs[2].shape(), (Shape{6, 3, 4}));
  EXPECT_EQ(Outs[2].getFlat(0), 0);    // X
  EXPECT_EQ(Outs[2].getFlat(24), 200); // Z
  EXPECT_EQ(Outs[2].getFlat(60), 100); // Y
  EXPECT_EQ(Outs[3].getFlatInt(0), 6);
  EXPECT_TRUE(
      Outs[4].equals(iotaF(Shape{2, 3, 4}, 0).reshape(Shape{2, 1, 3, 4})));
  ASSERT_EQ(Outs[5].shape(), (Shape{4, 3, 4}));
  EXPECT_EQ(Outs[5].getFlat(0), 200); // cat[2] = Z[0]
  // Negative insert position: -1 inserts before the last (Y).
  Outs = backends::runReference(*G, allOpsInputs(-1, 0));
  EXPECT_TRUE(Outs[0].equals(iotaF(Shape{2, 3, 4}, 0)));
  EXPECT_EQ(Outs[2].getFlat(24), 200);
  // At the back: position == length.
  Outs = backends::runReference(*G, allOpsInputs(2, -1));
  EXPECT_TRUE(Outs[0].equals(iotaF(Shape{3, 3, 4}, 200)));
}

TEST(OnnxSequence, PositionOutOfRangeNamesNodePositionAndLength) {
  auto G = frontend::importOnnxFromBytes(allOpsModel().SerializeAsString(),
                                         "seq.onnx");
  std::string E =
      errorOf([&] { backends::runReference(*G, allOpsInputs(3, 0)); },
              ErrorKind::ShapeMismatch);
  EXPECT_TRUE(has(E, "position 3 is out of range for a sequence of length 2 "
                     "(valid: -2 to 2)"))
      << E;
  EXPECT_TRUE(has(E, "ins3")) << E;
  E = errorOf([&] { backends::runReference(*G, allOpsInputs(0, -4)); },
              ErrorKind::ShapeMismatch);
  EXPECT_TRUE(has(E, "position -4 is out of range for a sequence of length 3"))
      << E;
  EXPECT_TRUE(has(E, "'at'")) << E;
}

TEST(OnnxSequence, ExportWritesStandardOperatorsAndRoundTrips) {
  auto G1 = frontend::importOnnxFromBytes(allOpsModel().SerializeAsString(),
                                          "seq.onnx");
  std::string Bytes = frontend::exportOnnxToBytes(*G1);
  EXPECT_NO_THROW(frontend::checkOnnxModelBytes(Bytes, "exported"));
  onnx::ModelProto M;
  ASSERT_TRUE(M.ParseFromString(Bytes));
  for (const onnx::NodeProto &N : M.graph().node()) {
    EXPECT_EQ(N.domain(), "") << N.op_type();
    for (const std::string &In : N.input())
      EXPECT_FALSE(has(In, ".shapes")) << N.name();
    if (N.op_type() == "SequenceInsert" && N.name() == "ins3") {
      ASSERT_EQ(N.input_size(), 3);
      EXPECT_EQ(N.input(0), "s2");
      ASSERT_EQ(N.output_size(), 1);
      EXPECT_EQ(N.output(0), "s3");
    }
  }
  for (const onnx::ValueInfoProto &V : M.graph().value_info())
    EXPECT_FALSE(has(V.name(), ".shapes")) << V.name();
  auto G2 = frontend::importOnnxFromBytes(Bytes, "exported");
  EXPECT_EQ(graphDiff(*G1, *G2), "");
  EXPECT_EQ(ir::printGraph(*G1), ir::printGraph(*G2));
  auto A = backends::runReference(*G1, allOpsInputs(1, -2));
  auto B = backends::runReference(*G2, allOpsInputs(1, -2));
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_TRUE(A[I].equals(B[I])) << I;
}

TEST(OnnxSequence, ShapesNamesAvoidCollisions) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(2)});
  addNode(M, "Relu", {"x"}, {"s.shapes"});
  addNode(M, "SequenceConstruct", {"x", "s.shapes"}, {"s"});
  addNode(M, "SequenceLength", {"s"}, {"n"});
  addOutput(M, "n", {}, onnx::TensorProto::INT64);
  auto G1 = frontend::importOnnxFromBytes(M.SerializeAsString(), "m");
  ASSERT_TRUE(G1->lookup("s.shapes.1"));
  EXPECT_EQ(G1->lookup("s.shapes.1")->producer()->op(),
            ir::OpKind::SequenceConstruct);
  std::string Bytes = frontend::exportOnnxToBytes(*G1);
  auto G2 = frontend::importOnnxFromBytes(Bytes, "exported");
  EXPECT_EQ(ir::printGraph(*G1), ir::printGraph(*G2));
}

TEST(OnnxSequence, ConvertsOpset12Models) {
  onnx::ModelProto M = makeModel(12, 7);
  addInput(M, "x", {int64_t(2), int64_t(3)});
  addNode(M, "SequenceConstruct", {"x", "x"}, {"s"});
  addIntAttr(addNode(M, "ConcatFromSequence", {"s"}, {"y"}), "axis", -1);
  addOutput(M, "y", {int64_t(2), int64_t(6)});
  auto G = frontend::importOnnxFromBytes(M.SerializeAsString(), "old");
  auto Y = backends::runReference(*G, {iotaF(Shape{2, 3}, 0)});
  ASSERT_EQ(Y[0].shape(), (Shape{2, 6}));
  EXPECT_EQ(Y[0].getFlat(3), 0);
}

TEST(OnnxSequence, RefusesWhatPairsCannotCarry) {
  auto Import = [](const onnx::ModelProto &M) {
    return [M] { frontend::importOnnxFromBytes(M.SerializeAsString(), "m"); };
  };
  {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceConstruct", {"x"}, {"s"});
    addNode(M, "Relu", {"s"}, {"y"}, "relu");
    addOutput(M, "y", {int64_t(2)});
    std::string E = errorOf(Import(M), ErrorKind::Unsupported);
    EXPECT_TRUE(has(E, "node 'relu' (Relu) reads the sequence 's'")) << E;
  }
  {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceConstruct", {"x"}, {"s"});
    addNode(M, "SequenceConstruct", {"s"}, {"ss"}, "nest");
    addNode(M, "SequenceLength", {"ss"}, {"n"});
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    std::string E = errorOf(Import(M), ErrorKind::Unsupported);
    EXPECT_TRUE(has(E, "sequences of sequences are not supported")) << E;
  }
  {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceLength", {"x"}, {"n"}, "len");
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    std::string E = errorOf(Import(M), ErrorKind::Parse);
    EXPECT_TRUE(has(E, "node 'len' (SequenceLength) reads 'x' as its "
                       "sequence input"))
        << E;
  }
  {
    onnx::ModelProto M = makeModel();
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceConstruct", {"x"}, {"s"});
    onnx::NodeProto &Map = addNode(M, "SequenceMap", {"s"}, {"t"}, "map");
    auto *A = Map.add_attribute();
    A->set_name("body");
    A->set_type(onnx::AttributeProto::GRAPH);
    A->mutable_g()->set_name("body");
    addNode(M, "SequenceLength", {"t"}, {"n"});
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    std::string E = errorOf(Import(M), ErrorKind::Parse);
    EXPECT_TRUE(has(E, "node 'map' (SequenceMap): its body must take one "
                       "input per node input"))
        << E;
  }
}

TEST(OnnxSequence, SequenceGraphIoImportsAsParts) {
  // A sequence-typed graph input and output become their (data, shapes)
  // parts; the signature says so, also after opset conversion (11), whose
  // converter drops the sequence types.
  for (int Opset : {17, 11}) {
    onnx::ModelProto M = makeModel(Opset, Opset >= 15 ? 8 : 7);
    onnx::TypeProto SeqT;
    SeqT.mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(onnx::TensorProto::FLOAT);
    auto *In = M.mutable_graph()->add_input();
    In->set_name("seq_in");
    *In->mutable_type() = SeqT;
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceInsert", {"seq_in", "x"}, {"seq_out"});
    addNode(M, "SequenceLength", {"seq_out"}, {"n"});
    auto *Out = M.mutable_graph()->add_output();
    Out->set_name("seq_out");
    *Out->mutable_type() = SeqT;
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    frontend::OnnxGraphSignature Sig;
    frontend::OnnxImportOptions O;
    O.Signature = &Sig;
    auto G = frontend::importOnnxFromBytes(M.SerializeAsString(), "m", O);
    ASSERT_EQ(Sig.Inputs.size(), 2u);
    EXPECT_EQ(Sig.Inputs[0].Kind, frontend::OnnxValueKind::Sequence);
    EXPECT_EQ(Sig.Inputs[0].Parts,
              (std::vector<std::string>{"seq_in", "seq_in.shapes"}));
    ASSERT_EQ(Sig.Outputs.size(), 2u);
    EXPECT_EQ(Sig.Outputs[0].Kind, frontend::OnnxValueKind::Sequence);
    ASSERT_EQ(G->inputs().size(), 3u);
    frontend::OnnxValue V{frontend::OnnxValueKind::Sequence, true,
                          {iotaF(Shape{3}, 0)}};
    std::vector<rt::Tensor> Ins = frontend::packOnnxValue(V, DType::F32);
    Ins.push_back(iotaF(Shape{2}, 10));
    auto Y = backends::runReference(*G, Ins);
    ASSERT_EQ(Y.size(), 3u);
    frontend::OnnxValue R = frontend::unpackOnnxValue(
        frontend::OnnxValueKind::Sequence, {Y[0], Y[1]}, "seq_out");
    ASSERT_EQ(R.Elements.size(), 2u);
    EXPECT_EQ(R.Elements[1].shape(), (Shape{2}));
    EXPECT_EQ(R.Elements[1].getFlat(1), 11);
    EXPECT_EQ(Y[2].getFlatInt(0), 2);
  }
}

TEST(OnnxSequence, OptionalValuesPackWithAFlag) {
  // An empty optional sequence packs to empty parts and has = false; one
  // with a value round-trips through its parts.
  frontend::OnnxValue None{frontend::OnnxValueKind::OptionalSequence, false,
                           {}};
  std::vector<rt::Tensor> P = frontend::packOnnxValue(None, DType::F32);
  ASSERT_EQ(P.size(), 3u);
  EXPECT_EQ(P[0].numel(), 0);
  EXPECT_EQ(P[2].getFlatInt(0), 0);
  EXPECT_FALSE(frontend::unpackOnnxValue(None.Kind, P, "o").HasElement);
  frontend::OnnxValue Some{frontend::OnnxValueKind::OptionalTensor, true,
                           {iotaF(Shape{2, 2}, 1)}};
  P = frontend::packOnnxValue(Some, DType::F32);
  ASSERT_EQ(P.size(), 2u);
  frontend::OnnxValue Back = frontend::unpackOnnxValue(Some.Kind, P, "o");
  ASSERT_TRUE(Back.HasElement);
  EXPECT_TRUE(Back.Elements[0].equals(Some.Elements[0]));
  // Malformed parts are refused naming the value.
  P[1] = rt::Tensor::scalar(int64_t(1));
  std::string E = errorOf([&] { frontend::unpackOnnxValue(Some.Kind, P, "o"); },
                          ErrorKind::InvalidArgument);
  EXPECT_TRUE(has(E, "o: an optional's 'has' part must be one bool")) << E;
}

TEST(OnnxSequence, MalformedSequenceNodesFailCleanly) {
  // Each is an nng::Error naming the model, never a crash.
  std::vector<onnx::ModelProto> Bad;
  {
    onnx::ModelProto M = makeModel(); // No inputs at all.
    addNode(M, "SequenceAt", {}, {"y"});
    addOutput(M, "y", {});
    Bad.push_back(M);
  }
  {
    onnx::ModelProto M = makeModel(); // An empty sequence input.
    addInput(M, "p", {}, onnx::TensorProto::INT64);
    addNode(M, "SequenceAt", {"", "p"}, {"y"});
    addOutput(M, "y", {});
    Bad.push_back(M);
  }
  {
    onnx::ModelProto M = makeModel(); // A producer without outputs.
    addInput(M, "x", {int64_t(2)});
    addNode(M, "SequenceConstruct", {"x"}, {});
    addNode(M, "Relu", {"x"}, {"y"});
    addOutput(M, "y", {int64_t(2)});
    Bad.push_back(M);
  }
  {
    onnx::ModelProto M = makeModel(); // Missing position and wrong dtype.
    addInput(M, "x", {int64_t(2)});
    addInput(M, "p", {}, onnx::TensorProto::FLOAT);
    addNode(M, "SequenceConstruct", {"x"}, {"s"});
    addNode(M, "SequenceAt", {"s"}, {"y"});
    addNode(M, "SequenceInsert", {"s", "x", "p"}, {"t"});
    addNode(M, "SequenceLength", {"t"}, {"n"});
    addOutput(M, "y", {int64_t(2)});
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    Bad.push_back(M);
  }
  {
    onnx::ModelProto M = makeModel(); // Mixed dtypes and a bad dtype attr.
    addInput(M, "x", {int64_t(2)});
    addInput(M, "i", {int64_t(2)}, onnx::TensorProto::INT64);
    addNode(M, "SequenceConstruct", {"x", "i"}, {"s"});
    addIntAttr(addNode(M, "SequenceEmpty", {}, {"e"}), "dtype", 14);
    addNode(M, "SequenceLength", {"s"}, {"n"});
    addNode(M, "SequenceLength", {"e"}, {"m"});
    addOutput(M, "n", {}, onnx::TensorProto::INT64);
    addOutput(M, "m", {}, onnx::TensorProto::INT64);
    Bad.push_back(M);
  }
  for (size_t I = 0; I < Bad.size(); ++I) {
    SCOPED_TRACE(I);
    EXPECT_THROW(frontend::importOnnxFromBytes(Bad[I].SerializeAsString(),
                                               "bad.onnx"),
                 Error);
  }
}

TEST(OnnxSequence, ExportsFoldedConstantPairs) {
  // s = [c0 (f32[1,2]), c1 (f32[1,3])] from initializers, out = s[pos];
  // e1 = insert(empty, x), out2 = e1[0]. Constant folding turns s and the
  // empty sequence into initializer pairs, which export writes as a
  // SequenceConstruct of Constants and a SequenceEmpty.
  onnx::ModelProto M = makeModel();
  addFloatInit(M, "c0", {1, 2}, {1, 2});
  addFloatInit(M, "c1", {1, 3}, {3, 4, 5});
  onnx::TensorProto &Zero = *M.mutable_graph()->add_initializer();
  Zero.set_name("zero");
  Zero.set_data_type(onnx::TensorProto::INT64);
  Zero.add_int64_data(0);
  addInput(M, "pos", {}, onnx::TensorProto::INT64);
  addInput(M, "x", {int64_t(2)});
  addNode(M, "SequenceConstruct", {"c0", "c1"}, {"s"}, "construct");
  addNode(M, "SequenceEmpty", {}, {"e"}, "empty");
  addNode(M, "SequenceInsert", {"e", "x"}, {"e1"}, "ins");
  addNode(M, "SequenceAt", {"s", "pos"}, {"out"}, "at");
  addNode(M, "SequenceAt", {"e1", "zero"}, {"out2"}, "at2");
  addOutput(M, "out", {int64_t(1), std::monostate()});
  addOutput(M, "out2", {int64_t(2)});
  auto G = frontend::importOnnxFromBytes(M.SerializeAsString(), "m");
  passes::PassManager PM;
  PM.addPipeline("canonicalize");
  PM.run(*G);
  for (const auto &N : G->nodes())
    EXPECT_TRUE(N->op() == ir::OpKind::SequenceAt ||
                N->op() == ir::OpKind::SequenceInsert)
        << N->describe();
  std::string Bytes = frontend::exportOnnxToBytes(*G);
  EXPECT_NO_THROW(frontend::checkOnnxModelBytes(Bytes, "folded"));
  onnx::ModelProto E;
  ASSERT_TRUE(E.ParseFromString(Bytes));
  int Constructs = 0, Empties = 0;
  for (const onnx::NodeProto &N : E.graph().node()) {
    Constructs += N.op_type() == "SequenceConstruct";
    Empties += N.op_type() == "SequenceEmpty";
  }
  EXPECT_EQ(Constructs, 1);
  EXPECT_EQ(Empties, 1);
  auto Back = frontend::importOnnxFromBytes(Bytes, "folded");
  Tensor X = iotaF(Shape{2}, 7);
  for (int64_t P : {0, 1, -1}) {
    auto A = backends::runReference(*G, {i64Scalar(P), X});
    auto B = backends::runReference(*Back, {i64Scalar(P), X});
    EXPECT_TRUE(A[0].equals(B[0])) << P;
    EXPECT_TRUE(A[1].equals(X)) << P;
    EXPECT_TRUE(B[1].equals(X)) << P;
  }
  auto R = backends::runReference(*Back, {i64Scalar(1), X});
  ASSERT_EQ(R[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(R[0].getFlat(2), 5);
}

TEST(OnnxSequence, ExportRefusesPairsReadAsTensors) {
  ir::Graph G;
  G.setName("g");
  ir::Value *X = G.addInput("x", ir::TensorType(DType::F32, Shape{2}));
  ir::Node *C =
      G.addNode(ir::OpKind::SequenceConstruct, {X}, {"s", "s.shapes"});
  C->setName("construct");
  ir::Node *R = G.addNode(ir::OpKind::Relu, {C->output(0)}, {"y"});
  G.setOutputs({R->output()});
  ir::inferTypes(G);
  std::string E =
      errorOf([&] { frontend::exportOnnxToBytes(G); }, ErrorKind::Unsupported);
  EXPECT_TRUE(has(E, "read as a tensor")) << E;
  EXPECT_TRUE(has(E, "construct")) << E;
}

} // namespace
