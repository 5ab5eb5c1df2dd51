//===- Parallel.cpp - The parallel loop over OpenMP ----------------------===//

#include "nngraph/runtime/Parallel.h"
#include "nngraph/runtime/CpuCount.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nng {

namespace {

/// The process's thread count; 0 until first read.
std::atomic<int> Setting{0};

/// A positive integer from the environment variable Name, or 0.
int positiveEnv(const char *Name) {
  const char *S = std::getenv(Name);
  if (!S || !*S)
    return 0;
  char *End = nullptr;
  long V = std::strtol(S, &End, 10);
  return (*End == '\0' && V > 0 && V < 4096) ? static_cast<int>(V) : 0;
}

/// Where Setting came from (threadCountOrigin); guarded by OriginMutex.
std::mutex OriginMutex;
std::string Origin;

/// NNGRAPH_NUM_THREADS, else OMP_NUM_THREADS (as OpenMP read it), else the
/// CPUs this process may use (CpuCount.h).
int initialSetting() {
  std::string Why;
  int N = 1;
  if ((N = positiveEnv("NNGRAPH_NUM_THREADS"))) {
    Why = "NNGRAPH_NUM_THREADS";
  } else {
#ifdef _OPENMP
    if (std::getenv("OMP_NUM_THREADS")) {
      N = omp_get_max_threads();
      Why = "OMP_NUM_THREADS";
    } else {
      UsableCpus U = usableCpus();
      N = U.Count;
      Why = "the CPUs this process may use: " + U.describe();
    }
#else
    N = 1;
    Why = "built without OpenMP";
#endif
  }
  std::lock_guard<std::mutex> Lock(OriginMutex);
  if (Origin.empty())
    Origin = Why;
  return N;
}

/// The calling thread's OpenMP thread count.
int threadIcv() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void setThreadIcv(int N) {
#ifdef _OPENMP
  omp_set_num_threads(std::max(1, N));
#else
  (void)N;
#endif
}

} // namespace

int defaultNumThreads() {
  int S = Setting.load(std::memory_order_relaxed);
  if (S == 0) {
    int Expected = 0;
    Setting.compare_exchange_strong(Expected, initialSetting());
    S = Setting.load(std::memory_order_relaxed);
  }
  return S;
}

int numThreads() { return std::max(1, std::min(defaultNumThreads(), threadIcv())); }

std::string threadCountOrigin() {
  defaultNumThreads();
  std::lock_guard<std::mutex> Lock(OriginMutex);
  return Origin;
}

void setNumThreads(int N) {
  N = std::max(1, N);
  {
    std::lock_guard<std::mutex> Lock(OriginMutex);
    Origin = "set by the caller (--threads, set_num_threads)";
  }
  Setting.store(N, std::memory_order_relaxed);
  setThreadIcv(N);
}

ThreadScope::ThreadScope(int N) : Saved(threadIcv()) {
  if (N != Saved)
    setThreadIcv(N);
}

ThreadScope::~ThreadScope() {
  if (threadIcv() != Saved)
    setThreadIcv(Saved);
}

void parallelFor(int64_t Begin, int64_t End, int64_t Grain,
                 FunctionRef<void(int64_t, int64_t)> Body) {
  if (End <= Begin)
    return;
  Grain = std::max<int64_t>(Grain, 1);
  int64_t N = End - Begin;
  int64_t Grains = (N + Grain - 1) / Grain;
  int Threads = static_cast<int>(std::min<int64_t>(numThreads(), Grains));
#ifdef _OPENMP
  if (Threads > 1 && !omp_in_parallel()) {
    int64_t Chunks =
        std::min<int64_t>(Grains, int64_t(Threads) * ChunksPerThread);
    int64_t Chunk = (N + Chunks - 1) / Chunks;
    Chunks = (N + Chunk - 1) / Chunk;
    std::atomic<int64_t> Next{0};
    std::exception_ptr Failure;
    std::mutex M;
#pragma omp parallel num_threads(Threads)
    {
      // Chunks go to whichever thread asks first: a thread that starts
      // late (descheduled by another process) leaves its share to the
      // others, the calling thread included.
      for (int64_t C; (C = Next.fetch_add(1, std::memory_order_relaxed)) <
                      Chunks;) {
        int64_t B = Begin + C * Chunk;
        int64_t E = std::min(End, B + Chunk);
        try {
          Body(B, E);
        } catch (...) {
          std::lock_guard<std::mutex> L(M);
          if (!Failure)
            Failure = std::current_exception();
        }
      }
    }
    if (Failure)
      std::rethrow_exception(Failure);
    return;
  }
#endif
  (void)Threads;
  Body(Begin, End);
}

} // namespace nng
