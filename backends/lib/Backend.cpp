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

namespace {
/// Checks T, given for an output the run makes of dtype Type and shape S:
/// the same dtype and shape, contiguous. Where names the output.
void checkOutputTensor(const std::string &Where, const Tensor &T, DType Type,
                       const Shape &S) {
  NNG_CHECK(T.dtype() == Type && T.shape() == S, Where, " was given a ",
            dtypeName(T.dtype()), T.shape().toString(),
            " tensor but this run produces ", dtypeName(Type), S.toString(),
            "; pass a tensor of that type and shape, or none to get a new "
            "one");
  NNG_CHECK(T.isContiguous(), Where,
            " was given a tensor that is not contiguous (a strided view); "
            "pass a contiguous one (.contiguous())");
}
} // namespace

void Executable::runInto(const std::vector<Tensor> &Inputs,
                         std::vector<Tensor> &Outputs) {
  // The graph is not at hand here: the count is checked against the run's.
  std::vector<Tensor> Got = run(Inputs);
  NNG_CHECK(Outputs.size() == Got.size(), "runInto: the model has ",
            Got.size(), " outputs but ", Outputs.size(), " tensors were given");
  for (size_t I = 0; I < Got.size(); ++I) {
    if (!Outputs[I].defined()) {
      Outputs[I] = std::move(Got[I]);
      continue;
    }
    checkOutputTensor("output #" + std::to_string(I), Outputs[I],
                      Got[I].dtype(), Got[I].shape());
    Outputs[I].copyFrom(Got[I]);
  }
}
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

void checkOutputCount(const ir::Graph &G, const std::vector<Tensor> &Outputs) {
  NNG_CHECK(Outputs.size() == G.outputs().size(), "graph '", G.name(),
            "' has ", G.outputs().size(), " outputs but ", Outputs.size(),
            " output tensors were given (one per output; an empty one "
            "gets a new tensor)");
}

void checkOutputBuffers(const ir::Graph &G, const std::vector<Tensor> &Inputs,
                        const std::vector<Tensor> &Outputs,
                        const std::vector<DType> &Types,
                        const std::vector<Shape> &Shapes) {
  checkOutputCount(G, Outputs);
  for (size_t I = 0; I < Outputs.size(); ++I) {
    const Tensor &T = Outputs[I];
    if (!T.defined())
      continue;
    std::string Where =
        "output %" + G.outputs()[I]->name() + " (#" + std::to_string(I) + ")";
    checkOutputTensor(Where, T, Types[I], Shapes[I]);
    const char *Begin = static_cast<const char *>(T.rawData());
    const char *End = Begin + T.nbytes();
    for (size_t J = 0; J < Inputs.size(); ++J) {
      const Tensor &In = Inputs[J];
      if (!In.defined() || In.nbytes() == 0) // Arrays wrapped twice have
        continue;                           // two storages: compare bytes.
      if (In.dtype() == DType::String)
        continue;
      // The bytes In spans (its strides are non-negative).
      size_t Span = In.elementSize();
      for (size_t D = 0; D < In.rank(); ++D)
        Span += static_cast<size_t>((In.shape()[D] - 1) * In.strides()[D]) *
                In.elementSize();
      const char *InBegin = static_cast<const char *>(In.rawData());
      const char *InEnd = InBegin + Span;
      NNG_CHECK(End <= InBegin || InEnd <= Begin, Where,
                " shares memory with input %", G.inputs()[J]->name(),
                " (#", J, "); an output cannot be written over an input "
                "while it is read: pass another buffer");
    }
  }
}

} // namespace nng::backends
