//===- Lexer.h - The text format: tokens and source locations ---*- C++ -*-===//
//
// SourceBuffer holds the text being parsed and turns byte offsets into
// "FILE:LINE:COL" locations for error messages, which it throws as
// Error(Parse). Lexer splits the text into tokens (identifiers, %value
// names, strings, numbers, punctuation), skipping whitespace and '#'
// comments. Both never read outside the buffer, whatever it holds. Private
// to the ir library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nng::ir::text {

/// The text being parsed, with its name for messages.
class SourceBuffer {
public:
  SourceBuffer(std::string_view Text, std::string_view Name);

  std::string_view text() const { return Text; }
  std::string_view name() const { return Name; }
  /// 1-based line and column (in bytes) of byte offset Off.
  std::pair<unsigned, unsigned> lineCol(size_t Off) const;
  /// "FILE:LINE:COL".
  std::string location(size_t Off) const;
  /// Throws Error(Parse) with "FILE:LINE:COL: error: Msg", followed by the
  /// source line with a caret and then the Notes, one per context line.
  [[noreturn]] void error(size_t Off, const std::string &Msg,
                          const std::vector<std::string> &Notes = {}) const;

private:
  std::string_view Text;
  std::string Name;
  std::vector<size_t> LineStarts;
};

/// Token kinds.
enum class TokKind {
  Eof,
  Ident,     ///< [A-Za-z_][A-Za-z0-9_.]*: keywords, op names, dtypes, dims.
  ValueName, ///< %name or %"name"; Text holds the name.
  String,    ///< "..."; Text holds the decoded bytes.
  Integer,   ///< -?[0-9]+
  Float,     ///< -?[0-9]+ with '.' or exponent, or -inf / -nan.
  LBrace,
  RBrace,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Question,
  Star,
};

/// One token.
struct Token {
  TokKind Kind = TokKind::Eof;
  std::string_view Spelling; ///< The bytes in the source.
  size_t Offset = 0;         ///< Where it starts.
  std::string Text;          ///< Decoded name or string contents.

  bool is(TokKind K) const { return Kind == K; }
  bool isIdent(std::string_view S) const {
    return Kind == TokKind::Ident && Spelling == S;
  }
};

/// "identifier", "'{'", ...: how a kind is named in messages.
std::string_view tokKindName(TokKind K);
/// How a token is quoted in messages: "'foo'", "end of file".
std::string describeToken(const Token &T);

/// Splits a SourceBuffer into tokens.
class Lexer {
public:
  explicit Lexer(const SourceBuffer &Src) : Src(Src), Text(Src.text()) {}
  /// The next token; throws Error(Parse) on a malformed one (unterminated
  /// string, bad escape, stray character, malformed number).
  Token next();

private:
  void skipSpaceAndComments();
  Token lexString(size_t Start, size_t QuotePos, TokKind Kind);
  Token lexNumber(size_t Start);
  Token make(TokKind K, size_t Start, size_t End);
  char peekAt(size_t I) const { return I < Text.size() ? Text[I] : '\0'; }

  const SourceBuffer &Src;
  std::string_view Text;
  size_t Pos = 0;
};

} // namespace nng::ir::text
