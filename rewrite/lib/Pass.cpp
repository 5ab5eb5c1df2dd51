//===- Pass.cpp - The pass base class -------------------------------------===//
//
// Typed option declaration, parsing and validation, and statistics
// bookkeeping shared by every pass.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/Pass.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace nng::passes {
namespace {

std::string formatDouble(double V) {
  std::ostringstream OS;
  OS << V;
  return OS.str();
}

/// Parses Value as Kind; returns the canonical text or an empty optional.
std::optional<std::string> parseAs(const PassOption &O, std::string_view V) {
  switch (O.Kind) {
  case OptionKind::Int: {
    int64_t I = 0;
    auto [End, Ec] = std::from_chars(V.data(), V.data() + V.size(), I);
    if (V.empty() || Ec != std::errc() || End != V.data() + V.size())
      return std::nullopt;
    return std::to_string(I);
  }
  case OptionKind::Bool:
    if (V == "true" || V == "1" || V == "on" || V == "yes")
      return std::string("true");
    if (V == "false" || V == "0" || V == "off" || V == "no")
      return std::string("false");
    return std::nullopt;
  case OptionKind::Float: {
    std::string S(V);
    char *End = nullptr;
    double D = std::strtod(S.c_str(), &End);
    if (S.empty() || End != S.c_str() + S.size())
      return std::nullopt;
    return formatDouble(D);
  }
  case OptionKind::String:
    return std::string(V);
  case OptionKind::Enum:
    for (const std::string &C : O.Choices)
      if (C == V)
        return C;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string expectation(const PassOption &O) {
  switch (O.Kind) {
  case OptionKind::Int:
    return "an integer";
  case OptionKind::Bool:
    return "a bool (true or false)";
  case OptionKind::Float:
    return "a number";
  case OptionKind::String:
    return "a string";
  case OptionKind::Enum: {
    std::string S = "one of ";
    for (size_t I = 0; I < O.Choices.size(); ++I)
      S += (I ? ", " : "") + O.Choices[I];
    return S;
  }
  }
  return "a value";
}

} // namespace

std::string_view optionKindName(OptionKind K) {
  switch (K) {
  case OptionKind::Int:
    return "integer";
  case OptionKind::Bool:
    return "bool";
  case OptionKind::Float:
    return "float";
  case OptionKind::String:
    return "string";
  case OptionKind::Enum:
    return "enum";
  }
  return "?";
}

Pass::~Pass() = default;

const PassOption *Pass::findOption(std::string_view Key) const {
  for (const PassOption &O : Options)
    if (O.Key == Key)
      return &O;
  return nullptr;
}

void Pass::setOption(std::string_view Key, std::string_view Value) {
  PassOption *O = const_cast<PassOption *>(findOption(Key));
  if (!O) {
    if (Options.empty())
      fail(ErrorKind::InvalidArgument, "pass '", name(), "' has no option '",
           Key, "' (it declares no options; see nngraph-opt --list-passes)");
    std::string Valid;
    for (const PassOption &P : Options)
      Valid += (Valid.empty() ? "" : ", ") + P.Key;
    fail(ErrorKind::InvalidArgument, "pass '", name(), "' has no option '", Key,
         "'; valid options: ", Valid);
  }
  std::optional<std::string> Parsed = parseAs(*O, Value);
  if (!Parsed)
    fail(ErrorKind::InvalidArgument, "option '", Key, "' of ", name(),
         " expects ", expectation(*O), ", got '", Value, "'");
  O->Value = std::move(*Parsed);
}

void Pass::declare(PassOption O) {
  NNG_CHECK(!findOption(O.Key), "pass option '", O.Key, "' is declared twice");
  O.Value = O.Default;
  Options.push_back(std::move(O));
}

void Pass::declareOption(std::string Key, int Default, std::string Help) {
  declareOption(std::move(Key), static_cast<int64_t>(Default), std::move(Help));
}
void Pass::declareOption(std::string Key, int64_t Default, std::string Help) {
  declare({std::move(Key),
           OptionKind::Int,
           std::to_string(Default),
           std::move(Help),
           {},
           {}});
}
void Pass::declareOption(std::string Key, bool Default, std::string Help) {
  declare({std::move(Key),
           OptionKind::Bool,
           Default ? "true" : "false",
           std::move(Help),
           {},
           {}});
}
void Pass::declareOption(std::string Key, double Default, std::string Help) {
  declare({std::move(Key),
           OptionKind::Float,
           formatDouble(Default),
           std::move(Help),
           {},
           {}});
}
void Pass::declareOption(std::string Key, const char *Default,
                         std::string Help) {
  declareOption(std::move(Key), std::string(Default), std::move(Help));
}
void Pass::declareOption(std::string Key, std::string Default,
                         std::string Help) {
  declare({std::move(Key),
           OptionKind::String,
           std::move(Default),
           std::move(Help),
           {},
           {}});
}
void Pass::declareEnumOption(std::string Key, std::string Default,
                             std::vector<std::string> Choices,
                             std::string Help) {
  NNG_CHECK(std::find(Choices.begin(), Choices.end(), Default) != Choices.end(),
            "pass option '", Key, "': default '", Default,
            "' is not one of its choices");
  declare({std::move(Key),
           OptionKind::Enum,
           std::move(Default),
           std::move(Help),
           std::move(Choices),
           {}});
}

const PassOption &Pass::option(std::string_view Key, OptionKind K) const {
  const PassOption *O = findOption(Key);
  if (!O || (O->Kind != K &&
             !(K == OptionKind::String && O->Kind == OptionKind::Enum)))
    fail(ErrorKind::Internal, "pass '", name(), "' reads option '", Key,
         "' as ", optionKindName(K), " but it is not declared so");
  return *O;
}

int64_t Pass::intOption(std::string_view Key) const {
  return std::stoll(option(Key, OptionKind::Int).Value);
}
bool Pass::boolOption(std::string_view Key) const {
  return option(Key, OptionKind::Bool).Value == "true";
}
double Pass::floatOption(std::string_view Key) const {
  return std::strtod(option(Key, OptionKind::Float).Value.c_str(), nullptr);
}
const std::string &Pass::stringOption(std::string_view Key) const {
  return option(Key, OptionKind::String).Value;
}

void Pass::bumpStatistic(std::string_view Name, int64_t Delta) {
  auto It = Stats.find(Name);
  if (It == Stats.end())
    Stats.emplace(std::string(Name), Delta);
  else
    It->second += Delta;
}

void Pass::bumpStatisticOnce(std::string_view Name, std::string Key) {
  if (CountedOnce.insert(std::move(Key)).second)
    bumpStatistic(Name);
}

} // namespace nng::passes
