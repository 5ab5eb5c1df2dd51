//===- Lexer.cpp - The text format: tokens and source locations ----------===//
//
// Source locations, error reporting with a caret under the offending
// column, and the tokenizer. Every read is bounds-checked: the lexer must
// survive arbitrary bytes (it is fuzzed).
//
//===----------------------------------------------------------------------===//

#include "Lexer.h"
#include "TextSyntax.h"

#include "nngraph/runtime/Error.h"

#include <algorithm>

namespace nng::ir::text {

//===----------------------------------------------------------------------===//
// SourceBuffer
//===----------------------------------------------------------------------===//

SourceBuffer::SourceBuffer(std::string_view Text, std::string_view Name)
    : Text(Text), Name(Name) {
  LineStarts.push_back(0);
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      LineStarts.push_back(I + 1);
}

std::pair<unsigned, unsigned> SourceBuffer::lineCol(size_t Off) const {
  Off = std::min(Off, Text.size());
  auto It = std::upper_bound(LineStarts.begin(), LineStarts.end(), Off);
  size_t Line = static_cast<size_t>(It - LineStarts.begin()); // >= 1
  size_t Col = Off - LineStarts[Line - 1] + 1;
  return {static_cast<unsigned>(Line), static_cast<unsigned>(Col)};
}

std::string SourceBuffer::location(size_t Off) const {
  auto [Line, Col] = lineCol(Off);
  return Name + ":" + std::to_string(Line) + ":" + std::to_string(Col);
}

void SourceBuffer::error(size_t Off, const std::string &Msg,
                         const std::vector<std::string> &Notes) const {
  Error E(ErrorKind::Parse, location(Off) + ": error: " + Msg);
  // The source line, made printable, with a caret under the column; long
  // lines show a window around the column.
  auto [Line, Col] = lineCol(Off);
  size_t Begin = LineStarts[Line - 1];
  size_t End = Text.find('\n', Begin);
  if (End == std::string_view::npos)
    End = Text.size();
  size_t Caret = Col - 1;
  constexpr size_t Window = 100;
  std::string Prefix, Suffix;
  if (Caret > Window) {
    Begin += Caret - Window / 2;
    Caret = Window / 2 + 3;
    Prefix = "...";
  }
  if (End - Begin > 2 * Window) {
    End = Begin + 2 * Window;
    Suffix = "...";
  }
  std::string Shown = Prefix;
  for (size_t I = Begin; I < End; ++I) {
    unsigned char C = static_cast<unsigned char>(Text[I]);
    Shown += (C == '\t' || C == '\r')  ? ' '
             : (C < 0x20 || C == 0x7f) ? '?'
                                       : Text[I];
  }
  Shown += Suffix;
  if (!Shown.empty() || Off < Text.size()) {
    E.addContext(Shown);
    E.addContext(std::string(Caret, ' ') + "^");
  }
  for (const std::string &N : Notes)
    E.addContext(N);
  throw E;
}

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

std::string_view tokKindName(TokKind K) {
  switch (K) {
  case TokKind::Eof:
    return "end of file";
  case TokKind::Ident:
    return "identifier";
  case TokKind::ValueName:
    return "value name";
  case TokKind::String:
    return "string";
  case TokKind::Integer:
    return "integer";
  case TokKind::Float:
    return "float";
  case TokKind::LBrace:
    return "'{'";
  case TokKind::RBrace:
    return "'}'";
  case TokKind::LParen:
    return "'('";
  case TokKind::RParen:
    return "')'";
  case TokKind::LBracket:
    return "'['";
  case TokKind::RBracket:
    return "']'";
  case TokKind::Less:
    return "'<'";
  case TokKind::Greater:
    return "'>'";
  case TokKind::Comma:
    return "','";
  case TokKind::Colon:
    return "':'";
  case TokKind::Equal:
    return "'='";
  case TokKind::Question:
    return "'?'";
  case TokKind::Star:
    return "'*'";
  }
  return "token";
}

std::string describeToken(const Token &T) {
  if (T.is(TokKind::Eof))
    return "end of file";
  std::string_view S = T.Spelling;
  std::string Out = "'";
  Out += S.size() > 40 ? std::string(S.substr(0, 37)) + "..." : std::string(S);
  Out += '\'';
  return Out;
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

/// A byte quoted for a message: 'x' or '\xHH'.
static std::string quoteChar(char C) {
  static const char Hex[] = "0123456789abcdef";
  unsigned char U = static_cast<unsigned char>(C);
  if (U >= 0x20 && U < 0x7f)
    return std::string("'") + C + "'";
  return std::string("'\\x") + Hex[U >> 4] + Hex[U & 15] + "'";
}

static bool isDigit(char C) { return C >= '0' && C <= '9'; }

static int hexValue(char C) {
  if (C >= '0' && C <= '9')
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  if (C >= 'A' && C <= 'F')
    return C - 'A' + 10;
  return -1;
}

Token Lexer::make(TokKind K, size_t Start, size_t End) {
  Token T;
  T.Kind = K;
  T.Offset = Start;
  T.Spelling = Text.substr(Start, End - Start);
  Pos = End;
  return T;
}

void Lexer::skipSpaceAndComments() {
  while (Pos < Text.size()) {
    char C = Text[Pos];
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
      ++Pos;
    } else if (C == '#') {
      while (Pos < Text.size() && Text[Pos] != '\n')
        ++Pos;
    } else {
      break;
    }
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  size_t Start = Pos;
  if (Pos >= Text.size())
    return make(TokKind::Eof, Text.size(), Text.size());
  char C = Text[Pos];
  switch (C) {
  case '{':
    return make(TokKind::LBrace, Start, Start + 1);
  case '}':
    return make(TokKind::RBrace, Start, Start + 1);
  case '(':
    return make(TokKind::LParen, Start, Start + 1);
  case ')':
    return make(TokKind::RParen, Start, Start + 1);
  case '[':
    return make(TokKind::LBracket, Start, Start + 1);
  case ']':
    return make(TokKind::RBracket, Start, Start + 1);
  case '<':
    return make(TokKind::Less, Start, Start + 1);
  case '>':
    return make(TokKind::Greater, Start, Start + 1);
  case ',':
    return make(TokKind::Comma, Start, Start + 1);
  case ':':
    return make(TokKind::Colon, Start, Start + 1);
  case '=':
    return make(TokKind::Equal, Start, Start + 1);
  case '?':
    return make(TokKind::Question, Start, Start + 1);
  case '*':
    return make(TokKind::Star, Start, Start + 1);
  case '"':
    return lexString(Start, Start, TokKind::String);
  case '%': {
    char N = peekAt(Pos + 1);
    if (N == '"')
      return lexString(Start, Start + 1, TokKind::ValueName);
    if (!isValueNameChar(N))
      Src.error(Start, "expected a value name after '%'");
    // A ':' belongs to the name only when another name character follows,
    // so "%x: f32[2]" reads the name "x".
    size_t End = Pos + 1;
    while (End < Text.size() && isValueNameChar(Text[End]) &&
           (Text[End] != ':' ||
            (End + 1 < Text.size() && isValueNameChar(Text[End + 1]))))
      ++End;
    if (End == Pos + 1) // A lone ':' after '%'.
      Src.error(Start, "expected a value name after '%'");
    Token T = make(TokKind::ValueName, Start, End);
    T.Text = std::string(Text.substr(Start + 1, End - Start - 1));
    return T;
  }
  default:
    break;
  }
  if (isDigit(C) || C == '-')
    return lexNumber(Start);
  if (isIdentStart(C)) {
    size_t End = Pos + 1;
    while (End < Text.size() && isIdentChar(Text[End]))
      ++End;
    return make(TokKind::Ident, Start, End);
  }
  Src.error(Start, "unexpected character " + quoteChar(C));
}

Token Lexer::lexNumber(size_t Start) {
  size_t I = Start;
  if (Text[I] == '-') {
    ++I;
    if (isIdentStart(peekAt(I))) { // -inf, -nan
      size_t End = I;
      while (End < Text.size() && isIdentChar(Text[End]))
        ++End;
      std::string_view W = Text.substr(I, End - I);
      if (W != "inf" && W != "nan")
        Src.error(Start, "unexpected character '-'");
      return make(TokKind::Float, Start, End);
    }
    if (!isDigit(peekAt(I)))
      Src.error(Start, "unexpected character '-'");
  }
  bool IsFloat = false;
  while (isDigit(peekAt(I)))
    ++I;
  if (peekAt(I) == '.') {
    IsFloat = true;
    ++I;
    while (isDigit(peekAt(I)))
      ++I;
  }
  if (peekAt(I) == 'e' || peekAt(I) == 'E') {
    IsFloat = true;
    ++I;
    if (peekAt(I) == '+' || peekAt(I) == '-')
      ++I;
    if (!isDigit(peekAt(I)))
      Src.error(Start, "malformed number '" +
                           std::string(Text.substr(Start, I - Start)) +
                           "': expected digits in the exponent");
    while (isDigit(peekAt(I)))
      ++I;
  }
  return make(IsFloat ? TokKind::Float : TokKind::Integer, Start, I);
}

Token Lexer::lexString(size_t Start, size_t QuotePos, TokKind Kind) {
  std::string Out;
  size_t I = QuotePos + 1;
  while (true) {
    if (I >= Text.size() || Text[I] == '\n')
      Src.error(QuotePos, "unterminated string");
    char C = Text[I];
    if (C == '"')
      break;
    if (C != '\\') {
      Out += C;
      ++I;
      continue;
    }
    char E = peekAt(I + 1);
    switch (E) {
    case '"':
    case '\\':
    case '\'':
      Out += E;
      break;
    case 'n':
      Out += '\n';
      break;
    case 't':
      Out += '\t';
      break;
    case 'r':
      Out += '\r';
      break;
    case '0':
      Out += '\0';
      break;
    case 'x': {
      int H = hexValue(peekAt(I + 2)), L = hexValue(peekAt(I + 3));
      if (H < 0 || L < 0)
        Src.error(I, "bad escape in string: \\x needs two hex digits");
      Out += static_cast<char>(H * 16 + L);
      I += 2;
      break;
    }
    default:
      if (I + 1 >= Text.size() || E == '\n')
        Src.error(QuotePos, "unterminated string");
      Src.error(I, "unknown escape sequence in string: '\\' followed by " +
                       quoteChar(E));
    }
    I += 2;
  }
  Token T = make(Kind, Start, I + 1);
  T.Text = std::move(Out);
  return T;
}

} // namespace nng::ir::text
