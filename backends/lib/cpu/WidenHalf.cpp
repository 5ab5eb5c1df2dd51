//===- WidenHalf.cpp - f16 graphs computed in f32 -------------------------===//
//
// widenHalfToFloat (WidenHalf.h): the cpu backend's rewrite of an f16 graph
// into the same graph in f32, with Casts at its inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "WidenHalf.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::backends::cpu {
namespace {

/// True when G is an f16 model: a graph input or an initializer is f16. (An
/// f32 graph that rounds through f16 inside, Cast to f16 and back, keeps
/// its rounding: its Casts are exact own loops.)
bool isHalfModel(const ir::Graph &G) {
  for (const ir::Value *V : G.inputs())
    if (V->type().dtype() == DType::F16)
      return true;
  for (const ir::Value *V : G.initializers())
    if (V->type().dtype() == DType::F16)
      return true;
  return false;
}

bool hasRegions(const ir::Graph &G) {
  for (const auto &N : G.nodes())
    if (N->hasRegions())
      return true;
  return false;
}

/// V's type with dtype f32 (V is f16).
void widen(ir::Value &V) {
  ir::TensorType T = V.type();
  T.setDType(DType::F32);
  V.setType(std::move(T));
}

/// Makes N's attributes name f32 where they name f16: the dtype attributes
/// (Cast's 'to', EyeLike's and SequenceEmpty's 'dtype') and tensors.
void widenAttributes(ir::Node &N) {
  const int64_t Half = dtypeToOnnx(DType::F16);
  std::vector<std::pair<std::string, ir::Attribute>> Changed;
  for (const auto &[Name, A] : N.attrs()) {
    if (A.type() == ir::AttrType::Int && (Name == "to" || Name == "dtype") &&
        A.i() == Half)
      Changed.emplace_back(Name, ir::Attribute(dtypeToOnnx(DType::F32)));
    else if (A.type() == ir::AttrType::Tensor && A.t().defined() &&
             A.t().dtype() == DType::F16)
      Changed.emplace_back(Name, ir::Attribute(A.t().to(DType::F32)));
  }
  for (auto &[Name, A] : Changed)
    N.setAttrByName(Name, std::move(A));
}

} // namespace

int widenHalfToFloat(ir::Graph &G) {
  // Regions keep their own types (captures included): a graph with regions
  // is left as it is.
  if (!isHalfModel(G) || hasRegions(G))
    return 0;
  int Widened = 0;
  std::unordered_set<const ir::Value *> WasHalf; ///< Widened here.
  const int64_t F32Code = dtypeToOnnx(DType::F32);
  ir::Node *First = G.nodes().empty() ? nullptr : G.nodes().front().get();
  // Inputs: cast once on entry; the nodes read the cast (an input that is
  // also a graph output stays that output, f16).
  for (ir::Value *In : G.inputs()) {
    if (In->type().dtype() != DType::F16 || !In->hasUses())
      continue;
    std::vector<ir::Use> Uses = In->uses();
    ir::AttrMap A;
    A.set("to", ir::Attribute(F32Code));
    ir::Node *Cast = G.addNode(ir::OpKind::Cast, {In},
                               {G.uniqueName(In->name() + ".f32")},
                               std::move(A), First);
    ir::TensorType T = In->type();
    T.setDType(DType::F32);
    Cast->output()->setType(std::move(T));
    for (const ir::Use &U : Uses)
      U.User->setInput(U.Index, Cast->output());
    ++Widened;
  }
  for (ir::Value *W : G.initializers()) {
    if (W->type().dtype() != DType::F16)
      continue;
    if (W->data().defined())
      W->setData(W->data().to(DType::F32));
    widen(*W);
    WasHalf.insert(W);
    ++Widened;
  }
  // Every node: its f16 outputs and the dtypes its attributes name. (The
  // Casts added above are f32 already.)
  for (const auto &N : G.nodes()) {
    widenAttributes(*N);
    for (ir::Value *V : N->outputs())
      if (V && V->type().dtype() == DType::F16) {
        widen(*V);
        WasHalf.insert(V);
        ++Widened;
      }
  }
  // Outputs: cast back, under the output's own name (the f32 value is
  // renamed); a value that is several outputs is cast once.
  std::unordered_map<ir::Value *, ir::Value *> Back;
  for (size_t I = 0; I < G.outputs().size(); ++I) {
    ir::Value *V = G.outputs()[I];
    if (!WasHalf.count(V))
      continue;
    auto [It, New] = Back.emplace(V, nullptr);
    if (New) {
      std::string Name = V->name();
      G.rename(V, G.uniqueName(Name + ".f32"));
      ir::AttrMap A;
      A.set("to", ir::Attribute(dtypeToOnnx(DType::F16)));
      ir::Node *Cast = G.addNode(ir::OpKind::Cast, {V}, {Name}, std::move(A));
      ir::TensorType T = V->type();
      T.setDType(DType::F16);
      Cast->output()->setType(std::move(T));
      It->second = Cast->output();
    }
    G.setOutput(I, It->second);
  }
  return Widened;
}

} // namespace nng::backends::cpu
