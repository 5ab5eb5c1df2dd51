//===- OnnxGradientRules.cpp - Derivative rules of the Gradient expansion -===//
//
// One small function per op: given the node and the gradient of its output,
// it emits (through the Expander) the gradients of the inputs that need
// one, summing broadcast gradients back to the input's shape. Elementwise
// rules are written without constants where possible (Sigmoid: g*(y-y*y))
// so that they need no element type. The table at the end lists the ops,
// with how many leading inputs are differentiable (Reshape's shape, Expand's
// shape and ReduceSum's axes are not).
//
//===----------------------------------------------------------------------===//

#include "OnnxGradientRules.h"

#include <algorithm>
#include <cstring>

namespace nng::frontend::onnxio::gradient {
namespace {

/// The type of N's output (the shape every elementwise gradient has).
const ValueType &outType(Expander &E, const NodeProto &N) {
  return E.typeOf(N.output(0));
}

void gradAdd(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  for (int I = 0; I < 2; ++I)
    if (E.wants(N, I))
      In[I] = E.sumToShapeOf(G, outType(E, N), N.input(I));
}

void gradSub(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  if (E.wants(N, 0))
    In[0] = E.sumToShapeOf(G, outType(E, N), N.input(0));
  if (E.wants(N, 1))
    In[1] = E.op("Neg", {E.sumToShapeOf(G, outType(E, N), N.input(1))});
}

void gradMul(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  for (int I = 0; I < 2; ++I)
    if (E.wants(N, I))
      In[I] = E.sumToShapeOf(E.op("Mul", {G, N.input(1 - I)}), outType(E, N),
                             N.input(I));
}

void gradDiv(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  // y = a / b: da = g / b, db = -g * y / b.
  if (E.wants(N, 0))
    In[0] =
        E.sumToShapeOf(E.op("Div", {G, N.input(1)}), outType(E, N), N.input(0));
  if (E.wants(N, 1)) {
    std::string T = E.op("Div", {E.op("Mul", {G, N.output(0)}), N.input(1)});
    In[1] = E.op("Neg", {E.sumToShapeOf(T, outType(E, N), N.input(1))});
  }
}

void gradNeg(Expander &E, const NodeProto &, const std::string &G,
             std::vector<std::string> &In) {
  In[0] = E.op("Neg", {G});
}

void gradIdentity(Expander &, const NodeProto &, const std::string &G,
                  std::vector<std::string> &In) {
  In[0] = G;
}

void gradRelu(Expander &E, const NodeProto &N, const std::string &G,
              std::vector<std::string> &In) {
  // relu(x) >= 0, so Sign(y) is the step function (0 at x = 0).
  In[0] = E.op("Mul", {G, E.op("Sign", {N.output(0)})});
}

void gradSigmoid(Expander &E, const NodeProto &N, const std::string &G,
                 std::vector<std::string> &In) {
  const std::string &Y = N.output(0);
  In[0] = E.op("Mul", {G, E.op("Sub", {Y, E.op("Mul", {Y, Y})})});
}

void gradTanh(Expander &E, const NodeProto &N, const std::string &G,
              std::vector<std::string> &In) {
  const std::string &Y = N.output(0);
  In[0] = E.op("Sub", {G, E.op("Mul", {G, E.op("Mul", {Y, Y})})});
}

void gradExp(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  In[0] = E.op("Mul", {G, N.output(0)});
}

void gradLog(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  In[0] = E.op("Div", {G, N.input(0)});
}

void gradSqrt(Expander &E, const NodeProto &N, const std::string &G,
              std::vector<std::string> &In) {
  const std::string &Y = N.output(0);
  In[0] = E.op("Div", {G, E.op("Add", {Y, Y})});
}

void gradSum(Expander &E, const NodeProto &N, const std::string &G,
             std::vector<std::string> &In) {
  for (int I = 0; I < N.input_size(); ++I)
    if (E.wants(N, I))
      In[I] = E.sumToShapeOf(G, outType(E, N), N.input(I));
}

/// Swaps the last two axes of a rank-R value.
std::string transposeLast2(Expander &E, const std::string &V, size_t R) {
  std::vector<int64_t> Perm;
  for (size_t I = 0; I < R; ++I)
    Perm.push_back(static_cast<int64_t>(I));
  std::swap(Perm[R - 2], Perm[R - 1]);
  return E.op("Transpose", {V}, "transpose", {intsAttrProto("perm", Perm)});
}

void gradMatMul(Expander &E, const NodeProto &N, const std::string &G,
                std::vector<std::string> &In) {
  const ValueType &AT = E.typeOf(N.input(0)), &BT = E.typeOf(N.input(1));
  if (!AT.RankKnown || !BT.RankKnown)
    E.failAt(N, "the ranks of its operands are unknown (give the graph "
                "inputs shapes)");
  size_t RA = AT.Dims.size(), RB = BT.Dims.size();
  if (RA < 2 || RB < 2)
    E.failAt(N, "only MatMul of operands of rank 2 or more is supported "
                "(an operand has rank " +
                    std::to_string(std::min(RA, RB)) + ")");
  size_t R = std::max(RA, RB);
  ValueType YT = outType(E, N);
  if (!YT.RankKnown || YT.Dims.size() != R) {
    YT.RankKnown = true;
    YT.Dims.assign(R, DimInfo());
  }
  if (E.wants(N, 0)) {
    // da = g @ b^T, of shape batch(y) + [m, k], summed to a's shape.
    ValueType T = YT;
    T.Dims[R - 1] = AT.Dims[RA - 1];
    In[0] = E.sumToShapeOf(
        E.op("MatMul", {G, transposeLast2(E, N.input(1), RB)}), T, N.input(0));
  }
  if (E.wants(N, 1)) {
    // db = a^T @ g, of shape batch(y) + [k, n].
    ValueType T = YT;
    T.Dims[R - 2] = BT.Dims[RB - 2];
    In[1] = E.sumToShapeOf(
        E.op("MatMul", {transposeLast2(E, N.input(0), RA), G}), T, N.input(1));
  }
}

/// The axes of a Reduce* node N as written (attribute, or ReduceSum's
/// constant axes input from opset 13); empty when there are none.
std::vector<int64_t> reduceAxes(Expander &E, const NodeProto &N) {
  const GraphProto &Graph = E.graph();
  std::vector<int64_t> Axes;
  if (const AttributeProto *A = findAttr(N, "axes")) {
    Axes.assign(A->ints().begin(), A->ints().end());
    return Axes;
  }
  if (N.input_size() < 2 || N.input(1).empty())
    return Axes;
  const std::string &Name = N.input(1);
  const TensorProto *T = nullptr;
  for (const TensorProto &I : Graph.initializer())
    if (I.name() == Name)
      T = &I;
  for (const NodeProto &C : Graph.node())
    if (C.op_type() == "Constant" && isDefaultDomain(C.domain()) &&
        C.output_size() == 1 && C.output(0) == Name)
      if (const AttributeProto *V = findAttr(C, "value"))
        T = &V->t();
  if (!T || T->data_type() != TensorProto::INT64 || T->has_data_location())
    E.failAt(N, "its axes '" + Name +
                    "' are not a constant int64 tensor (an initializer or a "
                    "Constant node)");
  if (T->has_raw_data()) {
    const std::string &Raw = T->raw_data();
    Axes.resize(Raw.size() / sizeof(int64_t));
    std::memcpy(Axes.data(), Raw.data(), Axes.size() * sizeof(int64_t));
  } else {
    Axes.assign(T->int64_data().begin(), T->int64_data().end());
  }
  return Axes;
}

/// ReduceSum / ReduceMean: g brought back to the reduced axes, expanded to
/// x's shape (and for the mean divided by the element count per output).
void gradReduce(Expander &E, const NodeProto &N, const std::string &G,
                std::vector<std::string> &In) {
  std::vector<int64_t> Axes = reduceAxes(E, N);
  if (Axes.empty() && intAttr(N, "noop_with_empty_axes", 0)) {
    In[0] = G;
    return;
  }
  std::string T = G;
  if (!intAttr(N, "keepdims", 1) && !Axes.empty()) {
    // A scalar result (every axis reduced) broadcasts as it is.
    bool Negative =
        std::any_of(Axes.begin(), Axes.end(), [](int64_t A) { return A < 0; });
    if (Negative && E.opset() < 11) {
      const ValueType &XT = E.typeOf(N.input(0));
      if (!XT.RankKnown)
        E.failAt(N, "negative axes need x's rank below opset 11");
      for (int64_t &A : Axes)
        if (A < 0)
          A += static_cast<int64_t>(XT.Dims.size());
    }
    T = E.unsqueeze(G, Axes);
  }
  std::string X = N.input(0);
  T = E.op("Expand", {T, E.op("Shape", {X}, X + "_shape")}, "expand");
  if (N.op_type() == "ReduceMean") {
    int ET = E.typeOf(N.output(0)).ElemType;
    if (!ET)
      E.failAt(N, "the element type of its output is unknown");
    std::string Count =
        E.op("Div", {E.op("Size", {X}), E.op("Size", {N.output(0)})}, "count");
    T = E.op("Div", {T, E.op("Cast", {Count}, "count_cast",
                             {intAttrProto("to", ET)})});
  }
  In[0] = T;
}

void gradReshapeLike(Expander &E, const NodeProto &N, const std::string &G,
                     std::vector<std::string> &In) {
  const std::string &X = N.input(0);
  In[0] = E.op("Reshape", {G, E.op("Shape", {X}, X + "_shape")}, "reshape");
}

void gradTranspose(Expander &E, const NodeProto &N, const std::string &G,
                   std::vector<std::string> &In) {
  const AttributeProto *P = findAttr(N, "perm");
  if (!P) {
    In[0] = E.op("Transpose", {G}); // Reversal is its own inverse.
    return;
  }
  std::vector<int64_t> Inv(P->ints_size(), -1);
  for (int I = 0; I < P->ints_size(); ++I) {
    int64_t A = P->ints(I);
    if (A < 0 || A >= P->ints_size() || Inv[A] != -1)
      E.failAt(N, "'perm' is not a permutation");
    Inv[A] = I;
  }
  In[0] = E.op("Transpose", {G}, "transpose", {intsAttrProto("perm", Inv)});
}

void gradExpand(Expander &E, const NodeProto &N, const std::string &G,
                std::vector<std::string> &In) {
  In[0] = E.sumToShapeOf(G, outType(E, N), N.input(0));
}

const Rule Rules[] = {
    {"Add", gradAdd, -1},
    {"Sub", gradSub, -1},
    {"Mul", gradMul, -1},
    {"Div", gradDiv, -1},
    {"Neg", gradNeg, -1},
    {"Identity", gradIdentity, -1},
    {"Relu", gradRelu, -1},
    {"Sigmoid", gradSigmoid, -1},
    {"Tanh", gradTanh, -1},
    {"Exp", gradExp, -1},
    {"Log", gradLog, -1},
    {"Sqrt", gradSqrt, -1},
    {"MatMul", gradMatMul, -1},
    {"Sum", gradSum, -1},
    {"ReduceSum", gradReduce, 1},
    {"ReduceMean", gradReduce, 1},
    {"Reshape", gradReshapeLike, 1},
    {"Flatten", gradReshapeLike, 1},
    {"Squeeze", gradReshapeLike, 1},
    {"Unsqueeze", gradReshapeLike, 1},
    {"Transpose", gradTranspose, 1},
    {"Expand", gradExpand, 1},
};

} // namespace

const Rule *findRule(const NodeProto &N) {
  if (!isDefaultDomain(N.domain()))
    return nullptr;
  for (const Rule &R : Rules)
    if (N.op_type() == R.Op)
      return &R;
  return nullptr;
}

std::string ruleList() {
  std::string S;
  for (const Rule &R : Rules)
    S += (S.empty() ? "" : ", ") + std::string(R.Op);
  return S;
}

} // namespace nng::frontend::onnxio::gradient
