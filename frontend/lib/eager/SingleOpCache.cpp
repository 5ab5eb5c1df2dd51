//===- SingleOpCache.cpp - Cached single-op executables -------------------===//
//
// The cache key packs the op, the output count, each input's dtype and
// rank (0xff for an absent one) and the attributes' bytes into a string;
// a tensor or graph attribute makes the call uncacheable. An op with
// regions keeps its implicit inputs, named like the captures bound to them. The executables are
// compiled from singleOpGraph's one-node graphs by the owner's compiler.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/SingleOpCache.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/ir/Graph.h"

#include <map>
#include <set>

namespace nng::dispatch {

namespace {

/// Appends the bytes of V to K.
template <typename T> void appendRaw(std::string &K, const T &V) {
  K.append(reinterpret_cast<const char *>(&V), sizeof(V));
}

/// A cache key for the call, or false when an attribute (a tensor) makes
/// the call uncacheable.
bool makeKey(std::string &K, ir::OpKind Op,
             const std::vector<rt::Tensor> &Inputs, const ir::AttrMap &Attrs,
             unsigned NumOutputs) {
  K.clear();
  appendRaw(K, static_cast<uint16_t>(Op));
  appendRaw(K, static_cast<uint8_t>(NumOutputs));
  for (const rt::Tensor &T : Inputs) {
    if (!T.defined()) {
      K.push_back('\xff');
      continue;
    }
    K.push_back(static_cast<char>(T.dtype()));
    K.push_back(static_cast<char>(T.rank()));
  }
  for (const auto &[Name, A] : Attrs) {
    K += Name;
    K.push_back('=');
    switch (A.type()) {
    case ir::AttrType::Int:
      appendRaw(K, A.i());
      break;
    case ir::AttrType::Float:
      appendRaw(K, A.f());
      break;
    case ir::AttrType::String:
      K += A.s();
      K.push_back('\0');
      break;
    case ir::AttrType::Ints:
      appendRaw(K, A.ints().size());
      for (int64_t V : A.ints())
        appendRaw(K, V);
      break;
    case ir::AttrType::Floats:
      appendRaw(K, A.floats().size());
      for (float V : A.floats())
        appendRaw(K, V);
      break;
    case ir::AttrType::Strings:
      for (const std::string &S : A.strings()) {
        K += S;
        K.push_back('\0');
      }
      break;
    case ir::AttrType::Tensor:
    case ir::AttrType::Graph:
      return false;
    }
    K.push_back(';');
  }
  return true;
}

} // namespace

std::unique_ptr<ir::Graph> singleOpGraph(ir::OpKind Op,
                                         const std::vector<rt::Tensor> &Inputs,
                                         const ir::AttrMap &Attrs,
                                         unsigned NumOutputs,
                                         const std::string &Name,
                                         unsigned NumImplicit) {
  auto G = std::make_unique<ir::Graph>();
  // Implicit inputs are named like the captures bound to them (a region
  // names what it reads as it is named outside); the others avoid those.
  std::map<size_t, std::string> Captured;
  for (const auto &[AName, A] : Attrs)
    if (A.type() == ir::AttrType::Graph && A.graphPtr())
      for (const ir::Value *C : A.g().captures())
        Captured[C->captureIndex()] = C->name();
  std::set<std::string> Taken;
  for (const auto &[I, Name] : Captured)
    Taken.insert(Name);
  std::vector<ir::Value *> Ins;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const rt::Tensor &T = Inputs[I];
    if (!T.defined()) {
      Ins.push_back(nullptr);
      continue;
    }
    std::string Name = "x" + std::to_string(I);
    if (auto It = Captured.find(I);
        It != Captured.end() && I + NumImplicit >= Inputs.size())
      Name = It->second;
    else
      while (Taken.count(Name))
        Name += "_";
    std::vector<ir::Dim> Dims(T.rank(), ir::Dim::unknown());
    Ins.push_back(
        G->addInput(Name, ir::TensorType(T.dtype(), std::move(Dims))));
  }
  std::vector<std::string> Outs;
  for (unsigned I = 0; I < NumOutputs; ++I)
    Outs.push_back("y" + std::to_string(I));
  ir::Node *N = G->addNode(Op, Ins, Outs, Attrs);
  N->setNumImplicitInputs(NumImplicit);
  N->setName(Name);
  for (ir::Value *V : N->outputs())
    G->addOutput(V);
  return G;
}

SingleOpCache::SingleOpCache(CompileFn Compile) : Compile(std::move(Compile)) {}

SingleOpCache::~SingleOpCache() = default;

std::vector<rt::Tensor> SingleOpCache::run(ir::OpKind Op,
                                           const std::vector<rt::Tensor> &Inputs,
                                           const ir::AttrMap &Attrs,
                                           unsigned NumOutputs,
                                           unsigned NumImplicit) {
  // Present inputs only: the one-node graph's inputs skip absent ones (a
  // copy only when some are absent).
  bool AllPresent = true;
  for (const rt::Tensor &T : Inputs)
    AllPresent &= T.defined();
  std::vector<rt::Tensor> Present;
  if (!AllPresent)
    for (const rt::Tensor &T : Inputs)
      if (T.defined())
        Present.push_back(T);
  const std::vector<rt::Tensor> &RunInputs = AllPresent ? Inputs : Present;
  if (NumImplicit || !makeKey(Key, Op, Inputs, Attrs, NumOutputs))
    return Compile(*singleOpGraph(Op, Inputs, Attrs, NumOutputs, "eager",
                                  NumImplicit))
        ->run(RunInputs);
  auto It = Map.find(Key);
  if (It == Map.end()) {
    std::string K = Key;
    auto G = singleOpGraph(Op, Inputs, Attrs, NumOutputs);
    It = Map.emplace(std::move(K), Compile(*G)).first;
  }
  return It->second->run(RunInputs);
}

} // namespace nng::dispatch
