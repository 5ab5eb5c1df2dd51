//===- Attribute.cpp - Typed node attributes -----------------------------===//

#include "nngraph/ir/Attribute.h"

#include <algorithm>
#include <cstring>

namespace nng::ir {

std::string_view attrTypeName(AttrType T) {
  return AttrTypeNames[static_cast<int>(T)];
}

std::optional<AttrType> parseAttrType(std::string_view S) {
  for (size_t I = 0; I < std::size(AttrTypeNames); ++I)
    if (AttrTypeNames[I] == S)
      return static_cast<AttrType>(I);
  return std::nullopt;
}

bool Attribute::operator==(const Attribute &O) const {
  if (type() != O.type())
    return false;
  if (type() == AttrType::Tensor)
    return t().equals(O.t());
  if (type() == AttrType::Float) // Bitwise, so NaN attributes compare equal.
    return std::memcmp(&std::get<float>(V), &std::get<float>(O.V), 4) == 0;
  switch (type()) {
  case AttrType::Int:
    return i() == O.i();
  case AttrType::String:
    return s() == O.s();
  case AttrType::Ints:
    return ints() == O.ints();
  case AttrType::Floats:
    return floats().size() == O.floats().size() &&
           std::memcmp(floats().data(), O.floats().data(),
                       floats().size() * sizeof(float)) == 0;
  case AttrType::Strings:
    return strings() == O.strings();
  case AttrType::Graph:
    return graphPtr() == O.graphPtr();
  default:
    return false;
  }
}

void AttrMap::setByName(std::string Name, Attribute A) {
  auto It = std::lower_bound(
      Entries.begin(), Entries.end(), Name,
      [](const Entry &E, const std::string &N) { return E.first < N; });
  if (It != Entries.end() && It->first == Name)
    It->second = std::move(A);
  else
    Entries.insert(It, {std::move(Name), std::move(A)});
}

const Attribute *AttrMap::findByName(std::string_view Name) const {
  auto It = std::lower_bound(
      Entries.begin(), Entries.end(), Name,
      [](const Entry &E, std::string_view N) { return E.first < N; });
  if (It != Entries.end() && It->first == Name)
    return &It->second;
  return nullptr;
}

bool AttrMap::eraseByName(std::string_view Name) {
  auto It = std::find_if(Entries.begin(), Entries.end(),
                         [&](const Entry &E) { return E.first == Name; });
  if (It == Entries.end())
    return false;
  Entries.erase(It);
  return true;
}

} // namespace nng::ir
