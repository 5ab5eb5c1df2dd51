//===- Interpreter.cpp - Run a graph node by node, with a hook -----------===//
//
// The Interpreter keeps an environment (value -> tensor) and runs each node
// through run_node(). The default runs the node through a SingleOpCache on
// the Interpreter's backend (the eager dispatcher's single-op executables,
// compiled for that backend); "eager" hands the node to dispatch::runEager
// and the eager dispatcher's own cache. compareBackends()
// and compareTensors() live here too.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/fx/Interpreter.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/Dispatch.h"
#include "nngraph/frontend/SingleOpCache.h"
#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace nng::fx {

namespace {

/// Prefix followed by I ("x0"); spelled out to dodge GCC 12's bogus
/// -Wrestrict on "lit" + std::to_string(...).
std::string numbered(const char *Prefix, size_t I) {
  std::string S(Prefix);
  S += std::to_string(I);
  return S;
}

/// "node %y = Conv ('conv_0') in features.0 (Conv2d)".
std::string describeWithScope(const ir::Node &N) {
  std::string S = N.describe();
  if (!N.scope().empty())
    S += " in " +
         (N.scope().Path.empty() ? std::string("<root>") : N.scope().Path) +
         " (" + N.scope().ModuleType + ")";
  return S;
}

} // namespace

/// The nodes' single-op executables on the Interpreter's backend.
struct Interpreter::NodeCache {
  explicit NodeCache(backends::Backend &B)
      : Ops([&B](const ir::Graph &One) { return B.compile(One); }) {}
  dispatch::SingleOpCache Ops;
};

Interpreter::Interpreter(const ir::Graph &G, std::string Backend)
    : G(G), BackendName(std::move(Backend)) {
  if (BackendName != "eager") // getBackend throws listing the known names.
    Cache = std::make_unique<NodeCache>(backends::getBackend(BackendName));
}

Interpreter::Interpreter(const GraphModule &GM)
    : Interpreter(GM.graph(), GM.backend()) {}

Interpreter::~Interpreter() = default;

const rt::Tensor *Interpreter::valueOf(const ir::Value *V) const {
  auto It = Env.find(V);
  return It == Env.end() ? nullptr : &It->second;
}

std::vector<rt::Tensor>
Interpreter::runOnBackend(const ir::Node &N,
                          const std::vector<rt::Tensor> &Inputs) {
  auto Implicit = static_cast<unsigned>(N.numImplicitInputs());
  if (BackendName == "eager")
    return dispatch::runEager(N.op(), Inputs, N.attrs(),
                              static_cast<unsigned>(N.numOutputs()), Implicit);
  return Cache->Ops.run(N.op(), Inputs, N.attrs(),
                        static_cast<unsigned>(N.numOutputs()), Implicit);
}

std::vector<rt::Tensor>
Interpreter::run_node(const ir::Node &N,
                      const std::vector<rt::Tensor> &Inputs) {
  return runOnBackend(N, Inputs);
}

std::vector<rt::Tensor>
Interpreter::run(const std::vector<rt::Tensor> &Inputs) {
  backends::checkInputs(G, Inputs);
  Env.clear();
  for (size_t I = 0; I < Inputs.size(); ++I)
    Env[G.inputs()[I]] = Inputs[I];
  for (const ir::Value *V : G.initializers()) {
    NNG_CHECK(V->data().defined(), "Interpreter: initializer '", V->name(),
              "' has no data (it was elided when the graph was printed); "
              "load the weights (load_state_dict) before running");
    Env[V] = V->data();
  }
  std::vector<rt::Tensor> Args;
  for (const auto &NP : G.nodes()) {
    const ir::Node &N = *NP;
    Args.clear();
    for (const ir::Value *V : N.inputs()) {
      if (!V) {
        Args.emplace_back();
        continue;
      }
      auto It = Env.find(V);
      NNG_CHECK_KIND(It != Env.end(), Verify, "Interpreter: ", N.describe(),
                     " uses %", V->name(),
                     " before it is computed (the nodes are not in "
                     "topological order; run Graph::topologicalSort)");
      Args.push_back(It->second);
    }
    std::vector<rt::Tensor> Outs;
    try {
      Outs = run_node(N, Args);
    } catch (Error &Err) {
      Err.addContext("in " + describeWithScope(N) + " (interpreting on '" +
                     BackendName + "')");
      throw;
    }
    NNG_CHECK_KIND(Outs.size() == N.numOutputs(), Internal,
                   "Interpreter: ", describeWithScope(N), " returned ",
                   Outs.size(), " tensors for ", N.numOutputs(), " outputs");
    for (size_t I = 0; I < Outs.size(); ++I)
      Env[N.output(I)] = std::move(Outs[I]);
  }
  std::vector<rt::Tensor> Result;
  Result.reserve(G.outputs().size());
  for (const ir::Value *V : G.outputs()) {
    auto It = Env.find(V);
    NNG_CHECK_KIND(It != Env.end(), Verify, "Interpreter: graph output %",
                   V->name(), " is never computed");
    Result.push_back(It->second);
  }
  return Result;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

std::string compareTensors(const rt::Tensor &A, const rt::Tensor &B,
                           Tolerances T, double &MaxError) {
  const double Inf = std::numeric_limits<double>::infinity();
  MaxError = 0;
  if (A.defined() != B.defined()) {
    MaxError = Inf;
    return A.defined() ? "the second tensor is undefined"
                       : "the first tensor is undefined";
  }
  if (!A.defined())
    return "";
  if (A.dtype() != B.dtype() || A.shape() != B.shape()) {
    MaxError = Inf;
    std::ostringstream OS;
    OS << (A.dtype() != B.dtype() ? "dtype" : "shape") << " "
       << dtypeName(A.dtype()) << A.shape().toString() << " vs "
       << dtypeName(B.dtype()) << B.shape().toString();
    return OS.str();
  }
  std::vector<double> VA = A.toDoubleVector(), VB = B.toDoubleVector();
  bool Exact = !isFloatingPoint(A.dtype());
  int64_t Worst = -1;
  bool Failed = false;
  int64_t FirstBad = -1;
  for (size_t I = 0; I < VA.size(); ++I) {
    double X = VA[I], Y = VB[I];
    if (std::isnan(X) && std::isnan(Y))
      continue;
    double E = (std::isnan(X) || std::isnan(Y)) ? Inf
               : X == Y                         ? 0.0
                                                : std::fabs(X - Y);
    if (std::isnan(E)) // inf - inf of the same sign compared above.
      E = Inf;
    if (E > MaxError || Worst < 0) {
      if (E > MaxError)
        MaxError = E;
      Worst = static_cast<int64_t>(I);
    }
    bool Bad = Exact ? E != 0.0 : !(E <= T.Atol + T.Rtol * std::fabs(Y));
    if (Bad && FirstBad < 0)
      FirstBad = static_cast<int64_t>(I);
    Failed |= Bad;
  }
  if (!Failed)
    return "";
  std::ostringstream OS;
  OS << "max error " << MaxError << " at element " << Worst << " (" << VA[Worst]
     << " vs " << VB[Worst] << "); first element out of "
     << "tolerance: " << FirstBad << " (atol " << T.Atol << ", rtol " << T.Rtol
     << ")";
  return OS.str();
}

std::string BackendDiff::message() const {
  if (!Differs)
    return numbered("all ", NodesCompared) + " nodes agree";
  std::ostringstream OS;
  OS << "first node that differs: #" << NodeIndex << " '" << NodeName << "' ("
     << Op << ")";
  if (!ScopePath.empty() || !ScopeType.empty())
    OS << " in " << (ScopePath.empty() ? "<root>" : ScopePath) << " ("
       << ScopeType << ")";
  OS << ", output %" << OutputName << ": " << Detail;
  return OS.str();
}

BackendDiff compareInterpreters(Interpreter &A, Interpreter &B,
                                const std::vector<rt::Tensor> &Inputs,
                                Tolerances T) {
  NNG_CHECK(&A.graph() == &B.graph(),
            "compareInterpreters: the two interpreters run different graphs");
  A.run(Inputs);
  BackendDiff D;
  const ir::Graph &G = A.graph();
  std::vector<rt::Tensor> Args;
  for (size_t Idx = 0; Idx < G.nodes().size(); ++Idx) {
    const ir::Node &N = *G.nodes()[Idx];
    Args.clear();
    for (const ir::Value *V : N.inputs())
      Args.push_back(V ? *A.valueOf(V) : rt::Tensor());
    std::vector<rt::Tensor> Outs;
    try {
      Outs = B.run_node(N, Args);
    } catch (Error &Err) {
      Err.addContext("in " + describeWithScope(N) + " on '" + B.backend() +
                     "' (comparing with '" + A.backend() + "')");
      throw;
    }
    ++D.NodesCompared;
    for (size_t O = 0; O < N.numOutputs(); ++O) {
      double Max = 0;
      std::string Why =
          O < Outs.size()
              ? compareTensors(*A.valueOf(N.output(O)), Outs[O], T, Max)
              : "missing output";
      if (Why.empty())
        continue;
      D.Differs = true;
      D.NodeIndex = Idx;
      D.NodeName = N.name();
      D.Op = N.schema().qualifiedName();
      D.ScopePath = N.scope().Path;
      D.ScopeType = N.scope().ModuleType;
      D.OutputName = N.output(O)->name();
      D.MaxError =
          O < Outs.size() ? Max : std::numeric_limits<double>::infinity();
      D.Detail = A.backend() + " vs " + B.backend() + ": " + Why;
      return D;
    }
  }
  return D;
}

BackendDiff compareBackends(const ir::Graph &G,
                            const std::vector<rt::Tensor> &Inputs,
                            const std::string &A, const std::string &B,
                            Tolerances T) {
  Interpreter IA(G, A), IB(G, B);
  return compareInterpreters(IA, IB, Inputs, T);
}

} // namespace nng::fx
