//===- CpuCount.cpp - The CPUs this process may use ----------------------===//
//
// usableCpus() counts the affinity mask (sched_getaffinity) and reads the
// cgroup CPU quota: for cgroup v2, cpu.max of the process's cgroup (from
// /proc/self/cgroup) and of each ancestor up to the mount, the smallest;
// for v1, cpu.cfs_quota_us / cpu.cfs_period_us of the cpu controller's
// directory for the process (or the mount's root, as a container sees it).
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/CpuCount.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace nng {

namespace {

/// The first line of file Path, or "" when it cannot be read.
std::string firstLine(const std::string &Path) {
  std::ifstream In(Path);
  std::string Line;
  if (In)
    std::getline(In, Line);
  return Line;
}

/// Smallest positive of A and B (0 counts as none).
double minQuota(double A, double B) {
  if (A <= 0)
    return B;
  if (B <= 0)
    return A;
  return std::min(A, B);
}

/// The quota of cgroup directory Dir and its ancestors down to Root, with
/// Read giving one directory's quota.
template <typename Fn>
double quotaUpFrom(const std::string &Root, std::string Rel, Fn Read) {
  double Q = Read(Root);
  while (!Rel.empty() && Rel != "/") {
    Q = minQuota(Q, Read(Root + Rel));
    size_t Slash = Rel.find_last_of('/');
    Rel = Slash == std::string::npos ? "" : Rel.substr(0, Slash);
  }
  return Q;
}

double cgroupQuota() {
  std::ifstream In("/proc/self/cgroup");
  std::string Line;
  double Q = 0;
  while (std::getline(In, Line)) {
    // "0::/path" (v2) or "N:cpu,cpuacct:/path" (v1).
    size_t A = Line.find(':'), B = Line.find(':', A + 1);
    if (A == std::string::npos || B == std::string::npos)
      continue;
    std::string Controllers = Line.substr(A + 1, B - A - 1);
    std::string Path = Line.substr(B + 1);
    if (Controllers.empty()) {
      Q = minQuota(Q, quotaUpFrom("/sys/fs/cgroup", Path, [](const std::string &D) {
                     return parseCpuMax(firstLine(D + "/cpu.max"));
                   }));
      continue;
    }
    std::stringstream Names(Controllers);
    std::string Name;
    bool Cpu = false;
    while (std::getline(Names, Name, ','))
      Cpu = Cpu || Name == "cpu";
    if (!Cpu)
      continue;
    for (const char *Mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
      Q = minQuota(Q, quotaUpFrom(Mount, Path, [](const std::string &D) {
                     std::string QuotaText = firstLine(D + "/cpu.cfs_quota_us");
                     std::string PeriodText = firstLine(D + "/cpu.cfs_period_us");
                     if (QuotaText.empty() || PeriodText.empty())
                       return 0.0;
                     return cpuQuotaOf(std::atoll(QuotaText.c_str()),
                                       std::atoll(PeriodText.c_str()));
                   }));
  }
  return Q;
}

int affinityCount() {
#if defined(__linux__)
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) == 0)
    return CPU_COUNT(&Set);
#endif
  return 0;
}

} // namespace

double cpuQuotaOf(long long QuotaUs, long long PeriodUs) {
  if (QuotaUs <= 0 || PeriodUs <= 0)
    return 0;
  return static_cast<double>(QuotaUs) / static_cast<double>(PeriodUs);
}

double parseCpuMax(std::string_view Line) {
  std::string S(Line);
  std::istringstream In(S);
  std::string Quota;
  long long Period = 0;
  if (!(In >> Quota >> Period) || Quota == "max")
    return 0;
  char *End = nullptr;
  long long Q = std::strtoll(Quota.c_str(), &End, 10);
  if (*End != '\0')
    return 0;
  return cpuQuotaOf(Q, Period);
}

std::string UsableCpus::describe() const {
  std::string Out;
  if (Affinity > 0)
    Out = std::to_string(Affinity) + (Affinity == 1 ? " CPU" : " CPUs") +
          " in the affinity mask";
  else
    Out = "the affinity mask unknown";
  if (Quota > 0) {
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), ", a cgroup CPU quota of %.2g CPUs", Quota);
    Out += Buf;
  } else {
    Out += ", no cgroup CPU quota";
  }
  return Out;
}

UsableCpus usableCpus() {
  UsableCpus U;
  U.Affinity = affinityCount();
  U.Quota = cgroupQuota();
  int N = U.Affinity > 0 ? U.Affinity : 1;
  if (U.Quota > 0)
    N = std::min(N, std::max(1, static_cast<int>(std::ceil(U.Quota - 1e-9))));
  U.Count = std::max(1, N);
  return U;
}

} // namespace nng
