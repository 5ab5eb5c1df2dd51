//===- OnnxImportTest.cpp - ONNX import: features, one test each ---------===//
//
// Hand-built ModelProtos exercising what import supports: typed tensor
// fields for every dtype, external data, symbolic and unknown dims, several
// outputs, absent optional inputs, Constant's value_* forms, initializers
// listed as inputs, old opsets through the version converter, attribute
// type checks, names kept, and unsupported operators reported all at once.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/onnx/OnnxImport.h"
#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace nng;
using namespace nng::test;
using frontend::importOnnxFromBytes;

namespace {

std::unique_ptr<ir::Graph>
importModel(const onnx::ModelProto &M,
            const frontend::OnnxImportOptions &O = {}) {
  return importOnnxFromBytes(M.SerializeAsString(), "test.onnx", O);
}

/// The message of the Error importing M throws (fails the test otherwise).
std::string importError(const onnx::ModelProto &M, ErrorKind *Kind = nullptr) {
  try {
    importModel(M);
  } catch (const Error &E) {
    if (Kind)
      *Kind = E.kind();
    return E.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

/// A model y = Identity(c) where c is initializer T.
onnx::ModelProto identityOf(const onnx::TensorProto &T) {
  onnx::ModelProto M = makeModel();
  *M.mutable_graph()->add_initializer() = T;
  addNode(M, "Identity", {T.name()}, {"y"}, "id");
  auto *O = M.mutable_graph()->add_output();
  O->set_name("y");
  O->mutable_type()->mutable_tensor_type()->set_elem_type(T.data_type());
  return M;
}

} // namespace

TEST(OnnxImport, SimpleGraphKeepsNamesAndTypes) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {std::string("N"), int64_t(3), TestDim()});
  addFloatInit(M, "layer1.weight", {3}, {1, 2, 3});
  addNode(M, "Mul", {"x", "layer1.weight"}, {"t"}, "mul_0");
  addNode(M, "Relu", {"t"}, {"y"}, "relu_0");
  addOutput(M, "y", {std::string("N"), int64_t(3), TestDim()});
  auto G = importModel(M);
  ASSERT_EQ(G->inputs().size(), 1u);
  EXPECT_EQ(G->inputs()[0]->type().toString(), "f32[N,3,?]");
  ASSERT_EQ(G->initializers().size(), 1u);
  EXPECT_EQ(G->initializers()[0]->name(), "layer1.weight");
  ASSERT_EQ(G->numNodes(), 2u);
  EXPECT_EQ(G->nodes()[0]->name(), "mul_0");
  EXPECT_EQ(G->nodes()[1]->name(), "relu_0");
  EXPECT_EQ(G->outputs()[0]->name(), "y");
  EXPECT_EQ(G->name(), "g");
}

TEST(OnnxImport, TypedFieldsForEveryDType) {
  struct Case {
    int Type;
    const char *Field;
    std::vector<double> Values;
  };
  // int32_data carries i8/u8/i16/u16/bool and the bits of f16/bf16.
  std::vector<Case> Cases = {
      {onnx::TensorProto::FLOAT, "float", {1.5, -2}},
      {onnx::TensorProto::DOUBLE, "double", {1.25, -3}},
      {onnx::TensorProto::INT64, "int64", {-7, 1LL << 40}},
      {onnx::TensorProto::INT32, "int32", {-7, 100000}},
      {onnx::TensorProto::INT16, "int32", {-7, 300}},
      {onnx::TensorProto::UINT16, "int32", {7, 60000}},
      {onnx::TensorProto::INT8, "int32", {-7, 100}},
      {onnx::TensorProto::UINT8, "int32", {7, 200}},
      {onnx::TensorProto::BOOL, "int32", {1, 0}},
      {onnx::TensorProto::UINT32, "uint64", {7, 4000000000.0}},
      {onnx::TensorProto::UINT64, "uint64", {7, 1e15}},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Type);
    onnx::TensorProto T;
    T.set_name("c");
    T.set_data_type(C.Type);
    T.add_dims(2);
    for (double V : C.Values) {
      std::string F = C.Field;
      if (F == "float")
        T.add_float_data(static_cast<float>(V));
      else if (F == "double")
        T.add_double_data(V);
      else if (F == "int64")
        T.add_int64_data(static_cast<int64_t>(V));
      else if (F == "uint64")
        T.add_uint64_data(static_cast<uint64_t>(V));
      else
        T.add_int32_data(static_cast<int32_t>(V));
    }
    auto G = importModel(identityOf(T));
    const Tensor &D = G->initializers()[0]->data();
    EXPECT_EQ(dtypeToOnnx(D.dtype()), C.Type);
    EXPECT_EQ(D.toDoubleVector(), C.Values);
  }
  // f16 and bf16: bit patterns in int32_data.
  onnx::TensorProto H;
  H.set_name("h");
  H.set_data_type(onnx::TensorProto::FLOAT16);
  H.add_dims(2);
  H.add_int32_data(0x3C00); // 1.0
  H.add_int32_data(0xC000); // -2.0
  EXPECT_EQ(
      importModel(identityOf(H))->initializers()[0]->data().toDoubleVector(),
      (std::vector<double>{1.0, -2.0}));
  H.set_data_type(onnx::TensorProto::BFLOAT16);
  H.set_int32_data(0, 0x3F80); // 1.0
  H.set_int32_data(1, 0xC040); // -3.0
  EXPECT_EQ(
      importModel(identityOf(H))->initializers()[0]->data().toDoubleVector(),
      (std::vector<double>{1.0, -3.0}));
}

TEST(OnnxImport, TypedFieldCountMustMatchShape) {
  onnx::TensorProto T;
  T.set_name("w");
  T.set_data_type(onnx::TensorProto::FLOAT);
  T.add_dims(3);
  T.add_float_data(1);
  std::string Msg = importError(identityOf(T));
  EXPECT_NE(Msg.find("initializer 'w' has 1 values in float_data but its "
                     "shape needs 3"),
            std::string::npos)
      << Msg;
}

TEST(OnnxImport, ExternalDataInsideTheFolder) {
  auto Dir = freshDir("ext");
  std::vector<float> Vals = {1, 2, 3, 4};
  {
    std::ofstream Out(Dir / "weights.bin", std::ios::binary);
    Out << "padding!"; // Offset 8.
    Out.write(reinterpret_cast<const char *>(Vals.data()), 16);
  }
  onnx::TensorProto T;
  T.set_name("w");
  T.set_data_type(onnx::TensorProto::FLOAT);
  T.add_dims(2);
  T.add_dims(2);
  T.set_data_location(onnx::TensorProto::EXTERNAL);
  auto Add = [&](const char *K, const char *V) {
    auto *E = T.add_external_data();
    E->set_key(K);
    E->set_value(V);
  };
  Add("location", "weights.bin");
  Add("offset", "8");
  Add("length", "16");
  onnx::ModelProto M = identityOf(T);
  {
    std::ofstream Out(Dir / "model.onnx", std::ios::binary);
    Out << M.SerializeAsString();
  }
  auto G = frontend::importOnnx((Dir / "model.onnx").string());
  EXPECT_EQ(G->initializers()[0]->data().toDoubleVector(),
            (std::vector<double>{1, 2, 3, 4}));
  // From bytes, external data needs a BaseDir.
  EXPECT_THROW(importModel(M), Error);
  frontend::OnnxImportOptions O;
  O.BaseDir = Dir.string();
  EXPECT_NO_THROW(importModel(M, O));
}

TEST(OnnxImport, SeveralOutputsAndAbsentOptionalInputs) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(6)});
  addFloatInit(M, "hi", {}, {1.0f});
  // Clip with min absent (empty name) and max given.
  addNode(M, "Clip", {"x", "", "hi"}, {"c"}, "clip");
  auto &S = addNode(M, "Split", {"c"}, {"a", "b"}, "split");
  addIntAttr(S, "axis", 0);
  addOutput(M, "a", {int64_t(3)});
  addOutput(M, "b", {int64_t(3)});
  auto G = importModel(M);
  const ir::Node &Clip = *G->nodes()[0];
  ASSERT_EQ(Clip.numInputs(), 3u);
  EXPECT_EQ(Clip.input(1), nullptr);
  EXPECT_EQ(Clip.input(2)->name(), "hi");
  ASSERT_EQ(G->outputs().size(), 2u);
  auto Out = backends::runReference(
      *G, {Tensor::fromVector<float>({-1, 0.5, 2, 3, -4, 0.25}, Shape{6})});
  EXPECT_EQ(Out[0].toDoubleVector(), (std::vector<double>{-1, 0.5, 1}));
  EXPECT_EQ(Out[1].toDoubleVector(), (std::vector<double>{1, -4, 0.25}));
}

TEST(OnnxImport, ConstantValueFormsBecomeTensors) {
  struct Case {
    const char *Attr;
    int Type;
    std::vector<double> Values;
    Shape Sh;
  };
  for (const Case &C : std::vector<Case>{
           {"value_float", onnx::AttributeProto::FLOAT, {2.5}, Shape{}},
           {"value_floats", onnx::AttributeProto::FLOATS, {1, 2}, Shape{2}},
           {"value_int", onnx::AttributeProto::INT, {7}, Shape{}},
           {"value_ints", onnx::AttributeProto::INTS, {3, 4, 5}, Shape{3}}}) {
    SCOPED_TRACE(C.Attr);
    onnx::ModelProto M = makeModel();
    auto &N = addNode(M, "Constant", {}, {"y"}, "k");
    auto *A = N.add_attribute();
    A->set_name(C.Attr);
    A->set_type(static_cast<onnx::AttributeProto::AttributeType>(C.Type));
    for (double V : C.Values) {
      if (C.Type == onnx::AttributeProto::FLOAT)
        A->set_f(static_cast<float>(V));
      else if (C.Type == onnx::AttributeProto::FLOATS)
        A->add_floats(static_cast<float>(V));
      else if (C.Type == onnx::AttributeProto::INT)
        A->set_i(static_cast<int64_t>(V));
      else
        A->add_ints(static_cast<int64_t>(V));
    }
    M.mutable_graph()->add_output()->set_name("y");
    M.mutable_graph()
        ->mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->set_elem_type(C.Type == onnx::AttributeProto::FLOAT ||
                                C.Type == onnx::AttributeProto::FLOATS
                            ? 1
                            : 7);
    auto G = importModel(M);
    const ir::Attribute *V = G->nodes()[0]->attrs().find("value");
    ASSERT_NE(V, nullptr);
    EXPECT_EQ(G->nodes()[0]->attrs().size(), 1u);
    EXPECT_EQ(V->t().shape(), C.Sh);
    EXPECT_EQ(V->t().toDoubleVector(), C.Values);
  }
}

TEST(OnnxImport, InitializersListedAsInputsAreInitializers) {
  onnx::ModelProto M = makeModel(9, 3); // IR 3: initializers among inputs.
  addInput(M, "x", {int64_t(2)});
  addInput(M, "w", {int64_t(2)});
  addFloatInit(M, "w", {2}, {10, 20});
  addNode(M, "Add", {"x", "w"}, {"y"});
  addOutput(M, "y", {int64_t(2)});
  auto G = importModel(M);
  ASSERT_EQ(G->inputs().size(), 1u);
  EXPECT_EQ(G->inputs()[0]->name(), "x");
  ASSERT_EQ(G->initializers().size(), 1u);
  EXPECT_EQ(G->initializers()[0]->name(), "w");
}

TEST(OnnxImport, OldOpsetGoesThroughTheVersionConverter) {
  // Opset 11: Unsqueeze takes 'axes' as an attribute; opset 13 as an input.
  onnx::ModelProto M = makeModel(11, 6);
  addInput(M, "x", {int64_t(3)});
  auto &N = addNode(M, "Unsqueeze", {"x"}, {"y"}, "unsq");
  addIntsAttr(N, "axes", {0});
  addOutput(M, "y", {int64_t(1), int64_t(3)});
  auto G = importModel(M);
  const ir::Node *U = nullptr;
  for (const auto &P : G->nodes())
    if (P->op() == ir::OpKind::Unsqueeze)
      U = P.get();
  ASSERT_NE(U, nullptr);
  EXPECT_EQ(U->numInputs(), 2u);
  EXPECT_EQ(G->outputs()[0]->type().toString(), "f32[1,3]");
}

TEST(OnnxImport, NewerOpsetIsRefused) {
  onnx::ModelProto M = makeModel(18);
  addInput(M, "x", {int64_t(3)});
  addNode(M, "Relu", {"x"}, {"y"});
  addOutput(M, "y", {int64_t(3)});
  ErrorKind K;
  std::string Msg = importError(M, &K);
  EXPECT_EQ(K, ErrorKind::Unsupported);
  EXPECT_NE(Msg.find("opset 18"), std::string::npos) << Msg;
}

TEST(OnnxImport, AttributeOfTheWrongTypeNamesNodeAndAttribute) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  addFloatInit(M, "w", {1, 1, 1, 1}, {1});
  auto &N = addNode(M, "Conv", {"x", "w"}, {"y"}, "conv1");
  addIntsAttr(N, "group", {1}); // INTS where the table wants an int.
  addOutput(M, "y", {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  std::string Msg = importError(M);
  EXPECT_NE(Msg.find("node 'conv1' (Conv): attribute 'group' is INTS but the "
                     "op expects INT"),
            std::string::npos)
      << Msg;
}

TEST(OnnxImport, UnknownAttributeIsAnError) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(3)});
  addIntAttr(addNode(M, "Relu", {"x"}, {"y"}, "r"), "bogus", 1);
  addOutput(M, "y", {int64_t(3)});
  std::string Msg = importError(M);
  EXPECT_NE(Msg.find("'bogus' is not an attribute of Relu"), std::string::npos)
      << Msg;
}

TEST(OnnxImport, AllUnsupportedOperatorsReportedAtOnce) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(3)});
  addNode(M, "TfIdfVectorizer", {"x"}, {"a"}, "tfidf_0");
  addNode(M, "ImageDecoder", {"a", "x"}, {"b"}, "dec_0");
  addNode(M, "TfIdfVectorizer", {"b"}, {"c"}, "tfidf_1");
  addNode(M, "Relu", {"c"}, {"d"}, "relu");
  addNode(M, "TfIdfVectorizer", {"d"}, {"e"}, "tfidf_2");
  addNode(M, "TfIdfVectorizer", {"e"}, {"f"}, "tfidf_3");
  addOutput(M, "f", {int64_t(3)});
  ErrorKind K;
  std::string Msg = importError(M, &K);
  EXPECT_EQ(K, ErrorKind::Unsupported);
  EXPECT_NE(Msg.find("2 operator types (5 nodes)"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("TfIdfVectorizer x4 (nodes 'tfidf_0', 'tfidf_1', 'tfidf_2', ...)"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("ImageDecoder x1 (node 'dec_0')"), std::string::npos) << Msg;
}

TEST(OnnxImport, SubgraphOperatorsOtherThanIfLoopScanAreRefused) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(2)});
  auto &Map = addNode(M, "MapLike", {"x"}, {"y"}, "map");
  Map.set_domain("com.example");
  auto *A = Map.add_attribute();
  A->set_name("body");
  A->set_type(onnx::AttributeProto::GRAPH);
  A->mutable_g()->set_name("body");
  addOutput(M, "y", {int64_t(2)});
  std::string Msg = importError(M);
  EXPECT_NE(Msg.find("com.example.MapLike x1 (node 'map')"), std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("of the operators with subgraphs, nngraph supports If, "
                     "Loop and Scan"),
            std::string::npos)
      << Msg;
}

TEST(OnnxImport, UnsortedNodesAreOrdered) {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(3)});
  addNode(M, "Neg", {"t"}, {"y"}, "second");
  addNode(M, "Relu", {"x"}, {"t"}, "first");
  addOutput(M, "y", {int64_t(3)});
  auto G = importModel(M);
  EXPECT_EQ(G->nodes()[0]->name(), "first");
  EXPECT_EQ(G->nodes()[1]->name(), "second");
}

TEST(OnnxImport, ModelOperatorsListsEveryOpOnce) {
  auto Dir = freshDir("ops");
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(3)});
  addNode(M, "Relu", {"x"}, {"a"});
  addNode(M, "Relu", {"a"}, {"b"});
  addNode(M, "Neg", {"b"}, {"c"}).set_domain("com.example");
  addOutput(M, "c", {int64_t(3)});
  std::ofstream(Dir / "m.onnx", std::ios::binary) << M.SerializeAsString();
  EXPECT_EQ(frontend::onnxModelOperators((Dir / "m.onnx").string()),
            (std::vector<std::string>{"Relu", "com.example.Neg"}));
}
