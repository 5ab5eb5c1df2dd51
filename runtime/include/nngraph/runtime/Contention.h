//===- Contention.h - How many threads a run should use now ----*- C++ -*-===//
//
// OpenMP's barriers (libgomp, which oneDNN and parallelFor use) spin, then
// sleep, waiting for every thread of a parallel region: when another
// process holds one of the cores, the thread it displaced is descheduled
// and each region waits for a time slice. CpuContention watches how busy
// the CPUs this process may use are with other work (/proc/stat's counts
// over those CPUs minus this process's own time, getrusage), sampled at
// most every SampleMs, and suggests a thread count that leaves the busy
// ones alone: a run then uses the cores it can have, and no barrier waits
// for a descheduled thread. The window counts work that ran while this
// process was idle too (a peer engine run in turns with this one, another
// model between requests): before a run takes fewer threads, a check of
// what is runnable now (othersRunnableNow) confirms that another process
// competes at this moment, else the run takes them all; and until the
// first window ends, that count is the estimate (a short process's runs).
// Niced processes' time does not count for a process at nice 0 or below
// (competingTicks): they yield the cores to its threads. (The runnable
// count cannot tell them apart: until the first window ends, a busy niced
// process still counts.)
// NNGRAPH_ADAPTIVE_THREADS=0 turns it off (runs
// always use numThreads()). RunShare does the same among this process's own
// runs when callers on several threads overlap.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nng {

/// Busy and total time of a set of CPUs, in /proc/stat's ticks.
struct CpuTicks {
  uint64_t Busy = 0;  ///< user + nice + system + irq + softirq + steal.
  uint64_t Niced = 0; ///< nice: processes at a lower priority; in Busy.
  uint64_t Total = 0; ///< Busy + idle + iowait.
};

/// The busy ticks of T that compete with a process at nice level Nice: all
/// of them, less the niced processes' (nice above 0) when Nice is 0 or
/// below. The scheduler preempts a niced process for this one's threads
/// (a nice-19 process gets about 1.5% of a core beside one at 0), so a
/// background job niced by its owner takes no core from a run: counted,
/// a busy `nice -n 19` job made runs use one thread of two, 1.7x slower
/// (PaddleOCR's detector, Intel Xeon, 2 CPUs). A niced process of our own
/// cannot tell lower from higher niced peers, so it counts them all.
uint64_t competingTicks(const CpuTicks &T, int Nice);

/// Sums the "cpuN" lines of /proc/stat text for the CPUs in Allowed (all
/// when empty); a malformed line is skipped.
CpuTicks parseProcStat(std::string_view Text, const std::vector<int> &Allowed);

/// The estimate of CPUs busy with other work after a window that measured
/// Sample, from the estimate Old: down to Sample at once (a peer that
/// stopped, as an engine run beside this one in an interleaved benchmark,
/// frees its core now), up halfway (a short burst of a window counts for
/// half).
double nextOthersBusy(double Old, double Sample);

/// The running count of /proc/loadavg text ("0.5 0.4 0.3 2/345 678": 2,
/// the machine's runnable threads now); -1 when malformed.
int parseLoadavgRunning(std::string_view Text);

/// The state letter of /proc/PID/task/TID/stat text ("12 (a (b)) R ...":
/// 'R'), after the last ')' since a name may hold any character; 0 when
/// malformed.
char parseTaskState(std::string_view Text);

/// Threads of other processes runnable now: the machine's runnable
/// threads (/proc/loadavg) less this process's threads in state R. -1 when
/// unknown: not Linux, or this process may use fewer CPUs than the machine
/// has online (the count is the machine's, not its CPUs').
int othersRunnableNow();

/// The thread count for OthersBusy CPUs busy with other work, of Cpus the
/// process may use, at most Max: the cores left, where a core busy more
/// than a third of the time counts as taken; at least 1. Never more than
/// Cpus: more threads than cores is the barrier stall this avoids (a count
/// set above the cores takes NNGRAPH_ADAPTIVE_THREADS=0).
int threadsLeft(int Max, int Cpus, double OthersBusy);

class CpuContention {
public:
  /// The process's monitor.
  static CpuContention &global();
  /// Takes the first sample now (the first estimate follows 50 ms later,
  /// the next ones every SampleMs): called when an executable is made, so
  /// a process's first runs already know what else is busy.
  void prime();
  /// The threads a run should use now, at most Max (numThreads()).
  int threadsFor(int Max);
  /// CPUs busy with other work over the last sample window (an estimate).
  double othersBusy() const;
  bool enabled() const { return Enabled; }
  /// "adaptive: 0.0 CPUs busy with other work" or "off (...)".
  std::string describe() const;

  /// Samples at most this often.
  static constexpr int64_t SampleMs = 100;

private:
  CpuContention();
  bool Enabled = true;
};

/// A run in progress, and the share of threads it should take while runs
/// of this process overlap (callers on several threads, of one executable
/// or of several): Threads / (runs in progress, or the most seen at once
/// in the last 50 ms when more), at least 1, so N callers on C cores use
/// about C threads in all, not N x C (each OpenMP team would wait for the
/// others' descheduled threads at its barriers). A run inside a run on the
/// same thread (an If's branch, a compiled part of a graph) is the same run:
/// it takes the outer one's share and is not counted.
class RunShare {
public:
  /// Threads: what the run would use alone.
  explicit RunShare(int Threads);
  ~RunShare();
  RunShare(const RunShare &) = delete;
  RunShare &operator=(const RunShare &) = delete;
  int threads() const { return Share; }
  /// Runs of the process in progress now.
  static int active();

private:
  int Share;
};

} // namespace nng
