//===- SplitMix64.h - The project's deterministic generator -----*- C++ -*-===//
//
// splitmix64: a small, fast generator with good statistics whose whole state
// is one integer, so every platform produces the same values. One copy for
// the deterministic inputs (ir/Inputs.h), the random ops' counter-based
// draws (the reference kernels), nngraph-bench's shape lists and the CUDA
// device bundle's inputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace nng {

/// splitmix64's output for state X: a well-mixed 64-bit hash of X (as a
/// counter-based generator: the I-th draw is splitMix64(Seed + I * step)).
inline uint64_t splitMix64(uint64_t X) {
  X += 0x9e3779b97f4a7c15ULL;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ULL;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebULL;
  return X ^ (X >> 31);
}

/// The stream of splitmix64 values from Seed.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t Seed) : State(Seed) {}
  uint64_t next() {
    uint64_t R = splitMix64(State);
    State += 0x9e3779b97f4a7c15ULL;
    return R;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t State;
};

} // namespace nng
