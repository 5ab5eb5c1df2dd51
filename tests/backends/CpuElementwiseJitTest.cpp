//===- CpuElementwiseJitTest.cpp - Lone elementwise nodes as JIT kernels --===//
//
// An f32 elementwise node the cpu backend has no loop of its own for
// (Sigmoid, Exp, Pow, Neg) lowers as a fused region holding it alone, one
// JIT kernel, instead of a fallback step's node kernel; and a Reshape of a
// graph input is an own loop copying its bytes. Checked against the
// reference backend (with NaN, infinities and signed zeros) at two batch
// sizes, one program reshaped to the other, and by the schedule: no
// fallback step. Without LLVM the nodes stay on their node kernels and
// the results agree all the same.
//
//===----------------------------------------------------------------------===//

#include "CpuTestUtils.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/backends/cpu/CpuBackend.h"
#include "nngraph/backends/cpu/KernelJit.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Parser.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::cputest;

namespace {

const char *LoneText = R"(graph "lone" {
  input %x: f32[N,6]
  init %shape: i64[3] = [-1, 2, 3]
  init %two: f32[] = [2]
  %r = Reshape(%x, %shape)
  %s = Sigmoid(%r)
  %e = Exp(%x)
  %p = Pow(%x, %two)
  %n = Neg(%x)
  output %s, %e, %p, %n
})";

TEST(CpuElementwiseJit, LoneNodesAreKernelsNotFallbacks) {
  REQUIRE_ONEDNN();
  auto G = ir::parseGraph(LoneText);
  ASSERT_TRUE(G);
  auto Exe = backends::getBackend("cpu").compile(*G);
  for (int64_t N : {2, 5}) {
    Tensor X = rnd({N, 6}, 700 + static_cast<unsigned>(N), -4, 4);
    const float Special[] = {0.f,       -0.f,     INFINITY, -INFINITY,
                             std::nanf(""), 88.f, -100.f,   1e-30f};
    for (int64_t I = 0; I < 8; ++I)
      X.setFlat(I, Special[I]);
    std::vector<Tensor> Want = backends::runReference(*G, {X});
    std::vector<Tensor> Got = Exe->run({X});
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t O = 0; O < Want.size(); ++O)
      EXPECT_TRUE(closeTo(Got[O], Want[O])) << "N " << N << " output " << O;
  }
  backends::CpuExecutableStats S = *backends::cpuExecutableStats(*Exe);
  EXPECT_TRUE(S.Compiled);
  EXPECT_EQ(S.Reshapes, 1) << S.ReshapeRefusal;
  if (!backends::cpu::kernelJitAvailable())
    GTEST_SKIP() << "SKIPPED: built without the LLVM JIT; the lone nodes ran "
                    "on their node kernels and agreed";
  EXPECT_TRUE(S.Fallbacks.empty()) << S.Fallbacks.front();
  std::optional<std::string> Sched = backends::cpuSchedule(*Exe);
  ASSERT_TRUE(Sched);
  EXPECT_NE(Sched->find("(a copy of the input)"), std::string::npos)
      << *Sched;
  for (const char *Op : {"Sigmoid", "Exp", "Pow", "Neg"})
    EXPECT_NE(Sched->find(std::string(Op) + " (JIT kernel)"),
              std::string::npos)
        << Op << "\n"
        << *Sched;
}

} // namespace
