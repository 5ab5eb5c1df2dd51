//===- Json.cpp - A tiny strict JSON reader for file headers ----*- C++ -*-===//
//
// A recursive-descent parser over a string_view with an explicit depth
// limit. Every read goes through peek()/next(), which check the position
// against the end, so truncated or hostile input ends in an Error naming the
// byte offset. Strings are decoded (escapes, surrogate pairs) and checked to
// be valid UTF-8.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include "nngraph/runtime/Error.h"

#include <cctype>
#include <cstdio>
#include <unordered_set>

namespace nng::weights::json {

namespace {

/// Deeper nesting than any real header; bounds the recursion.
constexpr int MaxDepth = 64;

class Parser {
public:
  Parser(std::string_view Text, const std::string &What)
      : Text(Text), What(What) {}

  Value parseDocument() {
    skipSpace();
    Value V = parseValue(0);
    skipSpace();
    if (Pos != Text.size())
      error("unexpected '", printable(Text[Pos]), "' after the JSON value");
    return V;
  }

private:
  std::string_view Text;
  const std::string &What;
  size_t Pos = 0;

  template <typename... Args> [[noreturn]] void error(const Args &...A) {
    fail(ErrorKind::Parse, What, " is not valid JSON at byte ", Pos, ": ", A...,
         "; the file is corrupt or not in the expected format");
  }

  static std::string printable(char C) {
    unsigned char U = static_cast<unsigned char>(C);
    if (U >= 0x20 && U < 0x7f)
      return std::string(1, C);
    char Buf[8];
    std::snprintf(Buf, sizeof(Buf), "\\x%02x", U);
    return Buf;
  }

  bool atEnd() const { return Pos >= Text.size(); }
  char peek() {
    if (atEnd())
      error("unexpected end of input");
    return Text[Pos];
  }
  char next() {
    char C = peek();
    ++Pos;
    return C;
  }
  void expect(char C) {
    char Got = next();
    if (Got != C) {
      --Pos;
      error("expected '", std::string(1, C), "', found '", printable(Got), "'");
    }
  }
  void skipSpace() {
    while (!atEnd() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                        Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }
  void expectWord(std::string_view W) {
    if (Text.substr(Pos, W.size()) != W)
      error("invalid literal (expected '", W, "')");
    Pos += W.size();
  }

  Value parseValue(int Depth) {
    if (Depth > MaxDepth)
      error("nesting deeper than ", MaxDepth, " levels");
    Value V;
    char C = peek();
    switch (C) {
    case '{':
      return parseObject(Depth);
    case '[':
      return parseArray(Depth);
    case '"':
      V.K = Value::Kind::String;
      V.Text = parseString();
      return V;
    case 't':
      expectWord("true");
      V.K = Value::Kind::Bool;
      V.B = true;
      return V;
    case 'f':
      expectWord("false");
      V.K = Value::Kind::Bool;
      return V;
    case 'n':
      expectWord("null");
      return V;
    default:
      if (C == '-' || (C >= '0' && C <= '9'))
        return parseNumber();
      error("unexpected '", printable(C), "'");
    }
  }

  Value parseObject(int Depth) {
    Value V;
    V.K = Value::Kind::Object;
    expect('{');
    skipSpace();
    if (peek() == '}') {
      ++Pos;
      return V;
    }
    std::unordered_set<std::string> Seen;
    while (true) {
      skipSpace();
      if (peek() != '"')
        error("expected a string key");
      size_t KeyPos = Pos;
      std::string Key = parseString();
      if (!Seen.insert(Key).second) {
        Pos = KeyPos;
        error("duplicate key \"", Key, "\"");
      }
      skipSpace();
      expect(':');
      skipSpace();
      Value Child = parseValue(Depth + 1);
      V.Members.push_back(Member{std::move(Key), std::move(Child)});
      skipSpace();
      char C = next();
      if (C == '}')
        return V;
      if (C != ',') {
        --Pos;
        error("expected ',' or '}' in an object, found '", printable(C), "'");
      }
    }
  }

  Value parseArray(int Depth) {
    Value V;
    V.K = Value::Kind::Array;
    expect('[');
    skipSpace();
    if (peek() == ']') {
      ++Pos;
      return V;
    }
    while (true) {
      skipSpace();
      V.Elements.push_back(parseValue(Depth + 1));
      skipSpace();
      char C = next();
      if (C == ']')
        return V;
      if (C != ',') {
        --Pos;
        error("expected ',' or ']' in an array, found '", printable(C), "'");
      }
    }
  }

  Value parseNumber() {
    size_t Start = Pos;
    if (peek() == '-')
      ++Pos;
    if (atEnd() || !std::isdigit(static_cast<unsigned char>(Text[Pos])))
      error("a number needs digits");
    if (Text[Pos] == '0') {
      ++Pos;
    } else {
      while (!atEnd() && std::isdigit(static_cast<unsigned char>(Text[Pos])))
        ++Pos;
    }
    if (!atEnd() && Text[Pos] == '.') {
      ++Pos;
      if (atEnd() || !std::isdigit(static_cast<unsigned char>(Text[Pos])))
        error("a fraction needs digits");
      while (!atEnd() && std::isdigit(static_cast<unsigned char>(Text[Pos])))
        ++Pos;
    }
    if (!atEnd() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
      ++Pos;
      if (!atEnd() && (Text[Pos] == '+' || Text[Pos] == '-'))
        ++Pos;
      if (atEnd() || !std::isdigit(static_cast<unsigned char>(Text[Pos])))
        error("an exponent needs digits");
      while (!atEnd() && std::isdigit(static_cast<unsigned char>(Text[Pos])))
        ++Pos;
    }
    Value V;
    V.K = Value::Kind::Number;
    V.Text = std::string(Text.substr(Start, Pos - Start));
    return V;
  }

  unsigned hex4() {
    unsigned R = 0;
    for (int I = 0; I < 4; ++I) {
      char C = next();
      R <<= 4;
      if (C >= '0' && C <= '9')
        R |= C - '0';
      else if (C >= 'a' && C <= 'f')
        R |= C - 'a' + 10;
      else if (C >= 'A' && C <= 'F')
        R |= C - 'A' + 10;
      else
        error("invalid \\u escape");
    }
    return R;
  }

  static void appendUtf8(std::string &Out, unsigned CP) {
    if (CP < 0x80) {
      Out += static_cast<char>(CP);
    } else if (CP < 0x800) {
      Out += static_cast<char>(0xC0 | (CP >> 6));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    } else if (CP < 0x10000) {
      Out += static_cast<char>(0xE0 | (CP >> 12));
      Out += static_cast<char>(0x80 | ((CP >> 6) & 0x3F));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    } else {
      Out += static_cast<char>(0xF0 | (CP >> 18));
      Out += static_cast<char>(0x80 | ((CP >> 12) & 0x3F));
      Out += static_cast<char>(0x80 | ((CP >> 6) & 0x3F));
      Out += static_cast<char>(0x80 | (CP & 0x3F));
    }
  }

  std::string parseString() {
    size_t Start = Pos;
    expect('"');
    std::string Out;
    while (true) {
      char C = next();
      if (C == '"')
        break;
      if (static_cast<unsigned char>(C) < 0x20) {
        --Pos;
        error("unescaped control character in a string");
      }
      if (C != '\\') {
        Out += C;
        continue;
      }
      char E = next();
      switch (E) {
      case '"':
      case '\\':
      case '/':
        Out += E;
        break;
      case 'b':
        Out += '\b';
        break;
      case 'f':
        Out += '\f';
        break;
      case 'n':
        Out += '\n';
        break;
      case 'r':
        Out += '\r';
        break;
      case 't':
        Out += '\t';
        break;
      case 'u': {
        unsigned CP = hex4();
        if (CP >= 0xDC00 && CP <= 0xDFFF)
          error("unpaired low surrogate in a \\u escape");
        if (CP >= 0xD800 && CP <= 0xDBFF) {
          if (next() != '\\' || next() != 'u')
            error("unpaired high surrogate in a \\u escape");
          unsigned Lo = hex4();
          if (Lo < 0xDC00 || Lo > 0xDFFF)
            error("invalid surrogate pair in a \\u escape");
          CP = 0x10000 + ((CP - 0xD800) << 10) + (Lo - 0xDC00);
        }
        appendUtf8(Out, CP);
        break;
      }
      default:
        --Pos;
        error("invalid escape '\\", printable(E), "'");
      }
    }
    if (!isValidUtf8(Out)) {
      Pos = Start;
      error("a string is not valid UTF-8");
    }
    return Out;
  }
};

} // namespace

const Value *Value::find(std::string_view Key) const {
  for (const auto &[Name, V] : Members)
    if (Name == Key)
      return &V;
  return nullptr;
}

std::optional<uint64_t> Value::toUInt64() const {
  if (K != Kind::Number || Text.empty() || Text[0] == '-')
    return std::nullopt;
  uint64_t R = 0;
  for (char C : Text) {
    if (C < '0' || C > '9')
      return std::nullopt;
    unsigned D = C - '0';
    if (R > (UINT64_MAX - D) / 10)
      return std::nullopt;
    R = R * 10 + D;
  }
  return R;
}

std::optional<int64_t> Value::toInt64() const {
  if (K != Kind::Number || Text.empty())
    return std::nullopt;
  bool Neg = Text[0] == '-';
  Value Abs = *this;
  if (Neg)
    Abs.Text.erase(0, 1);
  std::optional<uint64_t> U = Abs.toUInt64();
  if (!U)
    return std::nullopt;
  if (Neg) {
    if (*U > static_cast<uint64_t>(INT64_MAX) + 1)
      return std::nullopt;
    return static_cast<int64_t>(0 - *U);
  }
  if (*U > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return static_cast<int64_t>(*U);
}

const char *kindName(Value::Kind K) {
  switch (K) {
  case Value::Kind::Null:
    return "null";
  case Value::Kind::Bool:
    return "boolean";
  case Value::Kind::Number:
    return "number";
  case Value::Kind::String:
    return "string";
  case Value::Kind::Array:
    return "array";
  case Value::Kind::Object:
    return "object";
  }
  return "?";
}

Value parse(std::string_view Text, const std::string &What) {
  return Parser(Text, What).parseDocument();
}

bool isValidUtf8(std::string_view S) {
  size_t I = 0, N = S.size();
  while (I < N) {
    unsigned char C = static_cast<unsigned char>(S[I]);
    if (C < 0x80) {
      ++I;
      continue;
    }
    size_t Len;
    unsigned CP;
    if (C >= 0xC2 && C <= 0xDF) {
      Len = 2;
      CP = C & 0x1F;
    } else if (C >= 0xE0 && C <= 0xEF) {
      Len = 3;
      CP = C & 0x0F;
    } else if (C >= 0xF0 && C <= 0xF4) {
      Len = 4;
      CP = C & 0x07;
    } else {
      return false;
    }
    if (N - I < Len)
      return false;
    for (size_t J = 1; J < Len; ++J) {
      unsigned char T = static_cast<unsigned char>(S[I + J]);
      if ((T & 0xC0) != 0x80)
        return false;
      CP = (CP << 6) | (T & 0x3F);
    }
    if ((Len == 3 && CP < 0x800) || (Len == 4 && CP < 0x10000) ||
        CP > 0x10FFFF || (CP >= 0xD800 && CP <= 0xDFFF))
      return false;
    I += Len;
  }
  return true;
}

std::string quote(std::string_view S) {
  std::string Out = "\"";
  for (char C : S) {
    unsigned char U = static_cast<unsigned char>(C);
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += C;
    } else if (U < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof(Buf), "\\u%04x", U);
      Out += Buf;
    } else {
      Out += C;
    }
  }
  Out += '"';
  return Out;
}

} // namespace nng::weights::json
