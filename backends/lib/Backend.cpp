//===- Backend.cpp - Backend registry and input checking -----------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/Error.h"
#if NNGRAPH_HAVE_ONEDNN
#include "nngraph/backends/cpu/CpuBackend.h"
#endif

#include <map>

namespace nng::backends {

Executable::~Executable() = default;
Backend::~Backend() = default;

Backend &getBackend(std::string_view Name) {
  if (Name == "reference")
    return referenceBackend();
#if NNGRAPH_HAVE_ONEDNN
  if (Name == "cpu")
    return cpuBackend();
#endif
  std::string Known;
  for (const std::string &N : backendNames())
    Known += (Known.empty() ? "" : ", ") + N;
  fail(ErrorKind::InvalidArgument, "unknown backend '", Name,
       "' (available: ", Known, ")");
}

std::vector<std::string> backendNames() {
#if NNGRAPH_HAVE_ONEDNN
  return {"reference", "cpu"};
#else
  return {"reference"};
#endif
}

void checkInputs(const ir::Graph &G,
                 const std::vector<Tensor> &Inputs) {
  const auto &Decl = G.inputs();
  NNG_CHECK(Inputs.size() == Decl.size(), "graph '", G.name(), "' takes ",
            Decl.size(), " inputs but ", Inputs.size(), " were given");
  // Runs once per Executable::run: messages are built only on failure.
  std::map<std::string, std::pair<int64_t, std::string>> Symbols;
  for (size_t I = 0; I < Decl.size(); ++I) {
    const ir::Value *V = Decl[I];
    const Tensor &T = Inputs[I];
    const ir::TensorType &Ty = V->type();
    auto Where = [&] {
      return "input %" + V->name() + " (#" + std::to_string(I) + ")";
    };
    NNG_CHECK(T.defined(), Where(), " is undefined");
    NNG_CHECK(T.dtype() == Ty.dtype(), Where(), " expects ", Ty.toString(),
              " but got dtype ", dtypeName(T.dtype()));
    if (!Ty.hasRank())
      continue;
    NNG_CHECK(static_cast<int64_t>(T.rank()) == Ty.rank(), Where(), " expects ",
              Ty.toString(), " but got shape ", T.shape().toString());
    for (int64_t D = 0; D < Ty.rank(); ++D) {
      const ir::Dim &Dm = Ty.dim(D);
      int64_t Got = T.shape()[D];
      if (Dm.isStatic()) {
        NNG_CHECK(Got == Dm.value(), Where(), " expects ", Ty.toString(),
                  " but got shape ", T.shape().toString());
      } else if (Dm.isSymbolic()) {
        auto [It, New] = Symbols.try_emplace(Dm.symbol(), Got, V->name());
        NNG_CHECK(New || It->second.first == Got, Where(), ": dim ",
                  Dm.symbol(), " is ", Got, " but input %", It->second.second,
                  " gave it ", It->second.first);
      }
    }
  }
}

} // namespace nng::backends
