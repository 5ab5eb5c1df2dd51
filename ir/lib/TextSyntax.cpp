//===- TextSyntax.cpp - Lexical rules shared by printer and parser -------===//
//
// Character classes, string quoting and number spelling of the text format.
// The lexer (Lexer.cpp) reads exactly what these functions write.
//
//===----------------------------------------------------------------------===//

#include "TextSyntax.h"
#include "nngraph/ir/Attribute.h"

#include "nngraph/runtime/DTypeVisit.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace nng::ir::text {

bool isValueNameChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_' || C == '.' || C == ':' ||
         C == '/' || C == '-';
}

bool isBareValueName(std::string_view Name) {
  if (Name.empty() || Name.back() == ':')
    return false;
  for (char C : Name)
    if (!isValueNameChar(C))
      return false;
  return true;
}

bool isIdentStart(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_';
}

bool isIdentChar(char C) {
  return isIdentStart(C) || (C >= '0' && C <= '9') || C == '.';
}

bool isIdentifier(std::string_view S) {
  if (S.empty() || !isIdentStart(S[0]))
    return false;
  for (char C : S)
    if (!isIdentChar(C))
      return false;
  return true;
}

std::string quoteString(std::string_view S) {
  static const char Hex[] = "0123456789abcdef";
  std::string Out = "\"";
  for (char C : S) {
    unsigned char U = static_cast<unsigned char>(C);
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\t':
      Out += "\\t";
      break;
    case '\r':
      Out += "\\r";
      break;
    default:
      if (U < 0x20 || U == 0x7f) {
        Out += "\\x";
        Out += Hex[U >> 4];
        Out += Hex[U & 15];
      } else {
        Out += C;
      }
    }
  }
  return Out + "\"";
}

std::string formatValueName(std::string_view Name) {
  std::string S = "%";
  S += isBareValueName(Name) ? std::string(Name) : quoteString(Name);
  return S;
}

std::string formatType(const TensorType &T) {
  std::string S(dtypeName(T.dtype()));
  if (!T.hasRank())
    return S + "[*]";
  S += "[";
  for (int64_t I = 0; I < T.rank(); ++I) {
    if (I)
      S += ",";
    const Dim &D = T.dim(I);
    if (D.isSymbolic() && !isIdentifier(D.symbol()))
      S += quoteString(D.symbol());
    else
      S += D.toString();
  }
  return S + "]";
}

/// Makes a shortest-form number read as a float: "1" -> "1.0".
static std::string floatify(const char *B, const char *E) {
  std::string S(B, E);
  if (S.find_first_of(".enai") == std::string::npos)
    S += ".0";
  return S;
}

std::string formatFloat(float F) {
  char Buf[64];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), F);
  return floatify(Buf, R.ptr);
}

std::string formatDouble(double D) {
  char Buf[64];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), D);
  return floatify(Buf, R.ptr);
}

void appendTensorValues(const Tensor &T, std::string &Out) {
  Tensor C = T.contiguous();
  int64_t N = C.numel();
  if (N == 0)
    return;
  if (isString(C.dtype())) {
    std::vector<std::string> Strs = C.toStrings();
    for (size_t I = 0; I < Strs.size(); ++I)
      Out += (I ? ", " : "") + quoteString(Strs[I]);
    return;
  }
  const char *Base = static_cast<const char *>(C.rawData());
  visitDType(C.dtype(), [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    char Buf[32];
    for (int64_t I = 0; I < N; ++I) {
      if (I)
        Out += ", ";
      if constexpr (std::is_same_v<E, bool>) {
        Out += Base[I] ? "true" : "false"; // Any non-zero byte is true.
      } else {
        E V;
        std::memcpy(&V, Base + I * sizeof(E), sizeof(E));
        if constexpr (std::is_same_v<E, double>) {
          Out += formatDouble(V);
        } else if constexpr (std::is_integral_v<E>) {
          auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
          Out.append(Buf, R.ptr);
        } else { // float, Half, BFloat16: exact through float.
          Out += formatFloat(static_cast<float>(V));
        }
      }
    }
  });
}

} // namespace nng::ir::text
