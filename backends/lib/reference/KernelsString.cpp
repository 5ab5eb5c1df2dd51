//===- KernelsString.cpp - StringNormalizer and casts with strings -------===//
//
// Reference kernels of the string ops. StringNormalizer drops stopwords
// (exactly, or ASCII-case-insensitively) and maps case with the C locale's
// ASCII rules whatever 'locale' says. Casts to str print numbers as numpy's
// astype(str) does (what ONNX's reference and test data use): floats in
// their shortest round-trip digits, positional for 1e-4 <= |x| < 1e16 with
// at least one fraction digit ("0.5", "100.0"), else scientific with a
// signed two-digit exponent ("1e-05", "3.4028235e+38"); "nan", "inf",
// "-inf"; integers in decimal; bools as "True" / "False". Casts from str
// parse like strtod in the C locale: leading and trailing blanks ignored, an
// optional sign, "NaN", "INF", "Infinity" in any case; integers parse as
// integers, else as floats truncated (saturating) like a float-to-integer
// cast; bools accept "true"/"false" in any case or any number (non-zero is
// true). A string that is not a number is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "nngraph/runtime/Strings.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <unordered_set>

namespace nng::backends::reference {

namespace {

char asciiLower(char C) { return C >= 'A' && C <= 'Z' ? C - 'A' + 'a' : C; }
char asciiUpper(char C) { return C >= 'a' && C <= 'z' ? C - 'a' + 'A' : C; }

std::string lowered(std::string_view S) {
  std::string R(S);
  for (char &C : R)
    C = asciiLower(C);
  return R;
}

/// Shortest scientific digits of V that read back as exactly V, as
/// "d[.ddd]e±XX" (printf's %e layout).
template <typename T> std::string shortestScientific(T V) {
  char Buf[64];
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto R =
        std::to_chars(Buf, Buf + sizeof(Buf), V, std::chars_format::scientific);
    return std::string(Buf, R.ptr);
  } else { // Half, BFloat16: the fewest digits that round back.
    float F = static_cast<float>(V);
    for (int P = 0; P < 9; ++P) {
      std::snprintf(Buf, sizeof(Buf), "%.*e", P, static_cast<double>(F));
      if (static_cast<float>(T(std::strtof(Buf, nullptr))) == F)
        break;
    }
    return Buf;
  }
}

/// numpy's str() of a floating value (see the file comment).
template <typename T> std::string floatToString(T V) {
  double D = toDouble(V);
  if (std::isnan(D))
    return "nan";
  if (std::isinf(D))
    return D < 0 ? "-inf" : "inf";
  std::string Sci = shortestScientific(V);
  double A = std::fabs(D);
  if (A != 0.0 && (A < 1e-4 || A >= 1e16))
    return Sci;
  // Positional: split "-d.ddde±XX" into sign, digits and exponent.
  bool Neg = Sci[0] == '-';
  size_t EPos = Sci.find('e');
  std::string Digits;
  for (size_t I = Neg ? 1 : 0; I < EPos; ++I)
    if (Sci[I] != '.')
      Digits += Sci[I];
  int Exp = std::atoi(Sci.c_str() + EPos + 1);
  std::string Out = Neg ? "-" : "";
  if (Exp < 0) {
    Out += "0." + std::string(static_cast<size_t>(-Exp - 1), '0') + Digits;
  } else {
    size_t IntLen = static_cast<size_t>(Exp) + 1;
    if (Digits.size() <= IntLen) {
      Out += Digits + std::string(IntLen - Digits.size(), '0') + ".0";
    } else {
      Out += Digits.substr(0, IntLen) + "." + Digits.substr(IntLen);
    }
  }
  return Out;
}

template <typename T> std::string elementToString(T V) {
  if constexpr (std::is_same_v<T, bool>)
    return V ? "True" : "False";
  else if constexpr (IsFloatElem<T>)
    return floatToString(V);
  else
    return std::to_string(V);
}

/// Parses all of S as a W (float, double or int64_t); false when it is not
/// one. A leading '+' is allowed.
template <typename W> bool parseWhole(std::string_view S, W &Out) {
  S = rt::trimSpace(S);
  bool Neg = false;
  if (!S.empty() && (S[0] == '+' || S[0] == '-')) {
    Neg = S[0] == '-';
    S.remove_prefix(1);
  }
  if (S.empty() || S[0] == '+' || S[0] == '-')
    return false;
  auto R = std::from_chars(S.data(), S.data() + S.size(), Out);
  if (R.ptr != S.data() + S.size())
    return false;
  if (R.ec == std::errc::result_out_of_range) {
    if constexpr (std::is_floating_point_v<W>) {
      // Overflow to infinity, underflow to zero, as strtod does.
      std::string Z(S);
      Out = static_cast<W>(std::strtod(Z.c_str(), nullptr));
    } else {
      return false;
    }
  } else if (R.ec != std::errc()) {
    return false;
  }
  if (Neg)
    Out = -Out;
  return true;
}

template <typename T>
T elementFromString(const KernelContext &C, std::string_view S, int64_t I) {
  auto Bad = [&]() -> T {
    C.fail("element ", I, " of the input, ", rt::quoteForDisplay(S),
           ", is not ",
           std::is_same_v<T, bool> ? "a bool (true/false or a number)"
                                   : "a number",
           "; it cannot be cast to ", dtypeName(dtypeOf<T>()));
  };
  if constexpr (std::is_same_v<T, bool>) {
    std::string L = lowered(rt::trimSpace(S));
    if (L == "true")
      return true;
    if (L == "false")
      return false;
    double D;
    if (!parseWhole(S, D))
      return Bad();
    return D != 0.0;
  } else if constexpr (IsFloatElem<T>) {
    if constexpr (std::is_same_v<T, double>) {
      double D;
      if (!parseWhole(S, D))
        return Bad();
      return D;
    } else {
      float F; // Direct to float rounds once; f16/bf16 round from it.
      if (!parseWhole(S, F))
        return Bad();
      return T(F);
    }
  } else {
    int64_t V;
    if (parseWhole(S, V))
      return static_cast<T>(V); // Wraps like an integer-to-integer cast.
    double D;
    if (!parseWhole(S, D))
      return Bad();
    if (std::isnan(D))
      return T(0);
    return saturateCast<T>(std::trunc(D));
  }
}

} // namespace

void castWithStrings(KernelContext &C, const Tensor &X, DType To) {
  Tensor Xc = X.contiguous();
  int64_t N = X.numel();
  if (isString(X.dtype()) && isString(To)) {
    C.allocOutput(0, X.shape(), To).copyFrom(Xc);
    return;
  }
  Tensor &Y = C.allocOutput(0, X.shape(), To);
  if (isString(To)) {
    StringId *PY = mutPtr<StringId>(Y);
    visitDType(X.dtype(), [&](auto Tag) {
      using S = typename decltype(Tag)::type;
      const S *PX = ptr<S>(Xc);
      for (int64_t I = 0; I < N; ++I)
        PY[I] = rt::internString(elementToString(PX[I]));
    });
    return;
  }
  const StringId *PX = ptr<StringId>(Xc);
  visitDType(To, [&](auto Tag) {
    using D = typename decltype(Tag)::type;
    D *PY = mutPtr<D>(Y);
    for (int64_t I = 0; I < N; ++I)
      PY[I] = elementFromString<D>(C, rt::stringOf(PX[I]), I);
  });
}

void kernelStringNormalizer(KernelContext &C) {
  const Tensor &X = C.in(0);
  if (!isString(X.dtype()))
    C.fail("input X must be a str tensor, got ", dtypeName(X.dtype()));
  bool TwoD = X.rank() == 2;
  if (!(X.rank() == 1 || (TwoD && X.size(0) == 1)))
    C.fail("input X must have shape [C] or [1, C], got ", X.shape().toString());
  const std::string &Action = C.attrString("case_change_action");
  bool CaseSensitive = C.attrInt("is_case_sensitive") != 0;
  std::unordered_set<std::string> Stop;
  if (const ir::Attribute *A = C.N.attrs().find("stopwords"))
    for (const std::string &W : A->strings())
      Stop.insert(CaseSensitive ? W : lowered(W));
  char (*MapCase)(char) = nullptr;
  if (Action == "LOWER")
    MapCase = asciiLower;
  else if (Action == "UPPER")
    MapCase = asciiUpper;
  else if (Action != "NONE")
    C.fail("attribute case_change_action = '", Action,
           "' must be 'NONE', 'LOWER' or 'UPPER'");
  std::vector<StringId> Out;
  for (std::string S : X.toStrings()) {
    if (!Stop.empty() && Stop.count(CaseSensitive ? S : lowered(S)))
      continue;
    if (MapCase)
      for (char &Ch : S)
        Ch = MapCase(Ch);
    Out.push_back(rt::internString(S));
  }
  if (Out.empty()) // ONNX: everything dropped gives one empty string.
    Out.push_back(rt::internString(""));
  int64_t Len = static_cast<int64_t>(Out.size());
  Shape S = TwoD ? Shape{1, Len} : Shape{Len};
  Tensor &Y = C.allocOutput(0, S, DType::String);
  std::memcpy(Y.rawData(), Out.data(), Out.size() * sizeof(StringId));
}

} // namespace nng::backends::reference
