//===- Parallel.cpp - The parallel loop over OpenMP ----------------------===//

#include "nngraph/runtime/Parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nng {

int numThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void setNumThreads(int N) {
#ifdef _OPENMP
  omp_set_num_threads(std::max(1, N));
#else
  (void)N;
#endif
}

void parallelFor(int64_t Begin, int64_t End, int64_t Grain,
                 FunctionRef<void(int64_t, int64_t)> Body) {
  if (End <= Begin)
    return;
  Grain = std::max<int64_t>(Grain, 1);
  int64_t N = End - Begin;
  int64_t MaxChunks = (N + Grain - 1) / Grain;
  int Threads = static_cast<int>(std::min<int64_t>(numThreads(), MaxChunks));
#ifdef _OPENMP
  if (Threads > 1 && !omp_in_parallel()) {
    std::exception_ptr Failure;
    std::mutex M;
#pragma omp parallel num_threads(Threads)
    {
      int T = omp_get_thread_num();
      int NT = omp_get_num_threads();
      int64_t Chunk = (N + NT - 1) / NT;
      int64_t B = Begin + T * Chunk;
      int64_t E = std::min(End, B + Chunk);
      if (B < E) {
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
