//===- KernelInterpreter.cpp - The kernel IR oracle -----------------------===//
//
// interpretKernel evaluates a kernel one instruction at a time, row by row,
// with the semantics documented in KernelIR.h and the reference backend's
// numerics (see Interpreter.h). The JIT's tests compare against it.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/Interpreter.h"

#include "nngraph/ir/ElementwiseFormulas.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Half.h"

#include <cmath>
#include <cstring>
#include <limits>

// Every op of KernelOps.def has a case in eval(): a new op without one
// does not compile.
#pragma GCC diagnostic error "-Wswitch"

namespace nng::backends::kernel {

namespace {

/// A value: f32 in F, i32 and bool (0/1) in I.
struct Val {
  float F = 0;
  int32_t I = 0;
};

int32_t wrapAdd(int32_t A, int32_t B) {
  return static_cast<int32_t>(static_cast<uint32_t>(A) +
                              static_cast<uint32_t>(B));
}
int32_t wrapSub(int32_t A, int32_t B) {
  return static_cast<int32_t>(static_cast<uint32_t>(A) -
                              static_cast<uint32_t>(B));
}
int32_t wrapMul(int32_t A, int32_t B) {
  return static_cast<int32_t>(static_cast<uint32_t>(A) *
                              static_cast<uint32_t>(B));
}
int32_t intDiv(int32_t A, int32_t B) {
  if (B == 0)
    return 0;
  if (A == std::numeric_limits<int32_t>::min() && B == -1)
    return A;
  return A / B;
}

float maxF(float A, float B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) ? A : B;
  return A < B ? B : A;
}
float minF(float A, float B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) ? A : B;
  return B < A ? B : A;
}

int32_t floatToInt(float F) {
  if (std::isnan(F))
    return 0;
  if (F >= 2147483648.0f)
    return std::numeric_limits<int32_t>::max();
  if (F <= -2147483648.0f)
    return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(F);
}

bool compare(Op O, auto A, auto B) {
  switch (O) {
  case Op::Eq:
    return A == B;
  case Op::Ne:
    return A != B;
  case Op::Lt:
    return A < B;
  case Op::Le:
    return A <= B;
  case Op::Gt:
    return A > B;
  default:
    return A >= B;
  }
}

class Interp {
public:
  Interp(const Kernel &K, std::span<void *const> Bufs,
         std::span<const int64_t> Sizes, std::vector<int64_t> Strides)
      : K(K), Bufs(Bufs), Sizes(Sizes), Strides(std::move(Strides)),
        Vals(K.Insts.size()), Off(K.Buffers.size()), Base(K.Buffers.size()),
        Point(K.Rank, 0) {}

  void run() {
    int64_t Outer = 1;
    for (int D = 0; D < K.inner(); ++D)
      Outer *= Sizes[D];
    for (int64_t O = 0; O < Outer; ++O) {
      // The outer multi-index, innermost outer dim fastest.
      int64_t Rest = O;
      std::fill(Base.begin(), Base.end(), 0);
      for (int D = K.inner() - 1; D >= 0; --D) {
        int64_t Idx = Rest % Sizes[D];
        Rest /= Sizes[D];
        Point[D] = Idx;
        for (size_t B = 0; B < K.Buffers.size(); ++B)
          Base[B] += Idx * Strides[B * K.Rank + D];
      }
      Off = Base;
      block(0);
    }
  }

private:
  void setInner(int64_t J) {
    Point[K.inner()] = J;
    for (size_t B = 0; B < K.Buffers.size(); ++B)
      Off[B] = Base[B] + J * Strides[B * K.Rank + K.inner()];
  }

  Val load(int B) const {
    const char *P = static_cast<const char *>(Bufs[B]);
    int64_t O = Off[B];
    Val V;
    switch (K.Buffers[B].Type) {
    case DType::F32:
      std::memcpy(&V.F, P + O * 4, 4);
      break;
    case DType::F16: {
      uint16_t H;
      std::memcpy(&H, P + O * 2, 2);
      V.F = halfBitsToFloat(H);
      break;
    }
    case DType::BF16: {
      uint16_t H;
      std::memcpy(&H, P + O * 2, 2);
      V.F = static_cast<float>(BFloat16::fromBits(H));
      break;
    }
    default:
      std::memcpy(&V.I, P + O * 4, 4);
    }
    return V;
  }

  void store(int B, Val V) const {
    char *P = static_cast<char *>(Bufs[B]);
    int64_t O = Off[B];
    switch (K.Buffers[B].Type) {
    case DType::F32:
      std::memcpy(P + O * 4, &V.F, 4);
      break;
    case DType::F16: {
      uint16_t H = floatToHalfBits(V.F);
      std::memcpy(P + O * 2, &H, 2);
      break;
    }
    case DType::BF16: {
      uint16_t H = BFloat16(V.F).Bits;
      std::memcpy(P + O * 2, &H, 2);
      break;
    }
    default:
      std::memcpy(P + O * 4, &V.I, 4);
    }
  }

  void block(int Blk) {
    for (int I : K.Blocks[Blk].Insts)
      Vals[I] = eval(I);
  }

  Val reduce(const Inst &R) {
    int64_t N = Sizes[K.inner()];
    bool IsF = R.Type == ScalarType::F32;
    double Sum = 0;
    Val Acc;
    if (R.RK == ReduceKind::Max) {
      Acc.F = -INFINITY;
      Acc.I = std::numeric_limits<int32_t>::min();
    } else if (R.RK == ReduceKind::Min) {
      Acc.F = INFINITY;
      Acc.I = std::numeric_limits<int32_t>::max();
    }
    for (int64_t J = 0; J < N; ++J) {
      setInner(J);
      block(R.Body);
      Val X = Vals[R.Operands[0]];
      switch (R.RK) {
      case ReduceKind::Add:
        if (IsF)
          Sum += X.F;
        else
          Acc.I = wrapAdd(Acc.I, X.I);
        break;
      case ReduceKind::Max:
        Acc.F = maxF(Acc.F, X.F);
        Acc.I = std::max(Acc.I, X.I);
        break;
      case ReduceKind::Min:
        Acc.F = minF(Acc.F, X.F);
        Acc.I = std::min(Acc.I, X.I);
        break;
      }
    }
    Off = Base;
    if (R.RK == ReduceKind::Add && IsF)
      Acc.F = static_cast<float>(Sum);
    return Acc;
  }

  Val eval(int Idx) {
    const Inst &I = K.Insts[Idx];
    auto A = [&](int J) { return Vals[I.Operands[J]]; };
    bool IsF =
        opArity(I.Opcode) > 0 && K.Insts[I.Operands[0]].Type == ScalarType::F32;
    Val R;
    switch (I.Opcode) {
    case Op::Const:
      R.F = I.F;
      R.I = I.I;
      return R;
    case Op::Load:
      return load(I.Buffer);
    case Op::Dim:
      R.I = static_cast<int32_t>(Sizes[I.I]);
      return R;
    case Op::Index:
      R.I = static_cast<int32_t>(Point[I.I]);
      return R;
    case Op::Reduce:
      return reduce(I);
    case Op::Loop:
      for (int64_t J = 0, N = Sizes[K.inner()]; J < N; ++J) {
        setInner(J);
        block(I.Body);
      }
      Off = Base;
      return R;
    case Op::Store:
      store(I.Buffer, A(0));
      return R;
    case Op::Neg:
      IsF ? void(R.F = -A(0).F) : void(R.I = wrapSub(0, A(0).I));
      return R;
    case Op::Abs:
      IsF ? void(R.F = std::fabs(A(0).F))
          : void(R.I = A(0).I < 0 ? wrapSub(0, A(0).I) : A(0).I);
      return R;
    case Op::Exp:
      R.F = static_cast<float>(std::exp(double(A(0).F)));
      return R;
    case Op::Log:
      R.F = static_cast<float>(std::log(double(A(0).F)));
      return R;
    case Op::Tanh:
      R.F = static_cast<float>(std::tanh(double(A(0).F)));
      return R;
    case Op::Erf:
      R.F = static_cast<float>(std::erf(double(A(0).F)));
      return R;
    case Op::Sqrt:
      R.F = std::sqrt(A(0).F);
      return R;
    case Op::Rsqrt:
      R.F = static_cast<float>(1.0 / std::sqrt(double(A(0).F)));
      return R;
    case Op::Sigmoid:
      R.F = static_cast<float>(
          ir::formula::sigmoid(ir::ScalarMath<double>(), double(A(0).F)));
      return R;
    case Op::Not:
      R.I = !A(0).I;
      return R;
    case Op::Cast: {
      ScalarType From = K.Insts[I.Operands[0]].Type;
      Val X = A(0);
      if (I.Type == ScalarType::Bool)
        R.I = From == ScalarType::F32 ? X.F != 0.0f : X.I != 0;
      else if (I.Type == ScalarType::F32)
        R.F = From == ScalarType::F32 ? X.F : static_cast<float>(X.I);
      else
        R.I = From == ScalarType::F32 ? floatToInt(X.F) : X.I;
      return R;
    }
    case Op::Add:
      IsF ? void(R.F = A(0).F + A(1).F) : void(R.I = wrapAdd(A(0).I, A(1).I));
      return R;
    case Op::Sub:
      IsF ? void(R.F = A(0).F - A(1).F) : void(R.I = wrapSub(A(0).I, A(1).I));
      return R;
    case Op::Mul:
      IsF ? void(R.F = A(0).F * A(1).F) : void(R.I = wrapMul(A(0).I, A(1).I));
      return R;
    case Op::Div:
      IsF ? void(R.F = A(0).F / A(1).F) : void(R.I = intDiv(A(0).I, A(1).I));
      return R;
    case Op::Min:
      IsF ? void(R.F = minF(A(0).F, A(1).F))
          : void(R.I = std::min(A(0).I, A(1).I));
      return R;
    case Op::Max:
      IsF ? void(R.F = maxF(A(0).F, A(1).F))
          : void(R.I = std::max(A(0).I, A(1).I));
      return R;
    case Op::Pow:
      R.F = static_cast<float>(std::pow(double(A(0).F), double(A(1).F)));
      return R;
    case Op::And:
      R.I = A(0).I && A(1).I;
      return R;
    case Op::Or:
      R.I = A(0).I || A(1).I;
      return R;
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
      R.I = IsF ? compare(I.Opcode, A(0).F, A(1).F)
                : compare(I.Opcode, A(0).I, A(1).I);
      return R;
    case Op::Select:
      return A(0).I ? A(1) : A(2);
    }
    return R;
  }

  const Kernel &K;
  std::span<void *const> Bufs;
  std::span<const int64_t> Sizes;
  std::vector<int64_t> Strides;
  std::vector<Val> Vals;
  std::vector<int64_t> Off, Base;
  std::vector<int64_t> Point; ///< The current multi-index.
};

} // namespace

void interpretKernel(const Kernel &K, std::span<void *const> Buffers,
                     std::span<const int64_t> Sizes,
                     std::span<const int64_t> Strides) {
  checkLaunch(K, Buffers.size(), Sizes, Strides);
  std::vector<int64_t> S =
      Strides.empty() ? rowMajorStrides(K, Sizes)
                      : std::vector<int64_t>(Strides.begin(), Strides.end());
  Interp(K, Buffers, Sizes, std::move(S)).run();
}

} // namespace nng::backends::kernel
