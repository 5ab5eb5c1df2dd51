//===- Printing.cpp - PyTorch's tensor text format --------------------------===//
//
// Tensor::toString and operator<< print like torch's repr (torch 1.13,
// default print options: precision 4, linewidth 80, threshold 1000,
// edgeitems 3): "tensor([[1.0000, 2.5000]], requires_grad=True)". The
// number format follows torch's _Formatter: integer-valued floats print as
// "1.", others with 4 decimals, scientific notation when the nonzero
// magnitudes span more than 1000x or leave [1e-4, 1e8]; every element is
// padded to one width; tensors over 1000 elements show their first and
// last 3 entries per axis around "...". Suffixes add the dtype when it is
// not f32, i64 or bool, then grad_fn=<...> or requires_grad=True.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/detail/EagerHooks.h"
#include "nngraph/frontend/GradMode.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Strings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace nng {

namespace {

constexpr int Precision = 4;
constexpr int64_t LineWidth = 80;
constexpr int64_t Threshold = 1000;
constexpr int64_t EdgeItems = 3;

std::string printfStr(const char *Fmt, double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), Fmt, Precision, V);
  return Buf;
}

/// Python's str() of a float special value, or "".
std::string special(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  return "";
}

/// The flat row-major indices of the elements that will be shown.
void shownIndices(const Shape &S, size_t Axis, int64_t Base, bool Summarize,
                  std::vector<int64_t> &Out) {
  if (Axis == S.rank()) {
    Out.push_back(Base);
    return;
  }
  int64_t N = S[Axis], Stride = 1;
  for (size_t I = Axis + 1; I < S.rank(); ++I)
    Stride *= S[I];
  for (int64_t I = 0; I < N; ++I) {
    if (Summarize && N > 2 * EdgeItems && I == EdgeItems)
      I = N - EdgeItems;
    shownIndices(S, Axis + 1, Base + I * Stride, Summarize, Out);
  }
}

/// torch's _Formatter.
class Formatter {
public:
  Formatter(const rt::Tensor &D, const std::vector<int64_t> &Shown)
      : Data(D), Floating(isFloatingPoint(D.dtype())),
        IsBool(D.dtype() == DType::Bool) {
    if (isString(D.dtype())) {
      // Quoted as numpy prints them, unpadded.
      for (const std::string &S : D.toStrings())
        Strs.push_back(rt::quoteForDisplay(S));
      return;
    }
    if (!Floating) {
      for (int64_t I : Shown)
        Width = std::max<size_t>(Width, raw(I).size());
      return;
    }
    std::vector<double> Vals;
    for (int64_t I : Shown) {
      double V = D.getFlat(I);
      if (std::isfinite(V) && V != 0)
        Vals.push_back(V);
    }
    if (Vals.empty())
      return;
    double Min = INFINITY, Max = 0;
    for (double V : Vals) {
      Min = std::min(Min, std::fabs(V));
      Max = std::max(Max, std::fabs(V));
      if (V != std::ceil(V))
        IntMode = false;
    }
    if (IntMode) {
      if (Max / Min > 1000. || Max > 1.e8)
        SciMode = true;
    } else if (Max / Min > 1000. || Max > 1.e8 || Min < 1.e-4) {
      SciMode = true;
    }
    for (double V : Vals) {
      std::string S = SciMode   ? printfStr("%.*e", V)
                      : IntMode ? intStr(V) + "."
                                : printfStr("%.*f", V);
      Width = std::max(Width, S.size());
    }
  }

  size_t width() const { return Width; }

  std::string format(int64_t I) const {
    std::string R = raw(I);
    return R.size() < Width ? std::string(Width - R.size(), ' ') + R : R;
  }

private:
  static std::string intStr(double V) {
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), "%.0f", V);
    return Buf;
  }

  std::string raw(int64_t I) const {
    if (!Strs.empty())
      return Strs[I];
    if (IsBool)
      return Data.getFlat(I) != 0 ? "True" : "False";
    if (!Floating) {
      if (Data.dtype() == DType::U64)
        return std::to_string(static_cast<uint64_t>(Data.getFlatInt(I)));
      return std::to_string(Data.getFlatInt(I));
    }
    double V = Data.getFlat(I);
    if (std::string S = special(V); !S.empty())
      return S;
    if (SciMode)
      return printfStr("%.*e", V);
    if (IntMode)
      return intStr(V) + ".";
    return printfStr("%.*f", V);
  }

  const rt::Tensor &Data;
  std::vector<std::string> Strs; ///< Quoted elements of a str tensor.
  bool Floating, IsBool;
  bool IntMode = true, SciMode = false;
  size_t Width = 1;
};

std::string vectorStr(const Formatter &Fmt, int64_t Base, int64_t N,
                      int64_t Indent, bool Summarize) {
  int64_t ElementLength = static_cast<int64_t>(Fmt.width()) + 2;
  int64_t PerLine = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(double(LineWidth - Indent) /
                                         double(ElementLength))));
  std::vector<std::string> Items;
  for (int64_t I = 0; I < N; ++I) {
    if (Summarize && N > 2 * EdgeItems && I == EdgeItems) {
      Items.push_back(" ...");
      I = N - EdgeItems;
    }
    Items.push_back(Fmt.format(Base + I));
  }
  std::string R = "[";
  for (size_t I = 0; I < Items.size(); ++I) {
    if (I > 0)
      R += I % PerLine == 0 ? ",\n" + std::string(Indent + 1, ' ') : ", ";
    R += Items[I];
  }
  return R + "]";
}

std::string tensorStr(const Formatter &Fmt, const Shape &S, size_t Axis,
                      int64_t Base, int64_t Indent, bool Summarize) {
  size_t Dim = S.rank() - Axis;
  if (Dim == 1)
    return vectorStr(Fmt, Base, S[Axis], Indent, Summarize);
  int64_t N = S[Axis], Stride = 1;
  for (size_t I = Axis + 1; I < S.rank(); ++I)
    Stride *= S[I];
  std::vector<std::string> Slices;
  for (int64_t I = 0; I < N; ++I) {
    if (Summarize && N > 2 * EdgeItems && I == EdgeItems) {
      Slices.push_back("...");
      I = N - EdgeItems;
    }
    Slices.push_back(
        tensorStr(Fmt, S, Axis + 1, Base + I * Stride, Indent + 1, Summarize));
  }
  std::string Sep = ",";
  Sep.append(Dim - 1, '\n');
  Sep.append(static_cast<size_t>(Indent + 1), ' ');
  std::string R = "[";
  for (size_t I = 0; I < Slices.size(); ++I) {
    if (I)
      R += Sep;
    R += Slices[I];
  }
  R += "]";
  return R;
}

/// torch's repr of T ("torch.float32").
std::string torchDTypeName(DType T) {
  if (const char *N = torchName(T))
    return std::string("torch.") + N;
  return std::string(dtypeName(T)); // str: torch has none; numpy's name.
}

std::string addSuffixes(const std::string &Body,
                        const std::vector<std::string> &Suffixes,
                        int64_t Indent) {
  std::string R = Body;
  size_t NL = Body.rfind('\n');
  int64_t LastLen = static_cast<int64_t>(Body.size()) -
                    (NL == std::string::npos ? -1 : static_cast<int64_t>(NL)) +
                    1;
  for (const std::string &S : Suffixes) {
    int64_t Len = static_cast<int64_t>(S.size());
    if (LastLen + Len + 2 > LineWidth) {
      R += ",\n" + std::string(Indent, ' ') + S;
      LastLen = Indent + Len;
    } else {
      R += ", " + S;
      LastLen += Len + 2;
    }
  }
  return R + ")";
}

} // namespace

std::string Tensor::toString() const {
  if (is_proxy())
    detail::failProxyData(*this, "printing");
  if (!defined())
    return "tensor(undefined)";
  const std::string Prefix = "tensor(";
  const int64_t Indent = static_cast<int64_t>(Prefix.size());
  const rt::Tensor &D = data();
  std::vector<std::string> Suffixes;
  std::string Body;
  DType T = dtype();
  bool DefaultDType = T == DType::F32 || T == DType::I64 || T == DType::Bool;
  if (is_meta()) {
    // PyTorch: tensor(..., device='meta', size=(2, 3)).
    std::string Size = "size=(";
    for (int64_t I = 0; I < dim(); ++I)
      Size += (I ? ", " : "") + std::to_string(size(I));
    Suffixes.push_back("device='meta'");
    Suffixes.push_back(Size + (dim() == 1 ? ",)" : ")"));
    if (!DefaultDType)
      Suffixes.push_back(std::string("dtype=") + torchDTypeName(T));
    Body = "...";
  } else if (numel() == 0) {
    if (dim() != 1) {
      std::string Size = "size=(";
      for (int64_t I = 0; I < dim(); ++I)
        Size += (I ? ", " : "") + std::to_string(size(I));
      Suffixes.push_back(Size + ")");
    }
    if (T != DType::F32)
      Suffixes.push_back(std::string("dtype=") + torchDTypeName(T));
    Body = "[]";
  } else {
    if (!DefaultDType)
      Suffixes.push_back(std::string("dtype=") + torchDTypeName(T));
    bool Summarize = numel() > Threshold;
    std::vector<int64_t> Shown;
    shownIndices(D.shape(), 0, 0, Summarize, Shown);
    Formatter Fmt(D, Shown);
    if (dim() == 0)
      Body = Fmt.format(0);
    else
      Body = tensorStr(Fmt, D.shape(), 0, 0, Indent, Summarize);
  }
  if (grad_fn())
    Suffixes.push_back(
        "grad_fn=<" + detail::autogradHooks("printing").NodeName(*grad_fn()) +
        ">");
  else if (requires_grad())
    Suffixes.push_back("requires_grad=True");
  return addSuffixes(Prefix + Body, Suffixes, Indent);
}

std::ostream &operator<<(std::ostream &OS, const Tensor &T) {
  return OS << T.toString();
}

} // namespace nng
