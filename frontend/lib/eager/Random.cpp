//===- Random.cpp - The global generator ---------------------------------===//
//
// The process-wide generator behind rand, randn, dropout and nn::init, and
// its state as bytes (get_rng_state / set_rng_state): "nngraph-rng-1", the
// seed, then the engine's standard text form.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/Tensor.h"
#include "nngraph/runtime/Error.h"

#include <cstring>
#include <sstream>

namespace nng {

Generator &defaultGenerator() {
  static Generator G;
  return G;
}

void manual_seed(uint64_t Seed) { defaultGenerator().manual_seed(Seed); }

namespace {
constexpr const char *StateTag = "nngraph-rng-1";
} // namespace

std::string Generator::state() const {
  std::ostringstream OS;
  OS << StateTag << ' ' << Seed << ' ' << Engine;
  return OS.str();
}

bool Generator::set_state(const std::string &S) {
  std::istringstream IS(S);
  std::string Tag;
  uint64_t NewSeed = 0;
  std::mt19937_64 NewEngine;
  if (!(IS >> Tag) || Tag != StateTag || !(IS >> NewSeed) ||
      !(IS >> NewEngine))
    return false;
  IS >> std::ws;
  if (!IS.eof())
    return false;
  Engine = NewEngine;
  Seed = NewSeed;
  return true;
}

Tensor get_rng_state() {
  std::string S = defaultGenerator().state();
  rt::Tensor T = rt::Tensor::empty(Shape({static_cast<int64_t>(S.size())}),
                                   DType::U8);
  std::memcpy(T.rawData(), S.data(), S.size());
  return Tensor(std::move(T));
}

void set_rng_state(const Tensor &State) {
  const rt::Tensor &T = State.data();
  if (T.dtype() != DType::U8 || T.rank() != 1)
    fail(ErrorKind::InvalidArgument, "set_rng_state: expected the u8 1-d "
         "tensor get_rng_state returns, got ",
         dtypeName(T.dtype()), T.shape().toString());
  rt::Tensor D = T.contiguous();
  std::string S(static_cast<const char *>(D.rawData()),
                static_cast<size_t>(D.numel()));
  if (!defaultGenerator().set_state(S))
    fail(ErrorKind::InvalidArgument,
         "set_rng_state: the tensor is not a state from get_rng_state "
         "(PyTorch's torch.get_rng_state bytes are another generator's)");
}

} // namespace nng
