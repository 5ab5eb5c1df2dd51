//===- Compile.cpp - nng::compile: trace, optimize, compile, cache -------===//
//
// A CompiledModule keeps a list of entries, each a guard (training flag,
// and per input its dtype and dims, -1 for a symbolic one) with the
// GraphModule traced, optimized and compiled for it. A call checks the
// guards (most recent first); a miss builds the input specs for the dynamic
// shapes policy, traces, runs the pipeline, compiles on the backend and
// adds the entry. Tracing failures fall back to eager when asked.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Compile.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/frontend/fx/GraphModule.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/passes/PassManager.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Error.h"

#include <chrono>
#include <iostream>
#include <mutex>

namespace nng {

namespace {

/// Prefix followed by I ("x0"); spelled out to dodge GCC 12's bogus
/// -Wrestrict on "lit" + std::to_string(...).
std::string numbered(const char *Prefix, size_t I) {
  std::string S(Prefix);
  S += std::to_string(I);
  return S;
}

/// What a compiled entry accepts.
struct Guard {
  bool Training = false;
  std::vector<DType> Types;
  /// Per input, per dim: the extent, or -1 for a symbolic dim.
  std::vector<std::vector<int64_t>> Dims;

  bool accepts(bool Train, const std::vector<Tensor> &In) const {
    if (Train != Training || In.size() != Types.size())
      return false;
    for (size_t I = 0; I < In.size(); ++I) {
      if (In[I].dtype() != Types[I] ||
          static_cast<size_t>(In[I].dim()) != Dims[I].size())
        return false;
      for (size_t D = 0; D < Dims[I].size(); ++D)
        if (Dims[I][D] >= 0 && Dims[I][D] != In[I].shape()[D])
          return false;
    }
    return true;
  }

  std::string toString() const {
    std::string S = numbered("train=", Training);
    int Sym = 0;
    for (size_t I = 0; I < Types.size(); ++I) {
      S += numbered(" x", I);
      S += ": ";
      S += dtypeName(Types[I]);
      S += "[";
      for (size_t D = 0; D < Dims[I].size(); ++D) {
        if (D)
          S += ",";
        S +=
            Dims[I][D] >= 0 ? std::to_string(Dims[I][D]) : numbered("s", Sym++);
      }
      S += "]";
    }
    return S;
  }
};

} // namespace

struct CompiledModule::Impl {
  std::shared_ptr<nn::ModuleBase> M;
  CompileOptions O;
  struct Entry {
    Guard G;
    std::unique_ptr<fx::GraphModule> GM;
  };
  /// Most recent first.
  std::vector<Entry> Entries;
  CompileStats Stats;
  const fx::GraphModule *Last = nullptr;
  bool Eager = false;
  std::string FallbackReason;
  std::mutex Mu;

  /// The guard for a call's inputs under the dynamic shapes policy.
  Guard guardFor(const std::vector<Tensor> &In) const {
    Guard G;
    G.Training = M->is_training();
    for (const Tensor &T : In) {
      G.Types.push_back(T.dtype());
      G.Dims.push_back(T.shape().dims());
    }
    if (O.Dynamic == DynamicShapes::Batch) {
      for (auto &D : G.Dims)
        if (!D.empty())
          D[0] = -1;
    } else if (O.Dynamic == DynamicShapes::Auto) {
      // The most recent entry with the same dtypes and ranks: dims that
      // differ from it, or are dynamic in it, become dynamic.
      for (const Entry &E : Entries) {
        if (E.G.Training != G.Training || E.G.Types != G.Types)
          continue;
        bool SameRanks = true;
        for (size_t I = 0; I < G.Dims.size(); ++I)
          SameRanks &= E.G.Dims[I].size() == G.Dims[I].size();
        if (!SameRanks)
          continue;
        for (size_t I = 0; I < G.Dims.size(); ++I)
          for (size_t D = 0; D < G.Dims[I].size(); ++D)
            if (E.G.Dims[I][D] != G.Dims[I][D])
              G.Dims[I][D] = -1;
        break;
      }
    }
    return G;
  }

  /// Traces, optimizes and compiles an entry for G.
  std::unique_ptr<fx::GraphModule> build(const Guard &G) {
    std::vector<fx::InputSpec> Specs;
    int Sym = 0;
    for (size_t I = 0; I < G.Types.size(); ++I) {
      std::vector<fx::Dim> Dims;
      for (int64_t E : G.Dims[I]) {
        if (E >= 0)
          Dims.emplace_back(E);
        else if (O.Dynamic == DynamicShapes::Batch)
          Dims.emplace_back("N");
        else
          Dims.emplace_back(numbered("s", Sym++));
      }
      Specs.emplace_back(std::move(Dims), G.Types[I]);
    }
    auto GM = std::make_unique<fx::GraphModule>(fx::symbolic_trace(*M, Specs));
    std::string Pipeline = passes::resolvePipeline(O.Pipeline, O.Backend);
    if (!Pipeline.empty()) {
      passes::PassManager PM;
      PM.addPipeline(Pipeline);
      PM.run(GM->graph());
    }
    GM->set_backend(O.Backend);
    GM->recompile();
    return GM;
  }

  /// Runs the module itself (fallback mode; EagerCalls counted by the
  /// caller under the lock).
  nn::Value runEagerly(const std::vector<Tensor> &In) {
    std::vector<nn::Value> Args(In.begin(), In.end());
    return M->call(std::move(Args));
  }

  nn::Value call(const std::vector<Tensor> &In) {
    std::unique_lock<std::mutex> Lock(Mu);
    for (size_t I = 0; I < In.size(); ++I)
      NNG_CHECK(In[I].defined(), "compiled '", M->type_name(), "': input ", I,
                " is an undefined tensor");
    if (Eager) {
      ++Stats.EagerCalls;
      Lock.unlock();
      return runEagerly(In);
    }
    bool Train = M->is_training();
    for (size_t I = 0; I < Entries.size(); ++I)
      if (Entries[I].G.accepts(Train, In)) {
        ++Stats.Hits;
        Last = Entries[I].GM.get();
        // Under the lock: an executable's memory plan is not shared.
        return Entries[I].GM->forward(In);
      }
    ++Stats.Misses;
    Guard G = guardFor(In);
    auto Start = std::chrono::steady_clock::now();
    std::unique_ptr<fx::GraphModule> GM;
    try {
      GM = build(G);
    } catch (fx::TraceError &E) {
      Stats.CompileSeconds += std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - Start)
                                  .count();
      if (!O.FallbackToEager) {
        E.addContext("while compiling '" + M->type_name() +
                     "' (set CompileOptions::FallbackToEager to run it "
                     "eagerly instead)");
        throw;
      }
      Eager = true;
      FallbackReason = E.what();
      std::cerr << "warning: nng::compile: tracing '" << M->type_name()
                << "' failed; running it eagerly from now on:\n"
                << E.what() << "\n";
      Last = nullptr;
      ++Stats.EagerCalls;
      Lock.unlock();
      return runEagerly(In);
    }
    Stats.CompileSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    Entries.insert(Entries.begin(), Entry{std::move(G), std::move(GM)});
    Last = Entries.front().GM.get();
    return Entries.front().GM->forward(In);
  }
};

nn::Value CompiledModule::forward(const std::vector<Tensor> &Inputs) {
  return P->call(Inputs);
}

Tensor CompiledModule::operator()(const std::vector<Tensor> &Inputs) {
  nn::Value V = forward(Inputs);
  NNG_CHECK(V.isTensor(), "compiled '", P->M->type_name(),
            "': operator() wants a single-tensor result but forward returns ",
            nn::Value::kindName(V.kind()), "; call forward() instead");
  return V.toTensor();
}

const CompileStats &CompiledModule::stats() const { return P->Stats; }
size_t CompiledModule::cache_size() const { return P->Entries.size(); }
const fx::GraphModule *CompiledModule::last_graph_module() const {
  return P->Last;
}
bool CompiledModule::is_eager_fallback() const { return P->Eager; }
const std::string &CompiledModule::fallback_reason() const {
  return P->FallbackReason;
}
const CompileOptions &CompiledModule::options() const { return P->O; }

std::vector<std::string> CompiledModule::guards() const {
  std::vector<std::string> R;
  for (const Impl::Entry &E : P->Entries)
    R.push_back(E.G.toString());
  return R;
}

void CompiledModule::reset() {
  std::lock_guard<std::mutex> Lock(P->Mu);
  P->Entries.clear();
  P->Stats = {};
  P->Last = nullptr;
  P->Eager = false;
  P->FallbackReason.clear();
}

CompiledModule compile(std::shared_ptr<nn::ModuleBase> M, CompileOptions O) {
  NNG_CHECK(M, "nng::compile: the module is null");
  std::string Pipeline = passes::resolvePipeline(O.Pipeline, O.Backend);
  if (!Pipeline.empty()) {
    passes::PassManager PM; // Rejects a bad pipeline now, not on first call.
    PM.addPipeline(Pipeline);
  }
  backends::getBackend(O.Backend);
  CompiledModule C;
  C.P = std::make_shared<CompiledModule::Impl>();
  C.P->M = std::move(M);
  C.P->O = std::move(O);
  return C;
}

CompiledModule compile(nn::ModuleBase &M, CompileOptions O) {
  std::shared_ptr<nn::ModuleBase> Owned = M.weak_from_this().lock();
  if (!Owned) // Not held by a shared_ptr: refer to it without owning.
    Owned = std::shared_ptr<nn::ModuleBase>(std::shared_ptr<void>(), &M);
  return compile(std::move(Owned), std::move(O));
}

} // namespace nng
