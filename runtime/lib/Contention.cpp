//===- Contention.cpp - How many threads a run should use now ------------===//
//
// Contention.h. A sample reads /proc/stat (the CPUs of the affinity mask)
// and this process's CPU time; other work is the busy time of those CPUs
// less this process's own, over the wall time since the last sample. The
// estimate is smoothed (half old, half new) so one short burst does not
// halve a run's threads, and a sample is taken only when SampleMs has
// passed, so a run pays a clock read. When the estimate would take threads
// away, othersRunnableNow (at most every CheckMs; about 20 us) confirms
// that another process is runnable now; before the first estimate, its
// count is the estimate.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/Contention.h"
#include "nngraph/runtime/CpuCount.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace nng {

namespace {

/// T in nanoseconds of the steady clock.
int64_t nsOf(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             T.time_since_epoch())
      .count();
}

struct Sample {
  double WallS = 0;
  double OwnS = 0;    ///< This process's CPU time.
  double BusyS = 0;   ///< The allowed CPUs' busy time (all processes).
  bool Ok = false;
};

std::vector<int> allowedCpus() {
  std::vector<int> Out;
#if defined(__linux__)
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) == 0)
    for (int I = 0; I < CPU_SETSIZE; ++I)
      if (CPU_ISSET(I, &Set))
        Out.push_back(I);
#endif
  return Out;
}

class Monitor {
public:
  Monitor() : Allowed(allowedCpus()), Cpus(usableCpus().Count) {
#if defined(__linux__)
    long Hz = sysconf(_SC_CLK_TCK);
    TickS = Hz > 0 ? 1.0 / static_cast<double>(Hz) : 0.01;
#endif
    Last = take();
  }

  int threadsFor(int Max) {
    if (Max <= 1)
      return 1;
    auto Now = std::chrono::steady_clock::now();
    int64_t Ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     Now - LastAt.load(std::memory_order_relaxed))
                     .count();
    // The first estimate comes after a shorter window (the baseline is
    // taken when the first executable is compiled, prime()), so the
    // first runs of a process that starts beside a busy one do not wait
    // SampleMs at every barrier; 5 ticks per CPU at 100 Hz.
    if (Ms >= (First.load(std::memory_order_relaxed) ? FirstSampleMs
                                                     : CpuContention::SampleMs)) {
      std::unique_lock<std::mutex> Lock(M, std::try_to_lock);
      if (Lock.owns_lock())
        update(Now);
    }
    if (First.load(std::memory_order_relaxed)) {
      // No window yet (a short process whose runs start within
      // FirstSampleMs of its compile): what is runnable now is all there
      // is to go on.
      int Runnable = runnableOthers(Now);
      return Runnable > 0 ? threadsLeft(Max, Cpus, Runnable) : Max;
    }
    double Others = Estimate.load(std::memory_order_relaxed);
    int T = threadsLeft(Max, Cpus, Others);
    // (Unknown, -1, counts as competing.)
    if (T < Max && runnableOthers(Now) == 0)
      return Max;
    return T;
  }

  double others() const { return Estimate.load(std::memory_order_relaxed); }

private:
  Sample take() const {
    Sample S;
#if defined(__linux__)
    S.WallS = std::chrono::duration<double>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
    rusage U;
    if (getrusage(RUSAGE_SELF, &U) != 0)
      return S;
    S.OwnS = static_cast<double>(U.ru_utime.tv_sec + U.ru_stime.tv_sec) +
             1e-6 * static_cast<double>(U.ru_utime.tv_usec + U.ru_stime.tv_usec);
    std::ifstream In("/proc/stat");
    if (!In)
      return S;
    std::stringstream Text;
    Text << In.rdbuf();
    CpuTicks T = parseProcStat(Text.str(), Allowed);
    if (T.Total == 0)
      return S;
    errno = 0;
    int Nice = getpriority(PRIO_PROCESS, 0); // -1 may be a nice level.
    if (errno != 0)
      Nice = 0;
    S.BusyS = static_cast<double>(competingTicks(T, Nice)) * TickS;
    S.Ok = true;
#endif
    return S;
  }

  /// Threads of other processes runnable now (othersRunnableNow; -1 when
  /// unknown), checked at most every CheckMs: the window's other work may
  /// have run while this process was idle, and then this run has the cores.
  /// The lesser of the last two checks: a quiet machine shows a runnable
  /// thread of some other process in 5-7% of single reads (AMD EPYC VM),
  /// two reads 5 ms apart almost never; a busy competitor is in both.
  int runnableOthers(std::chrono::steady_clock::time_point Now) {
    int64_t NowNs = nsOf(Now);
    if (NowNs - CheckedAtNs.load(std::memory_order_relaxed) < CheckMs * 1000000)
      return Runnable.load(std::memory_order_relaxed);
    CheckedAtNs.store(NowNs, std::memory_order_relaxed);
    int R = othersRunnableNow();
    int Prev = LastRead.exchange(R, std::memory_order_relaxed);
    if (R > 0 && Prev >= 0)
      R = std::min(R, Prev);
    Runnable.store(R, std::memory_order_relaxed);
    return R;
  }

  void update(std::chrono::steady_clock::time_point Now) {
    Sample S = take();
    LastAt.store(Now, std::memory_order_relaxed);
    if (S.Ok && Last.Ok && S.WallS > Last.WallS) {
      double Wall = S.WallS - Last.WallS;
      double Others =
          ((S.BusyS - Last.BusyS) - (S.OwnS - Last.OwnS)) / Wall;
      Others = std::clamp(Others, 0.0, static_cast<double>(Cpus));
      double Old = Estimate.load(std::memory_order_relaxed);
      bool IsFirst = First.exchange(false, std::memory_order_relaxed);
      Estimate.store(IsFirst ? Others : nextOthersBusy(Old, Others),
                     std::memory_order_relaxed);
    }
    Last = S;
  }

  std::vector<int> Allowed;
  int Cpus = 1;
  double TickS = 0.01;
  std::mutex M;
  Sample Last;
  std::atomic<std::chrono::steady_clock::time_point> LastAt{
      std::chrono::steady_clock::now()};
  std::atomic<double> Estimate{0.0};
  std::atomic<bool> First{true}; ///< No estimate yet.
  static constexpr int64_t FirstSampleMs = 50;
  std::atomic<int64_t> CheckedAtNs{0};
  std::atomic<int> Runnable{-1};
  std::atomic<int> LastRead{-1}; ///< The previous othersRunnableNow().
  static constexpr int64_t CheckMs = 5;
};

Monitor &monitor() {
  static Monitor Mon;
  return Mon;
}

} // namespace

CpuTicks parseProcStat(std::string_view Text, const std::vector<int> &Allowed) {
  CpuTicks Out;
  std::string S(Text);
  std::istringstream In(S);
  std::string Line;
  while (std::getline(In, Line)) {
    if (Line.rfind("cpu", 0) != 0 || Line.size() < 4 ||
        !std::isdigit(static_cast<unsigned char>(Line[3])))
      continue;
    std::istringstream L(Line.substr(3));
    int Cpu = -1;
    uint64_t V[8] = {};
    if (!(L >> Cpu))
      continue;
    int Got = 0;
    while (Got < 8 && (L >> V[Got]))
      ++Got;
    if (Got < 4)
      continue;
    if (!Allowed.empty() &&
        std::find(Allowed.begin(), Allowed.end(), Cpu) == Allowed.end())
      continue;
    // user nice system idle iowait irq softirq steal
    uint64_t Busy = V[0] + V[1] + V[2] + V[5] + V[6] + V[7];
    Out.Busy += Busy;
    Out.Niced += V[1];
    Out.Total += Busy + V[3] + V[4];
  }
  return Out;
}

uint64_t competingTicks(const CpuTicks &T, int Nice) {
  return Nice <= 0 ? T.Busy - T.Niced : T.Busy;
}

int parseLoadavgRunning(std::string_view Text) {
  // Fields: three averages, then "running/total", then the last pid.
  size_t Pos = 0;
  for (int Field = 0; Field < 3; ++Field) {
    Pos = Text.find(' ', Pos);
    if (Pos == std::string_view::npos)
      return -1;
    ++Pos;
  }
  int N = 0;
  size_t Digits = 0;
  while (Pos < Text.size() &&
         std::isdigit(static_cast<unsigned char>(Text[Pos])) && Digits < 9) {
    N = N * 10 + (Text[Pos++] - '0');
    ++Digits;
  }
  return Digits > 0 && Pos < Text.size() && Text[Pos] == '/' ? N : -1;
}

char parseTaskState(std::string_view Text) {
  size_t Close = Text.rfind(')');
  if (Close == std::string_view::npos || Close + 2 >= Text.size() ||
      Text[Close + 1] != ' ')
    return 0;
  return Text[Close + 2];
}

namespace {
#if defined(__linux__)
/// Up to Cap bytes of a /proc file; empty when unreadable.
std::string readSmall(const char *Path, size_t Cap = 512) {
  std::string Out;
  int Fd = ::open(Path, O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Out;
  Out.resize(Cap);
  ssize_t N = ::read(Fd, Out.data(), Cap);
  ::close(Fd);
  Out.resize(N > 0 ? static_cast<size_t>(N) : 0);
  return Out;
}
#endif
} // namespace

int othersRunnableNow() {
#if defined(__linux__)
  static const bool WholeMachine =
      usableCpus().Count == static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (!WholeMachine)
    return -1;
  int Running = parseLoadavgRunning(readSmall("/proc/loadavg"));
  if (Running < 0)
    return -1;
  DIR *D = ::opendir("/proc/self/task");
  if (!D)
    return -1;
  int Own = 0;
  while (dirent *E = ::readdir(D)) {
    if (E->d_name[0] == '.')
      continue;
    std::string Path = std::string("/proc/self/task/") + E->d_name + "/stat";
    if (parseTaskState(readSmall(Path.c_str())) == 'R')
      ++Own;
  }
  ::closedir(D);
  return std::max(0, Running - Own);
#else
  return -1;
#endif
}

double nextOthersBusy(double Old, double Sample) {
  return Sample < Old ? Sample : 0.5 * Old + 0.5 * Sample;
}

int threadsLeft(int Max, int Cpus, double OthersBusy) {
  double Free = static_cast<double>(Cpus) - std::max(0.0, OthersBusy);
  int N = static_cast<int>(std::floor(Free + 1.0 / 3.0));
  return std::clamp(N, 1, std::max(1, Max));
}

CpuContention::CpuContention() {
  const char *E = std::getenv("NNGRAPH_ADAPTIVE_THREADS");
  Enabled = !(E && std::string(E) == "0");
}

CpuContention &CpuContention::global() {
  static CpuContention C;
  return C;
}

void CpuContention::prime() {
  if (Enabled)
    monitor();
}

int CpuContention::threadsFor(int Max) {
  if (!Enabled)
    return Max;
  return monitor().threadsFor(Max);
}

double CpuContention::othersBusy() const {
  return Enabled ? monitor().others() : 0.0;
}

std::string CpuContention::describe() const {
  if (!Enabled)
    return "adaptive threads off (NNGRAPH_ADAPTIVE_THREADS=0)";
  char Buf[96];
  std::snprintf(Buf, sizeof(Buf),
                "adaptive: %.1f CPUs busy with other work lately",
                monitor().others());
  return Buf;
}

namespace {
std::atomic<int> ActiveRuns{0};
/// The most runs seen at once lately, and when (steady clock, ns): callers
/// that overlap come in streams, and a run that starts alone between two
/// overlapping ones would otherwise take every thread and then share the
/// cores with the next one's team.
std::atomic<int> OverlapLevel{1};
std::atomic<int64_t> OverlapAtNs{0};
constexpr int64_t OverlapMemoryNs = 50'000'000; // 50 ms.

int64_t nowNs() { return nsOf(std::chrono::steady_clock::now()); }
} // namespace

namespace {
/// Runs this thread is inside (a run's node kernel running a compiled
/// region or part: one run, not two), and the outermost one's share.
thread_local int RunDepth = 0;
thread_local int OuterShare = 0;
} // namespace

RunShare::RunShare(int Threads) {
  if (RunDepth++ > 0) {
    Share = std::max(1, std::min(Threads, OuterShare));
    return;
  }
  int N = ActiveRuns.fetch_add(1, std::memory_order_relaxed) + 1;
  int64_t Now = nowNs();
  bool Recent =
      Now - OverlapAtNs.load(std::memory_order_relaxed) < OverlapMemoryNs;
  int Level = Recent ? OverlapLevel.load(std::memory_order_relaxed) : 1;
  if (N >= 2) {
    OverlapLevel.store(std::max(N, Level), std::memory_order_relaxed);
    OverlapAtNs.store(Now, std::memory_order_relaxed);
  }
  Share = std::max(1, Threads / std::max(N, Level));
  OuterShare = Share;
}

RunShare::~RunShare() {
  if (--RunDepth > 0)
    return;
  ActiveRuns.fetch_sub(1, std::memory_order_relaxed);
}

int RunShare::active() { return ActiveRuns.load(std::memory_order_relaxed); }

} // namespace nng
