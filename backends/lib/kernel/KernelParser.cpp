//===- KernelParser.cpp - Reading the kernel IR's text form ---------------===//
//
// parseKernel reads what printKernel writes (KernelIR.h) back into a
// kernel: the header (name, buffer parameters, domain), then the row body
// with its reductions and loops. Op mnemonics, operand counts and result
// types come from the op table (KernelOps.def); constants written inline as
// operands become Const instructions where they are used. Errors carry
// "NAME:LINE:COL", the source line and a caret; the finished kernel goes
// through verifyKernel, whose complaint about one instruction is reported
// at that instruction. Every read is bounds-checked: any text gives a
// kernel or an Error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/KernelIR.h"

#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace nng::backends::kernel {

namespace {

/// Token kinds of the text form.
enum class Tok : uint8_t {
  Eof,
  Word,   ///< Keywords, mnemonics, types, dims and numbers: [A-Za-z0-9_.+-]+
  Value,  ///< %name (Text holds the name).
  Symbol, ///< @name (Text holds the name).
  Punct,  ///< One of ( ) [ ] { } , : =
};

struct Token {
  Tok Kind = Tok::Eof;
  std::string_view Text;
  size_t Offset = 0;
};

bool isNameChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_' || C == '.';
}

bool isWordChar(char C) { return isNameChar(C) || C == '+' || C == '-'; }

class Parser {
public:
  Parser(std::string_view Text, std::string_view BufferName)
      : Text(Text), BufferName(BufferName) {
    Tk = lex();
  }

  Kernel run();

private:
  // --- Errors ----------------------------------------------------------------
  [[noreturn]] void errorAt(size_t Off, const std::string &Msg,
                            ErrorKind Kind = ErrorKind::Parse) const {
    Off = std::min(Off, Text.size());
    size_t LineStart = 0;
    if (Off > 0)
      if (size_t NL = Text.rfind('\n', Off - 1); NL != std::string_view::npos)
        LineStart = NL + 1;
    size_t Line = 1 + std::count(Text.begin(), Text.begin() + LineStart, '\n');
    size_t Col = Off - LineStart + 1;
    Error E(Kind, std::string(BufferName) + ":" + std::to_string(Line) + ":" +
                      std::to_string(Col) + ": error: " + Msg);
    size_t LineEnd = Text.find('\n', LineStart);
    if (LineEnd == std::string_view::npos)
      LineEnd = Text.size();
    std::string Shown;
    for (size_t I = LineStart; I < LineEnd && I < LineStart + 200; ++I) {
      unsigned char C = static_cast<unsigned char>(Text[I]);
      Shown += (C < 0x20 || C == 0x7f) ? ' ' : Text[I];
    }
    if (!Shown.empty()) {
      E.addContext(Shown);
      E.addContext(std::string(std::min<size_t>(Col - 1, 200), ' ') + "^");
    }
    throw E;
  }
  [[noreturn]] void error(const std::string &Msg) const {
    errorAt(Tk.Offset, Msg + ", got " + describe(Tk));
  }
  static std::string describe(const Token &T) {
    if (T.Kind == Tok::Eof)
      return "end of input";
    std::string S(T.Text.substr(0, 40));
    if (T.Kind == Tok::Value)
      S = "%" + S;
    else if (T.Kind == Tok::Symbol)
      S = "@" + S;
    return "'" + S + "'";
  }

  // --- Tokens ----------------------------------------------------------------
  Token lex() {
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
    Token T;
    T.Offset = Pos;
    if (Pos >= Text.size())
      return T;
    char C = Text[Pos];
    if (C == '%' || C == '@') {
      size_t End = Pos + 1;
      while (End < Text.size() && isNameChar(Text[End]))
        ++End;
      if (End == Pos + 1)
        errorAt(Pos, std::string("expected a name after '") + C + "'");
      T.Kind = C == '%' ? Tok::Value : Tok::Symbol;
      T.Text = Text.substr(Pos + 1, End - Pos - 1);
      Pos = End;
      return T;
    }
    if (std::string_view("()[]{},:=").find(C) != std::string_view::npos) {
      T.Kind = Tok::Punct;
      T.Text = Text.substr(Pos++, 1);
      return T;
    }
    if (isWordChar(C)) {
      size_t End = Pos;
      while (End < Text.size() && isWordChar(Text[End]))
        ++End;
      T.Kind = Tok::Word;
      T.Text = Text.substr(Pos, End - Pos);
      Pos = End;
      return T;
    }
    unsigned char U = static_cast<unsigned char>(C);
    errorAt(Pos, U >= 0x20 && U < 0x7f
                     ? std::string("unexpected character '") + C + "'"
                     : "unexpected byte " + std::to_string(U));
  }
  Token take() {
    Token T = Tk;
    Tk = lex();
    return T;
  }
  bool isPunct(char C) const {
    return Tk.Kind == Tok::Punct && Tk.Text[0] == C;
  }
  bool isWord(std::string_view W) const {
    return Tk.Kind == Tok::Word && Tk.Text == W;
  }
  void expectPunct(char C) {
    if (!isPunct(C))
      error(std::string("expected '") + C + "'");
    take();
  }
  void expectWord(std::string_view W) {
    if (!isWord(W))
      error("expected '" + std::string(W) + "'");
    take();
  }
  std::string_view expectValueName(const char *What) {
    if (Tk.Kind != Tok::Value)
      error(std::string("expected ") + What);
    return take().Text;
  }

  /// A domain dim "dN"; with Rank >= 0 also checks N < Rank.
  int parseDim(int Rank) {
    if (Tk.Kind != Tok::Word || Tk.Text.size() < 2 || Tk.Text[0] != 'd')
      error("expected a domain dim (d0, d1, ...)");
    int D = 0;
    std::string_view Digits = Tk.Text.substr(1);
    auto [End, Ec] =
        std::from_chars(Digits.data(), Digits.data() + Digits.size(), D);
    if (Ec != std::errc() || End != Digits.data() + Digits.size() ||
        Digits[0] == '+' || Digits[0] == '-')
      error("expected a domain dim (d0, d1, ...)");
    if (Rank >= 0 && D >= Rank)
      error("expected a dim of the domain [d0 .. d" + std::to_string(Rank - 1) +
            "]");
    take();
    return D;
  }

  // --- Kernel structure --------------------------------------------------
  void parseParam();
  void parseBlock(int Blk, int Owner);
  void parseStatement(int Blk, int Owner);
  void parseDefinition(int Blk);
  int parseOperand(int Blk);
  int parseBuffer(bool Output);

  int append(int Blk, Inst I, size_t Off) {
    K.Insts.push_back(std::move(I));
    Offsets.push_back(Off);
    int Idx = static_cast<int>(K.Insts.size()) - 1;
    K.Blocks[Blk].Insts.push_back(Idx);
    return Idx;
  }
  int openBlock() {
    K.Blocks.push_back(Block{{}, true});
    return static_cast<int>(K.Blocks.size()) - 1;
  }
  /// Makes %Name refer to instruction Idx (named unless it is a number).
  void define(std::string_view Name, int Idx, size_t Off, int Blk) {
    std::string N(Name);
    if (!Seen.emplace(N, Idx).second)
      errorAt(Off, "value %" + N + " is defined twice");
    Visible[N] = Idx;
    if (Blk != 0)
      Nested.push_back(N);
    if (!std::all_of(N.begin(), N.end(),
                     [](char C) { return C >= '0' && C <= '9'; }))
      K.Insts[Idx].Name = N;
  }
  void closeScope() {
    for (const std::string &N : Nested)
      Visible.erase(N);
    Nested.clear();
  }
  /// The mnemonics that may follow "%name =", from the op table.
  static std::string definingOps() {
    std::string S;
    for (int O = 0; isKnownOp(static_cast<Op>(O)); ++O) {
      Op Kind = static_cast<Op>(O);
      if (Kind == Op::Const || opTypeRule(Kind) == TypeRule::Structure)
        continue;
      S += std::string(S.empty() ? "" : ", ") + std::string(opName(Kind));
    }
    return S + ", reduce.add, reduce.max, reduce.min";
  }
  /// Checks the types of expression instruction Idx by the op table.
  void checkTypes(int Idx) {
    if (std::string E = instTypeError(K, K.Insts[Idx]); !E.empty())
      errorAt(Offsets[Idx],
              std::string(opName(K.Insts[Idx].Opcode)) + ": " + E);
  }

  std::string_view Text;
  std::string_view BufferName;
  size_t Pos = 0;
  Token Tk;
  Kernel K;
  std::vector<size_t> Offsets; ///< Per instruction: where it is written.
  std::unordered_map<std::string, int> Visible, Seen;
  std::vector<std::string> Nested; ///< Names of the open nested block.
  std::vector<size_t> BufferOffsets;
};

Kernel Parser::run() {
  size_t Start = Tk.Offset;
  expectWord("kernel");
  if (Tk.Kind != Tok::Symbol)
    error("expected the kernel's name (@name)");
  K.Name = std::string(take().Text);
  expectPunct('(');
  if (!isPunct(')')) {
    parseParam();
    while (isPunct(',')) {
      take();
      parseParam();
    }
  }
  expectPunct(')');
  expectWord("domain");
  expectPunct('[');
  K.Rank = 0;
  if (!isPunct(']')) {
    while (true) {
      size_t Off = Tk.Offset;
      if (parseDim(-1) != K.Rank)
        errorAt(Off, "expected d" + std::to_string(K.Rank) +
                         ": the domain lists d0, d1, ... in order");
      ++K.Rank;
      if (!isPunct(','))
        break;
      take();
    }
  }
  expectPunct(']');
  if (K.Rank < 1)
    errorAt(Tk.Offset, "the domain needs at least one dimension");
  for (size_t B = 0; B < K.Buffers.size(); ++B)
    for (int D : K.Buffers[B].Dims)
      if (D >= K.Rank)
        errorAt(BufferOffsets[B], "buffer %" + K.Buffers[B].Name +
                                      " follows d" + std::to_string(D) +
                                      ", outside the domain of rank " +
                                      std::to_string(K.Rank));
  K.Blocks.push_back(Block{});
  expectPunct('{');
  parseBlock(0, -1);
  expectPunct('}');
  if (Tk.Kind != Tok::Eof)
    error("expected the end of the input after the kernel");
  int Failed = -1;
  try {
    verifyKernel(K, &Failed);
  } catch (const Error &E) {
    errorAt(Failed >= 0 ? Offsets[Failed] : Start, E.message(),
            ErrorKind::Verify);
  }
  return std::move(K);
}

void Parser::parseParam() {
  BufferParam P;
  size_t Off = Tk.Offset;
  P.Name = std::string(expectValueName("a buffer parameter (%name)"));
  if (K.bufferNamed(P.Name) >= 0)
    errorAt(Off, "buffer %" + P.Name + " is declared twice");
  expectPunct(':');
  std::optional<DType> T;
  if (Tk.Kind == Tok::Word)
    T = parseDType(Tk.Text);
  if (!T || (*T != DType::F32 && *T != DType::F16 && *T != DType::BF16 &&
             *T != DType::I32))
    error("expected a buffer element type (f32, f16, bf16 or i32)");
  P.Type = *T;
  take();
  expectPunct('[');
  if (!isPunct(']')) {
    while (true) {
      P.Dims.push_back(parseDim(-1));
      if (!isPunct(','))
        break;
      take();
    }
  }
  expectPunct(']');
  if (isWord("in") || isWord("out"))
    P.IsOutput = take().Text == "out";
  else
    error("expected 'in' or 'out'");
  if (isWord("strided")) {
    take();
    P.L = Layout::Strided;
  }
  K.Buffers.push_back(std::move(P));
  BufferOffsets.push_back(Off);
}

void Parser::parseBlock(int Blk, int Owner) {
  while (!isPunct('}') && Tk.Kind != Tok::Eof && !isWord("yield"))
    parseStatement(Blk, Owner);
}

int Parser::parseBuffer(bool Output) {
  size_t Off = Tk.Offset;
  std::string_view Name = expectValueName("a buffer (%name)");
  int B = K.bufferNamed(Name);
  if (B < 0)
    errorAt(Off, "unknown buffer %" + std::string(Name));
  if (K.Buffers[B].IsOutput != Output)
    errorAt(Off, "%" + std::string(Name) + " is " +
                     (Output ? "an input; stores take an output buffer"
                             : "an output; loads take an input buffer"));
  return B;
}

void Parser::parseStatement(int Blk, int Owner) {
  size_t Off = Tk.Offset;
  if (isWord("store")) {
    take();
    Inst I;
    I.Opcode = Op::Store;
    I.Buffer = parseBuffer(/*Output=*/true);
    expectPunct(',');
    I.Operands[0] = parseOperand(Blk);
    append(Blk, I, Off);
    return;
  }
  if (isWord("loop")) {
    take();
    if (Blk != 0)
      errorAt(Off, "loops and reductions do not nest");
    if (parseDim(K.Rank) != K.inner())
      errorAt(Off,
              "a loop runs over the inner dim d" + std::to_string(K.inner()));
    Inst I;
    I.Opcode = Op::Loop;
    int Body = openBlock();
    I.Body = Body;
    append(Blk, I, Off);
    expectPunct('{');
    parseBlock(Body, -1);
    if (isWord("yield"))
      error("expected a statement (a loop yields nothing)");
    expectPunct('}');
    closeScope();
    return;
  }
  if (Tk.Kind == Tok::Value) {
    parseDefinition(Blk);
    return;
  }
  error(Owner >= 0 ? "expected a statement or 'yield'"
                   : "expected a statement (%name = ..., loop, store) or '}'");
}

void Parser::parseDefinition(int Blk) {
  Token NameTok = take();
  expectPunct('=');
  size_t Off = Tk.Offset;
  if (Tk.Kind != Tok::Word)
    error("expected an op");
  std::string_view Mnemonic = Tk.Text;
  Inst I;
  if (Mnemonic.substr(0, 7) == "reduce.") {
    if (!reduceKindNamed(Mnemonic.substr(7), I.RK))
      error("expected a reduction (reduce.add, reduce.max or reduce.min)");
    take();
    if (Blk != 0)
      errorAt(Off, "loops and reductions do not nest");
    if (parseDim(K.Rank) != K.inner())
      errorAt(Off, "a reduction runs over the inner dim d" +
                       std::to_string(K.inner()));
    I.Opcode = Op::Reduce;
    int Body = openBlock();
    I.Body = Body;
    int Idx = append(Blk, I, Off);
    expectPunct('{');
    parseBlock(Body, Idx);
    expectWord("yield");
    int Y = parseOperand(Body);
    expectPunct('}');
    closeScope();
    K.Insts[Idx].Operands[0] = Y;
    K.Insts[Idx].Type = K.Insts[Y].Type;
    define(NameTok.Text, Idx, NameTok.Offset, Blk);
    return;
  }
  if (!opNamed(Mnemonic, I.Opcode) || I.Opcode == Op::Const ||
      opTypeRule(I.Opcode) == TypeRule::Structure)
    errorAt(Off, "unknown op '" + std::string(Mnemonic.substr(0, 40)) +
                     "'; expected one of: " + definingOps());
  take();
  switch (I.Opcode) {
  case Op::Load:
    I.Buffer = parseBuffer(/*Output=*/false);
    I.Type = K.Buffers[I.Buffer].Type == DType::I32 ? ScalarType::I32
                                                    : ScalarType::F32;
    break;
  case Op::Dim:
  case Op::Index:
    I.I = parseDim(K.Rank);
    I.Type = ScalarType::I32;
    break;
  default: {
    int Arity = opArity(I.Opcode), Count = 0;
    while (true) {
      int V = parseOperand(Blk);
      if (Count < Arity)
        I.Operands[Count] = V;
      ++Count;
      if (!isPunct(','))
        break;
      take();
    }
    if (Count != Arity)
      errorAt(Off, "'" + std::string(Mnemonic) + "' takes " +
                       std::to_string(Arity) + " operand" +
                       (Arity == 1 ? "" : "s") + ", got " +
                       std::to_string(Count));
    if (opTypeRule(I.Opcode) == TypeRule::Cast) {
      expectPunct(':');
      if (isWord("f32") || isWord("i32") || isWord("bool"))
        I.Type = isWord("f32")   ? ScalarType::F32
                 : isWord("i32") ? ScalarType::I32
                                 : ScalarType::Bool;
      else
        error("expected the cast's type (f32, i32 or bool)");
      take();
    } else {
      I.Type = exprResultType(K, I);
    }
  }
  }
  int Idx = append(Blk, I, Off);
  checkTypes(Idx);
  define(NameTok.Text, Idx, NameTok.Offset, Blk);
}

int Parser::parseOperand(int Blk) {
  size_t Off = Tk.Offset;
  if (Tk.Kind == Tok::Value) {
    std::string N(take().Text);
    auto It = Visible.find(N);
    if (It == Visible.end())
      errorAt(Off, Seen.count(N)
                       ? "value %" + N + " belongs to another loop or reduction"
                       : "use of undefined value %" + N);
    return It->second;
  }
  if (Tk.Kind != Tok::Word)
    error("expected an operand (%name or a constant)");
  std::string_view W = take().Text;
  Inst I;
  I.Opcode = Op::Const;
  if (W == "true" || W == "false") {
    I.Type = ScalarType::Bool;
    I.I = W == "true";
  } else if (W == "inf" || W == "-inf" || W == "nan") {
    I.F = W == "nan"   ? std::numeric_limits<float>::quiet_NaN()
          : W == "inf" ? std::numeric_limits<float>::infinity()
                       : -std::numeric_limits<float>::infinity();
  } else if (W.find_first_of(".eE") != std::string_view::npos) {
    auto [End, Ec] = std::from_chars(W.data(), W.data() + W.size(), I.F);
    if (Ec == std::errc::result_out_of_range)
      errorAt(Off, "f32 constant '" + std::string(W) + "' is out of range");
    if (Ec != std::errc() || End != W.data() + W.size() || W[0] == '+')
      errorAt(Off, "expected an operand (%name or a constant), got '" +
                       std::string(W) + "'");
    if (std::isnan(I.F))
      I.F = std::numeric_limits<float>::quiet_NaN();
  } else {
    I.Type = ScalarType::I32;
    auto [End, Ec] = std::from_chars(W.data(), W.data() + W.size(), I.I);
    if (Ec == std::errc::result_out_of_range)
      errorAt(Off, "i32 constant '" + std::string(W) + "' is out of range");
    if (Ec != std::errc() || End != W.data() + W.size())
      errorAt(Off, "expected an operand (%name or a constant), got '" +
                       std::string(W) + "'");
  }
  return append(Blk, I, Off);
}

} // namespace

Kernel parseKernel(std::string_view Text, std::string_view BufferName) {
  return Parser(Text, BufferName).run();
}

} // namespace nng::backends::kernel
