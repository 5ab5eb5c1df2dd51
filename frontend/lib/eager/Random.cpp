//===- Random.cpp - The global generator ---------------------------------===//
//
// The process-wide generator behind rand, randn, dropout and nn::init.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Random.h"

namespace nng {

Generator &defaultGenerator() {
  static Generator G;
  return G;
}

void manual_seed(uint64_t Seed) { defaultGenerator().manual_seed(Seed); }

} // namespace nng
