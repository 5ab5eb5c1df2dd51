//===- NodePattern.cpp - Selecting nodes by name or scope pattern ---------===//
//
// A backtracking glob with '*' only (no character classes): enough for
// module paths, linear in practice.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/NodePattern.h"
#include "nngraph/runtime/Error.h"

namespace nng::passes {

bool globMatch(std::string_view P, std::string_view S) {
  size_t Pi = 0, Si = 0, Star = std::string_view::npos, Mark = 0;
  while (Si < S.size()) {
    if (Pi < P.size() && P[Pi] == '*') {
      Star = Pi++;
      Mark = Si;
    } else if (Pi < P.size() && P[Pi] == S[Si]) {
      ++Pi;
      ++Si;
    } else if (Star != std::string_view::npos) {
      Pi = Star + 1;
      Si = ++Mark;
    } else {
      return false;
    }
  }
  while (Pi < P.size() && P[Pi] == '*')
    ++Pi;
  return Pi == P.size();
}

bool matchesNodePattern(const ir::Node &N,
                        const std::vector<std::string> &Patterns) {
  for (const std::string &P : Patterns) {
    if (globMatch(P, N.name()) ||
        (!N.scope().Path.empty() && globMatch(P, N.scope().Path)))
      return true;
    for (const ir::Value *Y : N.outputs())
      if (Y && globMatch(P, Y->name()))
        return true;
  }
  return false;
}

std::vector<std::string> splitPatterns(std::string_view List) {
  std::vector<std::string> Out;
  while (!List.empty()) {
    size_t Comma = List.find(',');
    std::string_view P = List.substr(0, Comma);
    if (!P.empty())
      Out.emplace_back(P);
    if (Comma == std::string_view::npos)
      break;
    List.remove_prefix(Comma + 1);
  }
  return Out;
}

void checkPatternsMatch(const ir::Graph &G,
                        const std::vector<std::string> &Patterns,
                        std::string_view What) {
  for (const std::string &P : Patterns) {
    bool Any = false;
    for (const auto &N : G.nodes())
      Any = Any || matchesNodePattern(*N, {P});
    NNG_CHECK(Any, What, " '", P,
              "' matches no node's name, scope or output");
  }
}

} // namespace nng::passes
