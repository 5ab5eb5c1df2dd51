//===- CpuCountTest.cpp - The CPUs this process may use ------------------===//

#include "nngraph/runtime/Contention.h"
#include "nngraph/runtime/CpuCount.h"

#include <gtest/gtest.h>

#include <thread>

#if defined(__linux__)
#include <chrono>
#include <csignal>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
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

TEST(CpuCountTest, ProcStatSumsTheAllowedCpus) {
  const char *Text = "cpu  100 0 50 1000 10 0 0 5 0 0\n"
                     "cpu0 60 0 20 400 5 0 0 5 0 0\n"
                     "cpu1 40 0 30 600 5 0 0 0 0 0\n"
                     "intr 12345\n";
  CpuTicks Both = parseProcStat(Text, {});
  EXPECT_EQ(Both.Busy, 60u + 20 + 5 + 40 + 30);
  EXPECT_EQ(Both.Total, Both.Busy + 400 + 5 + 600 + 5);
  CpuTicks One = parseProcStat(Text, {1});
  EXPECT_EQ(One.Busy, 70u);
  EXPECT_EQ(One.Total, 70u + 605);
  EXPECT_EQ(parseProcStat("garbage\ncpu7\n", {}).Total, 0u);
  // The nice column: busy, and apart.
  CpuTicks Niced = parseProcStat("cpu0 60 30 20 400 5 0 0 5\n"
                                 "cpu1 40 70 30 600 5 0 0 0\n",
                                 {});
  EXPECT_EQ(Niced.Busy, 60u + 30 + 20 + 5 + 40 + 70 + 30);
  EXPECT_EQ(Niced.Niced, 100u);
  EXPECT_EQ(Niced.Total, Niced.Busy + 400 + 5 + 600 + 5);
}

TEST(CpuCountTest, NicedProcessesDoNotCompeteWithOneAtNiceZero) {
  CpuTicks T;
  T.Busy = 300;
  T.Niced = 100;
  T.Total = 1000;
  EXPECT_EQ(competingTicks(T, 0), 200u);   // They yield to this process.
  EXPECT_EQ(competingTicks(T, -5), 200u);
  EXPECT_EQ(competingTicks(T, 10), 300u);  // Niced itself: all count.
}

TEST(CpuCountTest, RunnableNowParses) {
  EXPECT_EQ(parseLoadavgRunning("0.50 0.40 0.30 2/345 6789\n"), 2);
  EXPECT_EQ(parseLoadavgRunning("1.00 1.00 1.00 17/1024 1"), 17);
  EXPECT_EQ(parseLoadavgRunning("0.5 0.4 0.3"), -1);
  EXPECT_EQ(parseLoadavgRunning(""), -1);
  EXPECT_EQ(parseLoadavgRunning("0.5 0.4 0.3 x/2 1"), -1);
  EXPECT_EQ(parseTaskState("12 (python3) R 1 2 3"), 'R');
  // A name may hold spaces and parentheses: the state follows the last ')'.
  EXPECT_EQ(parseTaskState("12 (a (b) c) S 1 2 3"), 'S');
  EXPECT_EQ(parseTaskState("12 (python3"), 0);
  EXPECT_EQ(parseTaskState(""), 0);
}

#if defined(__linux__)
TEST(CpuCountTest, RunnableNowSeesABusyProcess) {
  if (othersRunnableNow() < 0)
    GTEST_SKIP() << "SKIPPED: this process may not use every online CPU, so "
                    "the machine's runnable count says nothing of its CPUs";
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    // Busy until killed (at most 10 s).
    auto End = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    volatile unsigned long Spin = 0;
    while (std::chrono::steady_clock::now() < End)
      Spin = Spin + 1;
    _exit(0);
  }
  // Runnable whether it runs or waits for a core; poll until it has
  // started (a fork returns before the child first runs).
  int Seen = 0;
  for (int I = 0; I < 200 && Seen < 1; ++I) {
    Seen = othersRunnableNow();
    if (Seen < 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(Child, SIGKILL);
  waitpid(Child, nullptr, 0);
  EXPECT_GE(Seen, 1);
}
#endif

TEST(CpuCountTest, ThreadsLeaveBusyCoresAlone) {
  EXPECT_EQ(threadsLeft(2, 2, 0.0), 2);
  EXPECT_EQ(threadsLeft(2, 2, 0.2), 2);  // Background noise.
  EXPECT_EQ(threadsLeft(2, 2, 1.0), 1);  // One busy competitor.
  EXPECT_EQ(threadsLeft(2, 2, 2.0), 1);  // Never fewer than one.
  EXPECT_EQ(threadsLeft(8, 16, 3.0), 8); // At most the asked count.
  EXPECT_EQ(threadsLeft(16, 16, 3.0), 13);
}

TEST(CpuCountTest, ContentionFollowsAPeerThatStopsAtOnce) {
  // A peer process that kept a core busy and stopped: the next window's
  // estimate is its own, so the next run takes both cores.
  EXPECT_DOUBLE_EQ(nextOthersBusy(1.0, 0.02), 0.02);
  EXPECT_EQ(threadsLeft(2, 2, nextOthersBusy(1.0, 0.02)), 2);
  // A competitor that starts: halfway up at each window, one core from
  // the first (a core busy half the time counts as taken).
  EXPECT_DOUBLE_EQ(nextOthersBusy(0.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(nextOthersBusy(0.5, 1.0), 0.75);
  EXPECT_EQ(threadsLeft(2, 2, nextOthersBusy(0.0, 1.0)), 1);
  // A short burst of a fifth of a core stays below the third that counts.
  EXPECT_EQ(threadsLeft(2, 2, nextOthersBusy(0.0, 0.6)), 2);
}

TEST(CpuCountTest, ContentionSuggestsACountWithinBounds) {
  CpuContention &C = CpuContention::global();
  int N = C.threadsFor(4);
  EXPECT_GE(N, 1);
  EXPECT_LE(N, 4);
  EXPECT_EQ(C.threadsFor(1), 1);
  EXPECT_GE(C.othersBusy(), 0.0);
  EXPECT_FALSE(C.describe().empty());
}

TEST(CpuCountTest, RunInsideARunIsTheSameRun) {
  // A run's node kernel running a compiled branch on the same thread: one
  // run, sharing its threads; only another thread's run is an overlap.
  int Before = RunShare::active();
  {
    RunShare Outer(4);
    EXPECT_EQ(RunShare::active(), Before + 1);
    {
      RunShare Inner(4);
      EXPECT_EQ(RunShare::active(), Before + 1);
      EXPECT_EQ(Inner.threads(), Outer.threads());
      RunShare Fewer(1);
      EXPECT_EQ(Fewer.threads(), 1);
    }
    EXPECT_EQ(RunShare::active(), Before + 1);
    int OnOther = 0;
    std::thread T([&] {
      RunShare Other(4);
      OnOther = RunShare::active();
    });
    T.join();
    EXPECT_EQ(OnOther, Before + 2);
  }
  EXPECT_EQ(RunShare::active(), Before);
}
