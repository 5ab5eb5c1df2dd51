//===- Npy.cpp - The .npy array format (one array per file) -----*- C++ -*-===//
//
// The header is parsed by a small reader of the Python literal subset numpy
// writes (a dict of a string, a bool and a tuple of integers); every read is
// bounds-checked, the three keys are required exactly once, and the data
// length must equal numel * itemsize before any tensor is made, so an absurd
// shape or a short file is an error rather than a huge allocation or an
// out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace nng::weights::npy {

namespace {

using rt::Tensor;

constexpr char Magic[] = "\x93NUMPY";
constexpr size_t MagicLen = 6;

[[noreturn]] void bad(const std::string &What, const std::string &Msg) {
  fail(ErrorKind::Parse, What, ": ", Msg,
       "; the array is corrupt or was not written by numpy");
}

struct Header {
  std::string Descr;
  bool Fortran = false;
  std::vector<int64_t> Shape;
};

/// Reads numpy's header dict literal.
class HeaderParser {
public:
  HeaderParser(std::string_view Text, const std::string &What)
      : Text(Text), What(What) {}

  Header parse() {
    Header H;
    bool HaveDescr = false, HaveFortran = false, HaveShape = false;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++Pos;
        break;
      }
      std::string Key = parseString();
      skipSpace();
      expect(':');
      skipSpace();
      if (Key == "descr") {
        if (HaveDescr)
          error("duplicate key 'descr'");
        HaveDescr = true;
        if (peek() == '[')
          fail(ErrorKind::Unsupported, What,
               ": structured (record) arrays are not supported; save each "
               "field as its own array");
        H.Descr = parseString();
      } else if (Key == "fortran_order") {
        if (HaveFortran)
          error("duplicate key 'fortran_order'");
        HaveFortran = true;
        H.Fortran = parseBool();
      } else if (Key == "shape") {
        if (HaveShape)
          error("duplicate key 'shape'");
        HaveShape = true;
        H.Shape = parseShape();
      } else {
        error("unexpected key '" + Key + "'");
      }
      skipSpace();
      char C = next();
      if (C == '}')
        break;
      if (C != ',')
        error("expected ',' or '}' after a value");
    }
    // numpy pads with spaces and ends the header with a newline.
    skipSpace();
    if (Pos != Text.size())
      error("unexpected text after the header dict");
    if (!HaveDescr || !HaveFortran || !HaveShape)
      error(std::string("the header lacks '") +
            (!HaveDescr     ? "descr"
             : !HaveFortran ? "fortran_order"
                            : "shape") +
            "'");
    return H;
  }

private:
  std::string_view Text;
  const std::string &What;
  size_t Pos = 0;

  [[noreturn]] void error(const std::string &Msg) {
    bad(What,
        "invalid .npy header at byte " + std::to_string(Pos) + ": " + Msg);
  }
  char peek() {
    if (Pos >= Text.size())
      error("unexpected end of the header");
    return Text[Pos];
  }
  char next() {
    char C = peek();
    ++Pos;
    return C;
  }
  void expect(char C) {
    if (next() != C)
      error(std::string("expected '") + C + "'");
  }
  void skipSpace() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\n' ||
                                 Text[Pos] == '\t' || Text[Pos] == '\r'))
      ++Pos;
  }
  std::string parseString() {
    char Q = next();
    if (Q != '\'' && Q != '"')
      error("expected a quoted string");
    std::string S;
    while (true) {
      char C = next();
      if (C == Q)
        return S;
      if (C == '\\' || C == '\n')
        error("escapes and newlines are not supported in header strings");
      S += C;
      if (S.size() > 256)
        error("string longer than 256 characters");
    }
  }
  bool parseBool() {
    if (Text.substr(Pos, 4) == "True") {
      Pos += 4;
      return true;
    }
    if (Text.substr(Pos, 5) == "False") {
      Pos += 5;
      return false;
    }
    error("expected True or False");
  }
  std::vector<int64_t> parseShape() {
    expect('(');
    std::vector<int64_t> Dims;
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++Pos;
        break;
      }
      if (peek() == '-')
        error("shape has a negative extent");
      if (peek() < '0' || peek() > '9')
        error("expected an integer in the shape");
      uint64_t V = 0;
      while (Pos < Text.size() && Text[Pos] >= '0' && Text[Pos] <= '9') {
        unsigned D = Text[Pos] - '0';
        if (V > (static_cast<uint64_t>(INT64_MAX) - D) / 10)
          error("shape extent overflows int64");
        V = V * 10 + D;
        ++Pos;
      }
      if (Pos < Text.size() && Text[Pos] == 'L') // Python 2's long suffix.
        ++Pos;
      Dims.push_back(static_cast<int64_t>(V));
      if (Dims.size() > 64)
        error("shape has more than 64 dimensions");
      skipSpace();
      char C = next();
      if (C == ')')
        break;
      if (C != ',')
        error("expected ',' or ')' in the shape");
    }
    return Dims;
  }
};

/// The dtype of Descr and whether its data is big-endian.
std::pair<DType, bool> dtypeOfDescr(const std::string &D,
                                    const std::string &What) {
  if (D.size() >= 2 && D[1] == 'O')
    fail(ErrorKind::Unsupported, What, ": descr '", D,
         "' is an object array (pickled Python objects), which nngraph "
         "refuses to load: it never unpickles .npy data; save numeric "
         "arrays instead");
  // numpyDescr gives the little-endian descrs ('|' for single bytes); their
  // '>' and '=' forms, and any order mark on single bytes, read too.
  if (D.size() == 3 &&
      (D[0] == '<' || D[0] == '>' || D[0] == '|' || D[0] == '=')) {
    for (int I = 0; I < NumDTypes; ++I) {
      DType T = static_cast<DType>(I);
      const char *Text = numpyDescr(T);
      if (!Text || D.substr(1) != Text + 1)
        continue;
      size_t Size = dtypeSize(T);
      if (Size == 1)
        return {T, false};
      if (D[0] != '|')
        return {T, D[0] == '>'};
    }
  }
  std::string List;
  for (int I = 0; I < NumDTypes; ++I)
    if (const char *Text = numpyDescr(static_cast<DType>(I)))
      List += std::string(List.empty() ? "" : " ") + Text;
  fail(ErrorKind::Unsupported, What, ": descr '", D,
       "' is not supported (supported: ", List,
       ", and their big-endian forms); convert the array with "
       "numpy's astype before saving");
}

uint32_t readLE(const unsigned char *P, int Bytes) {
  uint32_t R = 0;
  for (int I = Bytes - 1; I >= 0; --I)
    R = (R << 8) | P[I];
  return R;
}

} // namespace

Tensor read(const std::shared_ptr<Storage> &Buf, size_t Offset, size_t Size,
            const std::string &What) {
  NNG_CHECK_KIND(Offset <= Buf->bytes() && Size <= Buf->bytes() - Offset,
                 Internal, What, ": .npy bytes [", Offset, ", +", Size,
                 ") lie outside their buffer of ", Buf->bytes(), " bytes");
  const unsigned char *P =
      static_cast<const unsigned char *>(Buf->data()) + Offset;
  if (Size < MagicLen + 4 || std::memcmp(P, Magic, MagicLen) != 0)
    bad(What, "not a .npy array (it does not start with \"\\x93NUMPY\" "
              "followed by a version and a header length)");
  unsigned Major = P[6], Minor = P[7];
  if (Major < 1 || Major > 3 || Minor != 0)
    fail(ErrorKind::Unsupported, What, ": .npy format version ", Major, ".",
         Minor, " is not supported (1.0, 2.0 and 3.0 are)");
  size_t LenBytes = Major == 1 ? 2 : 4;
  if (Size < 8 + LenBytes)
    bad(What, "the .npy file ends inside its header length");
  size_t HeaderLen = readLE(P + 8, static_cast<int>(LenBytes));
  size_t Start = 8 + LenBytes;
  if (HeaderLen > Size - Start)
    bad(What, "the .npy header length " + std::to_string(HeaderLen) +
                  " is larger than the " + std::to_string(Size - Start) +
                  " bytes after it");
  std::string_view Text(reinterpret_cast<const char *>(P + Start), HeaderLen);
  Header H = HeaderParser(Text, What).parse();
  auto [T, BigEndian] = dtypeOfDescr(H.Descr, What);

  Shape Sh(H.Shape);
  try {
    Sh.validate();
  } catch (const Error &E) {
    bad(What, E.message());
  }
  size_t Elem = dtypeSize(T);
  uint64_t Numel = static_cast<uint64_t>(Sh.numel());
  if (Numel > UINT64_MAX / Elem)
    bad(What, "shape " + Sh.toString() + " overflows 64-bit byte counts");
  uint64_t Need = Numel * Elem;
  size_t DataStart = Start + HeaderLen;
  uint64_t Have = Size - DataStart;
  if (Have < Need)
    bad(What, "the data is " + std::to_string(Have) +
                  " bytes, shorter than the " + std::to_string(Need) +
                  " bytes the header's shape " + Sh.toString() + " of '" +
                  H.Descr + "' needs (truncated file?)");
  if (Have > Need)
    bad(What, "the data is " + std::to_string(Have) +
                  " bytes, longer than the " + std::to_string(Need) +
                  " bytes the header's shape " + Sh.toString() + " of '" +
                  H.Descr + "' needs");
  const unsigned char *Data = P + DataStart;
  if (T == DType::Bool)
    for (uint64_t K = 0; K < Need; ++K)
      if (Data[K] > 1)
        bad(What, "bool element " + std::to_string(K) + " is the byte " +
                      std::to_string(Data[K]) + "; booleans must be 0 or 1");

  Strides St = contiguousStrides(Sh);
  if (H.Fortran && Numel > 0) {
    int64_t Acc = 1;
    for (size_t I = 0; I < Sh.rank(); ++I) {
      St[I] = Acc;
      Acc *= Sh[I];
    }
  }
  size_t ByteOffset = Offset + DataStart;
  if (!BigEndian && reinterpret_cast<uintptr_t>(Data) % Elem == 0 &&
      ByteOffset % Elem == 0)
    return Tensor(Buf, Sh, St, static_cast<int64_t>(ByteOffset / Elem), T);
  auto S = Storage::allocate(Need);
  unsigned char *Out = static_cast<unsigned char *>(S->data());
  if (Need)
    std::memcpy(Out, Data, Need);
  if (BigEndian)
    for (uint64_t K = 0; K < Need; K += Elem)
      std::reverse(Out + K, Out + K + Elem);
  return Tensor(S, Sh, St, 0, T);
}

std::string write(const Tensor &T, const std::string &What) {
  NNG_CHECK(T.defined(), What, ": the tensor is undefined");
  NNG_CHECK(T.device().isCPU(), What, ": the tensor is on ",
            T.device().toString(), "; copy it to the CPU first");
  const char *D = numpyDescr(T.dtype());
  NNG_CHECK_KIND(D, Unsupported, What, ": dtype ", dtypeName(T.dtype()),
                 " has no numpy equivalent (numpy has no bfloat16); convert "
                 "it (e.g. to f32) or save as safetensors");
  std::string Dict =
      std::string("{'descr': '") + D + "', 'fortran_order': False, 'shape': (";
  for (size_t I = 0; I < T.rank(); ++I)
    Dict += (I ? ", " : "") + std::to_string(T.shape()[I]);
  if (T.rank() == 1)
    Dict += ",";
  Dict += "), }";
  // Magic + version + length + dict + padding + '\n' is a multiple of 64.
  size_t Prefix = Dict.size() + 1 > 65535 - 64 ? 12 : 10;
  size_t Total = Prefix + Dict.size() + 1;
  size_t Pad = (64 - Total % 64) % 64;
  Dict.append(Pad, ' ');
  Dict += '\n';
  std::string Out(Magic, MagicLen);
  Out += static_cast<char>(Prefix == 10 ? 1 : 2);
  Out += '\0';
  uint32_t Len = static_cast<uint32_t>(Dict.size());
  for (size_t I = 0; I < Prefix - 8; ++I)
    Out += static_cast<char>((Len >> (8 * I)) & 0xFF);
  Out += Dict;
  Tensor C = T.contiguous();
  if (C.nbytes())
    Out.append(static_cast<const char *>(C.rawData()), C.nbytes());
  return Out;
}

} // namespace nng::weights::npy
