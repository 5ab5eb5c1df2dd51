//===- GraphModule.cpp - A traced graph with its weights, callable -------===//
//
// GraphModule runs its graph on the chosen backend (compiled on the first
// forward and cached until the backend, the weights or the graph change),
// rebuilds forward's result from the OutputStructure, exchanges weights as
// state dicts under the source module's keys, prints as text IR and saves
// by extension. print_tabular() lives in PrintTabular.cpp.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/runtime/Error.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::fx {

namespace {

/// "'Net'" or "the graph module" for messages.
std::string who(const std::string &SourceType) {
  return SourceType.empty() ? std::string("GraphModule")
                            : "GraphModule of '" + SourceType + "'";
}

/// Rebuilds the value S describes from the graph outputs Outs.
nn::Value rebuild(const OutputStructure &S, const std::vector<rt::Tensor> &Outs,
                  const std::string &Who) {
  switch (S.K) {
  case OutputStructure::Kind::Tensor:
    NNG_CHECK_KIND(S.Index < Outs.size(), Internal, Who,
                   ": the output structure refers to graph output ", S.Index,
                   " but the graph has ", Outs.size(), " outputs");
    return nn::Value(Tensor(Outs[S.Index]));
  case OutputStructure::Kind::Constant:
    return S.Constant;
  case OutputStructure::Kind::List:
  case OutputStructure::Kind::Tuple: {
    std::vector<nn::Value> Elems;
    Elems.reserve(S.Children.size());
    for (const OutputStructure &C : S.Children)
      Elems.push_back(rebuild(C, Outs, Who));
    return S.K == OutputStructure::Kind::List
               ? nn::Value::list(std::move(Elems))
               : nn::Value::tuple(std::move(Elems));
  }
  case OutputStructure::Kind::Dict: {
    NNG_CHECK_KIND(S.Keys.size() == S.Children.size(), Internal, Who,
                   ": a dict output structure has ", S.Keys.size(),
                   " keys for ", S.Children.size(), " values");
    std::vector<std::pair<std::string, nn::Value>> Entries;
    for (size_t I = 0; I < S.Children.size(); ++I)
      Entries.emplace_back(S.Keys[I], rebuild(S.Children[I], Outs, Who));
    return nn::Value::dict(std::move(Entries));
  }
  }
  fail(ErrorKind::Internal, Who, ": unknown output structure kind");
}

} // namespace

GraphModule::GraphModule(std::shared_ptr<ir::Graph> G, OutputStructure Out,
                         std::vector<std::shared_ptr<void>> KeepAlive,
                         std::string SourceType)
    : G(std::move(G)), Out(std::move(Out)), KeepAlive(std::move(KeepAlive)),
      SourceType(std::move(SourceType)) {
  NNG_CHECK(this->G, "GraphModule: the graph is null");
}

void GraphModule::set_backend(std::string Name) {
  backends::getBackend(Name); // Throws listing the known names.
  if (Name != BackendName)
    Exec.reset();
  BackendName = std::move(Name);
}

void GraphModule::recompile() {
  Exec.reset();
  std::unique_ptr<backends::Executable> E;
  try {
    E = backends::getBackend(BackendName).compile(*G);
  } catch (Error &Err) {
    Err.addContext("while compiling the " + who(SourceType) + " on backend '" +
                   BackendName + "'");
    throw;
  }
  Exec = std::move(E);
}

nn::Value GraphModule::forward(const std::vector<Tensor> &Inputs) {
  std::vector<rt::Tensor> Data;
  Data.reserve(Inputs.size());
  for (size_t I = 0; I < Inputs.size(); ++I) {
    NNG_CHECK(Inputs[I].defined(), who(SourceType), ".forward: input ", I,
              I < G->inputs().size() ? " ('" + G->inputs()[I]->name() + "')"
                                     : std::string(),
              " is an undefined tensor");
    Data.push_back(Inputs[I].data().contiguous());
  }
  try {
    backends::checkInputs(*G, Data);
  } catch (Error &Err) {
    Err.addContext("in " + who(SourceType) + ".forward (graph inputs: " + [&] {
      std::string S;
      for (const ir::Value *V : G->inputs())
        S +=
            (S.empty() ? "%" : ", %") + V->name() + ": " + V->type().toString();
      return S;
    }() + ")");
    throw;
  }
  if (!Exec)
    recompile();
  std::vector<rt::Tensor> Outs = Exec->run(Data);
  return rebuild(Out, Outs, who(SourceType));
}

Tensor GraphModule::operator()(const std::vector<Tensor> &Inputs) {
  nn::Value V = forward(Inputs);
  NNG_CHECK(V.isTensor(), who(SourceType),
            ": operator() wants a single-tensor result but forward returns ",
            nn::Value::kindName(V.kind()), "; call forward() instead");
  return V.toTensor();
}

nn::StateDict GraphModule::state_dict() const {
  nn::StateDict SD;
  for (const ir::Value *V : G->initializers())
    SD.insert(V->name(), V->data().defined() ? Tensor(V->data()) : Tensor());
  return SD;
}

nn::LoadStateDictResult GraphModule::load_state_dict(const nn::StateDict &SD,
                                                     bool Strict) {
  nn::LoadStateDictResult R;
  std::vector<std::string> Problems;
  std::vector<std::pair<ir::Value *, rt::Tensor>> Updates;
  std::unordered_set<std::string> Known;
  for (ir::Value *V : G->initializers()) {
    Known.insert(V->name());
    if (!SD.contains(V->name())) {
      R.missing_keys.push_back(V->name());
      continue;
    }
    const Tensor &T = SD.at(V->name());
    std::string Want = V->type().toString();
    if (!T.defined()) {
      Problems.push_back("'" + V->name() +
                         "': the state dict holds an "
                         "undefined tensor, the module wants " +
                         Want);
      continue;
    }
    std::optional<Shape> S = V->type().staticShape();
    if (!S || *S != T.shape()) {
      Problems.push_back("'" + V->name() +
                         "': size mismatch, the state dict "
                         "has " +
                         T.shape().toString() + ", the module has " + Want);
      continue;
    }
    rt::Tensor Data = T.data().dtype() == V->type().dtype()
                          ? T.data().clone()
                          : T.data().to(V->type().dtype());
    Updates.emplace_back(V, std::move(Data));
  }
  for (const auto &[Key, T] : SD)
    if (!Known.count(Key))
      R.unexpected_keys.push_back(Key);
  size_t ShapeProblems = Problems.size();
  if (Strict) {
    for (const std::string &K : R.missing_keys)
      Problems.push_back("missing key '" + K + "' (the module has " +
                         G->lookup(K)->type().toString() + ")");
    for (const std::string &K : R.unexpected_keys)
      Problems.push_back("unexpected key '" + K + "' (the state dict has " +
                         SD.at(K).shape().toString() + ")");
  }
  if (!Problems.empty()) {
    std::string Msg = "Error(s) in loading state_dict for " + who(SourceType) +
                      " (nothing was changed):";
    for (const std::string &P : Problems)
      Msg += "\n  " + P;
    if (ShapeProblems)
      Msg += "\nload weights of the same architecture (or fix the shapes)";
    if (Problems.size() > ShapeProblems)
      Msg += "\npass strict=false to load only the matching keys";
    fail(ErrorKind::InvalidArgument, Msg);
  }
  for (auto &[V, T] : Updates)
    V->setData(std::move(T));
  Exec.reset(); // A backend may have baked the old weights in.
  return R;
}

std::string GraphModule::code() const { return ir::printGraph(*G); }

void GraphModule::save(const std::string &Path) const {
  try {
    frontend::saveModel(*G, Path);
  } catch (Error &Err) {
    Err.addContext("while saving the " + who(SourceType) + " to '" + Path +
                   "'");
    throw;
  }
}

} // namespace nng::fx
