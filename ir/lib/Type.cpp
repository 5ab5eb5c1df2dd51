//===- Type.cpp - Value types --------------------------------------------===//

#include "nngraph/ir/Type.h"

#include <charconv>

namespace nng::ir {

std::string Dim::toString() const {
  if (isStatic())
    return std::to_string(Value);
  if (isSymbolic())
    return Sym;
  return "?";
}

TensorType::TensorType(DType T, const Shape &S) : Elem(T) {
  Dims.emplace();
  Dims->reserve(S.rank());
  for (int64_t D : S)
    Dims->push_back(Dim(D));
}

bool TensorType::isStatic() const {
  if (!Dims)
    return false;
  for (const Dim &D : *Dims)
    if (!D.isStatic())
      return false;
  return true;
}

std::optional<Shape> TensorType::staticShape() const {
  if (!isStatic())
    return std::nullopt;
  std::vector<int64_t> S;
  S.reserve(Dims->size());
  for (const Dim &D : *Dims)
    S.push_back(D.value());
  return Shape(std::move(S));
}

std::optional<int64_t> TensorType::staticNumel() const {
  if (!isStatic())
    return std::nullopt;
  int64_t N = 1;
  for (const Dim &D : *Dims)
    N *= D.value();
  return N;
}

std::string TensorType::toString() const {
  std::string S(dtypeName(Elem));
  if (!Dims)
    return S + "[*]";
  S += "[";
  for (size_t I = 0; I < Dims->size(); ++I) {
    if (I)
      S += ",";
    S += (*Dims)[I].toString();
  }
  return S + "]";
}

static bool isSymbolChar(char C, bool First) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_' ||
         (!First && ((C >= '0' && C <= '9') || C == '.'));
}

std::optional<TensorType> TensorType::parse(std::string_view S) {
  size_t LB = S.find('[');
  if (LB == std::string_view::npos || S.back() != ']')
    return std::nullopt;
  auto DT = parseDType(S.substr(0, LB));
  if (!DT)
    return std::nullopt;
  std::string_view Body = S.substr(LB + 1, S.size() - LB - 2);
  if (Body == "*")
    return TensorType(*DT);
  std::vector<Dim> Dims;
  if (Body.empty())
    return TensorType(*DT, Dims);
  size_t Pos = 0;
  while (true) {
    size_t Comma = Body.find(',', Pos);
    std::string_view Tok = Body.substr(
        Pos, Comma == std::string_view::npos ? std::string_view::npos
                                             : Comma - Pos);
    if (Tok.empty())
      return std::nullopt;
    if (Tok == "?") {
      Dims.push_back(Dim::unknown());
    } else if (Tok[0] >= '0' && Tok[0] <= '9') {
      int64_t V = 0;
      auto [P, Ec] = std::from_chars(Tok.data(), Tok.data() + Tok.size(), V);
      if (Ec != std::errc() || P != Tok.data() + Tok.size())
        return std::nullopt;
      Dims.push_back(Dim(V));
    } else {
      for (size_t I = 0; I < Tok.size(); ++I)
        if (!isSymbolChar(Tok[I], I == 0))
          return std::nullopt;
      Dims.push_back(Dim::symbol(std::string(Tok)));
    }
    if (Comma == std::string_view::npos)
      break;
    Pos = Comma + 1;
  }
  return TensorType(*DT, Dims);
}

std::optional<TensorType> mergeTypes(const TensorType &A, const TensorType &B) {
  if (A.dtype() != B.dtype())
    return std::nullopt;
  if (!A.hasRank())
    return B;
  if (!B.hasRank())
    return A;
  if (A.rank() != B.rank())
    return std::nullopt;
  std::vector<Dim> Out;
  for (int64_t I = 0; I < A.rank(); ++I) {
    const Dim &DA = A.dim(I), &DB = B.dim(I);
    if (DA.isStatic() && DB.isStatic()) {
      if (DA.value() != DB.value())
        return std::nullopt;
      Out.push_back(DA);
    } else if (DA.isStatic() || DB.isStatic()) {
      Out.push_back(DA.isStatic() ? DA : DB);
    } else if (DA.isSymbolic()) {
      Out.push_back(DA);
    } else {
      Out.push_back(DB);
    }
  }
  return TensorType(A.dtype(), Out);
}

} // namespace nng::ir
