//===- ToolSupport.cpp - Dim bindings and tool support -------------------===//
//
// Parsing of --dim NAME=VALUE, the symbols of a graph's inputs, and the
// version string. Deterministic inputs live in backends/Inputs.cpp.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ToolSupport.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#ifndef NNGRAPH_VERSION_STRING
#define NNGRAPH_VERSION_STRING "unknown"
#endif

namespace nng::tools {

void parseDimBinding(std::string_view Text, DimBindings &Dims) {
  size_t Eq = Text.find('=');
  NNG_CHECK(Eq != std::string_view::npos && Eq > 0, "bad dim binding '", Text,
            "': expected NAME=VALUE, e.g. N=4");
  std::string_view Name = Text.substr(0, Eq), Val = Text.substr(Eq + 1);
  int64_t V = 0;
  auto [Ptr, Ec] = std::from_chars(Val.data(), Val.data() + Val.size(), V);
  NNG_CHECK(Ec == std::errc() && Ptr == Val.data() + Val.size() && V > 0,
            "bad dim binding '", Text,
            "': the value must be a positive integer");
  Dims[std::string(Name)] = V;
}

std::vector<std::string> inputSymbols(const ir::Graph &G) {
  std::set<std::string> Syms;
  for (const ir::Value *V : G.inputs())
    if (V->type().hasRank())
      for (const ir::Dim &D : V->type().dims())
        if (D.isSymbolic())
          Syms.insert(D.symbol());
  return {Syms.begin(), Syms.end()};
}

void checkDimBindings(const ir::Graph &G, const DimBindings &Dims) {
  std::vector<std::string> Syms = inputSymbols(G);
  for (const auto &[Name, Value] : Dims) {
    if (std::binary_search(Syms.begin(), Syms.end(), Name))
      continue;
    std::string Known;
    for (const std::string &S : Syms)
      Known += (Known.empty() ? "" : ", ") + S;
    fail(ErrorKind::InvalidArgument, "--dim ", Name, "=", Value,
         ": the model's inputs have no symbolic dim '", Name, "' (",
         Known.empty() ? "they have none" : "they have: " + Known, ")");
  }
}

std::string_view toolsVersion() { return NNGRAPH_VERSION_STRING; }

std::string dataFile(const std::string &SourcePath,
                     const std::string &Installed) {
  namespace fs = std::filesystem;
  std::error_code Ec;
  if (fs::exists(SourcePath, Ec))
    return SourcePath;
  fs::path Exe = fs::read_symlink("/proc/self/exe", Ec);
  if (!Ec) {
    fs::path P = Exe.parent_path().parent_path() / "share" / "nngraph" /
                 Installed;
    if (fs::exists(P, Ec))
      return P.string();
  }
  return SourcePath;
}

} // namespace nng::tools
