//===- OnnxTrainingOps.cpp - ONNX's optimizer ops as standard ops --------===//
//
// Import, before anything else: the `ai.onnx.preview.training` optimizer
// steps Adagrad, Momentum (standard and nesterov) and Adam are elementwise
// formulas over the learning rate R, the step count T and per tensor X its
// gradient G and state (H for Adagrad, V for Momentum, V and H for Adam).
// They are rewritten into the standard ops of the formulas that ONNX's
// operator documentation gives (Mul, Add, Sub, Div, Sqrt, Pow, Where), with
// attributes defaulted from ONNX's own schema, so every backend runs them.
// The model gets a default-domain opset import (17) when it lacks one.
// Float tensors only (the constants are f32); nngraph itself trains
// through its autograd, this is for models that carry such steps.
//
//===----------------------------------------------------------------------===//

#include "OnnxContribOps.h"
#include "nngraph/runtime/Error.h"

#include <onnx/defs/schema.h>
#include <unordered_set>

namespace nng::frontend::onnxio {
namespace {

using ::onnx::GraphProto;
using ::onnx::NodeProto;

constexpr const char *TrainingDomain = "ai.onnx.preview.training";

bool isTrainingStep(const NodeProto &N) {
  return N.domain() == TrainingDomain &&
         (N.op_type() == "Adagrad" || N.op_type() == "Momentum" ||
          N.op_type() == "Adam");
}

/// Emits the nodes of one optimizer node.
class Builder {
public:
  Builder(const NodeProto &N, std::unordered_set<std::string> &Names,
          const ModelSource &Src)
      : N(N), Names(Names), Src(Src) {}

  std::string fresh(const std::string &Base) {
    std::string Name = Base;
    for (int K = 1; Names.count(Name); ++K)
      Name = Base + "." + std::to_string(K);
    Names.insert(Name);
    return Name;
  }
  std::string op(const std::string &Op, std::vector<std::string> Ins,
                 std::string Out = "") {
    NodeProto M;
    M.set_op_type(Op);
    for (const std::string &I : Ins)
      M.add_input(I);
    if (Out.empty())
      Out = fresh(Prefix + "." + Op);
    M.add_output(Out);
    Nodes.push_back(std::move(M));
    return Out;
  }
  std::string constant(float V) {
    NodeProto M;
    M.set_op_type("Constant");
    std::string Out = fresh(Prefix + ".c");
    M.add_output(Out);
    auto *A = M.add_attribute();
    A->set_name("value");
    A->set_type(::onnx::AttributeProto::TENSOR);
    A->mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
    A->mutable_t()->add_float_data(V);
    Nodes.push_back(std::move(M));
    return Out;
  }
  /// Attribute Name, else its default in ONNX's schema.
  float attrF(const std::string &Name) {
    for (const auto &A : N.attribute())
      if (A.name() == Name)
        return A.f();
    return static_cast<float>(schemaAttr(Name).f());
  }
  std::string attrS(const std::string &Name) {
    for (const auto &A : N.attribute())
      if (A.name() == Name)
        return A.s();
    return schemaAttr(Name).s();
  }

  const NodeProto &N;
  std::unordered_set<std::string> &Names;
  const ModelSource &Src;
  std::string Prefix;
  std::vector<NodeProto> Nodes;

private:
  const ::onnx::AttributeProto &schemaAttr(const std::string &Name) {
    const ::onnx::OpSchema *S =
        ::onnx::OpSchemaRegistry::Schema(N.op_type(), 1, TrainingDomain);
    if (!S || !S->attributes().count(Name) ||
        !S->attributes().at(Name).default_value.has_type())
      modelError(ErrorKind::Parse, Src,
                 "node '" + N.name() + "' (" + N.op_type() +
                     "): attribute '" + Name +
                     "' is required (ONNX's schema gives no default)");
    auto It = S->attributes().find(Name);
    return It->second.default_value;
  }
};

/// The standard-op nodes of one Adagrad, Momentum or Adam node.
std::vector<NodeProto> expandStep(const NodeProto &N,
                                  std::unordered_set<std::string> &Names,
                                  const ModelSource &Src) {
  Builder B(N, Names, Src);
  B.Prefix = N.name().empty() ? N.op_type() : N.name();
  const std::string &Op = N.op_type();
  int States = Op == "Adam" ? 2 : 1;
  int Per = 2 + States; // X, G and the states, per tensor.
  int In = N.input_size() - 2;
  if (In <= 0 || In % Per || N.output_size() != In / Per * (1 + States))
    modelError(ErrorKind::Parse, Src,
               "node '" + N.name() + "' (" + Op + ") takes R, T and " +
                   std::to_string(Per) +
                   " inputs per tensor (X..., G..., states...) and gives " +
                   std::to_string(1 + States) + " outputs per tensor; got " +
                   std::to_string(N.input_size()) + " inputs and " +
                   std::to_string(N.output_size()) + " outputs");
  int K = In / Per;
  const std::string &R = N.input(0), &T = N.input(1);
  std::string Norm = B.constant(B.attrF("norm_coefficient"));
  std::string TPos = B.op("Greater", {T, B.op("CastLike", {B.constant(0), T})});
  std::string One = B.constant(1);
  std::string Tf = B.op("CastLike", {T, One});
  std::string Rate = R, Beta, Alpha, Eps;
  bool Nesterov = false;
  if (Op == "Adagrad") {
    // r = R / (1 + T * decay_factor)
    Rate = B.op("Div", {R, B.op("Add", {One, B.op("Mul", {Tf, B.constant(B.attrF("decay_factor"))})})});
    Eps = B.constant(B.attrF("epsilon"));
  } else if (Op == "Momentum") {
    Alpha = B.constant(B.attrF("alpha"));
    // beta is 1 at the first step (T == 0).
    Beta = B.op("Where", {TPos, B.constant(B.attrF("beta")), One});
    std::string Mode = B.attrS("mode");
    if (Mode != "standard" && Mode != "nesterov")
      modelError(ErrorKind::InvalidArgument, Src,
                 "node '" + N.name() + "' (Momentum): mode '" + Mode +
                     "' is neither 'standard' nor 'nesterov'");
    Nesterov = Mode == "nesterov";
  } else {
    float A = B.attrF("alpha"), Be = B.attrF("beta");
    Alpha = B.constant(A);
    Beta = B.constant(Be);
    Eps = B.constant(B.attrF("epsilon"));
    // r * sqrt(1 - beta^T) / (1 - alpha^T) after the first step.
    std::string Adj = B.op(
        "Div", {B.op("Mul", {R, B.op("Sqrt", {B.op("Sub", {One, B.op("Pow", {Beta, Tf})})})}),
                B.op("Sub", {One, B.op("Pow", {Alpha, Tf})})});
    Rate = B.op("Where", {TPos, Adj, R});
  }
  for (int I = 0; I < K; ++I) {
    const std::string &X = N.input(2 + I), &G = N.input(2 + K + I);
    std::string GReg = B.op("Add", {B.op("Mul", {Norm, X}), G});
    std::string XOut = N.output(I);
    if (Op == "Adagrad") {
      const std::string &H = N.input(2 + 2 * K + I);
      std::string HNew =
          B.op("Add", {H, B.op("Mul", {GReg, GReg})}, N.output(K + I));
      std::string Den = B.op("Add", {B.op("Sqrt", {HNew}), Eps});
      B.op("Sub", {X, B.op("Div", {B.op("Mul", {Rate, GReg}), Den})}, XOut);
    } else if (Op == "Momentum") {
      const std::string &V = N.input(2 + 2 * K + I);
      std::string VNew = B.op(
          "Add", {B.op("Mul", {Alpha, V}), B.op("Mul", {Beta, GReg})},
          N.output(K + I));
      std::string Step =
          Nesterov ? B.op("Add", {GReg, B.op("Mul", {Alpha, VNew})}) : VNew;
      B.op("Sub", {X, B.op("Mul", {R, Step})}, XOut);
    } else {
      const std::string &V = N.input(2 + 2 * K + I),
                        &H = N.input(2 + 3 * K + I);
      std::string VNew =
          B.op("Add",
               {B.op("Mul", {Alpha, V}),
                B.op("Mul", {B.op("Sub", {One, Alpha}), GReg})},
               N.output(K + I));
      std::string HNew =
          B.op("Add",
               {B.op("Mul", {Beta, H}),
                B.op("Mul", {B.op("Sub", {One, Beta}),
                             B.op("Mul", {GReg, GReg})})},
               N.output(2 * K + I));
      std::string Den = B.op("Add", {B.op("Sqrt", {HNew}), Eps});
      std::string XNew =
          B.op("Sub", {X, B.op("Mul", {Rate, B.op("Div", {VNew, Den})})});
      std::string Post = B.op(
          "Sub", {One, B.constant(B.attrF("norm_coefficient_post"))});
      B.op("Mul", {Post, XNew}, XOut);
    }
  }
  return std::move(B.Nodes);
}

} // namespace

bool isOnnxTrainingOp(std::string_view Domain, std::string_view OpType) {
  return Domain == TrainingDomain &&
         (OpType == "Adagrad" || OpType == "Momentum" || OpType == "Adam");
}

void expandTrainingOps(::onnx::ModelProto &M, const ModelSource &Src) {
  if (!M.has_graph())
    return;
  GraphProto &G = *M.mutable_graph();
  bool Any = false;
  for (const NodeProto &N : G.node())
    Any = Any || isTrainingStep(N);
  if (!Any)
    return;
  std::unordered_set<std::string> Names = namesIn(G);
  google::protobuf::RepeatedPtrField<NodeProto> Out;
  for (NodeProto &N : *G.mutable_node()) {
    if (!isTrainingStep(N)) {
      *Out.Add() = std::move(N);
      continue;
    }
    for (NodeProto &R : expandStep(N, Names, Src))
      *Out.Add() = std::move(R);
  }
  G.mutable_node()->Swap(&Out);
  bool HasDefault = false;
  for (const auto &I : M.opset_import())
    HasDefault |= I.domain().empty() || I.domain() == "ai.onnx";
  if (!HasDefault) {
    auto *I = M.add_opset_import();
    I->set_domain("");
    I->set_version(17);
  }
}

} // namespace nng::frontend::onnxio
