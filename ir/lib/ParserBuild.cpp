//===- ParserBuild.cpp - The text format: from declarations to a graph ---===//
//
// The build step of the parser (see ParseTree.h): creates the values and
// nodes of a GraphDecl, resolves value names (uses may come before
// definitions in the text), rejects cycles, sorts the nodes topologically,
// infers types (merging with the declared ones) and runs the verifier.
// Regions are built by nested builders when their node's operands are
// resolved (so they may read any value of the enclosing graphs): a name
// that a region does not define is looked up outward and becomes a capture
// bound to an implicit input of the node (and of each node in between). Every
// problem is reported as Error(Parse) at the source location of the
// declaration or node involved.
//
//===----------------------------------------------------------------------===//

#include "ParseTree.h"
#include "TextSyntax.h"

#include "nngraph/ir/Regions.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/ir/Verifier.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <unordered_map>

namespace nng::ir::text {

namespace {

/// Builds one graph from its declarations.
class Builder {
public:
  /// Parent and Owner: the enclosing graph's builder and the node whose
  /// region this is (null for the file's graph).
  Builder(const SourceBuffer &Src, GraphDecl &D, const ParseOptions &O,
          Builder *Parent = nullptr, Node *Owner = nullptr)
      : Src(Src), D(D), Opts(O), Parent(Parent), Owner(Owner) {}

  std::unique_ptr<Graph> build() {
    makeGraph();
    inferTypes();
    verify();
    return std::move(G);
  }

private:
  /// Everything but types: values, nodes, operands (regions included),
  /// topological order.
  void makeGraph() {
    G = std::make_unique<Graph>();
    G->setName(D.Name);
    for (const ValueDef &V : D.Inputs)
      guarded(V.Loc, [&] { G->addInput(V.Name, *V.Type); });
    for (InitDecl &I : D.Inits)
      addInitializer(I);
    createNodes();
    resolveOperands();
    checkAcyclic();
    guarded(D.Loc, [&] { G->topologicalSort(); });
  }

  /// The value Name of this graph or, through captures, of an enclosing
  /// one; null when no scope defines it.
  Value *lookupScoped(const std::string &Name) {
    if (Value *V = G->lookup(Name))
      return V;
    if (!Parent)
      return nullptr;
    Value *Outer = Parent->lookupScoped(Name);
    return Outer ? captureValue(*Owner, *G, Outer) : nullptr;
  }

  /// Builds N's regions (after its own operands).
  void buildRegions(Node *Nd) {
    for (const RegionDecl &R : DeclOf[Nd]->Regions) {
      auto Child = std::make_unique<Builder>(Src, *R.Body, Opts, this, Nd);
      Child->makeGraph();
      Nd->setAttrByName(R.Attr, Attribute(std::shared_ptr<Graph>(std::move(Child->G))));
      Child->Region = &Nd->attrs().findByName(R.Attr)->g();
      Children[Nd].push_back(std::move(Child));
    }
  }

  /// Types the regions of N from N's input types: captures take their
  /// outer value's type, then each region's nodes are inferred.
  void inferRegions(Node &N) {
    auto It = Children.find(&N);
    if (It == Children.end())
      return;
    for (auto &Child : It->second) {
      for (Value *C : Child->Region->captures())
        C->setType(N.input(C->captureIndex())->type());
      Child->inferTypesOf(*Child->Region);
    }
  }
  /// Runs F, turning any error other than a parse error into one at Loc.
  template <typename Fn> void guarded(size_t Loc, Fn F) {
    try {
      F();
    } catch (const Error &E) {
      if (E.kind() == ErrorKind::Parse)
        throw;
      Src.error(Loc, E.message(), E.context());
    } catch (const std::exception &E) {
      Src.error(Loc, E.what());
    }
  }

  void addInitializer(InitDecl &I) {
    const ValueDef &Def = I.Def;
    if (I.Data.defined()) {
      guarded(Def.Loc, [&] { G->addInitializer(Def.Name, I.Data); });
      return;
    }
    Tensor Data;
    if (Opts.ResolveElided)
      guarded(Def.Loc, [&] {
        try {
          Data = Opts.ResolveElided(Def.Name, *Def.Type, I.Hash);
        } catch (const Error &E) {
          Src.error(Def.Loc,
                    "cannot resolve the data of elided initializer " +
                        formatValueName(Def.Name) + ": " + E.message(),
                    E.context());
        }
      });
    if (!Data.defined()) {
      guarded(Def.Loc,
              [&] { G->addElidedInitializer(Def.Name, *Def.Type, I.Hash); });
      return;
    }
    TensorType Got(Data.dtype(), Data.shape());
    if (!mergeTypes(*Def.Type, Got))
      Src.error(Def.Loc, "the data resolved for elided initializer " +
                             formatValueName(Def.Name) + " is " +
                             formatType(Got) + " but it is declared " +
                             formatType(*Def.Type));
    guarded(Def.Loc, [&] { G->addInitializer(Def.Name, Data); });
  }

  void createNodes() {
    for (const NodeDecl &N : D.Nodes) {
      std::vector<std::string> Names;
      for (const ValueDef &R : N.Results)
        Names.push_back(R.Name);
      guarded(N.Loc, [&] {
        Node *Nd = G->addNode(N.Op->Kind, {}, Names, N.Attrs);
        Nd->setName(N.Name);
        Nd->setScope(N.Sc);
        for (size_t I = 0; I < N.Results.size(); ++I)
          if (N.Results[I].Type)
            Nd->output(I)->setType(*N.Results[I].Type);
        DeclOf[Nd] = &N;
        Order.push_back(Nd);
      });
    }
  }

  Value *resolve(const ValueRef &R) {
    if (R.Absent)
      return nullptr;
    Value *V = lookupScoped(R.Name);
    if (!V)
      Src.error(R.Loc, "use of undefined value " + formatValueName(R.Name));
    return V;
  }

  void resolveOperands() {
    for (Node *Nd : Order) {
      for (const ValueRef &R : DeclOf[Nd]->Operands)
        Nd->addInput(resolve(R));
      buildRegions(Nd);
    }
    std::vector<Value *> Outs;
    for (const ValueRef &R : D.Outputs)
      Outs.push_back(resolve(R));
    G->setOutputs(std::move(Outs));
  }

  /// Reports a cycle at the first node (in text order) that lies on one,
  /// naming the values around it.
  void checkAcyclic() {
    // Kahn's algorithm over producer -> user edges.
    std::unordered_map<const Node *, size_t> Pending;
    std::vector<Node *> Ready;
    for (Node *Nd : Order) {
      size_t Count = 0;
      for (Value *V : Nd->inputs())
        if (V && V->producer())
          ++Count;
      Pending[Nd] = Count;
      if (!Count)
        Ready.push_back(Nd);
    }
    size_t Done = 0;
    while (!Ready.empty()) {
      Node *Nd = Ready.back();
      Ready.pop_back();
      ++Done;
      for (Value *O : Nd->outputs())
        for (const Use &U : O->uses())
          if (--Pending[U.User] == 0)
            Ready.push_back(U.User);
    }
    if (Done == Order.size())
      return;
    // Walk backwards through unfinished producers until a node repeats: the
    // repeated node and the walk after it form a cycle.
    Node *Start = nullptr;
    for (Node *Nd : Order)
      if (Pending[Nd]) {
        Start = Nd;
        break;
      }
    std::vector<Node *> Path;
    std::unordered_map<Node *, size_t> Seen;
    Node *Cur = Start;
    while (!Seen.count(Cur)) {
      Seen[Cur] = Path.size();
      Path.push_back(Cur);
      Node *Next = nullptr;
      for (Value *V : Cur->inputs())
        if (V && V->producer() && Pending[V->producer()]) {
          Next = V->producer();
          break;
        }
      Cur = Next; // Never null: an unfinished node has an unfinished input.
    }
    std::vector<Node *> Cycle(Path.begin() + Seen[Cur], Path.end());
    // Report at the node that comes first in the text.
    auto First =
        std::min_element(Cycle.begin(), Cycle.end(), [&](Node *A, Node *B) {
          return DeclOf[A]->Loc < DeclOf[B]->Loc;
        });
    std::rotate(Cycle.begin(), First, Cycle.end());
    auto Name = [](Node *Nd) {
      return Nd->numOutputs() ? formatValueName(Nd->output(0)->name())
                              : Nd->schema().qualifiedName();
    };
    std::string Chain;
    for (Node *Nd : Cycle)
      Chain += Name(Nd) + " uses ";
    Chain += Name(Cycle.front());
    Node *At = Cycle.front();
    Src.error(DeclOf[At]->Loc, "cycle in the graph: node " + Name(At) + " = " +
                                   At->schema().qualifiedName() +
                                   " depends on itself (" + Chain + ")");
  }

  void inferTypes() { inferTypesOf(*G); }

  void inferTypesOf(Graph &Target) {
    for (const auto &NP : Target.nodes()) {
      Node &N = *NP;
      const NodeDecl &ND = *DeclOf[&N];
      inferRegions(N);
      std::vector<TensorType> Inferred;
      try {
        Inferred = inferNodeTypes(N);
      } catch (const Error &E) {
        Src.error(ND.OpLoc, E.message(), E.context());
      } catch (const std::exception &E) {
        Src.error(ND.OpLoc,
                  "type inference of " + N.describe() + " failed: " + E.what());
      }
      for (size_t I = 0; I < N.numOutputs() && I < Inferred.size(); ++I) {
        Value *O = N.output(I);
        const ValueDef &R = ND.Results[I];
        if (!R.Type) {
          O->setType(Inferred[I]);
          continue;
        }
        auto M = mergeTypes(*R.Type, Inferred[I]);
        if (!M)
          Src.error(R.Loc, "incompatible shape: " + formatValueName(R.Name) +
                               " is declared " + formatType(*R.Type) + " but " +
                               N.schema().qualifiedName() + " gives " +
                               formatType(Inferred[I]));
        O->setType(*M);
      }
    }
  }

  void verify() {
    std::vector<VerifyDiagnostic> Diags;
    guarded(D.Loc, [&] { Diags = verifyGraph(*G); });
    if (Diags.empty())
      return;
    auto LocOf = [&](const Node *Nd) {
      auto It = DeclOf.find(Nd);
      return It == DeclOf.end() ? D.Loc : It->second->Loc;
    };
    std::vector<std::string> Notes;
    for (size_t I = 1; I < Diags.size(); ++I)
      Notes.push_back(Src.location(LocOf(Diags[I].Where)) +
                      ": error: " + Diags[I].Message);
    Src.error(LocOf(Diags[0].Where), Diags[0].Message, Notes);
  }

  const SourceBuffer &Src;
  GraphDecl &D;
  const ParseOptions &Opts;
  Builder *Parent;
  Node *Owner;
  std::unique_ptr<Graph> G;
  Graph *Region = nullptr; ///< G once moved into its owner's attribute.
  std::unordered_map<const Node *, std::vector<std::unique_ptr<Builder>>>
      Children;
  std::unordered_map<const Node *, const NodeDecl *> DeclOf;
  std::vector<Node *> Order; ///< Nodes in text order.
};

} // namespace

std::unique_ptr<Graph> buildGraph(const SourceBuffer &Src, GraphDecl &D,
                                  const ParseOptions &O) {
  return Builder(Src, D, O).build();
}

} // namespace nng::ir::text
