//===- Parser.cpp - The text format: syntax ------------------------------===//
//
// The syntax step of the parser (see ParseTree.h): a recursive-descent
// reader over the Lexer's tokens that checks everything one statement can
// tell on its own (known op, arity, attribute names and types, initializer
// value counts, each value defined once) and records source offsets for the
// build step. Also the public entry points parseGraph / parseGraphFile.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Parser.h"

#include "ParseTree.h"
#include "TextSyntax.h"

#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Strings.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace nng::ir {

namespace text {
namespace {

/// Case-insensitive Levenshtein distance.
size_t editDistance(std::string_view A, std::string_view B) {
  std::vector<size_t> Row(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Row[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    size_t Diag = Row[0];
    Row[0] = I;
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Up = Row[J];
      bool Same = std::tolower(static_cast<unsigned char>(A[I - 1])) ==
                  std::tolower(static_cast<unsigned char>(B[J - 1]));
      Row[J] = std::min({Row[J] + 1, Row[J - 1] + 1, Diag + (Same ? 0 : 1)});
      Diag = Up;
    }
  }
  return Row[B.size()];
}

/// "; did you mean 'Floor' or 'Flatten'?" for an unknown op name, or "".
std::string suggestOps(std::string_view Name) {
  std::vector<std::pair<size_t, std::string>> Close;
  size_t Limit = std::max<size_t>(2, Name.size() / 3);
  for (const OpSchema &S : allOpSchemas()) {
    std::string Q = S.qualifiedName();
    size_t D = std::min(editDistance(Name, Q), editDistance(Name, S.Name));
    if (D <= Limit)
      Close.push_back({D, Q});
  }
  if (Close.empty())
    return "";
  std::stable_sort(Close.begin(), Close.end(),
                   [](auto &A, auto &B) { return A.first < B.first; });
  if (Close.size() > 3)
    Close.resize(3);
  std::string S = "; did you mean ";
  for (size_t I = 0; I < Close.size(); ++I) {
    if (I)
      S += I + 1 == Close.size() ? " or " : ", ";
    S += "'" + Close[I].second + "'";
  }
  return S + "?";
}

/// "1 input", "2 to 3 inputs", "at least 1 input".
std::string countText(size_t Min, size_t Max, const char *Noun) {
  auto Plural = [&](size_t N) {
    return std::string(Noun) + (N == 1 ? "" : "s");
  };
  if (Max == SIZE_MAX)
    return "at least " + std::to_string(Min) + " " + Plural(Min);
  if (Min == Max)
    return std::to_string(Min) + " " + Plural(Min);
  return std::to_string(Min) + " to " + std::to_string(Max) + " " + Plural(Max);
}

std::string squote(std::string_view S) { return "'" + std::string(S) + "'"; }

/// The recursive-descent reader.
class SyntaxParser {
public:
  explicit SyntaxParser(const SourceBuffer &Src) : Src(Src), Lex(Src) {
    consume();
  }
  GraphDecl parseFile();

private:
  void consume() { Tok = Lex.next(); }
  [[noreturn]] void expected(const std::string &What) const {
    Src.error(Tok.Offset, "expected " + What + ", found " + describeToken(Tok));
  }
  void expect(TokKind K, const std::string &What) {
    if (!Tok.is(K))
      expected(What);
    consume();
  }
  bool consumeIf(TokKind K) {
    if (!Tok.is(K))
      return false;
    consume();
    return true;
  }
  bool atNumber() const { return isNumber(Tok); }

  void parseBlock(GraphDecl &G);
  void parseStatement(GraphDecl &G);
  ValueDef parseValueDef(bool TypeRequired);
  ValueRef parseValueRef(const char *What);
  TensorType parseType();
  void define(const ValueDef &D);
  void parseInit(GraphDecl &G);
  void parseNode(GraphDecl &G);
  void checkArity(const NodeDecl &N);
  void parseAttrDict(NodeDecl &N);
  Attribute parseAttrValue(const OpSchema &Op, const AttrSchema &A);
  Tensor parseData(const TensorType &T, size_t TypeLoc,
                        const std::string &What);
  template <typename E> E elementValue(const Token &T, DType DT) const;
  int64_t intValue(const Token &T) const;
  float floatValue(const Token &T) const {
    return elementValue<float>(T, DType::F32);
  }
  static bool isNumber(const Token &T) {
    return T.is(TokKind::Integer) || T.is(TokKind::Float) || T.isIdent("inf") ||
           T.isIdent("nan");
  }

  const SourceBuffer &Src;
  Lexer Lex;
  Token Tok;
  std::unordered_map<std::string, size_t> Defined;
  /// Regions deeper than this are refused (the parser recurses into them).
  static constexpr int MaxRegionDepth = 64;
  int RegionDepth = 0;
};

GraphDecl SyntaxParser::parseFile() {
  GraphDecl G;
  parseBlock(G);
  if (!Tok.is(TokKind::Eof))
    expected("end of file after the graph's closing '}'");
  return G;
}

/// "graph ["name"] { statements }": the file's graph or a region.
void SyntaxParser::parseBlock(GraphDecl &G) {
  if (!Tok.isIdent("graph"))
    expected("'graph'");
  G.Loc = Tok.Offset;
  consume();
  if (Tok.is(TokKind::String)) {
    G.Name = Tok.Text;
    consume();
  }
  expect(TokKind::LBrace, "'{' after the graph name");
  while (!consumeIf(TokKind::RBrace)) {
    if (Tok.is(TokKind::Eof))
      expected("a statement or '}'");
    parseStatement(G);
  }
}

void SyntaxParser::parseStatement(GraphDecl &G) {
  if (Tok.is(TokKind::ValueName))
    return parseNode(G);
  if (Tok.isIdent("input")) {
    consume();
    ValueDef D = parseValueDef(/*TypeRequired=*/true);
    define(D);
    G.Inputs.push_back(std::move(D));
    return;
  }
  if (Tok.isIdent("init"))
    return parseInit(G);
  if (Tok.isIdent("output")) {
    consume();
    do {
      if (Tok.isIdent("_"))
        Src.error(Tok.Offset, "a graph output cannot be absent ('_')");
      G.Outputs.push_back(parseValueRef("a graph output"));
    } while (consumeIf(TokKind::Comma));
    return;
  }
  if (Tok.is(TokKind::Ident)) // A node without results.
    return parseNode(G);
  expected("a statement ('input', 'init', 'output' or a node)");
}

ValueDef SyntaxParser::parseValueDef(bool TypeRequired) {
  if (!Tok.is(TokKind::ValueName))
    expected("a value name such as %x");
  ValueDef D;
  D.Name = Tok.Text;
  D.Loc = Tok.Offset;
  if (D.Name.empty())
    Src.error(D.Loc, "empty value name");
  consume();
  if (consumeIf(TokKind::Colon))
    D.Type = parseType();
  else if (TypeRequired)
    expected("':' and a type after " + formatValueName(D.Name));
  return D;
}

ValueRef SyntaxParser::parseValueRef(const char *What) {
  ValueRef R;
  R.Loc = Tok.Offset;
  if (Tok.isIdent("_")) {
    R.Absent = true;
  } else if (Tok.is(TokKind::ValueName)) {
    R.Name = Tok.Text;
  } else {
    expected(std::string(What) + " (%name or '_')");
  }
  consume();
  return R;
}

void SyntaxParser::define(const ValueDef &D) {
  auto [It, New] = Defined.emplace(D.Name, D.Loc);
  if (!New)
    Src.error(D.Loc, "redefinition of value " + formatValueName(D.Name),
              {"note: previous definition at " + Src.location(It->second)});
}

TensorType SyntaxParser::parseType() {
  if (!Tok.is(TokKind::Ident))
    expected("a type such as f32[N,3]");
  auto DT = parseDType(Tok.Spelling);
  if (!DT) {
    std::string Names;
    for (int I = 0; I < NumDTypes; ++I)
      Names += std::string(I ? ", " : "") +
               std::string(dtypeName(static_cast<DType>(I)));
    Src.error(Tok.Offset, "bad type: unknown element type " +
                              squote(Tok.Spelling) + " (expected one of " +
                              Names + ")");
  }
  consume();
  if (!Tok.is(TokKind::LBracket))
    Src.error(Tok.Offset, "bad type: expected '[' after the element type, "
                          "found " +
                              describeToken(Tok));
  consume();
  if (consumeIf(TokKind::Star)) {
    if (!Tok.is(TokKind::RBracket))
      Src.error(Tok.Offset, "bad type: expected ']' after '*', found " +
                                describeToken(Tok));
    consume();
    return TensorType(*DT);
  }
  std::vector<Dim> Dims;
  if (consumeIf(TokKind::RBracket))
    return TensorType(*DT, Dims);
  while (true) {
    if (Tok.is(TokKind::Integer)) {
      int64_t V = 0;
      auto Sp = Tok.Spelling;
      auto R = std::from_chars(Sp.data(), Sp.data() + Sp.size(), V);
      if (R.ec != std::errc() || R.ptr != Sp.data() + Sp.size() || V < 0)
        Src.error(Tok.Offset,
                  "bad type: dim " + squote(Sp) + " is not a valid extent");
      Dims.push_back(Dim(V));
    } else if (Tok.is(TokKind::Ident)) {
      Dims.push_back(Dim::symbol(std::string(Tok.Spelling)));
    } else if (Tok.is(TokKind::String)) {
      if (Tok.Text.empty())
        Src.error(Tok.Offset, "bad type: empty dim symbol");
      Dims.push_back(Dim::symbol(Tok.Text));
    } else if (Tok.is(TokKind::Question)) {
      Dims.push_back(Dim::unknown());
    } else {
      Src.error(Tok.Offset, "bad type: expected a dim (an extent, a symbol "
                            "or '?'), found " +
                                describeToken(Tok));
    }
    consume();
    if (consumeIf(TokKind::RBracket))
      return TensorType(*DT, Dims);
    if (!consumeIf(TokKind::Comma))
      Src.error(Tok.Offset, "bad type: expected ',' or ']' after a dim, "
                            "found " +
                                describeToken(Tok));
  }
}

void SyntaxParser::parseInit(GraphDecl &G) {
  consume(); // 'init'
  InitDecl I;
  I.Def = parseValueDef(/*TypeRequired=*/true);
  define(I.Def);
  expect(TokKind::Equal, "'=' and the initializer's value");
  if (Tok.isIdent("elided")) {
    consume();
    expect(TokKind::LParen, "'(' after 'elided'");
    if (!Tok.is(TokKind::String))
      expected("the content hash as a string");
    I.Hash = Tok.Text;
    consume();
    expect(TokKind::RParen, "')'");
  } else if (Tok.is(TokKind::LBracket)) {
    I.Data = parseData(*I.Def.Type, I.Def.Loc,
                       "initializer " + formatValueName(I.Def.Name));
  } else {
    expected("'[' with the values or 'elided(\"hash\")'");
  }
  G.Inits.push_back(std::move(I));
}

void SyntaxParser::parseNode(GraphDecl &G) {
  NodeDecl N;
  N.Loc = Tok.Offset;
  if (Tok.is(TokKind::ValueName)) {
    do {
      N.Results.push_back(parseValueDef(/*TypeRequired=*/false));
      define(N.Results.back());
    } while (consumeIf(TokKind::Comma));
    expect(TokKind::Equal, "',' or '=' after the node's results");
  }
  if (!Tok.is(TokKind::Ident))
    expected("an op name");
  N.OpLoc = Tok.Offset;
  N.Op = lookupOp(Tok.Spelling);
  if (!N.Op)
    Src.error(Tok.Offset,
              "unknown op " + squote(Tok.Spelling) + suggestOps(Tok.Spelling));
  consume();
  expect(TokKind::LParen, "'(' after the op name");
  if (!consumeIf(TokKind::RParen)) {
    do
      N.Operands.push_back(parseValueRef("an operand"));
    while (consumeIf(TokKind::Comma));
    if (!consumeIf(TokKind::RParen))
      expected("',' or ')' in the operand list");
  }
  checkArity(N);
  if (Tok.is(TokKind::LBrace))
    parseAttrDict(N);
  for (const AttrSchema &A : N.Op->Attrs)
    if (A.Required && !N.Attrs.hasByName(A.Name))
      Src.error(N.OpLoc, N.Op->qualifiedName() + " requires attribute " +
                             squote(A.Name) + " (" +
                             std::string(attrTypeName(A.Type)) + ")");
  bool HasName = false, HasScope = false;
  while (Tok.isIdent("name") || Tok.isIdent("scope")) {
    bool IsName = Tok.isIdent("name");
    if (IsName ? HasName : HasScope)
      Src.error(Tok.Offset, "duplicate " + squote(Tok.Spelling) + " clause");
    (IsName ? HasName : HasScope) = true;
    consume();
    expect(TokKind::LParen, "'('");
    if (!Tok.is(TokKind::String))
      expected(IsName ? "the node name as a string"
                      : "the scope path as a string");
    if (IsName) {
      N.Name = Tok.Text;
      consume();
    } else {
      N.Sc.Path = Tok.Text;
      consume();
      expect(TokKind::Comma, "',' and the module type");
      if (!Tok.is(TokKind::String))
        expected("the module type as a string");
      N.Sc.ModuleType = Tok.Text;
      consume();
    }
    expect(TokKind::RParen, "')'");
  }
  G.Nodes.push_back(std::move(N));
}

void SyntaxParser::checkArity(const NodeDecl &N) {
  const OpSchema &Op = *N.Op;
  std::string OpName = Op.qualifiedName();
  size_t In = N.Operands.size(), Out = N.Results.size();
  if (In < Op.minInputs() || In > Op.maxInputs())
    Src.error(N.OpLoc, OpName + " expects " +
                           countText(Op.minInputs(), Op.maxInputs(), "input") +
                           ", got " + std::to_string(In));
  if (Out < Op.minOutputs() || Out > Op.maxOutputs())
    Src.error(N.Results.empty() ? N.OpLoc : N.Loc,
              OpName + " expects " +
                  countText(Op.minOutputs(), Op.maxOutputs(), "result") +
                  ", got " + std::to_string(Out));
  for (size_t I = 0; I < In && I < Op.Inputs.size(); ++I) {
    const OperandSchema &S = Op.Inputs[I];
    if (N.Operands[I].Absent && !S.Optional && !S.Variadic)
      Src.error(N.Operands[I].Loc, "input " + std::to_string(I) + " (" +
                                       squote(S.Name) + ") of " + OpName +
                                       " is required; '_' marks only an absent "
                                       "optional input");
  }
}

void SyntaxParser::parseAttrDict(NodeDecl &N) {
  const OpSchema &Op = *N.Op;
  consume(); // '{'
  if (consumeIf(TokKind::RBrace))
    return;
  while (true) {
    if (!Tok.is(TokKind::Ident) && !Tok.is(TokKind::String))
      expected("an attribute name");
    std::string Name =
        Tok.is(TokKind::String) ? Tok.Text : std::string(Tok.Spelling);
    size_t NameLoc = Tok.Offset;
    const AttrSchema *A = Op.findAttr(Name);
    if (!A) {
      std::string Known;
      for (const AttrSchema &S : Op.Attrs)
        Known += (Known.empty() ? "" : ", ") + S.Name;
      Src.error(
          NameLoc,
          "unknown attribute " + squote(Name) + " of " + Op.qualifiedName(),
          {Known.empty()
               ? "note: " + Op.qualifiedName() + " has no attributes"
               : "note: " + Op.qualifiedName() + " has attributes: " + Known});
    }
    if (N.Attrs.hasByName(Name))
      Src.error(NameLoc, "attribute " + squote(Name) + " is given twice");
    consume();
    expect(TokKind::Equal, "'=' after the attribute name");
    if (A->Type == AttrType::Graph) {
      // A region: its own scope of names (it may shadow outer ones).
      if (RegionDepth >= MaxRegionDepth)
        Src.error(Tok.Offset, "regions nested more than " +
                                  std::to_string(MaxRegionDepth) +
                                  " levels deep");
      RegionDecl R{Name, Tok.Offset, std::make_shared<GraphDecl>()};
      auto Outer = std::move(Defined);
      Defined.clear();
      ++RegionDepth;
      parseBlock(*R.Body);
      --RegionDepth;
      Defined = std::move(Outer);
      N.Regions.push_back(std::move(R));
      N.Attrs.setByName(Name, Attribute(std::shared_ptr<Graph>()));
    } else {
      N.Attrs.setByName(Name, parseAttrValue(Op, *A));
    }
    if (consumeIf(TokKind::RBrace))
      return;
    if (!consumeIf(TokKind::Comma))
      expected("',' or '}' in the attribute list");
  }
}

int64_t SyntaxParser::intValue(const Token &T) const {
  int64_t V = 0;
  auto Sp = T.Spelling;
  auto R = std::from_chars(Sp.data(), Sp.data() + Sp.size(), V);
  if (R.ec != std::errc() || R.ptr != Sp.data() + Sp.size())
    Src.error(T.Offset, "integer " + squote(Sp) + " is out of range for int64");
  return V;
}

Attribute SyntaxParser::parseAttrValue(const OpSchema &Op,
                                       const AttrSchema &A) {
  size_t Loc = Tok.Offset;
  auto Mismatch = [&](const std::string &Got) {
    Src.error(Loc, "attribute " + squote(A.Name) + " of " + Op.qualifiedName() +
                       " expects " + std::string(attrTypeName(A.Type)) +
                       ", got " + Got);
  };
  if (Tok.is(TokKind::String)) {
    if (A.Type != AttrType::String)
      Mismatch("string");
    std::string S = Tok.Text;
    consume();
    return Attribute(std::move(S));
  }
  if (atNumber()) {
    bool IsInt = Tok.is(TokKind::Integer);
    if (A.Type == AttrType::Int) {
      if (!IsInt)
        Mismatch("float");
      int64_t V = intValue(Tok);
      consume();
      return Attribute(V);
    }
    if (A.Type == AttrType::Float) {
      float V = floatValue(Tok);
      consume();
      return Attribute(V);
    }
    Mismatch(IsInt ? "int" : "float");
  }
  if (Tok.isIdent("tensor")) {
    if (A.Type != AttrType::Tensor)
      Mismatch("tensor");
    consume();
    expect(TokKind::Less, "'<' and the tensor's type");
    size_t TypeLoc = Tok.Offset;
    TensorType T = parseType();
    expect(TokKind::Greater, "'>' after the tensor's type");
    if (!Tok.is(TokKind::LBracket))
      expected("'[' with the tensor's values");
    return Attribute(
        parseData(T, TypeLoc, "tensor attribute " + squote(A.Name)));
  }
  if (!Tok.is(TokKind::LBracket))
    expected("an attribute value");
  // A list: read the elements, then check them against the schema's type.
  consume();
  std::vector<Token> Items;
  bool AnyString = false, AnyNumber = false, AnyFloat = false;
  if (!Tok.is(TokKind::RBracket)) {
    while (true) {
      if (Tok.is(TokKind::LBracket))
        Src.error(Tok.Offset, "nested lists are not allowed in attributes");
      if (Tok.is(TokKind::String)) {
        AnyString = true;
      } else if (atNumber()) {
        AnyNumber = true;
        AnyFloat |= !Tok.is(TokKind::Integer);
      } else {
        expected("a list element (a number or a string)");
      }
      Items.push_back(Tok);
      consume();
      if (Tok.is(TokKind::RBracket))
        break;
      if (!consumeIf(TokKind::Comma))
        expected("',' or ']' in the list");
    }
  }
  consume(); // ']'
  std::string Got = AnyString && AnyNumber ? "a list of strings and numbers"
                    : AnyString            ? "strings"
                    : AnyFloat             ? "floats"
                                           : "ints";
  switch (A.Type) {
  case AttrType::Ints: {
    if (AnyString || AnyFloat)
      Mismatch(Got);
    std::vector<int64_t> L;
    for (const Token &T : Items)
      L.push_back(intValue(T));
    return Attribute(std::move(L));
  }
  case AttrType::Floats: {
    if (AnyString)
      Mismatch(Got);
    std::vector<float> L;
    for (const Token &T : Items)
      L.push_back(floatValue(T));
    return Attribute(std::move(L));
  }
  case AttrType::Strings: {
    if (AnyNumber)
      Mismatch(Got);
    std::vector<std::string> L;
    for (const Token &T : Items)
      L.push_back(T.Text);
    return Attribute(std::move(L));
  }
  default:
    break;
  }
  Mismatch(Items.empty() ? "an empty list" : Got);
  return Attribute();
}

template <typename E>
E SyntaxParser::elementValue(const Token &T, DType DT) const {
  std::string_view Sp = T.Spelling;
  const char *B = Sp.data(), *End = Sp.data() + Sp.size();
  std::string TypeName(dtypeName(DT));
  auto Expected = [&](const std::string &What) {
    Src.error(T.Offset, "expected " + What + ", found " + describeToken(T));
  };
  auto OutOfRange = [&]() {
    Src.error(T.Offset,
              "value " + squote(Sp) + " is out of range for " + TypeName);
  };
  E V{};
  if constexpr (std::is_same_v<E, StringId>) {
    if (!T.is(TokKind::String))
      Expected("a quoted string for str data");
    V = rt::internString(T.Text);
  } else if constexpr (std::is_same_v<E, bool>) {
    if (T.isIdent("true") || (T.is(TokKind::Integer) && Sp == "1"))
      V = true;
    else if (T.isIdent("false") || (T.is(TokKind::Integer) && Sp == "0"))
      V = false;
    else
      Expected("true or false for bool data");
  } else if constexpr (std::is_integral_v<E>) {
    if (!T.is(TokKind::Integer))
      Expected("an integer for " + TypeName + " data");
    auto R = std::from_chars(B, End, V);
    if (R.ec != std::errc() || R.ptr != End)
      OutOfRange();
  } else {
    if (!isNumber(T))
      Expected("a number for " + TypeName + " data");
    using Wide = std::conditional_t<std::is_same_v<E, double>, double, float>;
    Wide W = 0;
    auto R = std::from_chars(B, End, W);
    if (R.ec != std::errc() || R.ptr != End)
      OutOfRange();
    V = E(W);
    if (std::isfinite(W) && !std::isfinite(static_cast<Wide>(V)))
      OutOfRange();
  }
  return V;
}

Tensor SyntaxParser::parseData(const TensorType &T, size_t TypeLoc,
                                    const std::string &What) {
  auto S = T.staticShape();
  if (!S)
    Src.error(TypeLoc, What +
                           " has inline values, so its type needs a "
                           "static shape, got " +
                           formatType(T));
  // Values come from the text, so nothing is allocated from the declared
  // shape alone; a shape whose element count overflows is rejected here.
  try {
    S->validate();
  } catch (const Error &E) {
    Src.error(TypeLoc, What + ": " + E.message());
  }
  int64_t Numel = S->numel();
  size_t ListLoc = Tok.Offset;
  expect(TokKind::LBracket, "'['");
  std::string Bytes;
  int64_t Count = 0;
  visitDTypeOrString(T.dtype(), [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    if (Tok.is(TokKind::RBracket))
      return;
    while (true) {
      E V = elementValue<E>(Tok, T.dtype());
      consume();
      Bytes.append(reinterpret_cast<const char *>(&V), sizeof(E));
      ++Count;
      if (Tok.is(TokKind::RBracket))
        return;
      if (!consumeIf(TokKind::Comma))
        expected("',' or ']' in the value list");
    }
  });
  consume(); // ']'
  if (Count != Numel)
    Src.error(ListLoc, What + ": " + formatType(T) + " has " +
                           std::to_string(Numel) + " elements but " +
                           std::to_string(Count) + " values are given");
  Tensor Data = Tensor::empty(*S, T.dtype());
  if (!Bytes.empty())
    std::memcpy(Data.rawData(), Bytes.data(), Bytes.size());
  return Data;
}

} // namespace

GraphDecl parseGraphDecl(const SourceBuffer &Src) {
  return SyntaxParser(Src).parseFile();
}

} // namespace text

std::unique_ptr<Graph> parseGraph(std::string_view Text,
                                  std::string_view BufferName,
                                  const ParseOptions &O) {
  text::SourceBuffer Src(Text, BufferName);
  text::GraphDecl D = text::parseGraphDecl(Src);
  return text::buildGraph(Src, D, O);
}

std::unique_ptr<Graph> parseGraphFile(const std::string &Path,
                                      const ParseOptions &O) {
  std::error_code EC;
  if (std::filesystem::is_directory(Path, EC))
    fail(ErrorKind::IO, "cannot read '", Path, "': it is a directory");
  std::ifstream IS(Path, std::ios::binary);
  if (!IS)
    fail(ErrorKind::IO, "cannot open '", Path, "': ", std::strerror(errno));
  std::string Text((std::istreambuf_iterator<char>(IS)),
                   std::istreambuf_iterator<char>());
  if (IS.bad())
    fail(ErrorKind::IO, "error reading '", Path, "'");
  return parseGraph(Text, Path, O);
}

} // namespace nng::ir
