//===- TextFormatTest.cpp - Printing and parsing the text format ---------===//
//
// Tests of the *.nng text format: the exact printed form of a small graph,
// round trips (print(parse(print(g))) == print(g)) of graphs built in C++
// covering every attribute kind, every dtype of initializer, elided
// initializers, scopes, quoted names and symbolic / unknown / zero-size
// dims, and parser features (forward references, inferred result types,
// comments, files).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

using namespace nng;
using namespace nng::ir;

namespace {

std::unique_ptr<Graph> parse(std::string_view Text,
                             const ParseOptions &O = {}) {
  return parseGraph(Text, "test.nng", O);
}

/// Prints G, parses the text back and checks that it prints identically;
/// returns the parsed graph.
std::unique_ptr<Graph> expectRoundTrip(const Graph &G,
                                       const PrintOptions &PO = {}) {
  std::string First = printGraph(G, PO);
  std::unique_ptr<Graph> P;
  try {
    P = parse(First);
  } catch (const Error &E) {
    ADD_FAILURE() << "printed graph does not parse: " << E.what() << "\n"
                  << First;
    return nullptr;
  }
  EXPECT_EQ(printGraph(*P, PO), First);
  return P;
}

/// True when A and B hold the same bytes (so NaNs and -0 compare exactly).
bool sameBits(const Tensor &A, const Tensor &B) {
  if (A.dtype() != B.dtype() || A.shape() != B.shape())
    return false;
  Tensor CA = A.contiguous(), CB = B.contiguous();
  return A.numel() == 0 ||
         std::memcmp(CA.rawData(), CB.rawData(), CA.nbytes()) == 0;
}

TensorType f32(std::vector<Dim> Dims) { return TensorType(DType::F32, Dims); }

} // namespace

TEST(TextFormat, PrintsTheDocumentedForm) {
  Graph G;
  G.setName("small");
  Value *X = G.addInput("x", f32({Dim::symbol("N"), 4}));
  Value *W = G.addInitializer(
      "fc.weight",
      Tensor::fromVector<float>({0.5f, -1, 2, 0.25f, 1e-5f, 3, 100, -0.0f},
                                Shape{2, 4}));
  AttrMap GemmAttrs;
  GemmAttrs.set("transB", 1);
  Node *Gemm = G.addNode(OpKind::Gemm, {X, W, nullptr}, {"y"}, GemmAttrs);
  Gemm->setName("Gemm_0");
  Gemm->setScope({"fc", "Linear"});
  AttrMap GeluAttrs;
  GeluAttrs.set("approximate", "tanh");
  Node *Gelu = G.addNode(OpKind::Gelu, {Gemm->output()}, {"g"}, GeluAttrs);
  G.setOutputs({Gelu->output(), Gemm->output()});
  inferTypes(G);
  EXPECT_EQ(printGraph(G),
            "graph \"small\" {\n"
            "  input %x: f32[N,4]\n"
            "  init %fc.weight: f32[2,4] = [0.5, -1.0, 2.0, 0.25, 1e-05, 3.0, "
            "100.0, -0.0]\n"
            "  %y: f32[N,2] = Gemm(%x, %fc.weight, _) {transB = 1} "
            "name(\"Gemm_0\") scope(\"fc\", \"Linear\")\n"
            "  %g: f32[N,2] = nng.Gelu(%y) {approximate = \"tanh\"}\n"
            "  output %g, %y\n"
            "}\n");
  expectRoundTrip(G);
}

TEST(TextFormat, ParsesTheDocumentedExample) {
  auto G = parse(R"(# A comment.
graph "small_cnn" {
  input %x: f32[N,1,4,4]
  init %conv1.weight: f32[2,1,3,3] = [0.25, -0.5, 1, 2, 3, 4, 5, 6, 7,
                                      1, 2, 3, 4, 5, 6, 7, 8, 9]   # wrapped
  init %conv1.bias: f32[2] = [0.0, 1.0]
  init %fc.weight: f32[10,32] = elided("fnv1a64:0123456789abcdef")
  %conv: f32[N,2,4,4] = Conv(%x, %conv1.weight, %conv1.bias) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} name("Conv_0") scope("conv1", "Conv2d")
  %flat = Flatten(%conv)
  %y: f32[N,10] = Gemm(%flat, %fc.weight, _) {transB = 1}
  %g: f32[N,10] = nng.Gelu(%y)
  output %y, %g
}
)");
  ASSERT_EQ(G->numNodes(), 4u);
  EXPECT_EQ(G->name(), "small_cnn");
  const Node &Conv = *G->nodes()[0];
  EXPECT_EQ(Conv.name(), "Conv_0");
  EXPECT_EQ(Conv.scope(), (Scope{"conv1", "Conv2d"}));
  EXPECT_EQ(Conv.attrInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(G->lookup("flat")->type().toString(), "f32[N,32]");
  const Value *FC = G->lookup("fc.weight");
  EXPECT_FALSE(FC->data().defined());
  EXPECT_EQ(FC->elidedHash(), "fnv1a64:0123456789abcdef");
  EXPECT_EQ(G->lookup("conv1.weight")->data().getFlat(1), -0.5);
  EXPECT_FALSE(G->nodes()[2]->hasInput(2));
  EXPECT_EQ(G->nodes()[2]->numInputs(), 3u);
  // The canonical form is a fixed point.
  std::string Once = printGraph(*G);
  EXPECT_EQ(printGraph(*parse(Once)), Once);
}

TEST(TextFormat, AllAttributeKindsRoundTrip) {
  Graph G;
  Value *X = G.addInput("x", f32({2, 3}));
  Value *Y = G.addInput("y", f32({2, 3}));
  AttrMap A;
  A.set("axis", -1); // int
  Node *Cat = G.addNode(OpKind::Concat, {X, Y}, {"cat"}, A);
  AttrMap L;
  L.set("alpha", 0.1f); // float
  Node *Leaky = G.addNode(OpKind::LeakyRelu, {Cat->output()}, {"leaky"}, L);
  AttrMap T;
  T.set("perm", std::vector<int64_t>{1, 0}); // ints
  Node *Tr = G.addNode(OpKind::Transpose, {Leaky->output()}, {"tr"}, T);
  AttrMap F;
  F.set("value_floats", std::vector<float>{1.5f, -0.0f, 1e30f}); // floats
  Node *Cf = G.addNode(OpKind::Constant, {}, {"cf"}, F);
  AttrMap Tn;
  Tn.set("value",
         Tensor::fromVector<int64_t>({0, 1, 1, 0}, Shape{4})); // tensor
  Node *Pads = G.addNode(OpKind::Constant, {}, {"pads"}, Tn);
  AttrMap S;
  S.set("mode", "reflect"); // string
  Node *Pad =
      G.addNode(OpKind::Pad, {Tr->output(), Pads->output()}, {"pad"}, S);
  AttrMap Sh;
  Sh.set("value_ints", std::vector<int64_t>{2, 3});
  Node *Ct = G.addNode(OpKind::Constant, {}, {"shape"}, Sh);
  AttrMap E;
  E.set("value",
        Tensor::scalar<float>(-std::numeric_limits<float>::infinity()));
  Node *Cs = G.addNode(OpKind::ConstantOfShape, {Ct->output()}, {"filled"}, E);
  G.setOutputs({Pad->output(), Cf->output(), Cs->output()});
  inferTypes(G);
  std::string Text = printGraph(G);
  EXPECT_NE(Text.find("{axis = -1}"), std::string::npos) << Text;
  EXPECT_NE(Text.find("{alpha = 0.1}"), std::string::npos) << Text;
  EXPECT_NE(Text.find("{perm = [1, 0]}"), std::string::npos) << Text;
  EXPECT_NE(Text.find("{value_floats = [1.5, -0.0, 1e+30]}"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("{value = tensor<i64[4]> [0, 1, 1, 0]}"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("{mode = \"reflect\"}"), std::string::npos) << Text;
  EXPECT_NE(Text.find("{value = tensor<f32[]> [-inf]}"), std::string::npos)
      << Text;
  auto P = expectRoundTrip(G);
  ASSERT_TRUE(P);
  for (size_t I = 0; I < G.numNodes(); ++I)
    EXPECT_EQ(P->nodes()[I]->attrs(), G.nodes()[I]->attrs()) << I;
}

TEST(TextFormat, AttributeLiteralsAreTypedByTheSchema) {
  // An int literal for a float attribute reads as a float; an empty list
  // takes the schema's list type.
  auto G = parse("graph {\n"
                 "  input %x: f32[2]\n"
                 "  %y = LeakyRelu(%x) {alpha = 1}\n"
                 "  %c = Constant() {value_floats = [1, 2.5]}\n"
                 "  input %s: f32[]\n"
                 "  %t = Transpose(%s) {perm = []}\n"
                 "  output %y, %c, %t\n"
                 "}\n");
  EXPECT_EQ(G->nodes()[0]->attrs().find("alpha")->type(), AttrType::Float);
  EXPECT_EQ(G->nodes()[0]->attrFloat("alpha"), 1.0f);
  EXPECT_EQ(G->nodes()[1]->attrs().find("value_floats")->floats(),
            (std::vector<float>{1.0f, 2.5f}));
  EXPECT_EQ(G->nodes()[2]->attrs().find("perm")->type(), AttrType::Ints);
  EXPECT_NE(printGraph(*G).find("{alpha = 1.0}"), std::string::npos);
  EXPECT_NE(printGraph(*G).find("{perm = []}"), std::string::npos);
}

TEST(TextFormat, StringListAttributesParse) {
  // A Constant of strings is a str tensor; its attribute prints back quoted
  // and escaped.
  auto G = parse("graph {\n  %c = Constant() {value_strings = [\"a\", "
                 "\"\\n\"]}\n  output %c\n}\n");
  EXPECT_EQ(G->nodes()[0]->output(0)->type().toString(), "str[2]");
  EXPECT_NE(printGraph(*G).find("{value_strings = [\"a\", \"\\n\"]}"),
            std::string::npos)
      << printGraph(*G);
}

TEST(TextFormat, EveryDTypeInitializerRoundTripsExactly) {
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  const double DInf = std::numeric_limits<double>::infinity();
  Graph G;
  std::vector<Tensor> Data = {
      Tensor::fromVector<float>({0.1f, -0.0f, Inf, -Inf, NaN, 1e-45f,
                                 3.4028235e38f, 16777217.0f, 1.0f / 3},
                                Shape{9}),
      Tensor::fromVector<double>(
          {0.1, -0.0, DInf, -DInf, 5e-324, 1.0 / 3, 1.7976931348623157e308},
          Shape{7}),
      Tensor::fromVector<Half>({Half(0.1f), Half(-2.5f), Half(65504.0f),
                                Half::fromBits(1), Half(Inf), Half(-0.0f)},
                               Shape{2, 3}),
      Tensor::fromVector<BFloat16>({BFloat16(0.1f), BFloat16(-3e38f),
                                    BFloat16::fromBits(1), BFloat16(NaN)},
                                   Shape{4}),
      Tensor::fromVector<int8_t>({-128, 127, 0}, Shape{3}),
      Tensor::fromVector<uint8_t>({0, 255}, Shape{2}),
      Tensor::fromVector<int16_t>({-32768, 32767}, Shape{2}),
      Tensor::fromVector<uint16_t>({0, 65535}, Shape{2}),
      Tensor::fromVector<int32_t>({INT32_MIN, INT32_MAX}, Shape{2}),
      Tensor::fromVector<uint32_t>({0, UINT32_MAX}, Shape{2}),
      Tensor::fromVector<int64_t>({INT64_MIN, INT64_MAX}, Shape{2}),
      Tensor::fromVector<uint64_t>({0, UINT64_MAX}, Shape{2}),
      Tensor::fromVector<bool>({true, false, true}, Shape{3, 1}),
      Tensor::scalar<float>(2.5f),
      Tensor::empty(Shape{0, 3}, DType::I64),
      Tensor::fromStrings({"", "a b", "q\"b\\s", "\n\t\x01\x7f",
                           "h\xc3\xa9llo", "%x: f32[2]"},
                          Shape{2, 3}),
  };
  std::vector<Value *> Outs;
  for (size_t I = 0; I < Data.size(); ++I)
    Outs.push_back(G.addInitializer("w" + std::to_string(I), Data[I]));
  G.setOutputs(Outs);
  auto P = expectRoundTrip(G);
  ASSERT_TRUE(P);
  for (size_t I = 0; I < Data.size(); ++I) {
    const Value *V = P->lookup("w" + std::to_string(I));
    ASSERT_TRUE(V && V->data().defined()) << I;
    EXPECT_TRUE(sameBits(V->data(), Data[I]))
        << I << ": " << V->data().toString() << " vs " << Data[I].toString();
  }
  std::string Text = printGraph(G);
  EXPECT_NE(Text.find("[0.1, -0.0, inf, -inf, nan, 1e-45, 3.4028235e+38, "
                      "16777216.0, 0.33333334]"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("u64[2] = [0, 18446744073709551615]"), std::string::npos);
  EXPECT_NE(Text.find("bool[3,1] = [true, false, true]"), std::string::npos);
  EXPECT_NE(Text.find("init %w13: f32[] = [2.5]"), std::string::npos);
  EXPECT_NE(Text.find("init %w14: i64[0,3] = []"), std::string::npos);
  EXPECT_NE(Text.find("init %w15: str[2,3] = [\"\", \"a b\", "
                      "\"q\\\"b\\\\s\", \"\\n\\t\\x01\\x7f\", "
                      "\"h\xc3\xa9llo\", \"%x: f32[2]\"]"),
            std::string::npos)
      << Text;
}

TEST(TextFormat, NonContiguousInitializerPrintsRowMajor) {
  Graph G;
  Tensor T = Tensor::fromVector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3})
                 .permute({1, 0});
  G.setOutputs({G.addInitializer("t", T)});
  EXPECT_NE(printGraph(G).find("i32[3,2] = [1, 4, 2, 5, 3, 6]"),
            std::string::npos);
  EXPECT_EQ(tensorHash(T), tensorHash(T.contiguous()));
}

TEST(TextFormat, TensorHash) {
  Tensor A = Tensor::fromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  std::string H = tensorHash(A);
  ASSERT_EQ(H.size(), 8u + 16u);
  EXPECT_EQ(H.substr(0, 8), "fnv1a64:");
  EXPECT_EQ(H.find_first_not_of("0123456789abcdef", 8), std::string::npos);
  EXPECT_EQ(tensorHash(A.clone()), H);
  EXPECT_NE(tensorHash(A.reshape(Shape{4})), H);
  EXPECT_NE(tensorHash(Tensor::fromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2})),
            H);
  // FNV-1a 64 of the dtype name and a zero byte, the rank and dims as
  // little-endian 64-bit integers, then the row-major bytes: fixed values,
  // so hashes stay stable across versions.
  EXPECT_EQ(H, "fnv1a64:4a14a0935c327fef");
  EXPECT_EQ(tensorHash(Tensor::scalar<float>(0.0f)),
            "fnv1a64:1e549589a21ae2cc");
  EXPECT_NE(tensorHash(Tensor::scalar<float>(0.0f)),
            tensorHash(Tensor::scalar<float>(-0.0f)));
}

TEST(TextFormat, LargeInitializersAreElidedAndStayElided) {
  Graph G;
  Value *X = G.addInput("x", f32({3}));
  Tensor Big = Tensor::fromVector<float>({1, 2, 3}, Shape{3});
  Value *W = G.addInitializer("w", Big);
  Node *Add = G.addNode(OpKind::Add, {X, W}, {"y"});
  G.setOutputs({Add->output()});
  inferTypes(G);
  PrintOptions Small;
  Small.InlineLimit = 2;
  std::string Text = printGraph(G, Small);
  std::string Ref = "init %w: f32[3] = elided(\"" + tensorHash(Big) + "\")";
  EXPECT_NE(Text.find(Ref), std::string::npos) << Text;
  // Parsed back, it is elided with the hash, and prints identically with
  // any limit.
  auto P = parse(Text);
  EXPECT_FALSE(P->lookup("w")->data().defined());
  EXPECT_EQ(P->lookup("w")->elidedHash(), tensorHash(Big));
  EXPECT_EQ(printGraph(*P, Small), Text);
  EXPECT_EQ(printGraph(*P), Text);
  // A resolver can bring the data back.
  ParseOptions O;
  std::string SeenName, SeenHash;
  O.ResolveElided = [&](const std::string &Name, const TensorType &T,
                        const std::string &Hash) {
    SeenName = Name;
    SeenHash = Hash;
    EXPECT_EQ(T.toString(), "f32[3]");
    return Big;
  };
  auto R = parse(Text, O);
  EXPECT_EQ(SeenName, "w");
  EXPECT_EQ(SeenHash, tensorHash(Big));
  ASSERT_TRUE(R->lookup("w")->data().defined());
  EXPECT_TRUE(R->lookup("w")->data().equals(Big));
  EXPECT_EQ(printGraph(*R, Small), Text);
  EXPECT_EQ(printGraph(*R), printGraph(G));
  // A resolver may decline (undefined tensor): the value stays elided.
  O.ResolveElided = [](const std::string &, const TensorType &,
                       const std::string &) { return Tensor(); };
  EXPECT_FALSE(parse(Text, O)->lookup("w")->data().defined());
  // A negative limit prints everything inline.
  PrintOptions All;
  All.InlineLimit = -1;
  EXPECT_NE(printGraph(G, All).find("= [1.0, 2.0, 3.0]"), std::string::npos);
}

TEST(TextFormat, QuotedNamesSymbolsAndScopes) {
  Graph G;
  G.setName("a \"quoted\"\tgraph\n");
  Value *X =
      G.addInput("input with spaces",
                 TensorType(DType::F32, {Dim::symbol("batch"), Dim::unknown(),
                                         Dim::symbol("seq len"), Dim(0)}));
  Value *Y = G.addInput("y:", TensorType(DType::F32)); // unknown rank
  Node *N1 = G.addNode(OpKind::Relu, {X}, {"ok/name-1.2:3"});
  N1->setName("relu \"one\"");
  N1->setScope({"layer1.0.conv1", "Conv2d"});
  Node *N2 = G.addNode(OpKind::Neg, {Y}, {"%weird\\name\x01\xc3\xa9"});
  N2->setScope({"", "Module"});
  Node *N3 = G.addNode(OpKind::Identity, {N2->output()}, {"0"});
  N3->setScope({"root", ""});
  G.setOutputs({N1->output(), N3->output()});
  inferTypes(G);
  std::string Text = printGraph(G);
  EXPECT_NE(Text.find("graph \"a \\\"quoted\\\"\\tgraph\\n\" {"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("input %\"input with spaces\": f32[batch,?,\"seq "
                      "len\",0]"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("input %\"y:\": f32[*]"), std::string::npos) << Text;
  EXPECT_NE(Text.find("%ok/name-1.2:3: f32[batch,?,\"seq len\",0] = Relu("),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("%\"%weird\\\\name\\x01\xc3\xa9\": f32[*] = Neg(%\"y:\")"
                      " scope(\"\", \"Module\")"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("name(\"relu \\\"one\\\"\") scope(\"layer1.0.conv1\", "
                      "\"Conv2d\")"),
            std::string::npos)
      << Text;
  auto P = expectRoundTrip(G);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->name(), G.name());
  EXPECT_TRUE(P->lookup("%weird\\name\x01\xc3\xa9"));
  EXPECT_EQ(P->nodes()[0]->scope(), N1->scope());
  EXPECT_EQ(P->nodes()[0]->name(), N1->name());
  EXPECT_EQ(P->nodes()[2]->scope(), N3->scope());
}

TEST(TextFormat, MultiOutputAndOptionalOperands) {
  auto G = parse(R"(graph "multi" {
  input %v: f32[5,4]
  init %sizes: i64[2] = [2, 3]
  %a: f32[2,4], %b: f32[3,4] = Split(%v, %sizes) {axis = 0}
  %c, %d = Split(%v, %sizes)
  %m: f32[5,4], %mask = Dropout(%v, _, _)
  %e = Clip(%a, _, _)
  output %a, %b, %c, %d, %m, %e
})");
  const Node &S = *G->nodes()[0];
  ASSERT_EQ(S.numOutputs(), 2u);
  EXPECT_EQ(G->lookup("d")->type().toString(), "f32[3,4]");
  const Node &D = *G->nodes()[2];
  EXPECT_EQ(D.numInputs(), 3u);
  EXPECT_FALSE(D.hasInput(1));
  std::string Text = printGraph(*G);
  EXPECT_NE(Text.find("= Dropout(%v, _, _)\n"), std::string::npos) << Text;
  EXPECT_NE(Text.find("%c: f32[2,4], %d: f32[3,4] = Split(%v, %sizes)\n"),
            std::string::npos)
      << Text;
  EXPECT_EQ(printGraph(*parse(Text)), Text);
}

TEST(TextFormat, ForwardReferencesAreSorted) {
  auto G = parse(R"(graph {
  output %z
  %z: f32[2] = Relu(%y)
  %y = Neg(%x)
  input %x: f32[2]
})");
  ASSERT_EQ(G->numNodes(), 2u);
  EXPECT_EQ(G->nodes()[0]->op(), OpKind::Neg);
  EXPECT_EQ(G->nodes()[1]->op(), OpKind::Relu);
  EXPECT_EQ(printGraph(*G), "graph {\n"
                            "  input %x: f32[2]\n"
                            "  %y: f32[2] = Neg(%x)\n"
                            "  %z: f32[2] = Relu(%y)\n"
                            "  output %z\n"
                            "}\n");
}

TEST(TextFormat, DeclaredTypesMergeWithInferredOnes) {
  auto G = parse(R"(graph {
  input %x: f32[?,3]
  %y: f32[N,?] = Relu(%x)
  %z: f32[*] = Neg(%y)
  output %z
})");
  EXPECT_EQ(G->lookup("y")->type().toString(), "f32[N,3]");
  EXPECT_EQ(G->lookup("z")->type().toString(), "f32[N,3]");
}

TEST(TextFormat, ScalarsAndZeroSizeDims) {
  auto G = parse(R"(graph {
  input %s: f32[]
  input %e: f32[0,4]
  init %one: f32[] = [1]
  %t = Add(%s, %one)
  %u = Relu(%e)
  output %t, %u
})");
  EXPECT_EQ(G->lookup("t")->type().toString(), "f32[]");
  EXPECT_EQ(G->lookup("u")->type().toString(), "f32[0,4]");
  EXPECT_EQ(G->lookup("one")->data().getFlat(0), 1.0);
  std::string Text = printGraph(*G);
  EXPECT_EQ(printGraph(*parse(Text)), Text);
}

TEST(TextFormat, EmptyGraphAndWhitespace) {
  EXPECT_EQ(printGraph(*parse("graph{}")), "graph {\n}\n");
  EXPECT_EQ(
      printGraph(*parse("  # only a comment\n graph \"g\"\t{\r\n}\n# end")),
      "graph \"g\" {\n}\n");
}

TEST(TextFormat, FloatSpelling) {
  Graph G;
  std::vector<float> Vals = {1.0f,
                             0.1f,
                             1e-5f,
                             123456789.0f,
                             -0.0f,
                             1e20f,
                             std::numeric_limits<float>::denorm_min(),
                             std::numeric_limits<float>::max()};
  AttrMap A;
  A.set("value_floats", Vals);
  G.setOutputs({G.addNode(OpKind::Constant, {}, {"c"}, A)->output()});
  inferTypes(G);
  std::string Text = printGraph(G);
  EXPECT_NE(Text.find("[1.0, 0.1, 1e-05, 123456792.0, -0.0, 1e+20, 1e-45, "
                      "3.4028235e+38]"),
            std::string::npos)
      << Text;
  auto P = expectRoundTrip(G);
  ASSERT_TRUE(P);
  EXPECT_EQ(P->nodes()[0]->attrs(), G.nodes()[0]->attrs());
}

TEST(TextFormat, ParseGraphFile) {
  auto Dir = std::filesystem::temp_directory_path() /
             ("nng-text-" + std::to_string(::getpid()));
  std::filesystem::create_directories(Dir);
  std::string Path = (Dir / "m.nng").string();
  {
    std::ofstream OS(Path);
    OS << "graph \"f\" {\n  input %x: f32[2]\n  %y = Foo(%x)\n}\n";
  }
  try {
    parseGraphFile(Path);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Parse);
    EXPECT_EQ(E.message().rfind(Path + ":3:8: error: unknown op 'Foo'", 0), 0u)
        << E.what();
  }
  {
    std::ofstream OS(Path);
    OS << "graph \"f\" {\n  input %x: f32[2]\n  output %x\n}\n";
  }
  EXPECT_EQ(parseGraphFile(Path)->name(), "f");
  try {
    parseGraphFile((Dir / "missing.nng").string());
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::IO);
  }
  EXPECT_THROW(parseGraphFile(Dir.string()), Error);
  std::filesystem::remove_all(Dir);
}
