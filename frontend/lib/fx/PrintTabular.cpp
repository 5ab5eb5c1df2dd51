//===- PrintTabular.cpp - GraphModule::print_tabular, torch.fx style -----===//
//
// Prints a GraphModule's graph as torch.fx's print_tabular does (tabulate's
// "simple" layout: a header, a dashed rule, one left-aligned row per
// entry): placeholder rows for the graph inputs, get_attr rows for the
// initializers (target = the state_dict key), call_function rows for nodes
// (call_module, with the module path as target, for nng.ModuleCall, which
// runs a leaf module), and one output row. The scope column says where a
// node was traced from ("fc (Linear)").
// Trailing blanks are trimmed so the lines compare well in tests.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/GraphModule.h"

#include <algorithm>
#include <array>

namespace nng::fx {

namespace {

using Row = std::array<std::string, 5>;

/// "(a, b)" / "(a,)" / "()" as Python prints tuples; absent inputs "None".
std::string tupleOf(const std::vector<ir::Value *> &Vs) {
  std::string S = "(";
  for (size_t I = 0; I < Vs.size(); ++I) {
    if (I)
      S += ", ";
    S += Vs[I] ? Vs[I]->name() : std::string("None");
  }
  if (Vs.size() == 1)
    S += ",";
  return S + ")";
}

std::string scopeOf(const ir::Scope &Sc) {
  if (Sc.empty())
    return "";
  std::string P = Sc.Path.empty() ? std::string("<root>") : Sc.Path;
  return Sc.ModuleType.empty() ? P : P + " (" + Sc.ModuleType + ")";
}

} // namespace

std::string GraphModule::print_tabular() const {
  std::vector<Row> Rows;
  Rows.push_back({"opcode", "name", "target", "args", "scope"});
  for (const ir::Value *V : G->inputs())
    Rows.push_back({"placeholder", V->name(), V->name(), "()", ""});
  for (const ir::Value *V : G->initializers())
    Rows.push_back({"get_attr", V->name(), V->name(), "()", ""});
  for (const auto &N : G->nodes()) {
    std::string Names;
    for (const ir::Value *V : N->outputs())
      Names += (Names.empty() ? "" : ", ") + V->name();
    std::string Target = N->schema().qualifiedName();
    bool IsModuleCall = Target == "nng.ModuleCall";
    if (IsModuleCall) {
      const ir::Attribute *A = N->attrs().find("module");
      if (A && A->type() == ir::AttrType::String)
        Target = A->s();
      else if (!N->scope().Path.empty())
        Target = N->scope().Path;
    }
    Rows.push_back({IsModuleCall ? "call_module" : "call_function", Names,
                    Target, tupleOf(N->inputs()), scopeOf(N->scope())});
  }
  Rows.push_back({"output", "output", "output", tupleOf(G->outputs()), ""});

  std::array<size_t, 5> Width{};
  for (const Row &R : Rows)
    for (size_t C = 0; C < R.size(); ++C)
      Width[C] = std::max(Width[C], R[C].size());
  auto Line = [&](const Row &R) {
    std::string S;
    for (size_t C = 0; C < R.size(); ++C) {
      if (C)
        S += "  ";
      S += R[C];
      S.append(Width[C] - R[C].size(), ' ');
    }
    while (!S.empty() && S.back() == ' ')
      S.pop_back();
    return S + "\n";
  };
  std::string Out = Line(Rows[0]);
  Row Rule;
  for (size_t C = 0; C < Rule.size(); ++C)
    Rule[C] = std::string(Width[C], '-');
  Out += Line(Rule);
  for (size_t I = 1; I < Rows.size(); ++I)
    Out += Line(Rows[I]);
  return Out;
}

} // namespace nng::fx
