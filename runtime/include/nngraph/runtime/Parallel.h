//===- Parallel.h - The parallel loop over OpenMP ---------------*- C++ -*-===//
//
// parallelFor splits [Begin, End) into chunks of at least Grain iterations and
// runs them on OpenMP threads, the same pool oneDNN uses, so two thread pools
// never compete for the cores (a pool of our own beside it was measured
// slower: docs/design.md). Small ranges run inline.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace nng {

/// A non-owning reference to a callable (like llvm::function_ref).
template <typename Fn> class FunctionRef;
template <typename Ret, typename... Params> class FunctionRef<Ret(Params...)> {
public:
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same_v<
                std::remove_cvref_t<Callable>, FunctionRef>>>
  FunctionRef(Callable &&C)
      : Callback(callbackFn<std::remove_reference_t<Callable>>),
        Obj(reinterpret_cast<intptr_t>(&C)) {}
  Ret operator()(Params... P) const {
    return Callback(Obj, std::forward<Params>(P)...);
  }

private:
  template <typename Callable>
  static Ret callbackFn(intptr_t O, Params... P) {
    return (*reinterpret_cast<Callable *>(O))(std::forward<Params>(P)...);
  }
  Ret (*Callback)(intptr_t, Params...);
  intptr_t Obj;
};

/// Runs Body(ChunkBegin, ChunkEnd) over [Begin, End) in parallel chunks of at
/// least Grain iterations: up to ChunksPerThread per thread, each taken by
/// the first thread free, the calling thread included. The first exception
/// thrown by Body is rethrown here (the other chunks still run).
void parallelFor(int64_t Begin, int64_t End, int64_t Grain,
                 FunctionRef<void(int64_t, int64_t)> Body);

/// Chunks a parallel loop is cut into per thread, where the range has that
/// many grains: a thread that starts late (another process holds its core)
/// leaves its chunks to the threads that run, so the loop waits for it to
/// arrive, not for its share of the work; few enough that a chunk's own
/// setup stays small (measured: no change on the benchmark models).
inline constexpr int ChunksPerThread = 4;

/// The process's thread count: NNGRAPH_NUM_THREADS, else OMP_NUM_THREADS,
/// else the CPUs this process may use (its affinity mask, capped by its
/// cgroup CPU quota: CpuCount.h), until setNumThreads changes it.
int defaultNumThreads();
/// Threads parallelFor uses on the calling thread: defaultNumThreads(), or
/// fewer where the calling thread's OpenMP count is lower (omp_set_num_threads,
/// a ThreadScope).
int numThreads();
/// Sets the process's thread count (and the calling thread's OpenMP count).
void setNumThreads(int N);

/// Sets the calling thread's OpenMP thread count (which oneDNN's primitives
/// use) to N for its lifetime, then restores it. Executables open one with
/// numThreads() around a run, so oneDNN uses the process's count from any
/// thread without changing the caller's own OpenMP setting.
class ThreadScope {
public:
  explicit ThreadScope(int N);
  ~ThreadScope();
  ThreadScope(const ThreadScope &) = delete;
  ThreadScope &operator=(const ThreadScope &) = delete;

private:
  int Saved;
};

} // namespace nng
