//===- LayerArgs.cpp - Argument types and Python reprs of the layers ------===//
//
// IntOrTuple expansion (PyTorch's _pair and friends) and the formatting of
// floats, bools and tuples exactly as Python prints them, so extra_repr
// strings match PyTorch's character for character.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nng::nn {

std::vector<int64_t> IntOrTuple::expand(size_t N,
                                        const std::string &What) const {
  if (!Tuple)
    return std::vector<int64_t>(N, Values[0]);
  if (Values.size() != N)
    fail(ErrorKind::InvalidArgument, What, ": expected an int or a tuple of ",
         N, " ints, got ", repr());
  return Values;
}

std::string IntOrTuple::repr() const {
  return Tuple ? repr::pyTuple(Values) : std::to_string(Values[0]);
}

namespace repr {

std::string pyFloat(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  std::string Sign = std::signbit(V) ? "-" : "";
  double A = std::fabs(V);
  if (A == 0.0)
    return Sign + "0.0";
  // Shortest scientific form that round-trips: d.ddde[+-]XX.
  char Buf[64];
  for (int Prec = 0; Prec <= 17; ++Prec) {
    std::snprintf(Buf, sizeof(Buf), "%.*e", Prec, A);
    if (std::strtod(Buf, nullptr) == A)
      break;
  }
  std::string S(Buf);
  size_t EPos = S.find('e');
  int Exp = std::atoi(S.c_str() + EPos + 1);
  std::string Digits;
  for (size_t I = 0; I < EPos; ++I)
    if (S[I] != '.')
      Digits += S[I];
  while (Digits.size() > 1 && Digits.back() == '0')
    Digits.pop_back();
  std::string Out;
  if (Exp >= -4 && Exp < 16) {
    if (Exp >= 0) {
      std::string Int =
          Digits.substr(0, std::min<size_t>(Digits.size(), Exp + 1));
      Int.append(Exp + 1 - Int.size(), '0');
      std::string Frac = Digits.size() > static_cast<size_t>(Exp + 1)
                             ? Digits.substr(Exp + 1)
                             : "";
      Out = Int + "." + (Frac.empty() ? "0" : Frac);
    } else {
      Out = "0.";
      Out.append(static_cast<size_t>(-Exp - 1), '0');
      Out += Digits;
    }
  } else {
    Out = Digits.substr(0, 1);
    if (Digits.size() > 1) {
      Out += '.';
      Out.append(Digits, 1, std::string::npos);
    }
    char E[16];
    std::snprintf(E, sizeof(E), "e%c%02d", Exp < 0 ? '-' : '+', std::abs(Exp));
    Out += E;
  }
  return Sign + Out;
}

std::string pyTuple(const std::vector<int64_t> &Vs) {
  std::string S = "(";
  for (size_t I = 0; I < Vs.size(); ++I) {
    if (I)
      S += ", ";
    S += std::to_string(Vs[I]);
  }
  if (Vs.size() == 1)
    S += ",";
  return S + ")";
}

} // namespace repr

} // namespace nng::nn
