//===- Inputs.cpp - Deterministic model inputs ----------------------------===//
//
// Concrete shapes for declared input types and the deterministic inputs
// drawn from the seeded generator (runtime/SplitMix64.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Inputs.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/SplitMix64.h"

namespace nng::ir {

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
