//===- Printer.cpp - The text format: printing ---------------------------===//
//
// Writes a graph as text (*.nng): a "graph" block holding the inputs, the
// initializers (values inline, or elided to a content hash when large), one
// line per node in topological order and the outputs. A region (a graph
// attribute: If's branches, Loop's body) prints inline as a nested "graph
// { ... }" block, indented; it names the outer values it reads (its
// captures) as they are named outside. Every spelling here is
// one the parser reads back to the same graph, so printing the parsed text
// gives the same bytes. docs/text-format.md describes the syntax.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Printer.h"

#include "TextSyntax.h"

#include "nngraph/runtime/Error.h"

#include <cstdio>
#include <cstring>
#include <sstream>

namespace nng::ir {

using namespace text;

std::string tensorHash(const Tensor &T) {
  NNG_CHECK(T.defined(), "tensorHash: undefined tensor");
  uint64_t H = 0xcbf29ce484222325ull;
  auto Feed = [&](const void *P, size_t N) {
    const unsigned char *B = static_cast<const unsigned char *>(P);
    for (size_t I = 0; I < N; ++I) {
      H ^= B[I];
      H *= 0x100000001b3ull;
    }
  };
  auto FeedU64 = [&](uint64_t V) {
    unsigned char B[8];
    for (int I = 0; I < 8; ++I)
      B[I] = static_cast<unsigned char>(V >> (8 * I));
    Feed(B, 8);
  };
  std::string_view Name = dtypeName(T.dtype());
  Feed(Name.data(), Name.size());
  Feed("", 1); // The terminating zero byte.
  FeedU64(T.rank());
  for (int64_t D : T.shape())
    FeedU64(static_cast<uint64_t>(D));
  if (T.numel() > 0 && isString(T.dtype())) {
    // The contents, not the process-local ids: each string's length, then
    // its bytes.
    for (const std::string &S : T.toStrings()) {
      FeedU64(S.size());
      Feed(S.data(), S.size());
    }
  } else if (T.numel() > 0) {
    Tensor C = T.contiguous();
    Feed(C.rawData(), C.nbytes());
  }
  char Buf[40];
  std::snprintf(Buf, sizeof(Buf), "fnv1a64:%016llx",
                static_cast<unsigned long long>(H));
  return Buf;
}

namespace {

/// Writes one graph; owns the options.
class Printer {
public:
  Printer(std::ostream &OS, const PrintOptions &O) : OS(OS), Opts(O) {}

  void print(const Graph &G) {
    printBlock(G);
    OS << '\n';
  }

private:
  /// "graph "name" { ... }" with its statements indented one level deeper
  /// than Ind, the closing brace at Ind, no newline after it.
  void printBlock(const Graph &G) {
    std::string Outer = Ind;
    Ind += "  ";
    OS << "graph ";
    if (!G.name().empty())
      OS << quoteString(G.name()) << ' ';
    OS << "{\n";
    for (const Value *V : G.inputs())
      OS << Ind << "input " << formatValueName(V->name()) << ": "
         << formatType(V->type()) << '\n';
    for (const Value *V : G.initializers())
      printInitializer(*V);
    for (const auto &N : G.nodes())
      printNode(*N);
    if (!G.outputs().empty()) {
      OS << Ind << "output ";
      for (size_t I = 0; I < G.outputs().size(); ++I) {
        if (I)
          OS << ", ";
        const Value *V = G.outputs()[I];
        OS << (V ? formatValueName(V->name()) : std::string("_"));
      }
      OS << '\n';
    }
    Ind = Outer;
    OS << Ind << "}";
  }

  void printInitializer(const Value &V) {
    OS << Ind << "init " << formatValueName(V.name()) << ": " << formatType(V.type())
       << " = ";
    const Tensor &T = V.data();
    if (!T.defined()) {
      OS << "elided(" << quoteString(V.elidedHash()) << ")\n";
      return;
    }
    if (Opts.InlineLimit >= 0 && T.numel() > Opts.InlineLimit) {
      OS << "elided(" << quoteString(tensorHash(T)) << ")\n";
      return;
    }
    std::string S = "[";
    appendTensorValues(T, S);
    OS << S << "]\n";
  }

  void printNode(const Node &N) {
    OS << Ind;
    for (size_t I = 0; I < N.numOutputs(); ++I) {
      if (I)
        OS << ", ";
      const Value *V = N.output(I);
      OS << formatValueName(V->name()) << ": " << formatType(V->type());
    }
    if (N.numOutputs())
      OS << " = ";
    OS << N.schema().qualifiedName() << '(';
    for (size_t I = 0; I < N.numExplicitInputs(); ++I) {
      if (I)
        OS << ", ";
      const Value *V = N.input(I);
      OS << (V ? formatValueName(V->name()) : std::string("_"));
    }
    OS << ')';
    if (!N.attrs().empty()) {
      OS << " {";
      bool First = true;
      for (const auto &[Name, A] : N.attrs()) {
        if (!First)
          OS << ", ";
        First = false;
        OS << (isIdentifier(Name) ? Name : quoteString(Name)) << " = ";
        if (A.type() == AttrType::Graph)
          printBlock(A.g());
        else
          OS << formatAttribute(A);
      }
      OS << '}';
    }
    if (!N.name().empty())
      OS << " name(" << quoteString(N.name()) << ')';
    if (!N.scope().empty())
      OS << " scope(" << quoteString(N.scope().Path) << ", "
         << quoteString(N.scope().ModuleType) << ')';
    OS << '\n';
  }

  static std::string formatAttribute(const Attribute &A) {
    std::string S;
    auto List = [&](const auto &Items, auto Format) {
      S += '[';
      for (size_t I = 0; I < Items.size(); ++I) {
        if (I)
          S += ", ";
        S += Format(Items[I]);
      }
      S += ']';
    };
    switch (A.type()) {
    case AttrType::Int:
      return std::to_string(A.i());
    case AttrType::Float:
      return formatFloat(A.f());
    case AttrType::String:
      return quoteString(A.s());
    case AttrType::Ints:
      List(A.ints(), [](int64_t V) { return std::to_string(V); });
      return S;
    case AttrType::Floats:
      List(A.floats(), [](float V) { return formatFloat(V); });
      return S;
    case AttrType::Strings:
      List(A.strings(), [](const std::string &V) { return quoteString(V); });
      return S;
    case AttrType::Tensor: {
      const Tensor &T = A.t();
      if (!T.defined())
        return "tensor<f32[*]> []"; // Unreadable on purpose: no data.
      S = "tensor<" + formatType(TensorType(T.dtype(), T.shape())) + "> [";
      appendTensorValues(T, S);
      return S + "]";
    }
    case AttrType::Graph: // Printed by printBlock.
      break;
    }
    return S;
  }

  std::ostream &OS;
  const PrintOptions &Opts;
  std::string Ind; ///< The indentation of the enclosing block's braces.
};

} // namespace

void printGraph(const Graph &G, std::ostream &OS, const PrintOptions &O) {
  Printer(OS, O).print(G);
}

std::string printGraph(const Graph &G, const PrintOptions &O) {
  std::ostringstream OS;
  printGraph(G, OS, O);
  return OS.str();
}

} // namespace nng::ir
