//===- OpenMPSpinTest.cpp - libgomp's idle threads stop spinning ----------===//
//
// This test program links libnngraph_openmp_spin.so as nngraph's programs do
// (OpenMPStart.h): after parallel regions, the process uses almost no CPU
// while it waits. With libgomp's default spin it used 8-11 ms of CPU in the
// first idle second (AMD EPYC, 2 threads); with nngraph's, under 1 ms.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/OpenMPStart.h"
#include "nngraph/runtime/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#endif

using namespace nng;

namespace {

#if defined(__linux__)
double cpuMs() {
  rusage U;
  getrusage(RUSAGE_SELF, &U);
  return 1e3 * static_cast<double>(U.ru_utime.tv_sec + U.ru_stime.tv_sec) +
         1e-3 * static_cast<double>(U.ru_utime.tv_usec + U.ru_stime.tv_usec);
}
#endif

TEST(OpenMPSpin, SetBeforeLibgompStarts) {
  std::string D = describeOpenMPSpin();
  if (D.find("environment") != std::string::npos)
    GTEST_SKIP() << "SKIPPED: the environment chose libgomp's spin (" << D
                 << ")";
  EXPECT_EQ(D, std::string("GOMP_SPINCOUNT=") + OpenMPSpinDefault +
                   " (nngraph's default, set at start)");
}

#if defined(__linux__)
TEST(OpenMPSpin, IdleProcessUsesNoCpu) {
  if (describeOpenMPSpin().find("nngraph's default") == std::string::npos)
    GTEST_SKIP() << "SKIPPED: the environment chose libgomp's spin ("
                 << describeOpenMPSpin() << ")";
  ThreadScope Two(2);
  if (numThreads() < 2)
    GTEST_SKIP() << "SKIPPED: one thread (no idle OpenMP threads to spin)";
  std::atomic<int64_t> Sum{0};
  for (int R = 0; R < 50; ++R)
    parallelFor(0, 1 << 16, 1 << 10, [&](int64_t B, int64_t E) {
      int64_t S = 0;
      for (int64_t I = B; I < E; ++I)
        S += I & 7;
      Sum += S;
    });
  EXPECT_GT(Sum.load(), 0);
  double Before = cpuMs();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double Idle = cpuMs() - Before;
  // libgomp's default spin used 5-10 ms here; nngraph's well under 1 ms
  // (the bound leaves room for a slow machine's spin).
  EXPECT_LT(Idle, 3.0) << "idle OpenMP threads spun " << Idle
                       << " ms of CPU in 300 ms";
}
#endif

} // namespace
