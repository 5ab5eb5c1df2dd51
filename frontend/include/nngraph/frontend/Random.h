//===- Random.h - The seeded random generator ------------------*- C++ -*-===//
//
// One global generator (a 64-bit Mersenne twister) feeds rand, randn,
// dropout masks and nn::init. nng::manual_seed makes runs repeatable; the
// streams are our own, not PyTorch's, so tests that compare with PyTorch
// copy weights rather than seeds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace nng {

/// A seeded source of random numbers.
class Generator {
public:
  explicit Generator(uint64_t Seed = 5489) : Engine(Seed), Seed(Seed) {}
  void manual_seed(uint64_t S) {
    Engine.seed(S);
    Seed = S;
  }
  uint64_t initial_seed() const { return Seed; }
  /// Uniform in [0, 1).
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(Engine); }
  /// Standard normal.
  double normal() { return std::normal_distribution<double>(0, 1)(Engine); }
  /// Uniform integer in [Low, High).
  int64_t integer(int64_t Low, int64_t High) {
    return std::uniform_int_distribution<int64_t>(Low, High - 1)(Engine);
  }
  std::mt19937_64 &engine() { return Engine; }
  /// The seed and the engine's state, as text (get_rng_state's bytes).
  std::string state() const;
  /// Restores state(); false (nothing changed) when S is not one.
  bool set_state(const std::string &S);

private:
  std::mt19937_64 Engine;
  uint64_t Seed;
};

class Tensor;

/// The global generator.
Generator &defaultGenerator();
/// Seeds the global generator (torch.manual_seed).
void manual_seed(uint64_t Seed);
/// The global generator's whole state as a uint8 tensor
/// (torch.get_rng_state): save it in a checkpoint (a .pt file keeps it) and
/// give it back to set_rng_state to continue the same random stream. The
/// bytes are nngraph's own (its streams are not PyTorch's).
Tensor get_rng_state();
/// Restores a state from get_rng_state; throws an Error, leaving the
/// generator unchanged, when State is not one.
void set_rng_state(const Tensor &State);

} // namespace nng
