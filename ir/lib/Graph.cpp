//===- Graph.cpp - Graph, Node and Value ---------------------------------===//

#include "nngraph/ir/Graph.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <unordered_set>

namespace nng::ir {

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

void Node::removeUse(Value *V, Node *N, unsigned I) {
  if (!V)
    return;
  auto &U = V->Uses;
  auto It = std::find(U.begin(), U.end(), Use{N, I});
  if (It != U.end())
    U.erase(It);
}

void Node::setInput(size_t I, Value *V) {
  removeUse(Inputs[I], this, static_cast<unsigned>(I));
  Inputs[I] = V;
  if (V)
    V->Uses.push_back({this, static_cast<unsigned>(I)});
  if (V && isImplicitInput(I))
    syncCaptureNames(I);
}

unsigned Node::addImplicitInput(Value *V) {
  NNG_CHECK(V, describe(), ": an implicit input cannot be absent");
  addInput(V);
  ++NumImplicit;
  return static_cast<unsigned>(Inputs.size() - 1);
}

void Node::setNumImplicitInputs(size_t N) {
  NNG_CHECK(N <= Inputs.size(), describe(), ": ", N,
            " implicit inputs but only ", Inputs.size(), " inputs");
  NumImplicit = N;
}

std::vector<Graph *> Node::regions() const {
  std::vector<Graph *> R;
  for (const auto &[Name, A] : Attrs)
    if (A.type() == AttrType::Graph && A.graphPtr())
      R.push_back(&A.g());
  return R;
}

bool Node::hasRegions() const {
  for (const auto &[Name, A] : Attrs)
    if (A.type() == AttrType::Graph)
      return true;
  return false;
}

void Node::syncCaptureNames(size_t I) {
  const std::string &Want = Inputs[I]->name();
  for (Graph *R : regions()) {
    std::vector<Value *> Bound;
    for (Value *C : R->captures())
      if (C->captureIndex() == I && C->name() != Want)
        Bound.push_back(C);
    for (Value *C : Bound) {
      if (Value *Other = R->lookup(Want)) {
        if (Other->isCapture() && Inputs[Other->captureIndex()] == Inputs[I]) {
          // Two captures of one value now: keep one.
          R->replaceAllUsesWith(C, Other);
          R->eraseValue(C);
          continue;
        }
        R->rename(Other, R->uniqueName(Want)); // A local: names are free.
      }
      R->rename(C, Want);
    }
  }
}

void Node::addInput(Value *V) {
  Inputs.push_back(V);
  if (V)
    V->Uses.push_back({this, static_cast<unsigned>(Inputs.size() - 1)});
}

void Node::truncateInputs(size_t N) {
  while (Inputs.size() > N) {
    removeUse(Inputs.back(), this, static_cast<unsigned>(Inputs.size() - 1));
    Inputs.pop_back();
    if (NumImplicit)
      --NumImplicit;
  }
}

const Attribute &Node::attrByName(std::string_view N) const {
  if (const Attribute *A = Attrs.findByName(N))
    return *A;
  const AttrSchema *S = schema().findAttr(N);
  if (S && S->Default)
    return *S->Default;
  fail(ErrorKind::Verify, describe(), ": attribute '", N,
       S ? "' is absent and has no default" : "' is not an attribute of ",
       S ? "" : schema().qualifiedName());
}

std::vector<int64_t> Node::attrIntsByName(std::string_view N) const {
  if (!Attrs.hasByName(N)) {
    const AttrSchema *S = schema().findAttr(N);
    if (!S || !S->Default)
      return {};
  }
  return attrByName(N).ints();
}

bool Node::isPure() const {
  const OpSchema &S = schema();
  if (S.has(OpTrait::Impure) || S.has(OpTrait::Random))
    return false;
  for (const Graph *R : regions())
    for (const auto &BN : R->nodes())
      if (!BN->isPure())
        return false;
  if (!S.has(OpTrait::RandomInTraining))
    return true;
  size_t Mode = S.Inputs.size();
  for (size_t I = 0; I < S.Inputs.size(); ++I)
    if (S.Inputs[I].Name == "training_mode")
      Mode = I;
  if (Mode == S.Inputs.size() || !hasInput(Mode))
    return true;
  const Tensor *T = constantValue(input(Mode));
  return T && T->numel() == 1 && T->getFlat(0) == 0;
}

std::string Node::describe() const {
  std::string S = "node ";
  if (!Outputs.empty())
    S += "%" + Outputs[0]->name() + " = ";
  S += schema().qualifiedName();
  if (!Name.empty())
    S += " ('" + Name + "')";
  return S;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

Graph::~Graph() = default;

const Tensor *constantValue(const Value *V) {
  if (!V)
    return nullptr;
  if (V->isInitializer())
    return V->data().defined() ? &V->data() : nullptr;
  const Node *P = V->producer();
  if (P && P->op() == OpKind::Constant) {
    const Attribute *A = P->attrs().find("value");
    if (A && A->type() == AttrType::Tensor)
      return &A->t();
  }
  return nullptr;
}

Value *Graph::newValue(std::string VName, Value::Kind K) {
  NNG_CHECK(!VName.empty(), "graph '", Name, "': empty value name");
  NNG_CHECK(!ByName.count(VName), "graph '", Name, "': value name '", VName,
            "' is already defined");
  auto V = std::make_unique<Value>();
  V->Name = VName;
  V->K = K;
  V->Parent = this;
  Value *Raw = V.get();
  ByName[VName] = Raw;
  Values.push_back(std::move(V));
  return Raw;
}

Value *Graph::addInput(std::string VName, TensorType T) {
  Value *V = newValue(std::move(VName), Value::Kind::Input);
  V->Ty = std::move(T);
  Inputs.push_back(V);
  return V;
}

Value *Graph::addInitializer(std::string VName, Tensor Data) {
  NNG_CHECK(Data.defined(), "initializer '", VName, "' has no data");
  Value *V = newValue(std::move(VName), Value::Kind::Initializer);
  V->Ty = TensorType(Data.dtype(), Data.shape());
  V->Data = std::move(Data);
  Initializers.push_back(V);
  return V;
}

Value *Graph::addCapture(std::string VName, TensorType T,
                          unsigned InputIndex) {
  Value *V = newValue(std::move(VName), Value::Kind::Capture);
  V->Ty = std::move(T);
  V->ProducerIndex = InputIndex;
  Captures.push_back(V);
  return V;
}

Value *Graph::addElidedInitializer(std::string VName, TensorType T,
                                   std::string Hash) {
  Value *V = newValue(std::move(VName), Value::Kind::Initializer);
  V->Ty = std::move(T);
  V->ElidedHash = std::move(Hash);
  Initializers.push_back(V);
  return V;
}

Node *Graph::addNode(OpKind Op, std::vector<Value *> Ins,
                     std::vector<std::string> OutputNames, AttrMap Attrs,
                     Node *InsertBefore) {
  auto N = std::make_unique<Node>();
  N->Op = Op;
  N->Parent = this;
  N->Attrs = std::move(Attrs);
  Node *Raw = N.get();
  for (Value *V : Ins)
    Raw->addInput(V);
  for (size_t I = 0; I < OutputNames.size(); ++I) {
    std::string OName = OutputNames[I].empty() ? "t" : OutputNames[I];
    if (ByName.count(OName))
      OName = uniqueName(OName);
    Value *V = newValue(OName, Value::Kind::NodeOutput);
    V->Producer = Raw;
    V->ProducerIndex = static_cast<unsigned>(I);
    Raw->Outputs.push_back(V);
  }
  if (!InsertBefore) {
    Nodes.push_back(std::move(N));
  } else {
    auto It = std::find_if(Nodes.begin(), Nodes.end(),
                           [&](auto &P) { return P.get() == InsertBefore; });
    NNG_CHECK(It != Nodes.end(), "addNode: insertion point not in graph");
    Nodes.insert(It, std::move(N));
  }
  return Raw;
}

bool Graph::isOutput(const Value *V) const {
  return std::find(Outputs.begin(), Outputs.end(), V) != Outputs.end();
}

void Graph::eraseNode(Node *N) {
  for (Value *O : N->Outputs)
    NNG_CHECK(!O->hasUses() && !isOutput(O), "eraseNode: output %", O->name(),
              " of ", N->describe(), " is still used");
  N->truncateInputs(0);
  for (Value *O : N->Outputs)
    eraseValue(O);
  auto It = std::find_if(Nodes.begin(), Nodes.end(),
                         [&](auto &P) { return P.get() == N; });
  Nodes.erase(It);
}

void Graph::eraseValue(Value *V) {
  NNG_CHECK(!V->hasUses() && !isOutput(V), "eraseValue: %", V->name(),
            " is still used");
  auto Drop = [&](std::vector<Value *> &L) {
    L.erase(std::remove(L.begin(), L.end(), V), L.end());
  };
  Drop(Inputs);
  Drop(Initializers);
  Drop(Captures);
  ByName.erase(V->Name);
  auto It = std::find_if(Values.begin(), Values.end(),
                         [&](auto &P) { return P.get() == V; });
  Values.erase(It);
}

void Graph::replaceAllUsesWith(Value *From, Value *To) {
  std::vector<Use> Uses = From->Uses;
  for (const Use &U : Uses)
    U.User->setInput(U.Index, To);
  for (Value *&O : Outputs)
    if (O == From)
      O = To;
}

Value *Graph::lookup(std::string_view VName) const {
  auto It = ByName.find(std::string(VName));
  return It == ByName.end() ? nullptr : It->second;
}

void Graph::rename(Value *V, std::string NewName) {
  if (V->Name == NewName)
    return;
  NNG_CHECK(!ByName.count(NewName), "rename: value name '", NewName,
            "' is already defined");
  ByName.erase(V->Name);
  V->Name = NewName;
  ByName[NewName] = V;
  // Regions that capture V name it too.
  std::vector<Use> Uses = V->Uses;
  for (const Use &U : Uses)
    if (U.User->isImplicitInput(U.Index))
      U.User->syncCaptureNames(U.Index);
}

std::string Graph::uniqueName(std::string_view Base) const {
  std::string B(Base.empty() ? "t" : Base);
  if (!ByName.count(B))
    return B;
  for (size_t I = 1;; ++I) {
    std::string C = B + "." + std::to_string(I);
    if (!ByName.count(C))
      return C;
  }
}

void Graph::topologicalSort() {
  std::unordered_map<const Node *, size_t> Pending;
  std::vector<std::unique_ptr<Node>> Sorted;
  std::vector<Node *> Ready;
  for (auto &N : Nodes) {
    size_t Count = 0;
    for (Value *V : N->Inputs)
      if (V && V->Producer)
        ++Count;
    Pending[N.get()] = Count;
  }
  std::unordered_map<Node *, std::unique_ptr<Node>> Owned;
  std::vector<Node *> Order;
  for (auto &N : Nodes)
    Order.push_back(N.get());
  for (auto &N : Nodes)
    Owned[N.get()] = std::move(N);
  // Stable Kahn: repeatedly take the earliest ready node in original order.
  std::vector<bool> Done(Order.size());
  std::unordered_map<Node *, size_t> Pos;
  for (size_t I = 0; I < Order.size(); ++I)
    Pos[Order[I]] = I;
  std::vector<size_t> Heap;
  auto Cmp = [](size_t A, size_t B) { return A > B; };
  for (size_t I = 0; I < Order.size(); ++I)
    if (Pending[Order[I]] == 0)
      Heap.push_back(I);
  std::make_heap(Heap.begin(), Heap.end(), Cmp);
  while (!Heap.empty()) {
    std::pop_heap(Heap.begin(), Heap.end(), Cmp);
    size_t I = Heap.back();
    Heap.pop_back();
    Node *N = Order[I];
    Sorted.push_back(std::move(Owned[N]));
    for (Value *O : N->Outputs)
      for (const Use &U : O->Uses)
        if (--Pending[U.User] == 0) {
          Heap.push_back(Pos[U.User]);
          std::push_heap(Heap.begin(), Heap.end(), Cmp);
        }
  }
  if (Sorted.size() != Order.size()) {
    Node *Stuck = nullptr;
    for (Node *N : Order)
      if (Owned[N]) {
        Stuck = N;
        break;
      }
    std::string Desc = Stuck->describe();
    for (Node *N : Order)
      if (Owned[N])
        Sorted.push_back(std::move(Owned[N]));
    Nodes = std::move(Sorted);
    fail(ErrorKind::Verify, "graph '", Name, "' has a cycle through ", Desc);
  }
  Nodes = std::move(Sorted);
}

void Graph::liftCaptures() {
  for (Value *C : Captures) {
    C->K = Value::Kind::Input;
    C->ProducerIndex = 0;
    Inputs.push_back(C);
  }
  Captures.clear();
}

std::unique_ptr<Graph> Graph::clone() const {
  auto G = std::make_unique<Graph>();
  G->Name = Name;
  std::unordered_map<const Value *, Value *> Map;
  for (Value *V : Inputs)
    Map[V] = G->addInput(V->Name, V->Ty);
  for (Value *V : Initializers) {
    Value *C = V->Data.defined()
                   ? G->addInitializer(V->Name, V->Data)
                   : G->addElidedInitializer(V->Name, V->Ty, V->ElidedHash);
    C->Ty = V->Ty;
    Map[V] = C;
  }
  for (Value *V : Captures)
    Map[V] = G->addCapture(V->Name, V->Ty, V->ProducerIndex);
  for (const auto &N : Nodes) {
    std::vector<Value *> Ins;
    for (Value *V : N->Inputs)
      Ins.push_back(V ? Map.at(V) : nullptr);
    std::vector<std::string> Outs;
    for (Value *V : N->Outputs)
      Outs.push_back(V->Name);
    Node *C = G->addNode(N->Op, Ins, Outs, N->Attrs);
    C->Name = N->Name;
    C->Sc = N->Sc;
    C->NumImplicit = N->NumImplicit;
    for (const auto &[AName, A] : N->Attrs)
      if (A.type() == AttrType::Graph && A.graphPtr())
        C->Attrs.setByName(AName, Attribute(std::shared_ptr<Graph>(A.g().clone())));
    for (size_t I = 0; I < N->Outputs.size(); ++I) {
      C->Outputs[I]->Ty = N->Outputs[I]->Ty;
      Map[N->Outputs[I]] = C->Outputs[I];
    }
  }
  for (Value *V : Outputs)
    G->Outputs.push_back(Map.at(V));
  return G;
}

} // namespace nng::ir
