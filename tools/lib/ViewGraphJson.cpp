//===- ViewGraphJson.cpp - A graph as the JSON nngraph-view draws ---------===//
//
// Builds the viewer's JSON (ViewGraphJson.h): attributes rendered as short
// display strings, initializer statistics computed in double precision.
//
//===----------------------------------------------------------------------===//

#include "ViewGraphJson.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace nng::tools {
namespace {
using nlohmann::json;

/// Lists longer than this print their first elements and a count.
constexpr size_t MaxListItems = 32;

std::string number(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.6g", V);
  return Buf;
}

template <typename T, typename F>
std::string listString(const std::vector<T> &Items, F Fmt) {
  std::string S = "[";
  for (size_t I = 0; I < Items.size() && I < MaxListItems; ++I)
    S += (I ? ", " : "") + Fmt(Items[I]);
  if (Items.size() > MaxListItems)
    S += ", ... (" + std::to_string(Items.size()) + " values)";
  return S + "]";
}

std::string quoted(const std::string &S) { return "\"" + S + "\""; }

std::string tensorString(const rt::Tensor &T) {
  std::string S = std::string(dtypeName(T.dtype())) + T.shape().toString();
  if (!T.defined())
    return S;
  std::vector<double> Vals;
  for (int64_t I = 0; I < T.numel() && I < 8; ++I)
    Vals.push_back(T.getFlat(I));
  S += " = " + listString(Vals, number);
  if (T.numel() > 8)
    S.insert(S.size() - 1, ", ... (" + std::to_string(T.numel()) + " values)");
  return S;
}

std::string attributeString(const ir::Attribute &A) {
  switch (A.type()) {
  case ir::AttrType::Int:
    return std::to_string(A.i());
  case ir::AttrType::Float:
    return number(A.f());
  case ir::AttrType::String:
    return quoted(A.s());
  case ir::AttrType::Ints:
    return listString(A.ints(), [](int64_t V) { return std::to_string(V); });
  case ir::AttrType::Floats:
    return listString(A.floats(), [](float V) { return number(V); });
  case ir::AttrType::Strings:
    return listString(A.strings(), quoted);
  case ir::AttrType::Tensor:
    return tensorString(A.t());
  case ir::AttrType::Graph:
    return "graph '" + A.g().name() + "' (" +
           std::to_string(A.g().numNodes()) + " nodes)";
  }
  return "?";
}

/// min/max/mean/std over the finite elements of T, and NaN/Inf counts.
json tensorStats(const rt::Tensor &T) {
  rt::Tensor C = T.contiguous();
  double Min = std::numeric_limits<double>::infinity(), Max = -Min;
  double Sum = 0, SumSq = 0;
  int64_t Finite = 0, NaNs = 0, Infs = 0;
  auto Add = [&](double V) {
    if (std::isnan(V)) {
      ++NaNs;
    } else if (std::isinf(V)) {
      ++Infs;
    } else {
      Min = std::min(Min, V);
      Max = std::max(Max, V);
      Sum += V;
      SumSq += V * V;
      ++Finite;
    }
  };
  if (C.dtype() == DType::F32) {
    const float *P = C.data<float>();
    for (int64_t I = 0, E = C.numel(); I < E; ++I)
      Add(P[I]);
  } else {
    for (int64_t I = 0, E = C.numel(); I < E; ++I)
      Add(C.getFlat(I));
  }
  json J = {{"nan_count", NaNs}, {"inf_count", Infs}};
  if (Finite == 0)
    return J;
  double Mean = Sum / static_cast<double>(Finite);
  double Var = std::max(0.0, SumSq / static_cast<double>(Finite) - Mean * Mean);
  J["min"] = Min;
  J["max"] = Max;
  J["mean"] = Mean;
  J["std"] = std::sqrt(Var);
  return J;
}

const char *kindName(const ir::Value &V) {
  if (V.isInput())
    return "input";
  if (V.isInitializer())
    return "initializer";
  return "node";
}

} // namespace

std::string derivedScope(const ir::Node &N) {
  const std::string &Name = N.name();
  if (Name.size() > 1 && Name[0] == '/') {
    // "/layer1/layer1.0/conv1/Conv": the segments but the last (the op)
    // spell the module path; a segment that repeats the path so far
    // ("layer1.0" under "layer1") replaces it.
    std::string Path;
    size_t Start = 1;
    for (size_t Slash = Name.find('/', Start); Slash != std::string::npos;
         Start = Slash + 1, Slash = Name.find('/', Start)) {
      std::string Seg = Name.substr(Start, Slash - Start);
      if (Seg.empty())
        continue;
      if (!Path.empty() && Seg.rfind(Path + ".", 0) == 0)
        Path = Seg;
      else
        Path += (Path.empty() ? "" : ".") + Seg;
    }
    if (!Path.empty())
      return Path;
  }
  for (const ir::Value *V : N.inputs()) {
    if (!V || !V->isInitializer())
      continue;
    size_t Dot = V->name().rfind('.');
    if (Dot != std::string::npos && Dot > 0)
      return V->name().substr(0, Dot);
  }
  return "";
}

nlohmann::json viewGraphJson(const ir::Graph &G, const std::string &Title) {
  json J;
  J["title"] = Title;
  J["graph"] = G.name();
  auto Typed = [](const ir::Value *V) {
    return json{{"name", V->name()}, {"type", V->type().toString()}};
  };
  J["inputs"] = json::array();
  for (const ir::Value *V : G.inputs())
    J["inputs"].push_back(Typed(V));
  J["outputs"] = json::array();
  for (const ir::Value *V : G.outputs())
    J["outputs"].push_back(Typed(V));

  json Values = json::object();
  auto Note = [&](const ir::Value *V) {
    if (V && !Values.contains(V->name()))
      Values[V->name()] = {{"type", V->type().toString()},
                           {"kind", kindName(*V)}};
  };
  for (const ir::Value *V : G.inputs())
    Note(V);
  json Nodes = json::array();
  size_t Id = 0;
  for (const auto &NP : G.nodes()) {
    const ir::Node &N = *NP;
    json NJ;
    NJ["id"] = Id++;
    NJ["name"] = N.name();
    NJ["op"] = std::string(N.schema().Name);
    NJ["domain"] = std::string(N.schema().Domain);
    if (!N.scope().empty()) {
      NJ["scope"] = N.scope().Path;
      NJ["module"] = N.scope().ModuleType;
    } else {
      NJ["scope"] = derivedScope(N);
      NJ["module"] = "";
      NJ["scope_derived"] = true;
    }
    json Attrs = json::array();
    for (const auto &[Key, A] : N.attrs())
      Attrs.push_back({Key, attributeString(A)});
    NJ["attrs"] = std::move(Attrs);
    NJ["inputs"] = json::array();
    for (const ir::Value *V : N.inputs()) {
      NJ["inputs"].push_back(V ? V->name() : "");
      Note(V);
    }
    NJ["outputs"] = json::array();
    for (const ir::Value *V : N.outputs()) {
      NJ["outputs"].push_back(V->name());
      Note(V);
    }
    Nodes.push_back(std::move(NJ));
  }
  J["nodes"] = std::move(Nodes);
  J["values"] = std::move(Values);

  json Inits = json::object();
  for (const ir::Value *V : G.initializers()) {
    json IJ = {{"type", V->type().toString()}};
    const rt::Tensor &T = V->data();
    if (T.defined()) {
      IJ["dtype"] = std::string(dtypeName(T.dtype()));
      IJ["shape"] = T.shape().dims();
      IJ["numel"] = T.numel();
      IJ["bytes"] = T.nbytes();
      IJ["stats"] = tensorStats(T);
    } else {
      IJ["elided"] = true; // Printed as a reference: no data to count.
    }
    Inits[V->name()] = std::move(IJ);
  }
  J["initializers"] = std::move(Inits);
  return J;
}

} // namespace nng::tools
