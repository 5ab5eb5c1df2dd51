//===- Trace.cpp - The trace dispatch mode: ops to graph nodes ------------===//
//
// TraceState::call records each dispatched op as a node of the graph being
// built: its inputs are looked up or captured (proxies, initializers named
// by state_dict keys, Constant nodes), its output types come from the op
// table's inference (symbolic dims kept; Reshape/Expand refined from the
// tracked content of their shape operand). The returned proxies carry
// example data of example shapes (symbolic dims at their example extents).
// The graph inputs' example data are zeros, so what depends on them has no
// meaningful values: when inference fixes every result's shape and all are
// floating point (float values never decide a shape: reading them throws),
// the results are zeros and the op does not run. Otherwise (integer
// results, which may be shapes; results inference leaves open; results of
// constants alone, which a hook may keep) it runs eagerly on the example
// data.
// Also here: the thread's active trace, TraceError and isTracing.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"
#include "nngraph/frontend/detail/EagerInternal.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cctype>

namespace nng::fx {

TraceError::TraceError(std::string Message)
    : Error(ErrorKind::Unsupported, std::move(Message)) {}

namespace detail {

namespace {
thread_local TraceState *Current = nullptr;

/// "conv" for Conv: the base of output value names.
std::string lowerName(ir::OpKind Op) {
  std::string S(ir::getOpSchema(Op).Name);
  for (char &C : S)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return S;
}

} // namespace

TraceState *activeTrace() {
  return Current && Current->EagerDepth == 0 ? Current : nullptr;
}
TraceState *anyTrace() { return Current; }

void setCurrent(TraceState *S) { Current = S; }

[[noreturn]] void failTrace(const std::string &What) {
  std::string Where = Current ? Current->where() : std::string("<unknown>");
  throw TraceError(What + " (while tracing module " + Where + ")");
}

TraceState::TraceState(Tracer &T, nn::ModuleBase &Root)
    : TheTracer(T), Root(Root), G(std::make_shared<ir::Graph>()) {
  installTraceHooks();
  G->setName(Root.type_name());
  // Initializers in state_dict order (a shared tensor once, under its first
  // key), then buffers left out of the state dict (non-persistent ones).
  auto Add = [&](const std::string &Key, const Tensor &P) {
    if (!P.defined() || Captured.count(P.impl().get()))
      return;
    ir::Value *V = G->addInitializer(Key, P.data().contiguous());
    Captured[P.impl().get()] = V;
    KeepImpls.push_back(P.impl());
  };
  for (const auto &[Key, P] : Root.state_dict("", /*KeepVars=*/true))
    Add(Key, P);
  for (const auto &[Key, P] : Root.named_buffers())
    Add(Key, P);
  for (const auto &[Key, P] : Root.named_parameters())
    Add(Key, P);
}

TraceState::~TraceState() = default;

std::string TraceState::where() const {
  const auto &Scopes = dispatch::moduleScopes();
  if (Scopes.empty())
    return "<root> (" + Root.type_name() + ")";
  const auto &[Path, Type] = Scopes.back();
  return (Path.empty() ? std::string("<root>") : Path) + " (" + Type + ")";
}

bool TraceState::ownsValue(const void *V) const { return OwnValues.count(V); }

std::string TraceState::constantName() {
  return G->uniqueName("_tensor_constant" + std::to_string(NumConstants++));
}

Tensor TraceState::makeProxy(ir::Value *V, rt::Tensor Example) {
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Data = std::move(Example);
  Impl->TraceValue = V;
  OwnValues.insert(V);
  return Tensor(std::move(Impl));
}

Tensor TraceState::addInput(const InputSpec &Spec, const std::string &Name) {
  std::vector<ir::Dim> Dims;
  std::vector<int64_t> Example;
  for (const Dim &D : Spec.Dims) {
    if (D.isDynamic()) {
      auto It = SymbolExtents.find(D.name());
      if (It == SymbolExtents.end()) {
        // Distinct, unusual example extents (5, 7, 11, ...) keep symbols
        // apart from each other and from typical static sizes.
        static const int64_t Primes[] = {5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
        size_t K = SymbolExtents.size();
        int64_t E = K < std::size(Primes) ? Primes[K] : 41 + 2 * int64_t(K);
        It = SymbolExtents.emplace(D.name(), E).first;
      }
      Dims.push_back(ir::Dim::symbol(D.name()));
      Example.push_back(It->second);
    } else {
      Dims.push_back(ir::Dim(D.extent()));
      Example.push_back(D.extent());
    }
  }
  ir::Value *V = G->addInput(Name, ir::TensorType(Spec.Type, std::move(Dims)));
  InputDependent.insert(V);
  return makeProxy(V, rt::Tensor::empty(Shape(Example), Spec.Type) /* zero-filled */);
}

ir::Node *TraceState::newNode(ir::OpKind Op, std::vector<ir::Value *> Ins,
                              const ir::AttrMap &Attrs, unsigned NumOutputs) {
  std::string Base = lowerName(Op);
  std::vector<std::string> Names(NumOutputs, Base);
  ir::Node *N = G->addNode(Op, std::move(Ins), std::move(Names), Attrs);
  N->setName(std::string(ir::getOpSchema(Op).Name) + "_" +
             std::to_string(NumNodes++));
  const auto &Scopes = dispatch::moduleScopes();
  if (!Scopes.empty())
    N->setScope({Scopes.back().first, Scopes.back().second});
  else
    N->setScope({"", Root.type_name()});
  return N;
}

ir::Value *TraceState::valueOf(const Tensor &T) {
  if (!T.defined())
    return nullptr;
  if (void *V = T.impl()->TraceValue) {
    if (!OwnValues.count(V))
      failTrace("a proxy tensor of another (finished) trace was used; "
                "proxies are valid only inside the trace that made them");
    return static_cast<ir::Value *>(V);
  }
  auto It = Captured.find(T.impl().get());
  if (It != Captured.end())
    return It->second;
  // Any other real tensor: a Constant node (captured by identity).
  rt::Tensor D = T.data().contiguous();
  ir::AttrMap A;
  A.set("value", ir::Attribute(D));
  ir::Node *N = newNode(ir::OpKind::Constant, {}, A, 1);
  G->rename(N->output(), constantName());
  N->output()->setType(ir::TensorType(D.dtype(), D.shape()));
  trackContent(N);
  Captured[T.impl().get()] = N->output();
  KeepImpls.push_back(T.impl());
  return N->output();
}

SymInt TraceState::size(const Tensor &T, int64_t D) {
  auto *V = static_cast<ir::Value *>(T.impl()->TraceValue);
  int64_t R = T.dim();
  int64_t Dn = D < 0 ? D + R : D;
  if (Dn < 0 || Dn >= R) // Let the data tensor report the bad axis.
    return SymInt(T.data().size(D));
  const ir::TensorType &Ty = V->type();
  if (Ty.hasRank() && Ty.rank() == R && Ty.dim(Dn).isStatic())
    return SymInt(Ty.dim(Dn).value());
  auto Key = std::make_pair(static_cast<const ir::Value *>(V), Dn);
  auto It = SizeCache.find(Key);
  if (It != SizeCache.end())
    return It->second;
  // Shape -> Gather: a 0-d i64 value.
  Tensor Sh = dispatch::call1(ir::OpKind::Shape, {T});
  Tensor Idx(rt::Tensor::scalar<int64_t>(Dn));
  Tensor Gd = dispatch::call1(ir::OpKind::Gather, {Sh, Idx},
                              dispatch::attrs({{"axis", int64_t(0)}}));
  SymInt S = SymInt::symbolic(T.data().size(Dn), Gd.impl()->TraceValue);
  SizeCache.emplace(Key, S);
  return S;
}

Tensor TraceState::symProxy(const SymInt &S) {
  if (!S.isSymbolic())
    return Tensor(rt::Tensor::scalar<int64_t>(S.example()));
  if (!OwnValues.count(S.node()))
    failTrace("a symbolic size of another (finished) trace was used");
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Data = rt::Tensor::scalar<int64_t>(S.example());
  Impl->TraceValue = const_cast<void *>(S.node());
  return Tensor(std::move(Impl));
}

ir::Value *TraceState::symValue(const SymInt &S) { return valueOf(symProxy(S)); }

void TraceState::trackContent(ir::Node *N) {
  using ir::OpKind;
  auto ContentOf = [&](size_t I) -> const std::vector<ir::Dim> * {
    if (!N->hasInput(I))
      return nullptr;
    auto It = Content.find(N->input(I));
    return It == Content.end() ? nullptr : &It->second;
  };
  ir::Value *Out = N->numOutputs() ? N->output(0) : nullptr;
  if (!Out)
    return;
  switch (N->op()) {
  case OpKind::Constant: {
    const rt::Tensor &D = N->attr("value").t();
    if (nng::isIntegral(D.dtype()) && D.rank() <= 1 && D.numel() <= 64) {
      std::vector<ir::Dim> C;
      for (int64_t V : D.toIntVector())
        C.push_back(ir::Dim(V));
      Content[Out] = std::move(C);
    }
    return;
  }
  case OpKind::Shape: {
    const ir::TensorType &T = N->input(0)->type();
    if (!T.hasRank())
      return;
    int64_t R = T.rank();
    int64_t S = N->attrs().has("start") ? N->attrInt("start") : 0;
    int64_t E = N->attrs().has("end") ? N->attrInt("end") : R;
    S = std::clamp(S < 0 ? S + R : S, int64_t(0), R);
    E = std::clamp(E < 0 ? E + R : E, int64_t(0), R);
    std::vector<ir::Dim> C;
    for (int64_t I = S; I < E; ++I)
      C.push_back(T.dim(I));
    Content[Out] = std::move(C);
    return;
  }
  case OpKind::Gather: {
    const auto *C = ContentOf(0);
    const rt::Tensor *Idx = N->hasInput(1) ? ir::constantValue(N->input(1))
                                           : nullptr;
    if (!C || !Idx || Idx->rank() > 1 || N->attrInt("axis") != 0)
      return;
    std::vector<ir::Dim> R;
    for (int64_t I : Idx->toIntVector()) {
      int64_t J = I < 0 ? I + int64_t(C->size()) : I;
      if (J < 0 || J >= int64_t(C->size()))
        return;
      R.push_back((*C)[J]);
    }
    Content[Out] = std::move(R);
    return;
  }
  case OpKind::Unsqueeze:
  case OpKind::Squeeze:
  case OpKind::Identity:
  case OpKind::Cast:
  case OpKind::Reshape:
    if (const auto *C = ContentOf(0))
      if (Out->type().hasRank() && Out->type().rank() <= 1)
        Content[Out] = *C;
    return;
  case OpKind::Concat: {
    std::vector<ir::Dim> R;
    for (size_t I = 0; I < N->numInputs(); ++I) {
      const auto *C = ContentOf(I);
      if (!C)
        return;
      R.insert(R.end(), C->begin(), C->end());
    }
    Content[Out] = std::move(R);
    return;
  }
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: {
    const auto *A = ContentOf(0), *B = ContentOf(1);
    if (!A || !B || (A->size() != B->size() && A->size() != 1 &&
                     B->size() != 1))
      return;
    size_t Len = std::max(A->size(), B->size());
    std::vector<ir::Dim> R;
    for (size_t I = 0; I < Len; ++I) {
      const ir::Dim &X = (*A)[A->size() == 1 ? 0 : I];
      const ir::Dim &Y = (*B)[B->size() == 1 ? 0 : I];
      if (!X.isStatic() || !Y.isStatic()) {
        R.push_back(ir::Dim());
        continue;
      }
      int64_t U = X.value(), W = Y.value();
      switch (N->op()) {
      case OpKind::Add: R.push_back(ir::Dim(U + W)); break;
      case OpKind::Sub: R.push_back(ir::Dim(U - W)); break;
      case OpKind::Mul: R.push_back(ir::Dim(U * W)); break;
      default: R.push_back(W ? ir::Dim(U / W) : ir::Dim()); break;
      }
    }
    Content[Out] = std::move(R);
    return;
  }
  default:
    return;
  }
}

void TraceState::refineShapeOutput(ir::Node *N, ir::TensorType &T) const {
  using ir::OpKind;
  if (N->op() != OpKind::Reshape && N->op() != OpKind::Expand &&
      N->op() != OpKind::ConstantOfShape)
    return;
  size_t ShapeIn = N->op() == OpKind::ConstantOfShape ? 0 : 1;
  if (!N->hasInput(ShapeIn))
    return;
  auto It = Content.find(N->input(ShapeIn));
  if (It == Content.end() || !T.hasRank())
    return;
  const std::vector<ir::Dim> &C = It->second;
  int64_t R = T.rank();
  if (N->op() == OpKind::Expand) {
    const ir::TensorType &In = N->input(0)->type();
    if (!In.hasRank())
      return;
    for (int64_t J = 0; J < R; ++J) {
      if (!T.dims()[J].isUnknown())
        continue;
      int64_t CI = J - (R - int64_t(C.size()));
      int64_t II = J - (R - In.rank());
      ir::Dim InD = II >= 0 ? In.dim(II) : ir::Dim(1);
      ir::Dim CD = CI >= 0 ? C[CI] : ir::Dim(1);
      if (CD.isStatic() && CD.value() != 1)
        T.dims()[J] = CD;
      else if (CD.isStatic())
        T.dims()[J] = InD;
      else if (CD.isSymbolic())
        T.dims()[J] = CD;
      else if (InD.isStatic() && InD.value() != 1)
        T.dims()[J] = InD;
    }
    return;
  }
  if (int64_t(C.size()) != R)
    return;
  bool AllowZero = N->op() == OpKind::Reshape && N->attrInt("allowzero") != 0;
  const ir::TensorType &In = N->input(0)->type();
  for (int64_t J = 0; J < R; ++J) {
    if (!T.dims()[J].isUnknown())
      continue;
    const ir::Dim &D = C[J];
    if (D.isStatic() && D.value() == 0 && !AllowZero &&
        N->op() == OpKind::Reshape) {
      if (In.hasRank() && J < In.rank())
        T.dims()[J] = In.dim(J);
    } else if (D.isStatic() && D.value() >= 0) {
      T.dims()[J] = D;
    } else if (D.isSymbolic()) {
      T.dims()[J] = D;
    }
  }
}

std::optional<std::vector<rt::Tensor>>
TraceState::examplesFromTypes(const std::vector<ir::TensorType> &Types) const {
  std::vector<rt::Tensor> Out;
  for (const ir::TensorType &T : Types) {
    if (!T.hasRank() || !nng::isFloatingPoint(T.dtype()))
      return std::nullopt;
    std::vector<int64_t> Example;
    for (const ir::Dim &D : T.dims()) {
      if (D.isStatic()) {
        Example.push_back(D.value());
        continue;
      }
      auto It = D.isSymbolic() ? SymbolExtents.find(D.symbol())
                               : SymbolExtents.end();
      if (It == SymbolExtents.end())
        return std::nullopt;
      Example.push_back(It->second);
    }
    Out.push_back(rt::Tensor::empty(Shape(Example), T.dtype()));
  }
  return Out;
}

std::vector<Tensor> TraceState::call(const dispatch::OpCall &C) {
  // A leaf module's eager run on example inputs: really run the op.
  if (EagerDepth > 0)
    return dispatch::call(C.Op, C.Inputs, C.Attrs, C.NumOutputs);
  std::vector<ir::Value *> Ins;
  std::vector<rt::Tensor> Ex;
  Ins.reserve(C.Inputs.size());
  Ex.reserve(C.Inputs.size());
  for (const Tensor &T : C.Inputs) {
    Ins.push_back(valueOf(T));
    Ex.push_back(T.defined() ? T.data() : rt::Tensor());
  }
  // Whether the output shape is fixed by the inputs: static types, and any
  // integer operand (a shape) holding known constants.
  bool StaticIns = true;
  for (ir::Value *V : Ins) {
    if (!V)
      continue;
    StaticIns &= V->type().isStatic();
    if (nng::isIntegral(V->type().dtype()) && !ir::constantValue(V)) {
      auto It = Content.find(V);
      bool Known = It != Content.end();
      if (Known)
        for (const ir::Dim &D : It->second)
          Known &= D.isStatic();
      StaticIns &= Known;
    }
  }
  // Results computed from constants alone keep their exact example data (a
  // hook may store one in a module member, e.g. a pruned weight).
  bool Dependent = std::any_of(Ins.begin(), Ins.end(), [&](ir::Value *V) {
    return V && InputDependent.count(V);
  });
  ir::Node *N = newNode(C.Op, Ins, C.Attrs, C.NumOutputs);
  if (Dependent)
    for (ir::Value *O : N->outputs())
      InputDependent.insert(O);
  std::string OpName(ir::getOpSchema(C.Op).Name);
  std::vector<ir::TensorType> Types;
  std::vector<rt::Tensor> Outs;
  try {
    Types = ir::inferNodeTypes(*N);
    std::optional<std::vector<rt::Tensor>> Zeros;
    if (Dependent)
      Zeros = examplesFromTypes(Types);
    Outs = Zeros ? std::move(*Zeros)
                 : dispatch::runEager(C.Op, Ex, C.Attrs, C.NumOutputs);
  } catch (TraceError &) {
    throw;
  } catch (Error &E) {
    E.addContext("while tracing op " + OpName + " in module " + where());
    throw;
  }
  if (Types.size() != Outs.size() || Outs.size() != N->numOutputs())
    failTrace("op " + OpName + " has no tracing rule for " +
              std::to_string(C.NumOutputs) + " outputs");
  std::vector<Tensor> Result;
  for (size_t I = 0; I < Outs.size(); ++I) {
    ir::TensorType T = Types[I];
    const rt::Tensor &O = Outs[I];
    if (!T.hasRank())
      T = ir::TensorType(T.dtype(), std::vector<ir::Dim>(O.rank()));
    refineShapeOutput(N, T);
    if (!T.isStatic() && StaticIns && T.rank() == int64_t(O.rank()))
      T = ir::TensorType(T.dtype(), O.shape());
    N->output(I)->setType(T);
    Result.push_back(makeProxy(N->output(I), O));
  }
  trackContent(N);
  return Result;
}

} // namespace detail

bool isTracing() { return detail::activeTrace() != nullptr; }

} // namespace nng::fx
