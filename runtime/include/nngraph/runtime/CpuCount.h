//===- CpuCount.h - The CPUs this process may use --------------*- C++ -*-===//
//
// The default thread count (Parallel.h) is the number of CPUs this process
// may run on: its affinity mask (taskset, a container's cpuset), capped by
// its cgroup's CPU quota (a container's --cpus), never the host's core
// count. What chose the count is said by threadCountOrigin(), for --stats.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace nng {

/// The CPUs this process may use, and what bounds them.
struct UsableCpus {
  int Count = 1;      ///< min(Affinity, ceil(Quota)), at least 1.
  int Affinity = 0;   ///< CPUs in the affinity mask (0: unknown).
  double Quota = 0;   ///< The cgroup CPU quota in CPUs (0: none).
  /// "2 CPUs in the affinity mask, no cgroup CPU quota".
  std::string describe() const;
};

/// Reads the affinity mask and the cgroup quota (v2 cpu.max, v1
/// cpu.cfs_quota_us) of this process; the quota of the process's own cgroup
/// or the smallest of its ancestors'.
UsableCpus usableCpus();

/// The quota in CPUs of a cgroup v2 cpu.max line ("150000 100000" is 1.5;
/// "max 100000" none), or of v1's quota and period in microseconds; 0 when
/// there is none or the text is malformed.
double parseCpuMax(std::string_view Line);
double cpuQuotaOf(long long QuotaUs, long long PeriodUs);

/// Where the process's thread count came from, in words: the environment
/// variable that set it, setNumThreads, or usableCpus().describe().
std::string threadCountOrigin();

} // namespace nng
