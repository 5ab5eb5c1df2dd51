//===- RegionKernel.cpp - A fused region's body as one kernel -------------===//
//
// buildRegionKernel: the domain and buffers of a region (RegionKernel.h),
// then its body: an elementwise region is one loop storing every output; a
// row region computes its reduction's row scalars (Softmax: the maximum,
// 0 when it is not finite as in the reference, then the sum of exp; Layer
// normalization: mean, then variance) and then that loop. Values are
// emitted on demand per block, so an elementwise prologue is recomputed in
// each reduction and in the loop instead of being stored.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace nng::backends::kernel {

namespace {

using ir::OpKind;

bool isF32(const ir::Value *V) {
  return V && V->type().dtype() == DType::F32;
}

/// The rank of V's type, or -1 when unknown.
int64_t rankOf(const ir::Value *V) {
  return V->type().hasRank() ? static_cast<int64_t>(V->type().rank()) : -1;
}

/// True when N's last-axis attribute names the last axis.
bool lastAxis(const ir::Node &N, int64_t Default) {
  int64_t R = rankOf(N.input(0));
  int64_t A = N.attrs().has("axis") ? N.attrInt("axis") : Default;
  return R > 0 && (A == -1 || A == R - 1);
}

[[noreturn]] void unsupported(const std::string &What) {
  fail(ErrorKind::Unsupported, "fused region: ", What);
}

} // namespace

bool regionCanHoldElementwise(const ir::Node &N) {
  if (N.numOutputs() != 1 || !isF32(N.output(0)))
    return false;
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (N.hasInput(I) && !isF32(N.input(I)))
      return false;
  switch (N.op()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Sum:
  case OpKind::Mean:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Reciprocal:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sigmoid:
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Identity:
    return N.numInputs() >= 1;
  case OpKind::Gelu: {
    const std::string &A = N.attrString("approximate");
    return A == "none" || A == "tanh";
  }
  case OpKind::Clip:
    // Bounds must be constants (the pass copies scalar initializers into
    // the body); a run-time bound is not an elementwise operand here.
    for (size_t I = 1; I < N.numInputs(); ++I)
      if (N.hasInput(I) && !N.input(I)->isInitializer())
        return false;
    return true;
  default:
    return false;
  }
}

bool regionCanHoldTranspose(const ir::Node &N) {
  return N.op() == OpKind::Transpose && isF32(N.input(0)) &&
         isF32(N.output(0)) && rankOf(N.input(0)) > 0;
}

bool regionCanHoldRowReduction(const ir::Node &N) {
  switch (N.op()) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return isF32(N.input(0)) && isF32(N.output(0)) && lastAxis(N, -1);
  case OpKind::LayerNormalization:
    for (size_t I = 1; I < N.numOutputs(); ++I)
      if (N.output(I) && N.output(I)->hasUses())
        return false;
    for (size_t I = 0; I < N.numInputs(); ++I)
      if (N.hasInput(I) && !isF32(N.input(I)))
        return false;
    // Scale and B over the last axis only.
    for (size_t I = 1; I < N.numInputs(); ++I)
      if (N.hasInput(I) && rankOf(N.input(I)) != 1)
        return false;
    return isF32(N.output(0)) && lastAxis(N, -1);
  default:
    return false;
  }
}

namespace {

/// The translation of one region body.
class Translator {
public:
  Translator(const ir::Graph &Body, std::string Name)
      : Body(Body), Name(std::move(Name)) {}

  RegionKernel run();

private:
  void findReduction();
  void planDomain();
  /// The value of V at the current point (or row) of the open block.
  Value emit(const ir::Value *V);
  Value emitNode(const ir::Node &N);
  Value emitReductionResult(const ir::Node &N);
  void emitRowScalars();
  std::vector<float> scalarOf(const ir::Value *V);

  const ir::Graph &Body;
  std::string Name;
  const ir::Node *Reduction = nullptr;
  Shape Domain;
  /// A buffer read: a body input, directly or through a Transpose (Key is
  /// the value loaded: the input or the Transpose's result).
  struct Access {
    const ir::Value *Key;
    int Input; ///< The body input's index.
    /// Per domain axis: the axis of the input it follows, counted among
    /// the input's axes that are not 1; -1 where it broadcasts.
    std::vector<int> AxisOf;
    std::vector<int> Dims = {}; ///< The merged dims, in its axis order.
  };
  std::vector<Access> Accesses;
  /// Per merged domain dim: its size, and the domain axes it merges.
  std::vector<int64_t> Sizes;
  std::vector<std::vector<size_t>> Groups;
  int OutRank = 0; ///< Merged rank.
  std::unique_ptr<KernelBuilder> B;
  std::unordered_map<const ir::Value *, int> InputBuffer;
  std::unordered_map<const ir::Value *, Value> Memo; ///< Of the open block.
  Value RowA, RowB; ///< The reduction's row scalars.
};

void Translator::findReduction() {
  for (const auto &N : Body.nodes()) {
    if (regionCanHoldRowReduction(*N)) {
      if (Reduction)
        unsupported("two row reductions (" + Reduction->describe() + ", " +
                    N->describe() + ")");
      Reduction = N.get();
    } else if (!regionCanHoldElementwise(*N) && !regionCanHoldTranspose(*N)) {
      unsupported(N->describe() + " cannot be part of a fused region");
    }
  }
}

void Translator::planDomain() {
  auto Static = [&](const ir::Value *V) {
    std::optional<Shape> S = V->type().staticShape();
    if (!S)
      unsupported("%" + V->name() + " has no static shape (" +
                  V->type().toString() + ")");
    return *S;
  };
  if (Body.outputs().empty())
    unsupported("the body has no outputs");
  Domain = Static(Body.outputs()[0]);
  for (const ir::Value *V : Body.outputs())
    if (Static(V) != Domain)
      unsupported("outputs of different shapes (%" + V->name() + ")");
  if (Reduction && Static(Reduction->input(0)) != Domain)
    unsupported("the reduction's input is not of the region's shape");
  size_t R = Domain.rank();
  /// The position of axis I of S among S's axes that are not 1.
  auto Compressed = [](const Shape &S, int64_t I) {
    int64_t P = 0;
    for (int64_t J = 0; J < I; ++J)
      P += S[J] != 1;
    return static_cast<int>(P);
  };
  // The accesses: body inputs read directly (broadcast, right-aligned), and
  // body inputs read through a Transpose of the region's shape.
  std::unordered_set<const ir::Value *> ReadDirectly;
  for (const auto &N : Body.nodes())
    if (N->op() != OpKind::Transpose)
      for (const ir::Value *V : N->inputs())
        if (V)
          ReadDirectly.insert(V);
  for (const ir::Value *V : Body.outputs())
    ReadDirectly.insert(V);
  for (size_t I = 0; I < Body.inputs().size(); ++I) {
    const ir::Value *V = Body.inputs()[I];
    if (!ReadDirectly.count(V))
      continue;
    Shape S = Static(V);
    if (S.rank() > R)
      unsupported("input %" + V->name() + " has a higher rank than the region");
    Access A{V, static_cast<int>(I), std::vector<int>(R, -1)};
    for (size_t Ax = 0; Ax < R; ++Ax) {
      int64_t Off = static_cast<int64_t>(Ax) - static_cast<int64_t>(R - S.rank());
      int64_t Size = Off >= 0 ? S[Off] : 1;
      if (Size != 1 && Size != Domain[Ax])
        unsupported("an input of shape " + S.toString() +
                    " does not broadcast to " + Domain.toString());
      if (Size != 1)
        A.AxisOf[Ax] = Compressed(S, Off);
    }
    Accesses.push_back(std::move(A));
  }
  for (const auto &N : Body.nodes()) {
    if (N->op() != OpKind::Transpose)
      continue;
    const ir::Value *In = N->input(0);
    auto Pos = std::find(Body.inputs().begin(), Body.inputs().end(), In);
    if (Pos == Body.inputs().end())
      unsupported(N->describe() + " transposes a value computed in the region");
    Shape S = Static(In);
    if (S.rank() != R || Static(N->output(0)) != Domain)
      unsupported(N->describe() + " is not of the region's shape");
    std::vector<int64_t> Perm = N->attrs().has("perm")
                                    ? N->attrInts("perm")
                                    : std::vector<int64_t>();
    if (Perm.empty())
      for (size_t Ax = R; Ax-- > 0;)
        Perm.push_back(static_cast<int64_t>(Ax));
    Access A{N->output(0), static_cast<int>(Pos - Body.inputs().begin()),
             std::vector<int>(R, -1)};
    for (size_t Ax = 0; Ax < R; ++Ax)
      if (S[Perm[Ax]] != 1)
        A.AxisOf[Ax] = Compressed(S, Perm[Ax]);
    Accesses.push_back(std::move(A));
  }
  // Merge axes: drop size-1 axes (a row region keeps its last one), merge a
  // neighbour when every access follows both, in order and adjacent, or
  // neither (never the row region's last axis).
  auto Mergeable = [&](size_t P, size_t A) {
    for (const Access &X : Accesses) {
      int BP = X.AxisOf[P], BA = X.AxisOf[A];
      if ((BP < 0) != (BA < 0) || (BP >= 0 && BA != BP + 1))
        return false;
    }
    return true;
  };
  Groups.clear();
  for (size_t A = 0; A < R; ++A) {
    bool Last = A + 1 == R;
    if (Domain[A] == 1 && !(Reduction && Last))
      continue;
    if (!Groups.empty() && !(Reduction && Last) &&
        Mergeable(Groups.back().back(), A))
      Groups.back().push_back(A);
    else
      Groups.push_back({A});
  }
  if (Groups.empty()) { // Every axis is 1: a domain of one point.
    Sizes = {1};
    OutRank = 1;
    for (Access &X : Accesses)
      X.Dims.clear();
    return;
  }
  OutRank = static_cast<int>(Groups.size());
  for (const auto &G : Groups) {
    int64_t Size = 1;
    for (size_t A : G)
      Size *= Domain[A];
    Sizes.push_back(Size);
  }
  // Each access follows the merged dims in its own axis order.
  for (Access &X : Accesses) {
    std::vector<std::pair<int, int>> ByAxis;
    for (int D = 0; D < OutRank; ++D)
      if (X.AxisOf[Groups[D].front()] >= 0)
        ByAxis.push_back({X.AxisOf[Groups[D].front()], D});
    std::sort(ByAxis.begin(), ByAxis.end());
    for (const auto &[Axis, D] : ByAxis)
      X.Dims.push_back(D);
  }
}

std::vector<float> Translator::scalarOf(const ir::Value *V) {
  if (!V->isInitializer() || !V->data().defined() || V->data().numel() != 1 ||
      V->data().dtype() != DType::F32)
    unsupported("%" + V->name() + " is a constant that is not an f32 scalar");
  return {static_cast<float>(V->data().getFlat(0))};
}

Value Translator::emit(const ir::Value *V) {
  auto It = Memo.find(V);
  if (It != Memo.end())
    return It->second;
  Value R;
  if (auto In = InputBuffer.find(V); In != InputBuffer.end())
    R = B->load(In->second);
  else if (V->isInitializer())
    R = B->constF32(scalarOf(V)[0]);
  else if (!V->producer())
    unsupported("%" + V->name() + " has no producer");
  else if (V->producer() == Reduction)
    R = emitReductionResult(*Reduction);
  else
    R = emitNode(*V->producer());
  Memo.emplace(V, R);
  return R;
}

Value Translator::emitNode(const ir::Node &N) {
  auto Arg = [&](size_t I) { return emit(N.input(I)); };
  auto F = [&](float X) { return B->constF32(X); };
  auto Fold = [&](Op O) {
    Value Acc = Arg(0);
    for (size_t I = 1; I < N.numInputs(); ++I)
      Acc = B->binary(O, Acc, Arg(I));
    return Acc;
  };
  auto HardSigmoid = [&](Value X, float Alpha, float Beta) {
    Value Y = B->add(B->mul(X, F(Alpha)), F(Beta));
    return B->max(F(0.0f), B->min(F(1.0f), Y));
  };
  switch (N.op()) {
  case OpKind::Add:
    return B->add(Arg(0), Arg(1));
  case OpKind::Sub:
    return B->sub(Arg(0), Arg(1));
  case OpKind::Mul:
    return B->mul(Arg(0), Arg(1));
  case OpKind::Div:
    return B->div(Arg(0), Arg(1));
  case OpKind::Pow:
    return B->binary(Op::Pow, Arg(0), Arg(1));
  case OpKind::Max:
    return Fold(Op::Max);
  case OpKind::Min:
    return Fold(Op::Min);
  case OpKind::Sum:
    return Fold(Op::Add);
  case OpKind::Mean:
    return B->div(Fold(Op::Add), F(static_cast<float>(N.numInputs())));
  case OpKind::Neg:
    return B->neg(Arg(0));
  case OpKind::Abs:
    return B->unary(Op::Abs, Arg(0));
  case OpKind::Exp:
    return B->exp(Arg(0));
  case OpKind::Log:
    return B->unary(Op::Log, Arg(0));
  case OpKind::Sqrt:
    return B->unary(Op::Sqrt, Arg(0));
  case OpKind::Reciprocal:
    return B->div(F(1.0f), Arg(0));
  case OpKind::Tanh:
    return B->unary(Op::Tanh, Arg(0));
  case OpKind::Erf:
    return B->unary(Op::Erf, Arg(0));
  case OpKind::Sigmoid:
    return B->unary(Op::Sigmoid, Arg(0));
  case OpKind::Identity:
    return Arg(0);
  case OpKind::Relu:
    return B->max(Arg(0), F(0.0f)); // NaN stays NaN.
  case OpKind::LeakyRelu: {
    Value X = Arg(0);
    Value Neg = B->binary(Op::Lt, X, F(0.0f));
    return B->select(Neg, B->mul(X, F(N.attrFloat("alpha"))), X);
  }
  case OpKind::Clip: {
    // The reference: x < lo ? lo : (x > hi ? hi : x); NaN stays NaN.
    Value X = Arg(0);
    if (N.hasInput(1)) {
      Value Lo = Arg(1);
      X = B->select(B->binary(Op::Lt, X, Lo), Lo, X);
    }
    if (N.hasInput(2)) {
      Value Hi = Arg(2);
      X = B->select(B->binary(Op::Gt, X, Hi), Hi, X);
    }
    return X;
  }
  case OpKind::HardSigmoid:
    return HardSigmoid(Arg(0), N.attrFloat("alpha"), N.attrFloat("beta"));
  case OpKind::HardSwish: {
    Value X = Arg(0);
    return B->mul(X, HardSigmoid(X, 1.0f / 6.0f, 0.5f));
  }
  case OpKind::Gelu: {
    Value X = Arg(0);
    Value Inner;
    if (N.attrString("approximate") == "tanh") {
      // tanh(sqrt(2 / pi) * (x + 0.044715 x^3))
      Value X3 = B->mul(B->mul(X, X), X);
      Value T = B->add(X, B->mul(F(0.044715f), X3));
      Inner = B->unary(Op::Tanh, B->mul(F(0.7978845608028654f), T));
    } else {
      Inner = B->unary(Op::Erf, B->mul(X, F(0.7071067811865476f)));
    }
    return B->mul(B->mul(F(0.5f), X), B->add(F(1.0f), Inner));
  }
  default:
    unsupported(N.describe() + " cannot be part of a fused region");
  }
}

void Translator::emitRowScalars() {
  const ir::Node &R = *Reduction;
  const ir::Value *X = R.input(0);
  if (R.op() == OpKind::LayerNormalization) {
    Value N = B->cast(B->dimSize(OutRank - 1), ScalarType::F32);
    Memo.clear();
    B->beginReduce(ReduceKind::Add);
    Value Sum = B->endReduce(emit(X), "sum");
    Memo.clear();
    RowA = B->div(Sum, N); // Mean.
    B->beginReduce(ReduceKind::Add);
    Value D = B->sub(emit(X), RowA);
    Value Sq = B->endReduce(B->mul(D, D), "sumsq");
    Memo.clear();
    float Eps = R.attrFloat("epsilon");
    RowB = B->unary(Op::Rsqrt, B->add(B->div(Sq, N), B->constF32(Eps)));
    return;
  }
  // Softmax / LogSoftmax: the reference's maximum is 0 when not finite.
  Memo.clear();
  B->beginReduce(ReduceKind::Max);
  Value M = B->endReduce(emit(X), "max");
  Memo.clear();
  Value Finite = B->binary(Op::Lt, B->unary(Op::Abs, M), B->constF32(INFINITY));
  RowA = B->select(Finite, M, B->constF32(0.0f));
  B->beginReduce(ReduceKind::Add);
  Value S = B->endReduce(B->exp(B->sub(emit(X), RowA)), "sum");
  Memo.clear();
  RowB = S;
  if (R.op() == OpKind::LogSoftmax)
    RowB = B->add(RowA, B->unary(Op::Log, S)); // x - (max + log(sum)).
}

Value Translator::emitReductionResult(const ir::Node &R) {
  Value X = emit(R.input(0));
  switch (R.op()) {
  case OpKind::Softmax:
    return B->div(B->exp(B->sub(X, RowA)), RowB);
  case OpKind::LogSoftmax:
    return B->sub(X, RowB);
  default: { // LayerNormalization.
    Value Y = B->mul(B->sub(X, RowA), RowB);
    Y = B->mul(Y, emit(R.input(1)));
    if (R.hasInput(2))
      Y = B->add(Y, emit(R.input(2)));
    return Y;
  }
  }
}

RegionKernel Translator::run() {
  findReduction();
  planDomain();
  B = std::make_unique<KernelBuilder>(Name, OutRank);
  RegionKernel RK;
  RK.Sizes = Sizes;
  RK.Groups = Groups;
  for (size_t I = 0; I < Accesses.size(); ++I) {
    const Access &X = Accesses[I];
    if (!X.Key->hasUses() && !Body.isOutput(X.Key))
      continue;
    InputBuffer[X.Key] =
        B->input("in" + std::to_string(I), DType::F32, X.Dims);
    RK.Binding.push_back(X.Input);
  }
  std::vector<int> All(OutRank);
  for (int D = 0; D < OutRank; ++D)
    All[D] = D;
  std::vector<int> OutBuf;
  for (size_t I = 0; I < Body.outputs().size(); ++I) {
    OutBuf.push_back(B->output("out" + std::to_string(I), DType::F32, All));
    RK.Binding.push_back(-1 - static_cast<int>(I));
  }
  if (Reduction)
    emitRowScalars();
  Memo.clear();
  B->beginLoop();
  for (size_t I = 0; I < Body.outputs().size(); ++I)
    B->store(OutBuf[I], emit(Body.outputs()[I]));
  B->endLoop();
  RK.K = B->finish();
  return RK;
}

} // namespace

RegionKernel buildRegionKernel(const ir::Graph &Body, std::string Name) {
  return Translator(Body, std::move(Name)).run();
}

} // namespace nng::backends::kernel
