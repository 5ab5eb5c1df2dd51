//===- CpuCountTest.cpp - The CPUs this process may use ------------------===//

#include "nngraph/runtime/CpuCount.h"

#include <gtest/gtest.h>

#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

using namespace nng;

TEST(CpuCountTest, CgroupQuotasParse) {
  EXPECT_DOUBLE_EQ(parseCpuMax("150000 100000"), 1.5);
  EXPECT_DOUBLE_EQ(parseCpuMax("200000 100000\n"), 2.0);
  EXPECT_EQ(parseCpuMax("max 100000"), 0); // No quota.
  EXPECT_EQ(parseCpuMax(""), 0);
  EXPECT_EQ(parseCpuMax("12x 100000"), 0); // Malformed: none.
  EXPECT_EQ(parseCpuMax("100000"), 0);
  EXPECT_EQ(cpuQuotaOf(-1, 100000), 0); // cgroup v1's "no quota".
  EXPECT_DOUBLE_EQ(cpuQuotaOf(50000, 100000), 0.5);
}

TEST(CpuCountTest, CountFollowsTheAffinityMask) {
  UsableCpus All = usableCpus();
  EXPECT_GE(All.Count, 1);
  EXPECT_NE(All.describe().find("affinity mask"), std::string::npos);
#if defined(__linux__)
  ASSERT_GT(All.Affinity, 0);
  EXPECT_LE(All.Count, All.Affinity);
  if (All.Quota > 0)
    EXPECT_LE(All.Count, static_cast<int>(All.Quota) + 1);
  // A thread pinned to one CPU (the mask is per thread) may use one.
  UsableCpus Pinned;
  std::thread T([&] {
    cpu_set_t Set;
    ASSERT_EQ(sched_getaffinity(0, sizeof(Set), &Set), 0);
    int First = 0;
    while (!CPU_ISSET(First, &Set))
      ++First;
    CPU_ZERO(&Set);
    CPU_SET(First, &Set);
    ASSERT_EQ(sched_setaffinity(0, sizeof(Set), &Set), 0);
    Pinned = usableCpus();
  });
  T.join();
  EXPECT_EQ(Pinned.Affinity, 1);
  EXPECT_EQ(Pinned.Count, 1);
  EXPECT_NE(Pinned.describe().find("1 CPU in the affinity mask"),
            std::string::npos)
      << Pinned.describe();
#else
  GTEST_SKIP() << "SKIPPED: affinity masks are read on Linux only";
#endif
}
