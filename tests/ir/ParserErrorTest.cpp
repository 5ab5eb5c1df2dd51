//===- ParserErrorTest.cpp - Error messages of the text-format parser ----===//
//
// Every kind of error the parser reports, each checked for its kind
// (Error(Parse)), its "FILE:LINE:COL: error: " prefix at the right place and
// what it says; then robustness: every truncation and many single-byte
// mutations of a valid file, and random token soup and random bytes, must
// either parse (and then round-trip) or throw Error(Parse), never crash.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Parser.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <random>

using namespace nng;
using namespace nng::ir;

namespace {

/// The message of the Error(Parse) that parsing Text throws.
std::string errorOf(std::string_view Text) {
  try {
    parseGraph(Text, "e.nng");
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Parse) << E.what();
    return E.message();
  } catch (const std::exception &E) {
    ADD_FAILURE() << "not an nng::Error: " << E.what();
    return "";
  }
  ADD_FAILURE() << "no error for:\n" << Text;
  return "";
}

/// "e.nng:LINE:COL" of the first occurrence of Needle in Text.
std::string loc(std::string_view Text, std::string_view Needle) {
  size_t Off = Text.find(Needle);
  EXPECT_NE(Off, std::string_view::npos) << Needle;
  size_t Line = 1, Col = 1;
  for (size_t I = 0; I < Off; ++I) {
    if (Text[I] == '\n') {
      ++Line;
      Col = 1;
    } else {
      ++Col;
    }
  }
  return "e.nng:" + std::to_string(Line) + ":" + std::to_string(Col);
}

/// Checks that parsing Text fails at Needle with a message starting Msg.
void expectError(std::string_view Text, std::string_view Needle,
                 const std::string &Msg) {
  std::string Expected = loc(Text, Needle) + ": error: " + Msg;
  std::string Got = errorOf(Text);
  EXPECT_EQ(Got.substr(0, Expected.size()), Expected) << "full: " << Got;
}

/// A graph whose body is Body (with an input %x: f32[2]).
std::string withBody(std::string_view Body) {
  return "graph {\n  input %x: f32[2]\n" + std::string(Body) + "}\n";
}

/// Parses Text; if it parses, checks that printing is a fixed point. Any
/// exception other than Error(Parse) fails the test.
void parseNeverCrashes(std::string_view Text) {
  std::unique_ptr<Graph> G;
  try {
    G = parseGraph(Text, "fuzz.nng");
  } catch (const Error &E) {
    if (E.kind() != ErrorKind::Parse)
      ADD_FAILURE() << "wrong error kind: " << E.what() << "\nfor:\n" << Text;
    if (E.message().rfind("fuzz.nng:", 0) != 0)
      ADD_FAILURE() << "no location: " << E.what();
    return;
  } catch (const std::exception &E) {
    ADD_FAILURE() << "not an nng::Error: " << E.what() << "\nfor:\n" << Text;
    return;
  }
  std::string Once = printGraph(*G);
  try {
    EXPECT_EQ(printGraph(*parseGraph(Once, "again.nng")), Once);
  } catch (const Error &E) {
    ADD_FAILURE() << "printed graph does not parse: " << E.what() << "\n"
                  << Once;
  }
}

const char *ValidFile = R"(# A valid file with most of the syntax.
graph "net" {
  input %x: f32[N,3,8,8]
  input %"odd name": f32[N,?]
  init %w: f32[4,3,3,3] = elided("fnv1a64:00000000000000ff")
  init %b: f32[4] = [0.5, -1, 1e-3, inf]
  init %shape: i64[2] = [0, -1]
  init %flag: bool[] = [true]
  %c: f32[N,4,8,8] = Conv(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} name("conv") scope("block.0", "Conv2d")
  %r = Relu(%c)
  %f: f32[N,256] = Reshape(%r, %shape)
  %l = LeakyRelu(%f) {alpha = 0.2}
  %s1, %s2 = Split(%l) {axis = 1}
  %k = Constant() {value = tensor<f32[2]> [1.5, nan]}
  %g = nng.Gelu(%s1) {approximate = "tanh"}
  output %g, %s2, %k
}
)";

} // namespace

TEST(ParserError, ValidFileParses) {
  auto G = parseGraph(ValidFile, "valid.nng");
  EXPECT_EQ(G->numNodes(), 7u);
  std::string Once = printGraph(*G);
  EXPECT_EQ(printGraph(*parseGraph(Once)), Once);
}

TEST(ParserError, UnknownOpSuggestsCloseNames) {
  std::string T = withBody("  %y = Reluu(%x)\n");
  expectError(T, "Reluu", "unknown op 'Reluu'; did you mean 'Relu'");
  T = withBody("  %y = Gelu(%x)\n");
  expectError(T, "Gelu", "unknown op 'Gelu'; did you mean 'nng.Gelu'");
  T = withBody("  %y = Frobnicate(%x)\n");
  EXPECT_EQ(errorOf(T), loc(T, "Frob") + ": error: unknown op 'Frobnicate'");
}

TEST(ParserError, WrongArity) {
  std::string T = withBody("  %y = Add(%x)\n");
  expectError(T, "Add", "Add expects 2 inputs, got 1");
  T = withBody("  %y = Conv(%x, %x, %x, %x)\n");
  expectError(T, "Conv", "Conv expects 2 to 3 inputs, got 4");
  T = withBody("  %y = Concat() {axis = 0}\n");
  expectError(T, "Concat", "Concat expects at least 1 input, got 0");
  T = withBody("  %a, %b = Relu(%x)\n");
  expectError(T, "%a,", "Relu expects 1 result, got 2");
  T = withBody("  Relu(%x)\n");
  expectError(T, "Relu", "Relu expects 1 result, got 0");
  T = withBody("  %y = Add(%x, _)\n");
  expectError(T, "_)", "input 1 ('B') of Add is required");
}

TEST(ParserError, AttributeTypes) {
  std::string T = withBody("  %y = Concat(%x, %x) {axis = \"0\"}\n");
  expectError(T, "\"0\"", "attribute 'axis' of Concat expects int, got string");
  T = withBody("  %y = Concat(%x, %x) {axis = 1.5}\n");
  expectError(T, "1.5", "attribute 'axis' of Concat expects int, got float");
  T = withBody("  %y = Transpose(%x) {perm = [0.5]}\n");
  expectError(T, "[0.5]",
              "attribute 'perm' of Transpose expects ints, got floats");
  T = withBody("  %y = Transpose(%x) {perm = [1, \"a\"]}\n");
  expectError(T, "[1,",
              "attribute 'perm' of Transpose expects ints, got a list of "
              "strings and numbers");
  T = withBody("  %y = LeakyRelu(%x) {alpha = [1.0]}\n");
  expectError(T, "[1.0]",
              "attribute 'alpha' of LeakyRelu expects float, got floats");
  T = withBody("  %y = LeakyRelu(%x) {alpha = []}\n");
  expectError(
      T, "[]",
      "attribute 'alpha' of LeakyRelu expects float, got an empty list");
  T = withBody("  %y = Constant() {value = 3}\n");
  expectError(T, "3}", "attribute 'value' of Constant expects tensor, got int");
  T = withBody("  %y = Relu(%x) {alpha = 1}\n");
  expectError(T, "alpha", "unknown attribute 'alpha' of Relu");
  T = withBody("  %y = Concat(%x, %x) {axes = 0}\n");
  expectError(T, "axes", "unknown attribute 'axes' of Concat");
  T = withBody("  %y = Concat(%x, %x) {axis = 0, axis = 0}\n");
  expectError(T, "axis = 0}", "attribute 'axis' is given twice");
  T = withBody("  %y = Concat(%x, %x)\n");
  expectError(T, "Concat", "Concat requires attribute 'axis' (int)");
  T = withBody("  %y = Transpose(%x) {perm = [[1]]}\n");
  expectError(T, "[1]]", "nested lists are not allowed");
  T = withBody("  %y = Concat(%x, %x) {axis = 99999999999999999999}\n");
  expectError(T, "999", "integer '99999999999999999999' is out of range");
  T = withBody("  %y = LeakyRelu(%x) {alpha = 1e39}\n");
  expectError(T, "1e39", "value '1e39' is out of range for f32");
  T = withBody("  %y = Constant() {value = tensor<f32[N]> [1.0]}\n");
  expectError(T, "f32[N]",
              "tensor attribute 'value' has inline values, so "
              "its type needs a static shape, got f32[N]");
}

TEST(ParserError, UndefinedAndRedefinedValues) {
  std::string T = withBody("  %y = Relu(%q)\n");
  expectError(T, "%q", "use of undefined value %q");
  T = withBody("  %y = Relu(%x)\n  output %y, %\"no such\"\n");
  expectError(T, "%\"no such\"", "use of undefined value %\"no such\"");
  T = withBody("  %x = Relu(%x)\n");
  std::string Got = errorOf(T);
  EXPECT_EQ(Got.rfind(loc(T, "%x = ") + ": error: redefinition of value %x", 0),
            0u)
      << Got;
  T = withBody("  init %x: f32[1] = [1.0]\n");
  expectError(T, "%x: f32[1]", "redefinition of value %x");
  T = withBody("  %a, %a = Split(%x)\n");
  expectError(T, "%a = ", "redefinition of value %a");
}

TEST(ParserError, RedefinitionNotesThePreviousOne) {
  try {
    parseGraph(withBody("  %x = Relu(%x)\n"), "e.nng");
    FAIL();
  } catch (const Error &E) {
    ASSERT_FALSE(E.context().empty());
    EXPECT_EQ(E.context().back(), "note: previous definition at e.nng:2:9");
  }
}

TEST(ParserError, Cycle) {
  std::string T = withBody("  %a = Relu(%b)\n  %b = Neg(%a)\n  %c = Abs(%b)\n");
  expectError(T, "%a = ",
              "cycle in the graph: node %a = Relu depends on itself (%a uses "
              "%b uses %a)");
  T = withBody("  %s = Relu(%s)\n");
  expectError(T, "%s", "cycle in the graph: node %s = Relu depends on itself");
}

TEST(ParserError, IncompatibleShape) {
  std::string T = withBody("  %y: f32[3] = Relu(%x)\n");
  expectError(
      T, "%y",
      "incompatible shape: %y is declared f32[3] but Relu gives f32[2]");
  T = withBody("  %y: i64[2] = Relu(%x)\n");
  expectError(T, "%y", "incompatible shape: %y is declared i64[2]");
  T = withBody("  %y: f32[2,1] = Relu(%x)\n");
  expectError(T, "%y", "incompatible shape");
}

TEST(ParserError, InferenceErrorsPointAtTheNode) {
  std::string T = "graph {\n  input %a: f32[2,3]\n  input %b: f32[4,5]\n"
                  "  %y = MatMul(%a, %b)\n}\n";
  std::string Got = errorOf(T);
  EXPECT_EQ(Got.rfind(loc(T, "MatMul") + ": error: ", 0), 0u) << Got;
}

TEST(ParserError, BadTypeSyntax) {
  std::string T = "graph {\n  input %x: f33[2]\n}\n";
  expectError(T, "f33", "bad type: unknown element type 'f33'");
  T = "graph {\n  input %x: f32(2)\n}\n";
  expectError(T, "(2)", "bad type: expected '[' after the element type");
  T = "graph {\n  input %x: f32[2\n}\n";
  expectError(T, "}", "bad type: expected ',' or ']' after a dim, found '}'");
  T = "graph {\n  input %x: f32[2,,3]\n}\n";
  expectError(T, ",3]", "bad type: expected a dim");
  T = "graph {\n  input %x: f32[*,3]\n}\n";
  expectError(T, ",3]", "bad type: expected ']' after '*'");
  T = "graph {\n  input %x: f32[-1]\n}\n";
  expectError(T, "-1", "bad type: dim '-1' is not a valid extent");
  T = "graph {\n  input %x: f32[99999999999999999999]\n}\n";
  expectError(T, "999", "bad type: dim '99999999999999999999'");
  T = "graph {\n  input %x: [2]\n}\n";
  expectError(T, "[2]", "expected a type such as f32[N,3], found '['");
}

TEST(ParserError, Strings) {
  std::string T = "graph \"abc\n{\n}\n";
  expectError(T, "\"abc", "unterminated string");
  T = "graph \"abc";
  expectError(T, "\"abc", "unterminated string");
  T = "graph \"a\\q\" {\n}\n";
  expectError(T, "\\q", "unknown escape sequence in string");
  T = "graph \"a\\x4\" {\n}\n";
  expectError(T, "\\x4", "bad escape in string: \\x needs two hex digits");
  T = "graph {\n  input %\"x: f32[2]\n}\n";
  expectError(T, "\"x:", "unterminated string");
}

TEST(ParserError, UnexpectedTokensAndEndOfFile) {
  expectError("", "", "expected 'graph', found end of file");
  expectError("grph {}", "grph", "expected 'graph', found 'grph'");
  std::string T = "graph {\n  input %x f32[2]\n}\n";
  expectError(T, "f32", "expected ':' and a type after %x, found 'f32'");
  T = "graph {\n  input %x: f32[2]\n";
  EXPECT_EQ(errorOf(T), "e.nng:3:1: error: expected a statement or '}', "
                        "found end of file");
  T = "graph {\n}\nextra";
  expectError(T, "extra",
              "expected end of file after the graph's closing "
              "'}', found 'extra'");
  T = withBody("  %y = Relu(%x\n");
  expectError(T, "}", "expected ',' or ')' in the operand list, found '}'");
  T = withBody("  %y = Relu %x\n");
  expectError(T, "%x\n", "expected '(' after the op name");
  T = withBody("  %y Relu(%x)\n");
  expectError(T, "Relu", "expected ',' or '=' after the node's results");
  T = withBody("  $y = Relu(%x)\n");
  expectError(T, "$", "unexpected character '$'");
  T = withBody("  % = Relu(%x)\n");
  expectError(T, "% =", "expected a value name after '%'");
  T = withBody("  %y = Relu(%x) name(\"a\") name(\"b\")\n");
  expectError(T, "name(\"b", "duplicate 'name' clause");
  T = withBody("  %y = LeakyRelu(%x) {alpha = 1e}\n");
  expectError(T, "1e}", "malformed number '1e'");
  T = withBody("  %y = LeakyRelu(%x) {alpha = -x}\n");
  expectError(T, "-x", "unexpected character '-'");
  T = "graph {\n  input %x: f32[2]\n  output\n}\n";
  expectError(T, "}", "expected a graph output (%name or '_'), found '}'");
  T = "graph {\n  input %x: f32[2]\n  output %x, _\n}\n";
  expectError(T, "_", "a graph output cannot be absent ('_')");
  T = "graph {\n  \x01\n}\n";
  expectError(T, "\x01", "unexpected character '\\x01'");
}

TEST(ParserError, InitializerValues) {
  std::string T = withBody("  init %w: f32[2,2] = [1, 2, 3]\n");
  expectError(T, "[1, 2, 3]",
              "initializer %w: f32[2,2] has 4 elements but 3 "
              "values are given");
  T = withBody("  init %w: u8[2] = [1, 256]\n");
  expectError(T, "256", "value '256' is out of range for u8");
  T = withBody("  init %w: u8[1] = [-1]\n");
  expectError(T, "-1", "value '-1' is out of range for u8");
  T = withBody("  init %w: i64[1] = [1.5]\n");
  expectError(T, "1.5", "expected an integer for i64 data, found '1.5'");
  T = withBody("  init %w: bool[1] = [7]\n");
  expectError(T, "7]", "expected true or false for bool data, found '7'");
  T = withBody("  init %w: f16[1] = [1e6]\n");
  expectError(T, "1e6", "value '1e6' is out of range for f16");
  T = withBody("  init %w: f32[N] = [1.0]\n");
  expectError(T, "%w",
              "initializer %w has inline values, so its type needs "
              "a static shape, got f32[N]");
  T = withBody("  init %w: f32[2] = 1.0\n");
  expectError(T, "1.0", "expected '[' with the values or 'elided(\"hash\")'");
  T = withBody("  init %w: f32[4611686018427387904,4] = []\n");
  expectError(T, "%w", "initializer %w: invalid shape");
}

TEST(ParserError, ElidedResolverErrors) {
  std::string T = withBody("  init %w: f32[2] = elided(\"h\")\n");
  ParseOptions O;
  O.ResolveElided = [](const std::string &, const TensorType &,
                       const std::string &) -> Tensor {
    fail(ErrorKind::IO, "no sidecar file");
  };
  try {
    parseGraph(T, "e.nng", O);
    FAIL();
  } catch (const Error &E) {
    EXPECT_EQ(E.kind(), ErrorKind::Parse);
    EXPECT_EQ(E.message(), loc(T, "%w") +
                               ": error: cannot resolve the data of elided "
                               "initializer %w: no sidecar file");
  }
  O.ResolveElided = [](const std::string &, const TensorType &,
                       const std::string &) {
    return Tensor::fromVector<float>({1, 2, 3}, Shape{3});
  };
  try {
    parseGraph(T, "e.nng", O);
    FAIL();
  } catch (const Error &E) {
    EXPECT_EQ(E.message(), loc(T, "%w") +
                               ": error: the data resolved for elided "
                               "initializer %w is f32[3] but it is declared "
                               "f32[2]");
  }
}

TEST(ParserError, MessageShowsTheLineWithACaret) {
  try {
    parseGraph(withBody("  %y = Reluu(%x)\n"), "e.nng");
    FAIL();
  } catch (const Error &E) {
    ASSERT_GE(E.context().size(), 2u);
    EXPECT_EQ(E.context()[0], "  %y = Reluu(%x)");
    EXPECT_EQ(E.context()[1], "       ^");
  }
}

TEST(ParserError, EveryTruncationFailsCleanly) {
  std::string_view Full = ValidFile;
  size_t Close = Full.rfind('}');
  for (size_t N = 0; N < Full.size(); ++N) {
    std::string_view Prefix = Full.substr(0, N);
    if (N > Close) {
      EXPECT_NO_THROW(parseGraph(Prefix)) << N;
      continue;
    }
    try {
      parseGraph(Prefix, "cut.nng");
      ADD_FAILURE() << "prefix of " << N << " bytes parsed";
    } catch (const Error &E) {
      EXPECT_EQ(E.kind(), ErrorKind::Parse) << E.what();
      EXPECT_EQ(E.message().rfind("cut.nng:", 0), 0u) << E.what();
    } catch (...) {
      ADD_FAILURE() << "prefix of " << N << " bytes: not an nng::Error";
    }
  }
}

TEST(ParserError, SingleByteMutationsNeverCrash) {
  const std::string Full = ValidFile;
  const char Subst[] = {'%', '"', '[', ']', '{',  '}',  '(',  ')',    ',',
                        ':', '-', '_', '#', '\n', '\\', '\0', '\xff', 'x',
                        '9', '.', '?', '*', '<',  '>',  '=',  ' '};
  for (size_t I = 0; I < Full.size(); ++I)
    for (char C : Subst) {
      std::string M = Full;
      M[I] = C;
      parseNeverCrashes(M);
    }
  for (size_t I = 0; I < Full.size(); ++I) { // Deletions.
    std::string M = Full;
    M.erase(I, 1);
    parseNeverCrashes(M);
  }
}

TEST(ParserError, RandomTokenSoupAndBytesNeverCrash) {
  static const char *Pieces[] = {
      "graph",  "{",        "}",      "input", "init",       "output",
      "%x",     "%y",       "%\"q\"", ": ",    "f32",        "i64",
      "bool",   "[",        "]",      "N",     "?",          "*",
      ",",      "=",        "(",      ")",     "Relu",       "Add",
      "Split",  "Constant", "Conv",   "_",     "{axis = 0}", "1",
      "-2",     "1.5",      "inf",    "-nan",  "\"s\"",      "tensor<f32[1]>",
      "elided", "name",     "scope",  "\n",    " ",          "#c\n",
      "1e",     "%",        "\"",     "\\"};
  std::mt19937 Rng(42);
  for (int Round = 0; Round < 3000; ++Round) {
    std::string S;
    if (Rng() % 2)
      S = "graph {\n  input %x: f32[2]\n";
    int Len = static_cast<int>(Rng() % 40);
    for (int I = 0; I < Len; ++I)
      S += Pieces[Rng() % std::size(Pieces)];
    if (Rng() % 2)
      S += "\n}\n";
    parseNeverCrashes(S);
  }
  for (int Round = 0; Round < 2000; ++Round) {
    std::string S(Rng() % 64, '\0');
    for (char &C : S)
      C = static_cast<char>(Rng() % 256);
    parseNeverCrashes(S);
  }
}
