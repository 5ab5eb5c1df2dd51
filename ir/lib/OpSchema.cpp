//===- OpSchema.cpp - Building the op table from Ops.def -----------------===//
//
// Expands Ops.def into OpSchema objects: parses each row's operand and
// attribute specs once, at first use, and indexes the ops by name.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/runtime/Error.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

namespace nng::ir {

// Declarations of the inference functions the table names (each may be named
// by several rows; redeclaration is fine).
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  void Infer(InferContext &);
#include "nngraph/ir/Ops.def"

namespace {

std::vector<std::string_view> splitSpaces(std::string_view S) {
  std::vector<std::string_view> Out;
  size_t I = 0;
  while (I < S.size()) {
    while (I < S.size() && S[I] == ' ')
      ++I;
    size_t J = I;
    while (J < S.size() && S[J] != ' ')
      ++J;
    if (J > I)
      Out.push_back(S.substr(I, J - I));
    I = J;
  }
  return Out;
}

std::vector<OperandSchema> parseOperands(std::string_view Spec) {
  std::vector<OperandSchema> Out;
  for (std::string_view Tok : splitSpaces(Spec)) {
    OperandSchema O;
    if (Tok.size() > 3 && Tok.substr(Tok.size() - 3) == "...") {
      O.Variadic = true;
      Tok.remove_suffix(3);
      if (Tok.back() == '?') { // "v?...": zero or more.
        O.Optional = true;
        Tok.remove_suffix(1);
      }
    } else if (Tok.back() == '?') {
      O.Optional = true;
      Tok.remove_suffix(1);
    }
    O.Name = std::string(Tok);
    Out.push_back(std::move(O));
  }
  return Out;
}

Attribute parseDefault(AttrType T, std::string_view V) {
  std::string S(V);
  switch (T) {
  case AttrType::Int:
    return Attribute(static_cast<int64_t>(std::strtoll(S.c_str(), nullptr, 10)));
  case AttrType::Float:
    return Attribute(std::strtof(S.c_str(), nullptr));
  case AttrType::String:
    return Attribute(S);
  case AttrType::Ints: {
    std::vector<int64_t> L;
    std::stringstream SS(S);
    std::string Item;
    while (std::getline(SS, Item, ','))
      L.push_back(std::strtoll(Item.c_str(), nullptr, 10));
    return Attribute(L);
  }
  case AttrType::Floats: {
    std::vector<float> L;
    std::stringstream SS(S);
    std::string Item;
    while (std::getline(SS, Item, ','))
      L.push_back(std::strtof(Item.c_str(), nullptr));
    return Attribute(L);
  }
  default:
    fail(ErrorKind::Internal, "Ops.def: no default syntax for attribute type ",
         attrTypeName(T));
  }
}

std::vector<AttrSchema> parseAttrs(std::string_view Spec) {
  std::vector<AttrSchema> Out;
  for (std::string_view Tok : splitSpaces(Spec)) {
    AttrSchema A;
    size_t Colon = Tok.find(':');
    A.Name = std::string(Tok.substr(0, Colon));
    std::string_view Rest = Tok.substr(Colon + 1);
    size_t Eq = Rest.find('=');
    std::string_view TypeName = Rest.substr(0, Eq);
    bool Opt = false;
    if (Eq == std::string_view::npos && TypeName.back() == '?') {
      Opt = true;
      TypeName.remove_suffix(1);
    }
    auto T = parseAttrType(TypeName);
    if (!T)
      fail(ErrorKind::Internal, "Ops.def: bad attribute type in '", Tok, "'");
    A.Type = *T;
    if (Eq != std::string_view::npos)
      A.Default = parseDefault(*T, Rest.substr(Eq + 1));
    else
      A.Required = !Opt;
    Out.push_back(std::move(A));
  }
  return Out;
}

/// The traits by their Ops.def names, in bit order.
constexpr std::pair<std::string_view, OpTrait> TraitNames[] = {
    {"elementwise", OpTrait::Elementwise},
    {"commutative", OpTrait::Commutative},
    {"compute", OpTrait::Compute},
    {"training", OpTrait::Training},
    {"impure", OpTrait::Impure},
    {"random", OpTrait::Random},
    {"random_in_training", OpTrait::RandomInTraining},
    {"quantizable", OpTrait::Quantizable},
    {"value_preserving", OpTrait::ValuePreserving},
};

uint32_t parseTraits(std::string_view Op, std::string_view Spec) {
  uint32_t Bits = 0;
  for (std::string_view Tok : splitSpaces(Spec)) {
    bool Known = false;
    for (const auto &[Name, T] : TraitNames)
      if (Tok == Name) {
        Bits |= static_cast<uint32_t>(T);
        Known = true;
      }
    if (!Known)
      fail(ErrorKind::Internal, "Ops.def: unknown trait '", Tok, "' of ", Op);
  }
  return Bits;
}

struct Table {
  std::vector<OpSchema> Schemas;
  std::unordered_map<std::string, const OpSchema *> ByQualifiedName;
  Table() {
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc, \
               Traits)                                                         \
  Schemas.push_back(OpSchema{OpKind::Enum, Domain, Name, Since,                \
                             parseOperands(Inputs), parseOperands(Outputs),    \
                             parseAttrs(Attrs), &Infer, Doc,                   \
                             parseTraits(#Enum, Traits)});
#include "nngraph/ir/Ops.def"
    for (const OpSchema &S : Schemas)
      ByQualifiedName[S.qualifiedName()] = &S;
  }
};

const Table &table() {
  static const Table T;
  return T;
}

size_t countRequired(const std::vector<OperandSchema> &Ops) {
  size_t N = 0;
  for (const OperandSchema &O : Ops)
    if (!O.Optional)
      N = &O - Ops.data() + 1;
  return N;
}

} // namespace

size_t OpSchema::minInputs() const { return countRequired(Inputs); }
size_t OpSchema::maxInputs() const {
  if (!Inputs.empty() && Inputs.back().Variadic)
    return SIZE_MAX;
  return Inputs.size();
}
size_t OpSchema::minOutputs() const { return countRequired(Outputs); }
size_t OpSchema::maxOutputs() const {
  if (!Outputs.empty() && Outputs.back().Variadic)
    return SIZE_MAX;
  return Outputs.size();
}

const AttrSchema *OpSchema::findAttr(std::string_view N) const {
  for (const AttrSchema &A : Attrs)
    if (A.Name == N)
      return &A;
  return nullptr;
}

std::string OpSchema::traitNames() const {
  std::string S;
  for (const auto &[Name, T] : TraitNames)
    if (has(T)) {
      if (!S.empty())
        S += ' ';
      S += Name;
    }
  return S;
}

bool hasTrait(OpKind K, OpTrait T) { return getOpSchema(K).has(T); }

std::string OpSchema::qualifiedName() const {
  if (Domain.empty())
    return std::string(Name);
  return std::string(Domain) + "." + std::string(Name);
}

const OpSchema &getOpSchema(OpKind K) {
  return table().Schemas[static_cast<size_t>(K)];
}

const std::vector<OpSchema> &allOpSchemas() { return table().Schemas; }

const OpSchema *lookupOp(std::string_view QualifiedName) {
  const auto &M = table().ByQualifiedName;
  auto It = M.find(std::string(QualifiedName));
  return It == M.end() ? nullptr : It->second;
}

const OpSchema *lookupOp(std::string_view Domain, std::string_view Name) {
  if (Domain.empty() || Domain == "ai.onnx")
    return lookupOp(Name);
  return lookupOp(std::string(Domain) + "." + std::string(Name));
}

} // namespace nng::ir
