//===- ShapeInference.cpp - Running the op table's inference functions ---===//
//
// InferContext (what an inference function sees) and the graph-level driver
// that infers every node in order and merges with declared types. The
// per-op functions live in Infer*.cpp.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/ShapeInference.h"
#include "TypedRegions.h"
#include "nngraph/ir/Regions.h"
#include "nngraph/runtime/Error.h"

namespace nng::ir {

InferContext::InferContext(const OpSchema &Schema, const AttrMap &Attrs,
                           std::vector<const TensorType *> InTypes,
                           std::vector<const Tensor *> InValues,
                           size_t NumOutputs, std::string NodeDesc)
    : Schema(Schema), Attrs(Attrs), InTypes(std::move(InTypes)),
      InValues(std::move(InValues)), Outputs(NumOutputs),
      NodeDesc(std::move(NodeDesc)) {}

const TensorType &InferContext::inputType(size_t I) const {
  if (!hasInput(I))
    fail("input ", I, " ('",
         I < Schema.Inputs.size() ? Schema.Inputs[I].Name
                                  : Schema.Inputs.back().Name,
         "') is required but absent");
  return *InTypes[I];
}

const Attribute &InferContext::attrByName(std::string_view N) const {
  if (const Attribute *A = Attrs.findByName(N))
    return *A;
  const AttrSchema *S = Schema.findAttr(N);
  if (S && S->Default)
    return *S->Default;
  fail("attribute '", N, "' is required");
}

std::vector<int64_t> InferContext::attrIntsByName(std::string_view N) const {
  if (!Attrs.hasByName(N)) {
    const AttrSchema *S = Schema.findAttr(N);
    if (!S || !S->Default)
      return {};
  }
  return attrByName(N).ints();
}

void InferContext::setOutputType(size_t I, TensorType T) {
  if (I < Outputs.size())
    Outputs[I] = std::move(T);
}

void InferContext::throwError(const std::string &Msg) const {
  Error E(ErrorKind::ShapeMismatch, Schema.qualifiedName() + ": " + Msg);
  if (!NodeDesc.empty())
    E.addContext("in " + NodeDesc);
  throw E;
}

std::vector<TensorType> inferNodeTypes(const Node &N) {
  std::vector<const TensorType *> Types;
  std::vector<const Tensor *> Vals;
  for (Value *V : N.inputs()) {
    Types.push_back(V ? &V->type() : nullptr);
    Vals.push_back(constantValue(V));
  }
  InferContext Ctx(N.schema(), N.attrs(), std::move(Types), std::move(Vals),
                   N.numOutputs(), N.describe());
  std::vector<const TensorType *> Declared;
  for (const Value *O : N.outputs())
    Declared.push_back(&O->type());
  Ctx.setDeclaredOutputTypes(std::move(Declared));
  N.schema().Infer(Ctx);
  return Ctx.outputTypes();
}

void inferTypes(Graph &G) {
  for (const auto &N : G.nodes()) {
    // In a typed copy of a region only the outputs count: nested regions
    // are typed as copies by their nodes' inference, not in place too.
    bool InPlace = N->hasRegions() && !RegionCopyScope::inCopy();
    if (InPlace) {
      try {
        inferRegionTypes(*N);
      } catch (Error &E) {
        E.addContext("in " + N->describe());
        throw;
      }
    }
    std::vector<TensorType> Inferred;
    {
      // Its regions were just typed for its inputs: read, not typed again.
      TypedRegionsScope Typed(InPlace ? N.get() : nullptr);
      Inferred = inferNodeTypes(*N);
    }
    for (size_t I = 0; I < N->numOutputs(); ++I) {
      Value *O = N->output(I);
      const TensorType &Old = O->type();
      // A value whose type was never set is f32[*]: take the inferred one.
      auto M = mergeTypes(Old, Inferred[I]);
      if (!M) {
        if (!Old.hasRank() && Old.dtype() == DType::F32) {
          O->setType(Inferred[I]);
          continue;
        }
        Error E(ErrorKind::ShapeMismatch,
                "output %" + O->name() + " is declared " + Old.toString() +
                    " but inference gives " + Inferred[I].toString());
        E.addContext("in " + N->describe());
        throw E;
      }
      O->setType(*M);
    }
  }
}

} // namespace nng::ir
