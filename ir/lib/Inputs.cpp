//===- Inputs.cpp - Deterministic model inputs ----------------------------===//
//
// Concrete shapes for declared input types and the seeded generator
// (splitmix64) behind every deterministic input.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Inputs.h"
#include "nngraph/runtime/Error.h"

namespace nng::ir {
namespace {

/// splitmix64: a small, fast generator with good statistics whose whole
/// state is one integer, so every platform produces the same values.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t Seed) : State(Seed) {}
  uint64_t next() {
    uint64_t Z = (State += 0x9E3779B97F4A7C15ULL);
    Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBULL;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t State;
};

} // namespace

nng::Shape concreteShape(const ir::TensorType &T, const DimBindings &Dims,
                         std::string_view What) {
  NNG_CHECK(T.hasRank(), What, " has type ", T.toString(),
            " of unknown rank: cannot make a tensor for it");
  nng::Shape S;
  for (const ir::Dim &D : T.dims()) {
    if (D.isStatic()) {
      S.push_back(D.value());
    } else if (D.isSymbolic()) {
      auto It = Dims.find(D.symbol());
      S.push_back(It == Dims.end() ? 1 : It->second);
    } else {
      S.push_back(1);
    }
  }
  return S;
}

Tensor deterministicTensor(DType T, const nng::Shape &S, uint64_t Seed) {
  Tensor R = Tensor::empty(S, T);
  SplitMix64 Gen(Seed);
  int64_t N = R.numel();
  if (T == DType::F32) {
    // The common case, without the per-element dtype dispatch.
    float *P = R.data<float>();
    for (int64_t I = 0; I < N; ++I)
      P[I] = static_cast<float>(Gen.uniform() * 2.0 - 1.0);
  } else if (isFloatingPoint(T)) {
    for (int64_t I = 0; I < N; ++I)
      R.setFlat(I, Gen.uniform() * 2.0 - 1.0);
  } else if (isIntegral(T)) {
    for (int64_t I = 0; I < N; ++I)
      R.setFlat(I, static_cast<double>(Gen.next() % 10));
  } else {
    for (int64_t I = 0; I < N; ++I)
      R.setFlat(I, static_cast<double>(Gen.next() & 1));
  }
  return R;
}

std::vector<Tensor> makeDeterministicInputs(const ir::Graph &G,
                                                 const DimBindings &Dims,
                                                 uint64_t Seed) {
  std::vector<Tensor> Inputs;
  SplitMix64 Seeds(Seed);
  for (const ir::Value *V : G.inputs()) {
    nng::Shape S = concreteShape(V->type(), Dims, "input %" + V->name());
    Inputs.push_back(deterministicTensor(V->type().dtype(), S, Seeds.next()));
  }
  return Inputs;
}

} // namespace nng::ir
