//===- JitPropertyTest.cpp - Random kernels: JIT == interpreter -----------===//
//
// A property test with a fixed seed: random expression trees (f32 math and
// arithmetic, comparisons of loaded values, selects; i32 arithmetic) over
// inputs with random broadcast patterns, permuted axes and dtypes (f32,
// f16, bf16, i32), as elementwise kernels or as row programs (a reduction
// whose scalar the stored expression uses), each run at two domain sizes.
// The JIT must agree with the interpreter within tolerance (exactly for
// i32). SKIPPED in builds without LLVM.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include <algorithm>

namespace nng {
namespace {

using namespace kerneltest;

class RandomKernel {
public:
  RandomKernel(std::mt19937 &R, int Trial) : R(R) {
    Rank = pick(1, 3);
    IsInt = pick(0, 4) == 0;
    IsRow = !IsInt && pick(0, 1) == 1;
    B = std::make_unique<KernelBuilder>("random" + std::to_string(Trial), Rank);
    int NumIn = pick(1, 4);
    for (int I = 0; I < NumIn; ++I) {
      // A random subset of the dims, in a random order (a permuted view).
      std::vector<int> Dims;
      for (int D = 0; D < Rank; ++D)
        if (pick(0, 3) > 0)
          Dims.push_back(D);
      std::shuffle(Dims.begin(), Dims.end(), R);
      DType T = IsInt ? DType::I32 : floatType();
      Inputs.push_back(B->input("in" + std::to_string(I), T, Dims));
    }
  }

  Kernel build() {
    std::vector<int> All;
    for (int D = 0; D < Rank; ++D)
      All.push_back(D);
    DType OutT = IsInt ? DType::I32 : floatType();
    int Out = B->output("out", OutT, All);
    int Out2 = IsInt ? -1 : B->output("out2", floatType(), All);
    if (IsRow) {
      B->beginReduce(pick(0, 2) == 0 ? ReduceKind::Max : ReduceKind::Add);
      Row = B->endReduce(expr(3));
    }
    B->beginLoop();
    B->store(Out, expr(4));
    if (Out2 >= 0)
      B->store(Out2, expr(2));
    B->endLoop();
    return B->finish();
  }

  int Rank;
  bool IsInt, IsRow;

private:
  int pick(int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(R);
  }
  DType floatType() {
    const DType Ts[] = {DType::F32, DType::F32, DType::F16, DType::BF16};
    return Ts[pick(0, 3)];
  }
  /// A load, a constant or (AllowRow) the row's reduced scalar, which may
  /// differ by rounding between the two and so is never compared.
  Value leaf(bool AllowRow = true) {
    int C = pick(0, 5);
    if (C == 0)
      return IsInt
                 ? B->constI32(pick(-5, 5))
                 : B->constF32(std::uniform_real_distribution<float>(-2, 2)(R));
    if (C == 1 && Row.Id >= 0 && AllowRow)
      return Row;
    return B->load(Inputs[pick(0, static_cast<int>(Inputs.size()) - 1)]);
  }
  Value expr(int Depth) {
    if (Depth == 0 || pick(0, 4) == 0)
      return leaf();
    if (IsInt) {
      const Op Ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Min,
                        Op::Max, Op::Neg, Op::Abs, Op::Select};
      Op O = Ops[pick(0, 7)];
      if (O == Op::Neg || O == Op::Abs)
        return B->unary(O, expr(Depth - 1));
      if (O == Op::Select) {
        Value L = leaf(false), Rr = leaf(false);
        Value C = B->binary(Op::Gt, L, Rr);
        Value A = expr(Depth - 1);
        return B->select(C, A, expr(Depth - 1));
      }
      Value A = expr(Depth - 1);
      return B->binary(O, A, expr(Depth - 1));
    }
    switch (pick(0, 11)) {
    case 0:
      return B->unary(Op::Tanh, expr(Depth - 1));
    case 1:
      return B->unary(Op::Erf, expr(Depth - 1));
    case 2:
      return B->unary(Op::Sigmoid, expr(Depth - 1));
    case 3: // exp of a bounded argument.
      return B->exp(B->unary(Op::Tanh, expr(Depth - 1)));
    case 4: // log(|x| + 1), sqrt(|x|).
      return B->unary(
          pick(0, 1) ? Op::Log : Op::Sqrt,
          B->add(B->unary(Op::Abs, expr(Depth - 1)), B->constF32(1)));
    case 5: { // Division by something away from zero.
      Value A = expr(Depth - 1);
      Value D = B->add(B->unary(Op::Abs, expr(Depth - 1)), B->constF32(0.5f));
      return B->div(A, D);
    }
    case 6: { // A comparison of exact values picks a branch.
      Value L = leaf(false), Rr = leaf(false);
      Value C = B->binary(pick(0, 1) ? Op::Lt : Op::Ge, L, Rr);
      Value A = expr(Depth - 1);
      return B->select(C, A, expr(Depth - 1));
    }
    default: {
      const Op Ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Min, Op::Max};
      Op O = Ops[pick(0, 4)];
      Value A = expr(Depth - 1);
      return B->binary(O, A, expr(Depth - 1));
    }
    }
  }

  std::mt19937 &R;
  std::unique_ptr<KernelBuilder> B;
  std::vector<int> Inputs;
  Value Row;
};

TEST(JitProperty, RandomKernelsMatchTheInterpreter) {
  NNG_REQUIRE_JIT();
  std::mt19937 R(20261125);
  const int64_t SizeChoices[] = {1, 3, 15, 16, 17, 40};
  int Rows = 0, Ints = 0;
  for (int Trial = 0; Trial < 40; ++Trial) {
    RandomKernel G(R, Trial);
    Kernel K = G.build();
    Rows += G.IsRow;
    Ints += G.IsInt;
    for (int Run = 0; Run < 2; ++Run) {
      std::vector<int64_t> S;
      for (int D = 0; D < G.Rank; ++D)
        S.push_back(SizeChoices[std::uniform_int_distribution<int>(0, 5)(R)]);
      BothRuns Both = runBoth(K, S, makeBuffers(K, S, R, -2, 2));
      std::string What =
          "trial " + std::to_string(Trial) + "\n" + printKernel(K);
      expectClose(K, Both, 1e-4, 1e-4, What);
      if (::testing::Test::HasFailure())
        return;
    }
  }
  // The seed gives a mix of kinds.
  EXPECT_GT(Rows, 5);
  EXPECT_GT(Ints, 3);
}

} // namespace
} // namespace nng
