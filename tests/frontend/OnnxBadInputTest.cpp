//===- OnnxBadInputTest.cpp - ONNX import of broken models ---------------===//
//
// A corpus of bad inputs: truncated and garbage bytes, wrong ir_version,
// missing initializer, dangling input, duplicate outputs, unknown dtypes,
// external data outside the model's folder or past the end of its file.
// Each must give an nng::Error that names the model, the node or tensor, and
// the problem; and no mutation of a valid model may crash the importer
// (nor ONNX's shape inference, which old models go through).
//
//===----------------------------------------------------------------------===//

#include "OnnxTestUtils.h"
#include "nngraph/frontend/onnx/OnnxImport.h"
#include "nngraph/frontend/onnx/OnnxTensor.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <filesystem>

#include <fstream>
#include <random>

using namespace nng;
using namespace nng::test;
namespace fs = std::filesystem;

namespace {

/// x -> Conv(w, b) -> Relu -> y, with initializers w and b.
onnx::ModelProto goodModel() {
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(1), int64_t(2), int64_t(4), int64_t(4)});
  addFloatInit(M, "conv.weight", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  addFloatInit(M, "conv.bias", {3}, {0.5, -0.5, 0});
  auto &C =
      addNode(M, "Conv", {"x", "conv.weight", "conv.bias"}, {"c"}, "conv");
  addIntsAttr(C, "kernel_shape", {1, 1});
  addNode(M, "Relu", {"c"}, {"y"}, "relu");
  addOutput(M, "y", {int64_t(1), int64_t(3), int64_t(4), int64_t(4)});
  return M;
}

/// Imports Bytes as "bad.onnx" and returns the Error's full text; fails
/// the test when import succeeds or throws anything else.
std::string errorOf(const std::string &Bytes,
                    const frontend::OnnxImportOptions &O = {}) {
  try {
    frontend::importOnnxFromBytes(Bytes, "bad.onnx", O);
  } catch (const Error &E) {
    return E.what();
  } catch (const std::exception &E) {
    ADD_FAILURE() << "not an nng::Error: " << E.what();
    return "";
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

std::string errorOf(const onnx::ModelProto &M,
                    const frontend::OnnxImportOptions &O = {}) {
  return errorOf(M.SerializeAsString(), O);
}

#define EXPECT_MENTIONS(Msg, Text)                                             \
  EXPECT_NE((Msg).find(Text), std::string::npos)                               \
      << "message: " << (Msg) << "\nlacks: " << (Text)

} // namespace

TEST(OnnxBadInput, GoodModelImports) {
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(goodModel().SerializeAsString(),
                                                "good.onnx"));
}

TEST(OnnxBadInput, TruncatedBytes) {
  std::string Bytes = goodModel().SerializeAsString();
  for (size_t Len : {Bytes.size() / 2, Bytes.size() - 1, size_t(3)}) {
    std::string Msg = errorOf(Bytes.substr(0, Len));
    EXPECT_MENTIONS(Msg, "'bad.onnx'");
  }
  EXPECT_MENTIONS(errorOf(std::string()), "the file is empty");
}

TEST(OnnxBadInput, GarbageBytes) {
  std::string Msg = errorOf(std::string("\xff\xfe garbage \x01\x02\x03", 14));
  EXPECT_MENTIONS(Msg, "'bad.onnx'");
  std::string Text = "this is not a model at all";
  EXPECT_MENTIONS(errorOf(Text), "'bad.onnx'");
}

TEST(OnnxBadInput, MissingFile) {
  try {
    frontend::importOnnx("/nonexistent/model.onnx");
    ADD_FAILURE() << "imported";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::IO);
    EXPECT_MENTIONS(std::string(E.what()), "/nonexistent/model.onnx");
  }
}

TEST(OnnxBadInput, FilesAreReadAsTheyAreParsed) {
  // importOnnx(Path) parses while it reads: a good file, a truncated one,
  // an empty one and a directory give the same results and messages as
  // the bytes do.
  namespace fs = std::filesystem;
  fs::path Dir = fs::temp_directory_path() /
                 ("nng-onnx-file-" + std::to_string(::getpid()));
  fs::create_directories(Dir);
  std::string Bytes = goodModel().SerializeAsString();
  auto Write = [&](const std::string &Name, const std::string &Data) {
    std::ofstream(Dir / Name, std::ios::binary) << Data;
    return (Dir / Name).string();
  };
  EXPECT_NO_THROW(frontend::importOnnx(Write("good.onnx", Bytes)));
  auto ErrorOf = [](const std::string &Path) -> std::pair<ErrorKind, std::string> {
    try {
      frontend::importOnnx(Path);
    } catch (const Error &E) {
      return {E.kind(), E.what()};
    }
    ADD_FAILURE() << Path << " imported";
    return {ErrorKind::Internal, ""};
  };
  auto [K1, Truncated] =
      ErrorOf(Write("cut.onnx", Bytes.substr(0, Bytes.size() / 2)));
  EXPECT_EQ(K1, ErrorKind::Parse);
  EXPECT_MENTIONS(Truncated, "truncated or corrupt");
  EXPECT_MENTIONS(Truncated, "cut.onnx");
  auto [K2, Empty] = ErrorOf(Write("empty.onnx", ""));
  EXPECT_EQ(K2, ErrorKind::Parse);
  EXPECT_MENTIONS(Empty, "the file is empty");
  auto [K3, IsDir] = ErrorOf(Dir.string());
  EXPECT_EQ(K3, ErrorKind::IO);
  EXPECT_MENTIONS(IsDir, "it is a directory");
  fs::remove_all(Dir);
}

TEST(OnnxBadInput, WrongIrVersion) {
  onnx::ModelProto M = goodModel();
  M.set_ir_version(99);
  EXPECT_MENTIONS(errorOf(M), "ir_version 99 is newer");
  M.clear_ir_version();
  EXPECT_MENTIONS(errorOf(M), "ir_version is missing");
  M.set_ir_version(2);
  EXPECT_MENTIONS(errorOf(M), "ir_version 2 is too old");
}

TEST(OnnxBadInput, MissingInitializer) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_initializer()->RemoveLast(); // conv.bias
  std::string Msg = errorOf(M);
  EXPECT_MENTIONS(Msg, "'bad.onnx'");
  EXPECT_MENTIONS(Msg, "node 'conv' (Conv) reads 'conv.bias'");
  EXPECT_MENTIONS(Msg, "which no graph input, initializer or node defines");
}

TEST(OnnxBadInput, DanglingInput) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_MENTIONS(errorOf(M), "node 'relu' (Relu) reads 'nowhere'");
}

TEST(OnnxBadInput, DuplicateOutputNames) {
  onnx::ModelProto M = goodModel();
  addNode(M, "Neg", {"x"}, {"c"}, "again");
  std::string Msg = errorOf(M);
  EXPECT_MENTIONS(Msg, "value 'c' is produced twice");
  EXPECT_MENTIONS(Msg, "node 'conv' (Conv)");
  EXPECT_MENTIONS(Msg, "node 'again' (Neg)");

  onnx::ModelProto M2 = goodModel();
  *M2.mutable_graph()->add_output() = M2.graph().output(0);
  EXPECT_MENTIONS(errorOf(M2), "graph output 'y' is listed twice");

  onnx::ModelProto M3 = goodModel();
  addNode(M3, "Neg", {"y"}, {"x"}, "shadow");
  EXPECT_MENTIONS(errorOf(M3), "output 'x' redefines the graph input");
}

TEST(OnnxBadInput, UndefinedGraphOutput) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_output(0)->set_name("zzz");
  EXPECT_MENTIONS(errorOf(M), "graph output 'zzz' is not produced");
}

TEST(OnnxBadInput, UnknownDType) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_initializer(0)->set_data_type(99);
  std::string Msg = errorOf(M);
  EXPECT_MENTIONS(Msg, "initializer 'conv.weight' has data type type 99");
  onnx::ModelProto M2 = goodModel();
  M2.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::COMPLEX64);
  EXPECT_MENTIONS(errorOf(M2), "graph input 'x' has data type COMPLEX64");
  onnx::ModelProto M3 = goodModel();
  M3.mutable_graph()->mutable_initializer(1)->set_data_type(0);
  EXPECT_MENTIONS(errorOf(M3), "initializer 'conv.bias' has data type "
                               "UNDEFINED (the type is missing)");
}

TEST(OnnxBadInput, RawDataOfTheWrongSize) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(5);
  EXPECT_MENTIONS(errorOf(M), "initializer 'conv.weight' has 5 bytes of "
                              "raw_data but its type f32[3, 2, 1, 1] needs 24");
}

TEST(OnnxBadInput, HugeDimsDoNotAllocate) {
  onnx::ModelProto M = goodModel();
  auto *T = M.mutable_graph()->mutable_initializer(0);
  T->set_dims(0, int64_t(1) << 40);
  EXPECT_MENTIONS(errorOf(M), "initializer 'conv.weight'");
  T->set_dims(0, -3);
  EXPECT_MENTIONS(errorOf(M), "negative dimension -3");
}

namespace {
/// goodModel() with conv.weight's data in external file Location.
onnx::ModelProto externalModel(const std::string &Location,
                               const std::string &Offset = "0",
                               const std::string &Length = "") {
  onnx::ModelProto M = goodModel();
  auto *T = M.mutable_graph()->mutable_initializer(0);
  T->clear_raw_data();
  T->set_data_location(onnx::TensorProto::EXTERNAL);
  auto Add = [&](const char *K, const std::string &V) {
    auto *E = T->add_external_data();
    E->set_key(K);
    E->set_value(V);
  };
  Add("location", Location);
  Add("offset", Offset);
  if (!Length.empty())
    Add("length", Length);
  return M;
}
} // namespace

TEST(OnnxBadInput, ExternalDataOutsideTheFolder) {
  fs::path Dir = freshDir("escape");
  fs::create_directories(Dir / "model");
  std::ofstream(Dir / "secret.bin", std::ios::binary) << std::string(24, 'x');
  std::ofstream(Dir / "model" / "ok.bin", std::ios::binary)
      << std::string(24, '\0');
  frontend::OnnxImportOptions O;
  O.BaseDir = (Dir / "model").string();
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(
      externalModel("ok.bin").SerializeAsString(), "m.onnx", O));

  std::string Msg = errorOf(externalModel("../secret.bin"), O);
  EXPECT_MENTIONS(Msg, "initializer 'conv.weight'");
  EXPECT_MENTIONS(Msg, "leaves the model's folder");
  EXPECT_MENTIONS(errorOf(externalModel("sub/../../secret.bin"), O),
                  "leaves the model's folder");
  Msg = errorOf(externalModel((Dir / "secret.bin").string()), O);
  EXPECT_MENTIONS(Msg, "is absolute");
  EXPECT_MENTIONS(errorOf(externalModel("/etc/passwd"), O), "is absolute");
  // A symbolic link inside the folder that points out of it.
  fs::create_symlink(Dir / "secret.bin", Dir / "model" / "link.bin");
  EXPECT_MENTIONS(errorOf(externalModel("link.bin"), O),
                  "resolves outside the model's folder");
  EXPECT_MENTIONS(errorOf(externalModel("missing.bin"), O), "does not exist");
}

TEST(OnnxBadInput, ExternalDataPastTheEnd) {
  fs::path Dir = freshDir("pastend");
  std::ofstream(Dir / "w.bin", std::ios::binary) << std::string(30, '\0');
  frontend::OnnxImportOptions O;
  O.BaseDir = Dir.string();
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(
      externalModel("w.bin", "6").SerializeAsString(), "m.onnx", O));
  std::string Msg = errorOf(externalModel("w.bin", "7"), O);
  EXPECT_MENTIONS(Msg, "initializer 'conv.weight'");
  EXPECT_MENTIONS(Msg, "needs 24 bytes at offset 7 but 'w.bin' has only 30");
  EXPECT_MENTIONS(errorOf(externalModel("w.bin", "1000"), O), "at offset 1000");
  EXPECT_MENTIONS(errorOf(externalModel("w.bin", "0", "12"), O),
                  "external data length 12 does not match");
  EXPECT_MENTIONS(errorOf(externalModel("w.bin", "-4"), O),
                  "offset '-4' is not a non-negative integer");
}

TEST(OnnxBadInput, NoGraphOrNoOutputs) {
  onnx::ModelProto M = goodModel();
  M.clear_graph();
  EXPECT_MENTIONS(errorOf(M), "the model has no graph");
  onnx::ModelProto M2 = goodModel();
  M2.mutable_graph()->clear_output();
  EXPECT_MENTIONS(errorOf(M2), "the graph has no outputs");
}

TEST(OnnxBadInput, WrongArityAndMissingRequiredAttribute) {
  onnx::ModelProto M = goodModel();
  M.mutable_graph()->mutable_node(1)->add_input("x");
  EXPECT_MENTIONS(errorOf(M), "node 'relu' (Relu) has 2 inputs; Relu takes 1");
  onnx::ModelProto M2 = makeModel();
  addInput(M2, "x", {int64_t(3)});
  addNode(M2, "Cast", {"x"}, {"y"}, "cast");
  addOutput(M2, "y", {int64_t(3)});
  EXPECT_MENTIONS(errorOf(M2),
                  "node 'cast' (Cast): required attribute 'to' is missing");
}

// Old models go through ONNX's shape inference, which divides by strides
// and blocksize: zeros there are refused before it runs (found by the fuzz
// target as a SIGFPE in onnx::convPoolShapeInference).
TEST(OnnxBadInput, ZeroStridesAndBlocksizeInOldModels) {
  onnx::ModelProto M = makeModel(11, 6);
  addInput(M, "x", {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  auto &P = addNode(M, "MaxPool", {"x"}, {"y"}, "pool");
  addIntsAttr(P, "kernel_shape", {2, 2});
  addIntsAttr(P, "strides", {1, 0});
  addOutput(M, "y", {int64_t(1), int64_t(1), int64_t(3), int64_t(3)});
  EXPECT_MENTIONS(errorOf(M), "node 'pool' (MaxPool): attribute 'strides' "
                              "must be positive");
  // At opset 17 (no conversion) the op table's checks say the same.
  onnx::ModelProto M17 = M;
  M17.mutable_opset_import(0)->set_version(17);
  M17.set_ir_version(8);
  EXPECT_MENTIONS(errorOf(M17), "strides");
  onnx::ModelProto M2 = makeModel(11, 6);
  addInput(M2, "x", {int64_t(1), int64_t(4), int64_t(2), int64_t(2)});
  addIntAttr(addNode(M2, "DepthToSpace", {"x"}, {"y"}), "blocksize", 0);
  addOutput(M2, "y", {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  EXPECT_MENTIONS(errorOf(M2), "node #0 (DepthToSpace): attribute "
                               "'blocksize' must be positive");
}

// ONNX 1.12's Gemm adapter (opset 6 to 7) indexes dims 0 and 1 of A and B
// unchecked: a vector for B was an out-of-bounds read in libonnx (found by
// the fuzz target as a garbage-sized allocation, seen only after thousands
// of runs had recycled ASan's quarantine).
TEST(OnnxBadInput, GemmOfAVectorInAnOldModel) {
  onnx::ModelProto M = makeModel(7, 6);
  addInput(M, "a", {int64_t(3), int64_t(7)});
  addInput(M, "b", {int64_t(7)});
  addInput(M, "c", {int64_t(1)});
  addNode(M, "Gemm", {"a", "b", "c"}, {"y"});
  addOutput(M, "y", {int64_t(3), int64_t(3)});
  EXPECT_MENTIONS(errorOf(M), "node #0 (Gemm): input 1 ('b') has rank 1");
}

TEST(OnnxBadInput, CorruptTensorFile) {
  try {
    frontend::onnxTensorFromBytes(std::string("\x0a\xff\xff", 3), "in.pb");
    ADD_FAILURE() << "parsed";
  } catch (const Error &E) {
    EXPECT_MENTIONS(std::string(E.what()), "'in.pb'");
  }
}

// Random byte mutations of a valid model: every outcome is a graph or an
// nng::Error, never a crash or another exception type.
TEST(OnnxBadInput, MutatedModelsNeverCrash) {
  std::string Good = goodModel().SerializeAsString();
  std::mt19937 Rng(1234);
  int Errors = 0, Imported = 0;
  for (int Iter = 0; Iter < 2000; ++Iter) {
    std::string B = Good;
    int Flips = 1 + static_cast<int>(Rng() % 4);
    for (int F = 0; F < Flips; ++F) {
      size_t Pos = Rng() % B.size();
      switch (Rng() % 3) {
      case 0:
        B[Pos] = static_cast<char>(Rng());
        break;
      case 1:
        B.erase(Pos, 1 + Rng() % 8);
        break;
      default:
        B.insert(Pos, 1, static_cast<char>(Rng()));
        break;
      }
      if (B.empty())
        B = "x";
    }
    try {
      frontend::importOnnxFromBytes(B, "mutant.onnx");
      ++Imported;
    } catch (const Error &E) {
      ++Errors;
      EXPECT_NE(std::string(E.what()).find("mutant.onnx"), std::string::npos)
          << E.what();
    } catch (const std::exception &E) {
      ADD_FAILURE() << "iteration " << Iter
                    << ": not an nng::Error: " << E.what();
    }
  }
  EXPECT_GT(Errors, 0);
  RecordProperty("imported", Imported);
}

// Random field-level mutations (dtypes, dims, names, op types, attribute
// values, including the nonsensical ones: strides 0, negative pads, group
// 0): every outcome is a graph or an nng::Error naming the model.
TEST(OnnxBadInput, MutatedFieldsNeverCrash) {
  std::mt19937 Rng(99);
  auto Pick = [&](int N) { return static_cast<int>(Rng() % N); };
  const char *Ops[] = {"Conv",    "Relu",    "Add",       "Reshape", "Gemm",
                       "MaxPool", "Flatten", "Transpose", "Softmax", "Foo"};
  const char *AttrNames[] = {"kernel_shape", "strides", "pads",
                             "dilations",    "group",   "axis",
                             "perm",         "transB",  "to"};
  int Errors = 0;
  for (int Iter = 0; Iter < 1500; ++Iter) {
    onnx::ModelProto M = goodModel();
    auto &G = *M.mutable_graph();
    for (int K = 0, N = 1 + Pick(3); K < N; ++K) {
      switch (Pick(7)) {
      case 0:
        G.mutable_initializer(Pick(2))->set_data_type(Pick(20));
        break;
      case 1: {
        auto *T = G.mutable_initializer(Pick(2));
        T->set_dims(Pick(T->dims_size()), Pick(12) - 2);
        break;
      }
      case 2:
        G.mutable_node(Pick(2))->set_input(
            0,
            std::vector<std::string>{"x", "c", "y", "", "conv.bias"}[Pick(5)]);
        break;
      case 3:
        G.mutable_node(Pick(2))->set_op_type(Ops[Pick(10)]);
        break;
      case 4: {
        auto *A = G.mutable_node(Pick(2))->add_attribute();
        A->set_name(AttrNames[Pick(9)]);
        if (Pick(2)) {
          A->set_type(onnx::AttributeProto::INTS);
          for (int I = 0, L = Pick(6); I < L; ++I)
            A->add_ints(Pick(7) - 2);
        } else {
          A->set_type(onnx::AttributeProto::INT);
          A->set_i(Pick(7) - 2);
        }
        break;
      }
      case 5:
        G.mutable_input(0)
            ->mutable_type()
            ->mutable_tensor_type()
            ->mutable_shape()
            ->mutable_dim(Pick(4))
            ->set_dim_value(Pick(6));
        break;
      default:
        G.mutable_initializer(Pick(2))->clear_raw_data();
        break;
      }
    }
    try {
      frontend::importOnnxFromBytes(M.SerializeAsString(), "mutant.onnx");
    } catch (const Error &E) {
      ++Errors;
      EXPECT_NE(std::string(E.what()).find("mutant.onnx"), std::string::npos)
          << E.what();
    } catch (const std::exception &E) {
      ADD_FAILURE() << "iteration " << Iter
                    << ": not an nng::Error: " << E.what();
    }
  }
  EXPECT_GT(Errors, 0);
}

namespace {

/// A graph whose one node copies X into Out.
onnx::GraphProto copyGraph(const std::string &X, const std::string &Out) {
  onnx::GraphProto G;
  G.set_name("copy_" + Out);
  auto *N = G.add_node();
  N->set_op_type("Identity");
  N->add_input(X);
  N->add_output(Out);
  auto *O = G.add_output();
  O->set_name(Out);
  O->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  return G;
}

/// y = If(c) nested Depth deep in its then-branches, the innermost one
/// copying the outer graph's x.
onnx::ModelProto nestedIfs(int Depth) {
  onnx::GraphProto Inner = copyGraph("x", "y" + std::to_string(Depth));
  for (int D = Depth - 1; D >= 0; --D) {
    onnx::GraphProto G;
    G.set_name("level" + std::to_string(D));
    auto *N = G.add_node();
    N->set_op_type("If");
    N->add_input("c");
    N->add_output("y" + std::to_string(D));
    auto *Then = N->add_attribute();
    Then->set_name("then_branch");
    Then->set_type(onnx::AttributeProto::GRAPH);
    Then->mutable_g()->Swap(&Inner); // (A copy per level is quadratic.)
    auto *Else = N->add_attribute();
    Else->set_name("else_branch");
    Else->set_type(onnx::AttributeProto::GRAPH);
    *Else->mutable_g() = copyGraph("x", "e" + std::to_string(D));
    auto *O = G.add_output();
    O->set_name("y" + std::to_string(D));
    O->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    Inner.Swap(&G);
  }
  onnx::ModelProto M = makeModel();
  addInput(M, "x", {int64_t(1)});
  auto *C = M.mutable_graph()->add_input();
  C->set_name("c");
  C->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  M.mutable_graph()->mutable_node()->Swap(Inner.mutable_node());
  addOutput(M, "y0", {int64_t(1)});
  return M;
}

/// x carried through Loops nested Depth deep (each body's first node the
/// next Loop, over the outer M), the innermost body negating it.
onnx::ModelProto nestedLoops(int Depth) {
  auto Info = [](onnx::ValueInfoProto *V, const std::string &Name, int Type,
                 bool Vector) {
    V->set_name(Name);
    auto *T = V->mutable_type()->mutable_tensor_type();
    T->set_elem_type(Type);
    auto *S = T->mutable_shape();
    if (Vector)
      S->add_dim()->set_dim_value(2);
  };
  onnx::GraphProto Body;
  for (int D = Depth; D >= 1; --D) {
    onnx::GraphProto G;
    std::string L = std::to_string(D);
    G.set_name("body" + L);
    Info(G.add_input(), "i" + L, onnx::TensorProto::INT64, false);
    Info(G.add_input(), "go" + L, onnx::TensorProto::BOOL, false);
    Info(G.add_input(), "a" + L, onnx::TensorProto::FLOAT, true);
    auto *N = G.add_node();
    if (D == Depth) {
      N->set_op_type("Neg");
      N->add_input("a" + L);
    } else {
      N->set_op_type("Loop");
      N->add_input("m");
      N->add_input("");
      N->add_input("a" + L);
      auto *A = N->add_attribute();
      A->set_name("body");
      A->set_type(onnx::AttributeProto::GRAPH);
      A->mutable_g()->Swap(&Body);
    }
    N->add_output("b" + L);
    auto *Id = G.add_node();
    Id->set_op_type("Identity");
    Id->add_input("go" + L);
    Id->add_output("go2" + L);
    Info(G.add_output(), "go2" + L, onnx::TensorProto::BOOL, false);
    Info(G.add_output(), "b" + L, onnx::TensorProto::FLOAT, true);
    Body.Swap(&G);
  }
  onnx::ModelProto M = makeModel();
  auto *MIn = M.mutable_graph()->add_input();
  MIn->set_name("m");
  MIn->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  MIn->mutable_type()->mutable_tensor_type()->mutable_shape();
  addInput(M, "x", {int64_t(2)});
  auto *N = M.mutable_graph()->add_node();
  N->set_op_type("Loop");
  N->add_input("m");
  N->add_input("");
  N->add_input("x");
  N->add_output("y");
  auto *A = N->add_attribute();
  A->set_name("body");
  A->set_type(onnx::AttributeProto::GRAPH);
  A->mutable_g()->Swap(&Body);
  addOutput(M, "y", {int64_t(2)});
  return M;
}

} // namespace

// Nested graphs as an attacker writes them: a depth bomb is refused by
// protobuf's nesting limit with a message that says so (no stack
// overflow); a few levels import, and so do the deepest If and Loop
// nestings protobuf reads, at once (typing them was twice the work per
// level: 2^30); a body reading a name no scope defines names its path.
TEST(OnnxBadInput, NestedGraphs) {
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(nestedIfs(3).SerializeAsString(),
                                                "nested.onnx"));
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(
      nestedIfs(30).SerializeAsString(), "nested30.onnx"));
  EXPECT_NO_THROW(frontend::importOnnxFromBytes(
      nestedLoops(30).SerializeAsString(), "loops30.onnx"));
  for (int Depth : {40, 2000})
    EXPECT_MENTIONS(errorOf(nestedIfs(Depth)), "nests graphs too deep");
  onnx::ModelProto M = nestedIfs(1);
  auto *Then = M.mutable_graph()->mutable_node(0)->mutable_attribute(0);
  Then->mutable_g()->mutable_node(0)->set_input(0, "nowhere");
  std::string E = errorOf(M);
  EXPECT_MENTIONS(E, "reads 'nowhere'");
  EXPECT_MENTIONS(E, "then_branch");
}

