//===- ModulePrinting.cpp - Printing the module tree like PyTorch --------===//
//
// ModuleBase::to_string() reproduces PyTorch's Module.__repr__: the type
// name, then either the one-line extra_repr in parentheses, or one line
// per extra_repr line and per child "(name): <child repr>", each indented
// by two spaces, with the child's own lines indented once more
// (_addindent).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Module.h"

#include <ostream>
#include <sstream>

namespace nng::nn {

namespace {

std::vector<std::string> splitLines(const std::string &S) {
  std::vector<std::string> Lines;
  std::string Cur;
  std::istringstream IS(S);
  while (std::getline(IS, Cur))
    Lines.push_back(Cur);
  if (!S.empty() && S.back() == '\n')
    Lines.push_back("");
  return Lines;
}

/// PyTorch's _addindent: every line but the first gets N more spaces.
std::string addIndent(const std::string &S, int N) {
  std::vector<std::string> Lines = splitLines(S);
  if (Lines.size() <= 1)
    return S;
  std::string R = Lines[0];
  for (size_t I = 1; I < Lines.size(); ++I) {
    R.push_back('\n');
    R.append(static_cast<size_t>(N), ' ');
    R.append(Lines[I]);
  }
  return R;
}

} // namespace

std::string ModuleBase::extra_repr() const { return ""; }

std::string ModuleBase::to_string() const {
  std::vector<std::string> ExtraLines;
  if (std::string Extra = extra_repr(); !Extra.empty())
    ExtraLines = splitLines(Extra);
  std::vector<std::string> ChildLines;
  for (const auto &[Name, C] : Children) {
    std::string Line = "(";
    Line.append(Name).append("): ");
    Line.append(addIndent(C ? C->to_string() : "None", 2));
    ChildLines.push_back(std::move(Line));
  }
  std::string S = TypeName + "(";
  if (ExtraLines.size() == 1 && ChildLines.empty()) {
    S += ExtraLines[0];
  } else if (!ExtraLines.empty() || !ChildLines.empty()) {
    S += "\n";
    for (const std::string &L : ExtraLines)
      S += "  " + L + "\n";
    for (const std::string &L : ChildLines)
      S += "  " + L + "\n";
  }
  return S + ")";
}

std::ostream &operator<<(std::ostream &OS, const ModuleBase &M) {
  return OS << M.to_string();
}

} // namespace nng::nn
