//===- OnnxStringTest.cpp - STRING tensors through ONNX ------------------===//
//
// STRING TensorProtos (string_data) read and written, raw_data and external
// forms refused, and a model with a string initializer, a string Constant
// and StringNormalizer through import -> export -> import, which must print
// the same and compute the same.
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/frontend/onnx/OnnxExport.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using nng::rt::Tensor;

namespace {

using Strs = std::vector<std::string>;

TEST(OnnxStrings, TensorProtoRoundTrip) {
  Strs Words = {"", "a b", "it's", std::string("z\0z", 3), "\xc3\xa9"};
  Tensor T = Tensor::fromStrings(Words, Shape{5});
  std::string Bytes = frontend::onnxTensorToBytes(T, "w");
  onnx::TensorProto P;
  ASSERT_TRUE(P.ParseFromString(Bytes));
  EXPECT_EQ(P.data_type(), onnx::TensorProto::STRING);
  EXPECT_FALSE(P.has_raw_data());
  ASSERT_EQ(P.string_data_size(), 5);
  EXPECT_EQ(P.string_data(3), std::string("z\0z", 3));
  std::string Name;
  Tensor Back = frontend::onnxTensorFromBytes(Bytes, "bytes", &Name);
  EXPECT_EQ(Name, "w");
  EXPECT_EQ(Back.dtype(), DType::String);
  EXPECT_EQ(Back.toStrings(), Words);
}

/// Reading P must fail with a message containing Text.
void expectRefused(const onnx::TensorProto &P, const std::string &Text) {
  try {
    frontend::onnxTensorFromBytes(P.SerializeAsString(), "p");
    ADD_FAILURE() << "accepted; expected an error with: " << Text;
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find(Text), std::string::npos) << E.what();
  }
}

TEST(OnnxStrings, BadStringTensorsAreRefused) {
  onnx::TensorProto P;
  P.set_name("s");
  P.set_data_type(onnx::TensorProto::STRING);
  P.add_dims(2);
  P.add_string_data("only one");
  expectRefused(P, "1 values in string_data");
  P.clear_string_data();
  P.set_raw_data(std::string(16, 'x'));
  expectRefused(P, "STRING tensor with raw_data");
  P.clear_raw_data();
  P.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *L = P.add_external_data();
  L->set_key("location");
  L->set_value("s.bin");
  expectRefused(P, "STRING tensor with external data");
}

constexpr const char *Model = R"(graph "strings" {
  input %x: str[4]
  init %extra: str[2] = ["monday", "it's \"quoted\"\n"]
  %y = StringNormalizer(%x) {case_change_action = "UPPER", stopwords = ["monday"]}
  %c = Constant() {value_strings = ["end"]}
  %all = Concat(%y, %extra, %c) {axis = 0}
  output %all
}
)";

TEST(OnnxStrings, ModelWithStringInitializerRoundTrips) {
  std::unique_ptr<ir::Graph> G0 = ir::parseGraph(Model, "strings.nng");
  std::string B1 = frontend::exportOnnxToBytes(*G0);
  std::unique_ptr<ir::Graph> G1 =
      frontend::importOnnxFromBytes(B1, "strings.onnx");
  std::string P1 = ir::printGraph(*G1);
  EXPECT_NE(P1.find("init %extra: str[2] = [\"monday\", "
                    "\"it's \\\"quoted\\\"\\n\"]"),
            std::string::npos)
      << P1;
  std::string B2 = frontend::exportOnnxToBytes(*G1);
  std::unique_ptr<ir::Graph> G2 =
      frontend::importOnnxFromBytes(B2, "strings2.onnx");
  EXPECT_EQ(ir::printGraph(*G2), P1);
  // And through the text format again.
  std::unique_ptr<ir::Graph> G3 = ir::parseGraph(P1, "printed.nng");
  EXPECT_EQ(ir::printGraph(*G3), P1);
  std::vector<Tensor> Out = backends::runReference(
      *G2, {Tensor::fromStrings({"Monday", "monday", "x", "Tuesday"},
                                Shape{4})});
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].toStrings(),
            (Strs{"X", "TUESDAY", "monday", "it's \"quoted\"\n", "end"}));
}

} // namespace
