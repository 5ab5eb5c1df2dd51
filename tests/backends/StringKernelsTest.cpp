//===- StringKernelsTest.cpp - Reference kernels on str tensors ----------===//
//
// StringNormalizer (stopwords, case sensitivity, case change, the [1, C]
// form, everything dropped), Cast and CastLike between str and numbers
// (numpy's astype(str) spelling of floats, strtod-like parsing), the ops
// that only move or compare elements (Identity, Reshape, Transpose, Concat,
// Slice, Gather, Expand, Tile, Split, Where, Equal, ...) on strings, the
// refusal of numeric kernels, and the CPU backend falling back to these
// kernels.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"
#include "nngraph/backends/Backend.h"

#include <limits>

using namespace nng;
using namespace nng::reftest;

namespace {

using Strs = std::vector<std::string>;

Tensor normalize(Tensor X, std::string Action, int64_t CaseSensitive,
                 Strs Stopwords) {
  OpTest T(OpKind::StringNormalizer);
  T.in(std::move(X))
      .attr("case_change_action", ir::Attribute(std::move(Action)))
      .attr("is_case_sensitive", CaseSensitive);
  if (!Stopwords.empty())
    T.attr("stopwords", ir::Attribute(std::move(Stopwords)));
  return T.run1();
}

TEST(RefStrings, StringNormalizerDropsStopwordsAndChangesCase) {
  Strs Days = {"monday", "tuesday", "wednesday", "thursday"};
  EXPECT_TENSOR(normalize(strs(Days), "NONE", 1, {"monday"}),
                strs({"tuesday", "wednesday", "thursday"}));
  EXPECT_TENSOR(normalize(strs(Days), "LOWER", 1, {"monday"}),
                strs({"tuesday", "wednesday", "thursday"}));
  EXPECT_TENSOR(normalize(strs(Days), "UPPER", 1, {"monday"}),
                strs({"TUESDAY", "WEDNESDAY", "THURSDAY"}));
  // Case-insensitive stopwords, [1, C] input.
  EXPECT_TENSOR(normalize(strs({"Monday", "tuesday", "wednesday", "MONDAY",
                                "tuesday", "wednesday"},
                               {1, 6}),
                          "UPPER", 0, {"monday"}),
                strs({"TUESDAY", "WEDNESDAY", "TUESDAY", "WEDNESDAY"}, {1, 4}));
  // Case-sensitive: "Monday" stays.
  EXPECT_TENSOR(normalize(strs({"Monday", "monday"}), "LOWER", 1, {"monday"}),
                strs({"monday"}));
  // No stopwords, no change; non-ASCII bytes are kept as they are.
  EXPECT_TENSOR(normalize(strs({"Ab", "\xc3\x89t\xc3\xa9"}), "NONE", 1, {}),
                strs({"Ab", "\xc3\x89t\xc3\xa9"}));
  EXPECT_TENSOR(normalize(strs({"Ab", "\xc3\x89t\xc3\xa9"}), "LOWER", 1, {}),
                strs({"ab", "\xc3\x89t\xc3\xa9"}));
}

TEST(RefStrings, StringNormalizerAllDroppedGivesOneEmptyString) {
  EXPECT_TENSOR(normalize(strs({"monday", "monday"}), "UPPER", 1, {"monday"}),
                strs({""}));
  EXPECT_TENSOR(normalize(strs({"monday"}, {1, 1}), "NONE", 0, {"MONDAY"}),
                strs({""}, {1, 1}));
}

TEST(RefStrings, StringNormalizerRefusesBadInput) {
  EXPECT_FAILS(OpTest(OpKind::StringNormalizer).in(f32({1, 2})),
               "must be a str tensor");
  EXPECT_FAILS(OpTest(OpKind::StringNormalizer).in(strs({"a", "b"}, {2, 1})),
               "[1, C]");
  EXPECT_FAILS(OpTest(OpKind::StringNormalizer)
                   .in(strs({"a"}))
                   .attr("case_change_action", ir::Attribute("TITLE")),
               "'NONE', 'LOWER' or 'UPPER'");
}

Tensor cast(Tensor X, int64_t To) {
  return OpTest(OpKind::Cast).in(std::move(X)).attr("to", To).run1();
}

TEST(RefStrings, CastFloatToStringSpellsLikeNumpy) {
  const float Inf = std::numeric_limits<float>::infinity();
  // Expected strings from numpy 1.24: np.array(V, np.float32).astype(str).
  EXPECT_TENSOR(
      cast(f32({1e-5f, 1e-4f, 0.00012345f, 1e16f, 1e15f, 123456789.0f, 0.0f,
                -0.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), -Inf,
                Inf, 1e20f, 3.4028235e38f, 1.5e-45f, 100.0f, 12345678.0f,
                0.1f, -2.5e-7f, 1.2e-4f, 0.9767611f, 0.039187793f}),
           8),
      strs({"1e-05", "1e-04", "0.00012345", "1e+16", "1000000000000000.0",
            "123456790.0", "0.0", "-0.0", "1.0", "nan", "-inf", "inf",
            "1e+20", "3.4028235e+38", "1e-45", "100.0", "12345678.0", "0.1",
            "-2.5e-07", "0.00012", "0.9767611", "0.039187793"}));
  EXPECT_TENSOR(cast(f64({1e-5, 1e16, 1.0, 0.1, 123.456}), 8),
                strs({"1e-05", "1e+16", "1.0", "0.1", "123.456"}));
  Tensor H = Tensor::fromVector<Half>({Half(1e-5f), Half(1.0f), Half(0.1f)},
                                      Shape{3});
  EXPECT_TENSOR(cast(H, 8), strs({"1e-05", "1.0", "0.1"}));
  EXPECT_TENSOR(cast(i8({1, -3}), 8), strs({"1", "-3"}));
  EXPECT_TENSOR(cast(i64({std::numeric_limits<int64_t>::min()}), 8),
                strs({"-9223372036854775808"}));
  EXPECT_TENSOR(cast(boolean({1, 0}), 8), strs({"True", "False"}));
}

TEST(RefStrings, CastStringToNumbersParsesLikeStrtod) {
  const float Inf = std::numeric_limits<float>::infinity();
  EXPECT_TENSOR(cast(strs({"0.47892547", "NaN", "INF", "+INF", "-INF", "nan",
                           "-Infinity", " 1e3 ", "-0.5", "1e-50", "1e50"}),
                     1),
                f32({0.47892547f, std::numeric_limits<float>::quiet_NaN(),
                     Inf, Inf, -Inf, std::numeric_limits<float>::quiet_NaN(),
                     -Inf, 1000.0f, -0.5f, 0.0f, Inf}));
  EXPECT_TENSOR(cast(strs({"0.1"}), 11), f64({0.1}));
  EXPECT_TENSOR(cast(strs({"42", "-7", "+3", "2.9", "-2.9", "1e30"}), 7),
                i64({42, -7, 3, 2, -2, std::numeric_limits<int64_t>::max()}));
  EXPECT_TENSOR(cast(strs({"300", "7"}), 2), u8({44, 7})); // Wraps.
  EXPECT_TENSOR(cast(strs({"True", "false", "0", "2.5"}), 9),
                boolean({1, 0, 0, 1}));
  EXPECT_TENSOR(cast(strs({"x", "y"}), 8), strs({"x", "y"}));
  // Not a number: the message names the element and the string.
  EXPECT_FAILS(OpTest(OpKind::Cast).in(strs({"1", "abc"})).attr("to", 1),
               "element 1 of the input, 'abc', is not a number");
  EXPECT_FAILS(OpTest(OpKind::Cast).in(strs({"1.5x"})).attr("to", 7),
               "'1.5x', is not a number");
}

TEST(RefStrings, CastLikeToAndFromStrings) {
  EXPECT_TENSOR(OpTest(OpKind::CastLike)
                    .in(f32({0.5f, 2.0f}))
                    .in(strs({""}))
                    .run1(),
                strs({"0.5", "2.0"}));
  EXPECT_TENSOR(OpTest(OpKind::CastLike)
                    .in(strs({"0.5", "-2"}))
                    .in(f32({0.0f}))
                    .run1(),
                f32({0.5f, -2.0f}));
}

TEST(RefStrings, MovingKernelsTakeStrings) {
  Tensor X = strs({"a", "b", "c", "d", "e", "f"}, {2, 3});
  EXPECT_TENSOR(OpTest(OpKind::Identity).in(X).run1(), X);
  EXPECT_TENSOR(
      OpTest(OpKind::Reshape).in(X).constIn(i64({3, 2})).run1(),
      strs({"a", "b", "c", "d", "e", "f"}, {3, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Flatten).in(X).attr("axis", int64_t(0)).run1(),
                strs({"a", "b", "c", "d", "e", "f"}, {1, 6}));
  EXPECT_TENSOR(OpTest(OpKind::Transpose).in(X).run1(),
                strs({"a", "d", "b", "e", "c", "f"}, {3, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Unsqueeze).in(X).constIn(i64({0})).run1(),
                strs({"a", "b", "c", "d", "e", "f"}, {1, 2, 3}));
  EXPECT_TENSOR(OpTest(OpKind::Squeeze)
                    .in(strs({"a", "b"}, {1, 2}))
                    .constIn(i64({0}))
                    .run1(),
                strs({"a", "b"}));
  EXPECT_TENSOR(OpTest(OpKind::Concat)
                    .in(X)
                    .in(strs({"g", "h"}, {2, 1}))
                    .attr("axis", int64_t(1))
                    .run1(),
                strs({"a", "b", "c", "g", "d", "e", "f", "h"}, {2, 4}));
  std::vector<Tensor> Parts = OpTest(OpKind::Split)
                                  .in(X)
                                  .attr("axis", int64_t(1))
                                  .outputs(3)
                                  .run();
  ASSERT_EQ(Parts.size(), 3u);
  EXPECT_TENSOR(Parts[2], strs({"c", "f"}, {2, 1}));
  EXPECT_TENSOR(OpTest(OpKind::Slice)
                    .in(X)
                    .constIn(i64({1}))
                    .constIn(i64({3}))
                    .constIn(i64({1}))
                    .run1(),
                strs({"b", "c", "e", "f"}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Gather)
                    .in(X)
                    .in(i64({2, 0}))
                    .attr("axis", int64_t(1))
                    .run1(),
                strs({"c", "a", "f", "d"}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Expand)
                    .in(strs({"x", "y"}, {2, 1}))
                    .constIn(i64({2, 2}))
                    .run1(),
                strs({"x", "x", "y", "y"}, {2, 2}));
  EXPECT_TENSOR(OpTest(OpKind::Tile).in(strs({"p", "q"})).constIn(i64({2})).run1(),
                strs({"p", "q", "p", "q"}));
  EXPECT_TENSOR(OpTest(OpKind::Where)
                    .in(boolean({1, 0, 1}))
                    .in(strs({"a", "b", "c"}))
                    .in(strs({"z"}))
                    .run1(),
                strs({"a", "z", "c"}));
  EXPECT_TENSOR(OpTest(OpKind::Equal)
                    .in(strs({"a", "b", "A"}))
                    .in(strs({"a"}))
                    .run1(),
                boolean({1, 0, 0}));
  EXPECT_TENSOR(OpTest(OpKind::Constant)
                    .attr("value_strings", ir::Attribute(Strs{"k", "l"}))
                    .run1(),
                strs({"k", "l"}));
}

TEST(RefStrings, NumericKernelsRefuseStringsNamingTheOp) {
  try {
    OpTest(OpKind::Add).in(strs({"a"})).in(strs({"b"})).run();
    FAIL() << "Add of strings ran";
  } catch (const Error &E) {
    std::string What = E.what();
    EXPECT_NE(What.find("does not take string tensors"), std::string::npos)
        << What;
    EXPECT_NE(What.find("Add"), std::string::npos) << What;
  }
  EXPECT_FAILS(OpTest(OpKind::Less).in(strs({"a"})).in(strs({"b"})),
               "does not take string tensors");
  EXPECT_FAILS(OpTest(OpKind::ReduceMax).in(strs({"a", "b"})),
               "string tensors");
}

TEST(RefStrings, CpuBackendFallsBackToTheReferenceKernels) {
  ir::Graph G;
  ir::Value *X = G.addInput("x", ir::TensorType(DType::String, Shape{3}));
  ir::AttrMap A;
  A.set("case_change_action", ir::Attribute(std::string("UPPER")));
  A.set("stopwords", ir::Attribute(Strs{"b"}));
  ir::Node *N = G.addNode(OpKind::StringNormalizer, {X}, {"y"}, A);
  G.setOutputs({N->output(0)});
  ir::inferTypes(G);
  auto Exe = backends::getBackend("cpu").compile(G);
  std::vector<Tensor> Out = Exe->run({strs({"a", "B", "c"})});
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_TENSOR(Out[0], strs({"A", "C"}));
}

} // namespace
