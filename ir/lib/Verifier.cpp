//===- Verifier.cpp - IR invariants --------------------------------------===//
//
// Checks a graph against the op table and the SSA rules: known ops, operand
// counts within the schema's bounds, absent inputs only where optional,
// attribute names and types, required attributes, values defined once and
// before use within this graph, consistent use lists, defined graph
// outputs, and declared output types consistent with inference. Regions
// (If's branches, Loop's body) are verified as graphs of their own, and
// each capture must be bound to an implicit input of the owning node that
// holds the outer value of its name and type. Every
// problem is collected; verifyOrThrow reports them all at once.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Verifier.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace nng::ir {

namespace {

class GraphVerifier {
public:
  explicit GraphVerifier(const Graph &G) : G(G) {}

  std::vector<VerifyDiagnostic> run() {
    for (const Value *V : G.inputs())
      defineValue(V, "graph input", Value::Kind::Input);
    for (const Value *V : G.initializers())
      defineValue(V, "initializer", Value::Kind::Initializer);
    for (const Value *V : G.captures())
      defineValue(V, "capture", Value::Kind::Capture);
    for (const auto &N : G.nodes())
      Nodes.insert(N.get());
    for (const auto &N : G.nodes())
      verifyNode(*N);
    for (size_t I = 0; I < G.outputs().size(); ++I) {
      const Value *V = G.outputs()[I];
      if (!V)
        graphProblem("graph output ", I, " is null");
      else if (!Defined.count(V))
        graphProblem("graph output ", I, " %", V->name(),
                     " is not defined in this graph");
    }
    verifyUseLists();
    return std::move(Diags);
  }

private:
  template <typename... Args> void problem(const Node &N, const Args &...A) {
    Diags.push_back({&N, N.describe() + ": " + detail::concat(A...)});
  }
  template <typename... Args> void graphProblem(const Args &...A) {
    Diags.push_back(
        {nullptr, "graph '" + G.name() + "': " + detail::concat(A...)});
  }

  /// Records V as defined; Owner is the producing node (null for graph
  /// inputs and initializers), named in the diagnostics.
  void defineValue(const Value *V, const char *What, Value::Kind K,
                   const Node *Owner = nullptr) {
    auto Report = [&](const char *Problem) {
      if (Owner)
        problem(*Owner, What, " %", V->name(), " ", Problem);
      else
        graphProblem(What, " %", V->name(), " ", Problem);
    };
    if (!Defined.insert(V).second)
      Report("is defined more than once");
    else
      Order.push_back(V);
    if (V->graph() != &G)
      Report("belongs to another graph");
    if (V->kind() != K)
      Report("has the wrong value kind");
    if (G.lookup(V->name()) != V)
      Report("is not registered under its name");
  }

  void verifyNode(const Node &N) {
    if (static_cast<int>(N.op()) >= NumOpKinds) {
      std::string Out = N.numOutputs() ? " %" + N.output()->name() : "";
      Diags.push_back({&N, "node" + Out + ": unknown op " +
                               std::to_string(static_cast<int>(N.op()))});
      return;
    }
    size_t Before = Diags.size();
    const OpSchema &S = N.schema();
    verifyCounts(N, S);
    verifyInputs(N, S);
    verifyAttrs(N, S);
    verifyRegions(N);
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      const Value *O = N.output(I);
      if (!O) {
        problem(N, "output ", I, " is null");
        continue;
      }
      if (O->producer() != &N || O->producerIndex() != I)
        problem(N, "output %", O->name(), " does not name this node (output ",
                I, ") as its producer");
      defineValue(O, "output", Value::Kind::NodeOutput, &N);
    }
    // Inference needs a structurally sound node.
    if (Diags.size() == Before)
      verifyTypes(N);
    if (Diags.size() == Before)
      verifyQuantScales(N, S);
  }

  /// Constant scales of the quantization ops must be finite and nonzero:
  /// Q divides by them, and a 0 or NaN scale is a broken quantizer's mark.
  void verifyQuantScales(const Node &N, const OpSchema &S) {
    switch (N.op()) {
    case OpKind::QuantizeLinear:
    case OpKind::DequantizeLinear:
    case OpKind::QLinearConv:
    case OpKind::QLinearMatMul:
      break;
    default:
      return;
    }
    for (size_t I = 0; I < N.numInputs() && I < S.Inputs.size(); ++I) {
      const std::string &Name = S.Inputs[I].Name;
      if (!N.hasInput(I) || Name.size() < 5 ||
          Name.compare(Name.size() - 5, 5, "scale") != 0)
        continue;
      const Tensor *T = constantValue(N.input(I));
      if (!T || !isFloatingPoint(T->dtype()))
        continue;
      for (int64_t J = 0, E = T->numel(); J < E; ++J) {
        double X = T->getFlat(J);
        if (std::isfinite(X) && X != 0)
          continue;
        problem(N, Name, " %", N.input(I)->name(), " holds ", X,
                E > 1 ? " at index " + std::to_string(J) : std::string(),
                "; a quantization scale must be a finite nonzero number (fix "
                "the quantizer's calibration or the model file)");
        break;
      }
    }
  }

  /// Each region verifies as a graph; its captures are bound to implicit
  /// inputs holding the outer value of their name and a compatible type.
  void verifyRegions(const Node &N) {
    if (N.numImplicitInputs() && !N.hasRegions())
      problem(N, "has ", N.numImplicitInputs(),
              " implicit inputs but no regions that read them");
    for (const auto &[Name, A] : N.attrs()) {
      if (A.type() != AttrType::Graph)
        continue;
      if (!A.graphPtr()) {
        problem(N, "region '", Name, "' is null");
        continue;
      }
      const Graph &R = A.g();
      for (const Value *C : R.captures()) {
        size_t I = C->captureIndex();
        if (I >= N.numInputs() || !N.isImplicitInput(I) || !N.input(I)) {
          problem(N, "region '", Name, "' captures %", C->name(),
                  " through input ", I, ", which is not an implicit input");
          continue;
        }
        const Value *Outer = N.input(I);
        if (Outer->name() != C->name())
          problem(N, "region '", Name, "' captures %", C->name(),
                  " but implicit input ", I, " is %", Outer->name());
        else if (!mergeTypes(C->type(), knownType(Outer)) &&
                 !isUnset(C->type()))
          problem(N, "region '", Name, "' captures %", C->name(), " as ",
                  C->type().toString(), " but it is ",
                  knownType(Outer).toString());
      }
      for (VerifyDiagnostic &D : GraphVerifier(R).run())
        Diags.push_back({&N, N.describe() + ": in region '" + Name +
                                 "': " + D.Message});
    }
  }

  void verifyCounts(const Node &N, const OpSchema &S) {
    size_t In = N.numExplicitInputs(), Out = N.numOutputs();
    if (In < S.minInputs() || In > S.maxInputs())
      problem(N, "has ", In, " inputs; ", S.qualifiedName(), " takes ",
              boundsText(S.minInputs(), S.maxInputs()));
    if (Out < S.minOutputs() || Out > S.maxOutputs())
      problem(N, "has ", Out, " outputs; ", S.qualifiedName(), " produces ",
              boundsText(S.minOutputs(), S.maxOutputs()));
  }

  static std::string boundsText(size_t Min, size_t Max) {
    if (Max == SIZE_MAX)
      return "at least " + std::to_string(Min);
    if (Min == Max)
      return "exactly " + std::to_string(Min);
    return std::to_string(Min) + " to " + std::to_string(Max);
  }

  void verifyInputs(const Node &N, const OpSchema &S) {
    for (size_t I = 0; I < N.numInputs(); ++I) {
      const Value *V = N.input(I);
      const OperandSchema *Op =
          S.Inputs.empty() || N.isImplicitInput(I)
              ? nullptr
              : &S.Inputs[std::min(I, S.Inputs.size() - 1)];
      std::string OpName =
          N.isImplicitInput(I) ? std::string("implicit")
          : Op                 ? detail::concat("'", Op->Name, "'")
                               : detail::concat("#", I);
      if (!V) {
        if (!Op || !Op->Optional)
          problem(N, "input ", I, " (", OpName, ") is absent but not optional");
        continue;
      }
      if (!Defined.count(V)) {
        if (V->graph() != &G)
          problem(N, "input ", I, " (", OpName, ") %", V->name(),
                  " is not a value of this graph");
        else
          problem(N, "input ", I, " (", OpName, ") %", V->name(),
                  " is used before it is defined");
      }
    }
  }

  void verifyAttrs(const Node &N, const OpSchema &S) {
    for (const auto &[Name, A] : N.attrs()) {
      const AttrSchema *AS = S.findAttr(Name);
      if (!AS) {
        std::string Known;
        for (const AttrSchema &X : S.Attrs)
          Known += (Known.empty() ? "" : ", ") + X.Name;
        problem(N, "attribute '", Name, "' is not an attribute of ",
                S.qualifiedName(), " (it has: ", Known.empty() ? "none" : Known,
                ")");
      } else if (AS->Type != A.type()) {
        problem(N, "attribute '", Name, "' is ", attrTypeName(A.type()),
                " but ", S.qualifiedName(), " expects ",
                attrTypeName(AS->Type));
      }
    }
    for (const AttrSchema &AS : S.Attrs)
      if (AS.Required && !N.attrs().hasByName(AS.Name))
        problem(N, "required attribute '", AS.Name, "' (",
                attrTypeName(AS.Type), ") is missing");
  }

  /// True for the type of a value whose type was never set (f32[*]): it
  /// makes no claim to check.
  static bool isUnset(const TensorType &T) {
    return !T.hasRank() && T.dtype() == DType::F32;
  }

  /// What is known of V's type: its declared type merged with what
  /// inference gave for it (so a graph never run through inferTypes still
  /// verifies).
  const TensorType &knownType(const Value *V) const {
    auto It = Known.find(V);
    return It == Known.end() ? V->type() : It->second;
  }

  /// Runs N's inference on the known input types and checks the declared
  /// output types against the result.
  void verifyTypes(const Node &N) {
    std::vector<const TensorType *> Types;
    std::vector<const Tensor *> Vals;
    for (const Value *V : N.inputs()) {
      Types.push_back(V ? &knownType(V) : nullptr);
      Vals.push_back(constantValue(V));
    }
    InferContext Ctx(N.schema(), N.attrs(), std::move(Types), std::move(Vals),
                     N.numOutputs(), N.describe());
    std::vector<const TensorType *> Declared;
    for (const Value *O : N.outputs())
      Declared.push_back(&O->type());
    Ctx.setDeclaredOutputTypes(std::move(Declared));
    try {
      N.schema().Infer(Ctx);
    } catch (const Error &E) {
      problem(N, "type inference failed: ", E.message());
      return;
    } catch (const std::exception &E) {
      problem(N, "type inference failed: ", E.what());
      return;
    }
    const std::vector<TensorType> &Inferred = Ctx.outputTypes();
    for (size_t I = 0; I < N.numOutputs() && I < Inferred.size(); ++I) {
      const TensorType &Declared = N.output(I)->type();
      if (isUnset(Declared)) {
        Known[N.output(I)] = Inferred[I];
        continue;
      }
      auto M = mergeTypes(Declared, Inferred[I]);
      if (!M)
        problem(N, "output %", N.output(I)->name(), " is declared ",
                Declared.toString(), " but inference gives ",
                Inferred[I].toString());
      else
        Known[N.output(I)] = *M;
    }
  }

  void verifyUseLists() {
    // Every input edge is in its value's use list...
    for (const auto &N : G.nodes())
      for (size_t I = 0; I < N->numInputs(); ++I) {
        const Value *V = N->input(I);
        if (!V)
          continue;
        Use U{N.get(), static_cast<unsigned>(I)};
        if (std::count(V->uses().begin(), V->uses().end(), U) != 1)
          problem(*N, "input ", I, " %", V->name(),
                  " does not list this node exactly once among its uses");
      }
    // ... and every use is an input edge of a node of this graph.
    auto CheckUses = [&](const Value *V) {
      for (const Use &U : V->uses())
        if (!Nodes.count(U.User))
          graphProblem("%", V->name(),
                       " lists a use by a node not in the "
                       "graph");
        else if (U.Index >= U.User->numInputs() || U.User->input(U.Index) != V)
          problem(*U.User, "%", V->name(), " lists a use as input ", U.Index,
                  " of this node, which is not that value");
    };
    for (const Value *V : Order)
      CheckUses(V);
  }

  const Graph &G;
  std::unordered_set<const Value *> Defined;
  std::vector<const Value *> Order; ///< Defined, in definition order.
  std::unordered_set<const Node *> Nodes;
  /// Types refined by inference, for node outputs.
  std::unordered_map<const Value *, TensorType> Known;
  std::vector<VerifyDiagnostic> Diags;
};

} // namespace

std::vector<VerifyDiagnostic> verifyGraph(const Graph &G) {
  return GraphVerifier(G).run();
}

void verifyOrThrow(const Graph &G) {
  std::vector<VerifyDiagnostic> Diags = verifyGraph(G);
  if (Diags.empty())
    return;
  std::string Msg = "graph '" + G.name() + "' is invalid (" +
                    std::to_string(Diags.size()) +
                    (Diags.size() == 1 ? " problem" : " problems") + "):";
  for (const VerifyDiagnostic &D : Diags)
    Msg += "\n  " + D.Message;
  throw Error(ErrorKind::Verify, Msg);
}

} // namespace nng::ir
