//===- CpuCompareTest.cpp - f32 comparisons' own loop against the reference
//===//
//
// The cpu backend compares dense f32 tensors on its own loop
// (KernelsCompare.cpp): Equal, Less, LessOrEqual, Greater and GreaterOrEqual
// checked against the reference kernel on operands of one shape and on a
// tensor against a one-element tensor on either side (rank 0 or with
// size-1 axes), with ties, signed zeros, infinities and NaN; the call
// counters say the loop served them. Broadcasts of more than one element
// and other dtypes go to the reference kernel and agree too.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"

using namespace nng;
using namespace nng::reftest;
using namespace nng::cputest;

namespace {

TEST(CpuCompare, OwnLoopMatchesTheReference) {
  REQUIRE_ONEDNN();
  using ir::OpKind;
  // Small integers: many ties between the operands.
  Tensor A = ties({3, 5, 7}, 500, 4), B = ties({3, 5, 7}, 501, 4);
  Tensor Big = rnd({1, 70000}, 502);
  Tensor Special =
      f32({0.f, -0.f, 1.f, -1.f, INFINITY, -INFINITY, std::nanf(""), 0.5f});
  Tensor Special2 =
      f32({-0.f, 0.f, 1.f, 2.f, INFINITY, INFINITY, 1.f, std::nanf("")});
  for (OpKind K : {OpKind::Equal, OpKind::Less, OpKind::LessOrEqual,
                   OpKind::Greater, OpKind::GreaterOrEqual}) {
    check(mk(K, {A, B}).expect(Expect::Fast));
    check(mk(K, {Special, Special2}).expect(Expect::Fast));
    check(mk(K, {Special2, Special}).expect(Expect::Fast));
    // A threshold on the right, on the left; rank 0 and [1, 1].
    check(mk(K, {Big, Tensor::scalar<float>(0.05f)}).expect(Expect::Fast));
    check(mk(K, {f32({1.f}, {1, 1}), A}).expect(Expect::Fast));
    check(mk(K, {A, f32({2.f}, {1, 1, 1})}).expect(Expect::Fast));
    check(mk(K, {Special, Tensor::scalar<float>(0.f)}).expect(Expect::Fast));
    check(mk(K, {Tensor::scalar<float>(std::nanf("")), Special})
              .expect(Expect::Fast));
    // A one-element operand of more axes than the other, a row broadcast,
    // and i64 run on the reference kernel.
    check(mk(K, {f32({1.f, 2.f, 3.f}), f32({2.f}, {1, 1})})
              .expect(Expect::Reference));
    check(mk(K, {A, ties({1, 5, 1}, 503, 4)}).expect(Expect::Reference));
    check(mk(K, {i64({1, 2, 3}), i64({2, 2, 2})}).expect(Expect::Reference));
  }
}

} // namespace
