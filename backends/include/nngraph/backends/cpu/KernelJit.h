//===- KernelJit.h - Kernel IR compiled to native code ----------*- C++ -*-===//
//
// The cpu backend's JIT for fused regions: a kernel (kernel/KernelIR.h) is
// lowered to LLVM IR, optimized with the O3 pipeline for the host CPU (its
// name and features; 512-bit vectors preferred on AVX-512 machines) and
// linked in-process with ORC's LLJIT. Compiled objects are kept in a
// persistent cache ($NNGRAPH_CACHE_DIR, else $XDG_CACHE_HOME/nngraph, else
// ~/.cache/nngraph) keyed by the printed kernel, the CPU, its features, the
// LLVM version and the code generator's version; an entry whose header,
// key or checksum does not match is rebuilt, never loaded. An unusable
// cache folder only disables the cache.
//
// Builds without LLVM (-DNNGRAPH_ENABLE_LLVM=OFF) have this API too:
// kernelJitAvailable() is false there and compile() throws Unsupported.
// No LLVM header is included here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/backends/kernel/KernelIR.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace nng::backends::cpu {

/// True when this build has the LLVM JIT (NNGRAPH_HAVE_LLVM).
bool kernelJitAvailable();

/// What the JIT did since it was created (or since resetStats()).
struct JitStats {
  int64_t Compiled = 0;       ///< Kernels compiled from IR (cache misses).
  int64_t DiskHits = 0;       ///< Kernels loaded from the object cache.
  int64_t MemoryHits = 0;     ///< Kernels found compiled in this process.
  int64_t CorruptEntries = 0; ///< Cache files rejected and rebuilt.
  int64_t WriteFailures = 0;  ///< Cache files that could not be written.
  double CompileMs = 0; ///< Wall time: IR generation, O3, code generation.
  double LoadMs = 0;    ///< Wall time: reading cached objects.
  double LinkMs = 0;    ///< Wall time: linking objects into the process.
};

/// Options of a KernelJit.
struct JitOptions {
  /// The object cache folder; empty: $NNGRAPH_CACHE_DIR, else
  /// $XDG_CACHE_HOME/nngraph, else $HOME/.cache/nngraph.
  std::string CacheDir;
  /// False: no disk cache at all.
  bool DiskCache = true;
};

class KernelJit;

/// A compiled kernel. Thread-safe to run concurrently; keeps its code alive.
class JitKernel {
public:
  ~JitKernel();
  JitKernel(const JitKernel &) = delete;
  JitKernel &operator=(const JitKernel &) = delete;

  /// The entry point: rows [OuterBegin, OuterEnd) of the flattened outer
  /// domain, loops over [InnerBegin, InnerEnd) of the inner dim.
  using EntryFn = void (*)(void *const *Bufs, const int64_t *Sizes,
                           const int64_t *Strides, int64_t OuterBegin,
                           int64_t OuterEnd, int64_t InnerBegin,
                           int64_t InnerEnd);

  /// Runs the kernel over the domain of sizes Sizes with the buffers
  /// Buffers (one per parameter) and element strides Strides (buffer-major,
  /// as kernel::rowMajorStrides gives them; empty: row-major), split across
  /// the OpenMP threads (nng::parallelFor): along the outer rows, and along
  /// the inner dim too for elementwise kernels with few rows. Outputs must
  /// not overlap inputs unless they share the exact same elements and
  /// strides (in place). Throws Error on bad arguments (kernel::checkLaunch).
  void run(std::span<void *const> Buffers, std::span<const int64_t> Sizes,
           std::span<const int64_t> Strides = {}) const;
  /// Runs rows [OuterBegin, OuterEnd) on the calling thread (for callers
  /// that parallelize themselves). Strides must be given in full.
  void runRows(std::span<void *const> Buffers, std::span<const int64_t> Sizes,
               std::span<const int64_t> Strides, int64_t OuterBegin,
               int64_t OuterEnd) const;

  const kernel::Kernel &kernel() const { return K; }
  /// The native entry point.
  EntryFn entry() const { return Fn; }
  /// True when the code came from the disk cache.
  bool fromDiskCache() const { return FromCache; }
  /// Milliseconds it took to get this kernel (compile or load, and link).
  double readyMs() const { return ReadyMs; }

private:
  friend class KernelJit;
  JitKernel(kernel::Kernel K, EntryFn Fn, std::shared_ptr<void> Owner,
            bool FromCache, double ReadyMs);
  kernel::Kernel K;
  EntryFn Fn;
  std::shared_ptr<void> Owner; ///< Keeps the code mapped (and removes it).
  bool FromCache;
  double ReadyMs;
};

/// Compiles kernels for the host CPU; owns the LLJIT instance, the object
/// cache and the statistics. Thread-safe.
class KernelJit {
public:
  explicit KernelJit(JitOptions O = {});
  ~KernelJit();
  KernelJit(const KernelJit &) = delete;
  KernelJit &operator=(const KernelJit &) = delete;

  /// The process-wide JIT with default options.
  static KernelJit &global();

  /// The compiled form of K: the same object for an equal kernel (same
  /// printed form) compiled before by this KernelJit (it keeps up to 512,
  /// then drops those nobody else holds), else loaded from the disk cache
  /// or compiled (and stored there). Throws Error (kind Unsupported without
  /// LLVM; Verify for an invalid kernel; Internal when LLVM fails).
  std::shared_ptr<const JitKernel> compile(const kernel::Kernel &K);

  /// The LLVM IR of K as text: as generated, or after the O3 pipeline.
  std::string llvmIR(const kernel::Kernel &K, bool Optimized = false);
  /// The native assembly of K (after O3), for debugging.
  std::string assembly(const kernel::Kernel &K);

  JitStats stats() const;
  void resetStats();
  /// The cache folder in use; empty when the disk cache is off (a folder
  /// that turns out unwritable shows in JitStats::WriteFailures).
  std::string cacheDir() const;
  /// The host CPU name and features the code is compiled for.
  std::string hostCPU() const;
  std::string hostFeatures() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace nng::backends::cpu
