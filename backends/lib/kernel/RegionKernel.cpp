//===- RegionKernel.cpp - A fused region's body as one kernel -------------===//
//
// buildRegionKernel: the domain and buffers of a region (RegionKernel.h),
// then its body: an elementwise region is one loop storing every output; a
// row region computes its reduction's row scalars (Softmax: the maximum,
// 0 when it is not finite as in the reference, then the sum of exp; Layer
// normalization: mean, then variance) and then that loop. Values are
// emitted on demand per block, so an elementwise prologue is recomputed in
// each reduction and in the loop instead of being stored. Which graph ops
// a region holds and what each becomes is one table (RegionOps): a region
// can hold a node when its op has a row there and the row accepts it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/ir/ElementwiseFormulas.h"
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

/// Where a graph op stands in a region.
enum class Role : uint8_t {
  Elementwise,  ///< An expression of its operands at each point.
  Transpose,    ///< Of a value from outside: its loads become permuted.
  RowReduction, ///< Reductions over the last axis, then an expression.
};

/// The translation of one region body.
class Translator {
public:
  Translator(const ir::Graph &Body, std::string Name)
      : Body(Body), Name(std::move(Name)) {}

  RegionKernel run();

  // For the rows of RegionOps.
  KernelBuilder &builder() { return *B; }
  /// The value of V at the current point (or row) of the open block.
  Value emit(const ir::Value *V);
  /// Starts a block: values are emitted again in it.
  void newBlock() { Memo.clear(); }
  int outRank() const { return OutRank; }
  Value RowA, RowB; ///< The reduction's row scalars.

private:
  void findReduction();
  void planDomain();
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
};

/// The kernel IR's builder as an algebra of ElementwiseFormulas.h: the
/// formulas every executor shares emit f32 instructions here.
struct BuilderMath {
  KernelBuilder &B;
  using V = Value;
  V c(double X) const { return B.constF32(static_cast<float>(X)); }
  V add(V X, V Y) const { return B.add(X, Y); }
  V sub(V X, V Y) const { return B.sub(X, Y); }
  V mul(V X, V Y) const { return B.mul(X, Y); }
  V div(V X, V Y) const { return B.div(X, Y); }
  V lt(V X, V Y) const { return B.binary(Op::Lt, X, Y); }
  V gt(V X, V Y) const { return B.binary(Op::Gt, X, Y); }
  V select(V C, V X, V Y) const { return B.select(C, X, Y); }
  V exp(V X) const { return B.exp(X); }
  V erf(V X) const { return B.unary(Op::Erf, X); }
  V tanh(V X) const { return B.unary(Op::Tanh, X); }
};

/// What a row of RegionOps emits with: the builder (and it as the
/// formulas' algebra) and node N's operands.
struct NodeEmit {
  Translator &T;
  const ir::Node &N;
  KernelBuilder &B;
  BuilderMath M;

  NodeEmit(Translator &T, const ir::Node &N)
      : T(T), N(N), B(T.builder()), M{T.builder()} {}
  Value arg(size_t I) { return T.emit(N.input(I)); }
  Value f(float X) { return B.constF32(X); }
  /// Op O folded over every operand, left to right.
  Value fold(Op O) {
    Value Acc = arg(0);
    for (size_t I = 1; I < N.numInputs(); ++I)
      Acc = B.binary(O, Acc, arg(I));
    return Acc;
  }
};

namespace F = ir::formula;

/// One row of the region table: a graph op a fused region can hold.
struct RegionOp {
  OpKind Kind;
  Role R;
  /// What N needs beyond its role's checks (f32 operands and result).
  bool (*Accepts)(const ir::Node &N);
  /// Elementwise: N's value at the current point; row reduction: its result
  /// from the row scalars and its input; Transpose: null (an access).
  Value (*Emit)(NodeEmit &E);
  /// Row reductions: the reductions before the loop, setting RowA / RowB.
  void (*RowScalars)(Translator &T, const ir::Node &N);
};

bool hasOperand(const ir::Node &N) { return N.numInputs() >= 1; }

/// Softmax's row scalars: RowA the maximum (0 when it is not finite, as in
/// the reference), RowB the sum of exp(x - RowA); returns that sum.
Value softmaxRowScalars(Translator &T, const ir::Node &R) {
  KernelBuilder &B = T.builder();
  const ir::Value *X = R.input(0);
  T.newBlock();
  B.beginReduce(ReduceKind::Max);
  Value M = B.endReduce(T.emit(X), "max");
  T.newBlock();
  Value Finite = B.binary(Op::Lt, B.unary(Op::Abs, M), B.constF32(INFINITY));
  T.RowA = B.select(Finite, M, B.constF32(0.0f));
  B.beginReduce(ReduceKind::Add);
  Value S = B.endReduce(B.exp(B.sub(T.emit(X), T.RowA)), "sum");
  T.newBlock();
  T.RowB = S;
  return S;
}

/// The table. Elementwise rows keep their node's numerics (the reference
/// kernels'): the composite ones are the formulas of ElementwiseFormulas.h,
/// which the reference computes too, so NaN stays NaN through Relu and Clip
/// and HardSigmoid gives 1 for it.
const RegionOp RegionOps[] = {
    {OpKind::Add, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.add(E.arg(0), E.arg(1)); }, nullptr},
    {OpKind::Sub, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.sub(E.arg(0), E.arg(1)); }, nullptr},
    {OpKind::Mul, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.mul(E.arg(0), E.arg(1)); }, nullptr},
    {OpKind::Div, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.div(E.arg(0), E.arg(1)); }, nullptr},
    {OpKind::Pow, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.binary(Op::Pow, E.arg(0), E.arg(1)); },
     nullptr},
    {OpKind::Max, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.fold(Op::Max); }, nullptr},
    {OpKind::Min, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.fold(Op::Min); }, nullptr},
    {OpKind::Sum, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.fold(Op::Add); }, nullptr},
    {OpKind::Mean, Role::Elementwise, hasOperand,
     [](NodeEmit &E) {
       return E.B.div(E.fold(Op::Add),
                      E.f(static_cast<float>(E.N.numInputs())));
     },
     nullptr},
    {OpKind::Neg, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.neg(E.arg(0)); }, nullptr},
    {OpKind::Abs, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Abs, E.arg(0)); }, nullptr},
    {OpKind::Exp, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.exp(E.arg(0)); }, nullptr},
    {OpKind::Log, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Log, E.arg(0)); }, nullptr},
    {OpKind::Sqrt, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Sqrt, E.arg(0)); }, nullptr},
    {OpKind::Reciprocal, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return F::reciprocal(E.M, E.arg(0)); }, nullptr},
    {OpKind::Tanh, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Tanh, E.arg(0)); }, nullptr},
    {OpKind::Erf, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Erf, E.arg(0)); }, nullptr},
    {OpKind::Sigmoid, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.B.unary(Op::Sigmoid, E.arg(0)); }, nullptr},
    {OpKind::Identity, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return E.arg(0); }, nullptr},
    {OpKind::Relu, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return F::relu(E.M, E.arg(0)); }, nullptr},
    {OpKind::LeakyRelu, Role::Elementwise, hasOperand,
     [](NodeEmit &E) {
       return F::leakyRelu(E.M, E.arg(0), E.N.attrFloat("alpha"));
     },
     nullptr},
    // Bounds must be constants (the pass copies scalar initializers into
    // the body); a run-time bound is not an elementwise operand here. A
    // missing bound is an infinity, whose compares fold away.
    {OpKind::Clip, Role::Elementwise,
     [](const ir::Node &N) {
       for (size_t I = 1; I < N.numInputs(); ++I)
         if (N.hasInput(I) && !N.input(I)->isInitializer())
           return false;
       return true;
     },
     [](NodeEmit &E) {
       Value Lo = E.N.hasInput(1) ? E.arg(1) : E.f(-INFINITY);
       Value Hi = E.N.hasInput(2) ? E.arg(2) : E.f(INFINITY);
       return F::clip(E.M, E.arg(0), Lo, Hi);
     },
     nullptr},
    {OpKind::HardSigmoid, Role::Elementwise, hasOperand,
     [](NodeEmit &E) {
       return F::hardSigmoid(E.M, E.arg(0), E.N.attrFloat("alpha"),
                             E.N.attrFloat("beta"));
     },
     nullptr},
    {OpKind::HardSwish, Role::Elementwise, hasOperand,
     [](NodeEmit &E) { return F::hardSwish(E.M, E.arg(0)); }, nullptr},
    {OpKind::Gelu, Role::Elementwise,
     [](const ir::Node &N) {
       const std::string &A = N.attrString("approximate");
       return A == "none" || A == "tanh";
     },
     [](NodeEmit &E) {
       return E.N.attrString("approximate") == "tanh"
                  ? F::geluTanh(E.M, E.arg(0))
                  : F::gelu(E.M, E.arg(0));
     },
     nullptr},
    {OpKind::Transpose, Role::Transpose,
     [](const ir::Node &N) { return rankOf(N.input(0)) > 0; }, nullptr,
     nullptr},
    {OpKind::Softmax, Role::RowReduction,
     [](const ir::Node &N) { return lastAxis(N, -1); },
     [](NodeEmit &E) {
       Value X = E.arg(0);
       return E.B.div(E.B.exp(E.B.sub(X, E.T.RowA)), E.T.RowB);
     },
     [](Translator &T, const ir::Node &N) { softmaxRowScalars(T, N); }},
    {OpKind::LogSoftmax, Role::RowReduction,
     [](const ir::Node &N) { return lastAxis(N, -1); },
     [](NodeEmit &E) {
       Value X = E.arg(0);
       return E.B.sub(X, E.T.RowB);
     },
     [](Translator &T, const ir::Node &N) {
       Value S = softmaxRowScalars(T, N);
       KernelBuilder &B = T.builder();
       T.RowB = B.add(T.RowA, B.unary(Op::Log, S)); // x - (max + log(sum)).
     }},
    // Mean and inverse deviation as row scalars; Scale and B over the last
    // axis only, the other outputs unused.
    {OpKind::LayerNormalization, Role::RowReduction,
     [](const ir::Node &N) {
       for (size_t I = 1; I < N.numOutputs(); ++I)
         if (N.output(I) && N.output(I)->hasUses())
           return false;
       for (size_t I = 1; I < N.numInputs(); ++I)
         if (N.hasInput(I) && (!isF32(N.input(I)) || rankOf(N.input(I)) != 1))
           return false;
       return lastAxis(N, -1);
     },
     [](NodeEmit &E) {
       KernelBuilder &B = E.B;
       Value X = E.arg(0);
       Value Y = B.mul(B.sub(X, E.T.RowA), E.T.RowB);
       Y = B.mul(Y, E.arg(1));
       if (E.N.hasInput(2))
         Y = B.add(Y, E.arg(2));
       return Y;
     },
     [](Translator &T, const ir::Node &R) {
       KernelBuilder &B = T.builder();
       const ir::Value *X = R.input(0);
       Value N = B.cast(B.dimSize(T.outRank() - 1), ScalarType::F32);
       T.newBlock();
       B.beginReduce(ReduceKind::Add);
       Value Sum = B.endReduce(T.emit(X), "sum");
       T.newBlock();
       T.RowA = B.div(Sum, N); // Mean.
       B.beginReduce(ReduceKind::Add);
       Value D = B.sub(T.emit(X), T.RowA);
       Value Sq = B.endReduce(B.mul(D, D), "sumsq");
       T.newBlock();
       float Eps = R.attrFloat("epsilon");
       T.RowB = B.unary(Op::Rsqrt, B.add(B.div(Sq, N), B.constF32(Eps)));
     }},
};

/// N's row in RegionOps when it has one and the row accepts N (f32
/// operands and result, and what the row asks), else null.
const RegionOp *regionOpFor(const ir::Node &N) {
  const RegionOp *Row = nullptr;
  for (const RegionOp &R : RegionOps)
    if (R.Kind == N.op())
      Row = &R;
  if (!Row)
    return nullptr;
  switch (Row->R) {
  case Role::Elementwise:
    if (N.numOutputs() != 1 || !isF32(N.output(0)))
      return nullptr;
    for (size_t I = 0; I < N.numInputs(); ++I)
      if (N.hasInput(I) && !isF32(N.input(I)))
        return nullptr;
    break;
  case Role::Transpose:
  case Role::RowReduction:
    if (!isF32(N.input(0)) || !isF32(N.output(0)))
      return nullptr;
    break;
  }
  return Row->Accepts(N) ? Row : nullptr;
}

bool holds(const ir::Node &N, Role R) {
  const RegionOp *Row = regionOpFor(N);
  return Row && Row->R == R;
}

} // namespace

bool regionCanHoldElementwise(const ir::Node &N) {
  return holds(N, Role::Elementwise);
}

bool regionCanHoldTranspose(const ir::Node &N) {
  return holds(N, Role::Transpose);
}

bool regionCanHoldRowReduction(const ir::Node &N) {
  return holds(N, Role::RowReduction);
}

namespace {

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
  const RegionOp *Row = regionOpFor(N);
  if (!Row || Row->R != Role::Elementwise)
    unsupported(N.describe() + " cannot be part of a fused region");
  NodeEmit E(*this, N);
  return Row->Emit(E);
}

void Translator::emitRowScalars() {
  regionOpFor(*Reduction)->RowScalars(*this, *Reduction);
}

Value Translator::emitReductionResult(const ir::Node &R) {
  NodeEmit E(*this, R);
  return regionOpFor(R)->Emit(E);
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
