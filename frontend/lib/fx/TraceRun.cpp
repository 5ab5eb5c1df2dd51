//===- TraceRun.cpp - Tracer::trace_graph, outputs and leaf modules -------===//
//
// Tracer::trace_graph checks the input specs, builds the graph inputs and
// their proxies (dynamic dims get example extents), installs the trace
// mode, runs the root module's forward, turns its result into graph
// outputs plus an OutputStructure, and drops nodes nothing uses. Leaf
// modules (Tracer::is_leaf_module) become one nng.ModuleCall node: the
// module runs eagerly once on the example data to learn its output types,
// and a registered callback (backends/Callbacks.h) runs it when the graph
// runs.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"
#include "nngraph/backends/Callbacks.h"
#include "nngraph/frontend/Autograd.h"
#include "nngraph/runtime/Error.h"

#include <cctype>
#include <set>

namespace nng::fx {

Tracer::~Tracer() = default;

bool Tracer::is_leaf_module(const nn::ModuleBase &, const std::string &) {
  return false;
}

namespace detail {

namespace {

bool isIdentifier(const std::string &S) {
  if (S.empty() || std::isdigit(static_cast<unsigned char>(S[0])))
    return false;
  for (char C : S)
    if (!std::isalnum(static_cast<unsigned char>(C)) && C != '_')
      return false;
  return true;
}

std::string specText(const std::string &Name, const InputSpec &S) {
  std::string R = Name + ": " + std::string(dtypeName(S.Type)) + "[";
  for (size_t I = 0; I < S.Dims.size(); ++I) {
    if (I)
      R += ",";
    R += S.Dims[I].isDynamic() ? S.Dims[I].name()
                               : std::to_string(S.Dims[I].extent());
  }
  return R + "]";
}

/// Drops nodes whose outputs nothing uses (shape helpers made by size()
/// calls whose results went unused); leaf calls stay (they may be impure).
void pruneDeadNodes(ir::Graph &G) {
  std::vector<ir::Node *> Order;
  for (const auto &N : G.nodes())
    Order.push_back(N.get());
  for (auto It = Order.rbegin(); It != Order.rend(); ++It) {
    ir::Node *N = *It;
    if (N->op() == ir::OpKind::ModuleCall)
      continue;
    bool Used = false;
    for (ir::Value *V : N->outputs())
      Used |= V->hasUses() || G.isOutput(V);
    if (!Used)
      G.eraseNode(N);
  }
}

} // namespace

bool isIdentifierName(const std::string &S) { return isIdentifier(S); }
std::string specTextOf(const std::string &N, const InputSpec &S) {
  return specText(N, S);
}

OutputStructure TraceState::addOutputs(const nn::Value &V) {
  OutputStructure OS;
  if (V.isTensor() && V.toTensor().defined()) {
    ir::Value *IV = valueOf(V.toTensor());
    // Inputs, initializers and repeated outputs get their own Identity.
    if (!IV->producer() || G->isOutput(IV)) {
      ir::Node *N = newNode(ir::OpKind::Identity, {IV}, {}, 1);
      N->setScope({"", Root.type_name()});
      N->output()->setType(IV->type());
      IV = N->output();
    }
    OS.K = OutputStructure::Kind::Tensor;
    OS.Index = G->outputs().size();
    G->addOutput(IV);
    return OS;
  }
  if (V.isSequence() || V.isDict()) {
    OS.K = V.isList()    ? OutputStructure::Kind::List
           : V.isTuple() ? OutputStructure::Kind::Tuple
                         : OutputStructure::Kind::Dict;
    for (const nn::Value &E : V.elements())
      OS.Children.push_back(addOutputs(E));
    if (V.isDict())
      OS.Keys = V.keys();
    return OS;
  }
  OS.K = OutputStructure::Kind::Constant;
  OS.Constant = V;
  return OS;
}

nn::Value TraceState::leafCall(nn::ModuleBase &M, const std::string &Path,
                               const std::vector<nn::Value> &Inputs) {
  std::string Desc = (Path.empty() ? std::string("<root>") : Path) + " (" +
                     M.type_name() + ")";
  // The tensor arguments, in order: the node's inputs.
  std::vector<Tensor> Args;
  for (const nn::Value &V : Inputs)
    for (const Tensor &T : V.tensors())
      if (T.defined())
        Args.push_back(T);
  std::vector<ir::Value *> Ins;
  for (const Tensor &T : Args)
    Ins.push_back(valueOf(T));

  // One eager run on the example data (buffers restored afterwards, so a
  // training-mode batchnorm keeps its running statistics).
  std::vector<nn::Value> ExIn;
  for (const nn::Value &V : Inputs)
    ExIn.push_back(V.mapTensors([](const Tensor &T) {
      return T.is_proxy() ? Tensor(T.data().clone()) : T;
    }));
  std::vector<std::pair<Tensor, rt::Tensor>> Saved;
  for (const auto &[Name, B] : M.named_buffers())
    if (B.defined())
      Saved.emplace_back(B, B.data().clone());
  nn::Value ExOut;
  {
    struct Depth {
      int &D;
      ~Depth() { --D; }
    } Dp{++EagerDepth};
    NoGradGuard NoGrad;
    try {
      ExOut = M.forwardValues(ExIn);
    } catch (Error &E) {
      E.addContext("while running leaf module " + Desc +
                   " on example inputs to learn its output types");
      for (auto &[B, D] : Saved)
        B.impl()->Data.copyFrom(D);
      throw;
    }
  }
  for (auto &[B, D] : Saved)
    B.impl()->Data.copyFrom(D);
  std::vector<Tensor> ExOuts;
  for (const Tensor &T : ExOut.tensors())
    if (T.defined())
      ExOuts.push_back(T);
  if (ExOuts.empty())
    failTrace("leaf module " + Desc + " returned no tensor; a leaf call "
              "must produce at least one tensor");

  // The callback: rebuilds forward's arguments from the node's inputs.
  std::vector<nn::Value> Template;
  for (const nn::Value &V : Inputs)
    Template.push_back(V.mapTensors([](const Tensor &T) {
      return T.defined() ? Tensor(rt::Tensor::scalar<float>(0.0f)) : Tensor();
    }));
  std::shared_ptr<nn::ModuleBase> Keep = M.weak_from_this().lock();
  nn::ModuleBase *Raw = &M;
  backends::ModuleCallback Fn =
      [Raw, Template](const std::vector<rt::Tensor> &In) {
        size_t K = 0;
        std::vector<nn::Value> A;
        for (const nn::Value &V : Template)
          A.push_back(V.mapTensors([&](const Tensor &T) {
            if (!T.defined())
              return Tensor();
            NNG_CHECK(K < In.size(), "leaf module call: ", In.size(),
                      " inputs given, more expected");
            return Tensor(In[K++]);
          }));
        NoGradGuard NoGrad;
        nn::Value R = Raw->forwardValues(A);
        std::vector<rt::Tensor> Outs;
        for (const Tensor &T : R.tensors())
          if (T.defined())
            Outs.push_back(T.data().contiguous());
        return Outs;
      };
  std::shared_ptr<backends::CallbackHandle> H =
      backends::registerCallback(std::move(Fn));
  KeepAlive.push_back(H);
  if (Keep)
    KeepAlive.push_back(Keep);

  ir::AttrMap A;
  A.set("callback", ir::Attribute(H->id()));
  A.set("module", ir::Attribute(Path));
  A.set("module_type", ir::Attribute(M.type_name()));
  ir::Node *N = newNode(ir::OpKind::ModuleCall, Ins, A,
                        static_cast<unsigned>(ExOuts.size()));
  // Output types: the example's; an extent equal to the example extent of
  // a symbol among the inputs' dims is taken as that symbol.
  std::map<int64_t, std::string> SymOf;
  for (ir::Value *V : Ins)
    if (V && V->type().hasRank())
      for (const ir::Dim &D : V->type().dims())
        if (D.isSymbolic())
          if (auto It = SymbolExtents.find(D.symbol());
              It != SymbolExtents.end())
            SymOf[It->second] = D.symbol();
  std::vector<Tensor> Proxies;
  for (size_t I = 0; I < ExOuts.size(); ++I) {
    const rt::Tensor &O = ExOuts[I].data();
    std::vector<ir::Dim> Dims;
    for (int64_t E : O.shape().dims()) {
      auto It = SymOf.find(E);
      Dims.push_back(It != SymOf.end() ? ir::Dim::symbol(It->second)
                                       : ir::Dim(E));
    }
    N->output(I)->setType(ir::TensorType(O.dtype(), std::move(Dims)));
    Proxies.push_back(makeProxy(N->output(I), O.contiguous()));
  }
  size_t K = 0;
  return ExOut.mapTensors([&](const Tensor &T) {
    return T.defined() ? Proxies[K++] : Tensor();
  });
}

bool TraceState::callModule(nn::ModuleBase &M, const std::string &Path,
                            const std::vector<nn::Value> &Inputs,
                            nn::Value &Out) {
  if (activeTrace() != this || !TheTracer.is_leaf_module(M, Path))
    return false;
  Out = leafCall(M, Path, Inputs);
  return true;
}

} // namespace detail

TraceResult Tracer::trace_graph(nn::ModuleBase &Root,
                                const std::vector<InputSpec> &Inputs,
                                const ArgPacker &Pack) {
  if (detail::anyTrace())
    fail(ErrorKind::InvalidArgument,
         "symbolic_trace(", Root.type_name(),
         "): a trace is already running on this thread; tracing inside a "
         "traced forward is not supported");
  std::vector<std::string> Names;
  std::set<std::string> Seen;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const InputSpec &S = Inputs[I];
    std::string Name = !S.Name.empty()        ? S.Name
                       : Inputs.size() == 1 ? std::string("x")
                                            : "x" + std::to_string(I);
    if (!Seen.insert(Name).second)
      fail(ErrorKind::InvalidArgument, "symbolic_trace(", Root.type_name(),
           "): input ", I, " is named '", Name,
           "' like an earlier input; give each input a unique name");
    for (size_t D = 0; D < S.Dims.size(); ++D) {
      const Dim &X = S.Dims[D];
      if (X.isDynamic() && !detail::isIdentifierName(X.name()))
        fail(ErrorKind::InvalidArgument, "symbolic_trace(", Root.type_name(),
             "): input '", Name, "' dim ", D, " is named '", X.name(),
             "'; a dynamic dim needs an identifier (letters, digits, _)");
      if (!X.isDynamic() && X.extent() < 0)
        fail(ErrorKind::InvalidArgument, "symbolic_trace(", Root.type_name(),
             "): input '", Name, "' dim ", D, " has extent ", X.extent(),
             "; use a non-negative extent, or a name for a dynamic dim");
    }
    Names.push_back(std::move(Name));
  }

  detail::TraceState S(*this, Root);
  std::vector<nn::Value> Args;
  std::string Specs;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    if (S.G->lookup(Names[I]))
      fail(ErrorKind::InvalidArgument, "symbolic_trace(", Root.type_name(),
           "): input name '", Names[I],
           "' is also a state_dict key; name the input differently");
    Args.emplace_back(S.addInput(Inputs[I], Names[I]));
    Specs += (I ? ", " : "") + detail::specTextOf(Names[I], Inputs[I]);
  }

  struct Reset {
    ~Reset() { detail::setCurrent(nullptr); }
  } R;
  detail::setCurrent(&S);
  OutputStructure Out;
  {
    dispatch::ModeGuard MG(S);
    try {
      if (Pack) {
        std::vector<Tensor> Proxies;
        for (const nn::Value &A : Args)
          Proxies.push_back(A.toTensor());
        Args = Pack(Proxies);
      }
      nn::Value Result = Root.call(Args);
      Out = S.addOutputs(Result);
    } catch (Error &E) {
      E.addContext("while tracing " + Root.type_name() + " with " +
                   std::to_string(Inputs.size()) + " input(s) " + Specs);
      throw;
    }
  }
  detail::pruneDeadNodes(*S.G);
  // Output names as torch.fx's: "output", or "output_0", "output_1", ...
  const auto &Outs = S.G->outputs();
  for (size_t I = 0; I < Outs.size(); ++I) {
    std::string Name =
        Outs.size() == 1 ? std::string("output") : "output_" + std::to_string(I);
    if (!S.G->lookup(Name))
      S.G->rename(Outs[I], Name);
  }
  return TraceResult{S.G, std::move(Out), std::move(S.KeepAlive),
                     Root.type_name()};
}

} // namespace nng::fx
