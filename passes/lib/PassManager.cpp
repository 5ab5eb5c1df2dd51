//===- PassManager.cpp - Pipelines of passes ------------------------------===//
//
// The pipeline-string parser and the PassManager that runs passes in order
// (on the regions too, for passes that enter them), verifying after each
// and reporting statistics and timings on request.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/PassManager.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/passes/PassRegistry.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Strings.h"

#include <cctype>
#include <chrono>
#include <cstdio>

namespace nng::passes {
namespace {

[[noreturn]] void syntaxError(std::string_view Pipeline, size_t Pos,
                              std::string_view What) {
  fail(ErrorKind::InvalidArgument, "bad pipeline '", Pipeline, "' at column ",
       Pos + 1, ": ", What);
}

/// Parses "key=value key2=value2" (the text between braces).
void parseOptions(std::string_view Pipeline, size_t Base, std::string_view Text,
                  PipelineElement &E) {
  size_t I = 0;
  while (I < Text.size()) {
    if (std::isspace(static_cast<unsigned char>(Text[I]))) {
      ++I;
      continue;
    }
    size_t Start = I;
    while (I < Text.size() &&
           !std::isspace(static_cast<unsigned char>(Text[I])))
      ++I;
    std::string_view Item = Text.substr(Start, I - Start);
    size_t Eq = Item.find('=');
    if (Eq == std::string_view::npos || Eq == 0)
      syntaxError(Pipeline, Base + Start,
                  "expected 'key=value' in the options of '" + E.Name + "'");
    E.Options.emplace_back(std::string(Item.substr(0, Eq)),
                           std::string(Item.substr(Eq + 1)));
  }
}

/// Runs P on the regions of G's nodes, innermost first; true when it
/// changed one.
bool runOnRegions(Pass &P, ir::Graph &G) {
  bool Changed = false;
  for (const auto &N : G.nodes())
    for (ir::Graph *R : N->regions()) {
      Changed |= runOnRegions(P, *R);
      Changed |= P.run(*R);
    }
  return Changed;
}

} // namespace

std::vector<PipelineElement> splitPipeline(std::string_view Pipeline) {
  std::vector<PipelineElement> Result;
  size_t I = 0;
  if (rt::trimSpace(Pipeline).empty())
    return Result;
  while (true) {
    // A name runs up to ',', '{' or the end.
    size_t Start = I;
    while (I < Pipeline.size() && Pipeline[I] != ',' && Pipeline[I] != '{') {
      if (Pipeline[I] == '}')
        syntaxError(Pipeline, I, "'}' without '{'");
      ++I;
    }
    PipelineElement E;
    E.Name = std::string(rt::trimSpace(Pipeline.substr(Start, I - Start)));
    if (E.Name.empty())
      syntaxError(Pipeline, Start, "expected a pass name");
    if (I < Pipeline.size() && Pipeline[I] == '{') {
      size_t Close = Pipeline.find('}', I);
      if (Close == std::string_view::npos)
        syntaxError(Pipeline, I, "'{' without a closing '}'");
      parseOptions(Pipeline, I + 1, Pipeline.substr(I + 1, Close - I - 1), E);
      I = Close + 1;
      while (I < Pipeline.size() &&
             std::isspace(static_cast<unsigned char>(Pipeline[I])))
        ++I;
      if (I < Pipeline.size() && Pipeline[I] != ',')
        syntaxError(Pipeline, I, "expected ',' after '}'");
    }
    Result.push_back(std::move(E));
    if (I >= Pipeline.size())
      break;
    ++I; // The ','.
  }
  return Result;
}

PassManager::PassManager() = default;
PassManager::~PassManager() = default;
PassManager::PassManager(PassManager &&) = default;
PassManager &PassManager::operator=(PassManager &&) = default;

void PassManager::addPass(std::unique_ptr<Pass> P) {
  NNG_CHECK(P, "PassManager::addPass: null pass");
  Passes.push_back(std::move(P));
}

void PassManager::addPipeline(std::string_view Pipeline) {
  // Build everything first so that a bad element adds nothing.
  std::vector<std::unique_ptr<Pass>> New;
  for (const PipelineElement &E : splitPipeline(Pipeline)) {
    std::unique_ptr<Pass> P = createPass(E.Name);
    for (const auto &[Key, Value] : E.Options)
      P->setOption(Key, Value);
    New.push_back(std::move(P));
  }
  for (auto &P : New)
    Passes.push_back(std::move(P));
}

bool PassManager::run(ir::Graph &G) {
  bool Changed = false;
  Timings.clear();
  for (auto &P : Passes) {
    P->clearStatistics();
    if (Instr.BeforePass)
      Instr.BeforePass(*P, G);
    auto Start = std::chrono::steady_clock::now();
    bool PassChanged;
    try {
      PassChanged = P->run(G);
      if (P->entersRegions())
        PassChanged |= runOnRegions(*P, G);
    } catch (Error &E) {
      E.addContext("in pass '" + std::string(P->name()) + "'");
      throw;
    }
    double Ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - Start)
                    .count();
    Timings.push_back({std::string(P->name()), Ms});
    if (VerifyEach) {
      try {
        ir::verifyOrThrow(G);
      } catch (Error &E) {
        E.addContext("pass '" + std::string(P->name()) +
                     "' left a graph that fails verification");
        throw;
      }
    }
    Changed |= PassChanged;
    if (Instr.AfterPass)
      Instr.AfterPass(*P, G, PassChanged);
    if (StatsOS) {
      char Time[32];
      std::snprintf(Time, sizeof(Time), "%.3f ms", Ms);
      *StatsOS << "pass " << P->name() << ": "
               << (PassChanged ? "changed" : "unchanged") << ", " << Time
               << "\n";
      for (const auto &[Name, Count] : P->statistics())
        *StatsOS << "  " << Name << ": " << Count << "\n";
    }
  }
  return Changed;
}

std::string PassManager::pipelineString() const {
  std::string S;
  for (const auto &P : Passes) {
    if (!S.empty())
      S += ',';
    S += P->name();
  }
  return S;
}

} // namespace nng::passes
