//===- Load.cpp - Weight files into modules and graphs --------------------===//
//
// TensorMap <-> nn::StateDict (shared data), loadWeights / saveWeights for
// modules (format by extension, key remapping, strict or not) and
// loadInitializers for ir::Graph (checked in full before any change).
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Load.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Error.h"

#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace nng::weights {

nn::StateDict toStateDict(const TensorMap &M) {
  std::vector<nn::StateDict::Entry> Es;
  Es.reserve(M.size());
  for (const auto &[K, T] : M)
    Es.emplace_back(K, nng::Tensor(T));
  return nn::StateDict(std::move(Es));
}

TensorMap fromStateDict(const nn::StateDict &SD) {
  std::vector<TensorMap::Entry> Es;
  Es.reserve(SD.size());
  for (const auto &[K, T] : SD)
    Es.emplace_back(K, T.data());
  return TensorMap(std::move(Es));
}

LoadResult loadWeights(nn::ModuleBase &M, const TensorMap &Tensors,
                       const LoadOptions &Opts) {
  NNG_CHECK(Opts.KeyPath.empty(), "loadWeights: a key path ('", Opts.KeyPath,
            "') applies to a checkpoint file; select the sub-dict with "
            "selectTensors before loading tensors from memory");
  LoadResult R;
  TensorMap Mapped =
      Opts.Remap.empty() ? Tensors : remapKeys(Tensors, Opts.Remap, &R.Remap);
  nn::LoadStateDictResult L =
      M.load_state_dict(toStateDict(Mapped), Opts.Strict);
  R.MissingKeys = std::move(L.missing_keys);
  R.UnexpectedKeys = std::move(L.unexpected_keys);
  return R;
}

LoadResult loadWeights(nn::ModuleBase &M, const std::string &Path,
                       const LoadOptions &Opts) {
  std::vector<std::string> Skipped;
  TensorMap Tensors = readStateDict(Path, Opts.KeyPath, &Skipped);
  LoadOptions Inner = Opts;
  Inner.KeyPath.clear();
  try {
    LoadResult R = loadWeights(M, Tensors, Inner);
    R.Skipped = std::move(Skipped);
    return R;
  } catch (Error &E) {
    E.addContext(
        "while loading '" + Path + "'" +
        (Opts.KeyPath.empty() ? "" : " (key path '" + Opts.KeyPath + "')"));
    throw;
  }
}

void saveWeights(const nn::ModuleBase &M, const std::string &Path) {
  formatForPath(Path); // Reject a bad extension before any work.
  nn::StateDict SD = M.state_dict();
  for (const auto &[K, T] : SD.items())
    if (!T.device().isCPU())
      SD.insert(K, T.to(Device::cpu())); // The writers read host memory.
  writeStateDict(Path, fromStateDict(SD));
}

namespace {

/// True when T's dtype and shape fit the declared type Ty.
bool fits(const ir::TensorType &Ty, const rt::Tensor &T) {
  if (Ty.dtype() != T.dtype())
    return false;
  if (!Ty.hasRank())
    return true;
  if (Ty.rank() != static_cast<int64_t>(T.rank()))
    return false;
  for (int64_t I = 0; I < Ty.rank(); ++I) {
    const ir::Dim &D = Ty.dim(I);
    if (D.isStatic() && D.value() != T.size(I))
      return false;
  }
  return true;
}

std::string typeOf(const rt::Tensor &T) {
  return ir::TensorType(T.dtype(), T.shape()).toString();
}

} // namespace

LoadResult loadInitializers(ir::Graph &G, const TensorMap &Tensors,
                            bool Strict) {
  LoadResult R;
  std::vector<std::string> Problems;
  std::vector<std::pair<ir::Value *, const rt::Tensor *>> Plan;
  std::unordered_set<std::string> Names;
  for (ir::Value *V : G.initializers()) {
    Names.insert(V->name());
    if (!Tensors.contains(V->name())) {
      R.MissingKeys.push_back(V->name());
      continue;
    }
    const rt::Tensor &T = Tensors.at(V->name());
    if (!fits(V->type(), T)) {
      Problems.push_back("'" + V->name() + "': the file has " + typeOf(T) +
                         ", the graph expects " + V->type().toString());
      continue;
    }
    Plan.emplace_back(V, &T);
  }
  for (const auto &[K, T] : Tensors)
    if (!Names.count(K))
      R.UnexpectedKeys.push_back(K);

  if (Strict) {
    for (const std::string &K : R.MissingKeys)
      Problems.push_back("'" + K + "': missing from the weights");
    for (const std::string &K : R.UnexpectedKeys)
      Problems.push_back("'" + K + "': not an initializer of the graph");
  }
  if (!Problems.empty()) {
    std::ostringstream OS;
    OS << "loading weights into the graph's initializers failed for "
       << Problems.size() << " key" << (Problems.size() == 1 ? "" : "s")
       << " (the graph is unchanged):";
    for (const std::string &P : Problems)
      OS << "\n  " << P;
    if (Strict && (!R.MissingKeys.empty() || !R.UnexpectedKeys.empty()))
      OS << "\nRemap the keys (strip/add a prefix, rename) so that they "
            "equal the initializer names, or load non-strictly";
    fail(ErrorKind::ShapeMismatch, OS.str());
  }
  for (auto &[V, T] : Plan) {
    V->setData(*T);
    V->setElidedHash("");
  }
  return R;
}

} // namespace nng::weights
