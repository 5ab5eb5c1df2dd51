//===- AttrName.h - Attribute names checked against Ops.def ---*- C++ -*-===//
//
// Attribute types, and AttrName: an attribute name written in the source as a
// string literal and checked at compile time against the Attrs column of
// Ops.def. `N.attrInt("axis")` compiles only when some op declares an int
// attribute named "axis"; a misspelt name, or a name read with the wrong
// type, fails to compile with a message naming
// attribute_name_not_in_Ops_def or attribute_type_differs_from_Ops_def. The
// check reads the op table itself (an X-macro over Ops.def), so there is no
// second list of names. Names that come from data at run time (the text
// format, ONNX, the Python bindings, code that walks the table) go through
// the *ByName accessors, which take a std::string_view.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace nng::ir {

/// Attribute value kinds (ONNX's AttributeProto types we support).
enum class AttrType : uint8_t {
  Int,
  Float,
  String,
  Ints,
  Floats,
  Strings,
  Tensor,
  Graph ///< A region: a subgraph the node owns (ir/Regions.h).
};

/// The names of the attribute types in the op table, in AttrType order.
inline constexpr std::string_view AttrTypeNames[] = {
    "int", "float", "string", "ints", "floats", "strings", "tensor", "graph"};

namespace attr_check {

/// The Attrs columns of all rows of Ops.def, in table order, joined by
/// spaces into one string (adjacent literals concatenate).
inline constexpr char OpAttrSpecs[] = ""
#define NNG_OP(Enum, Domain, Name, Since, Inputs, Outputs, Infer, Attrs, Doc,  \
               Traits)                                                         \
  " " Attrs
#include "nngraph/ir/Ops.def"
    ;

/// Not constexpr and never defined: the checks below call these when a name
/// fails, which makes the compile fail with an error naming them.
void attribute_name_not_in_Ops_def();
void attribute_type_differs_from_Ops_def();
void attribute_type_not_in_AttrTypeNames();

/// The types some op of Ops.def declares an attribute named Name with, as a
/// bit set (bit AttrType); 0 when none does. Each spec is "name:type",
/// "name:type?" or "name:type=DEFAULT", space-separated.
constexpr unsigned declaredAttrTypes(std::string_view Name) {
  constexpr size_t Size = sizeof(OpAttrSpecs) - 1;
  unsigned Types = 0;
  if (Name.empty())
    return 0;
  for (size_t I = 0; I < Size; ++I) {
    // Compare at the start of each spec only ("name:").
    if (OpAttrSpecs[I] != Name[0] || I == 0 || OpAttrSpecs[I - 1] != ' ')
      continue;
    size_t K = 0;
    while (K < Name.size() && I + K < Size && OpAttrSpecs[I + K] == Name[K])
      ++K;
    if (K < Name.size() || I + K >= Size || OpAttrSpecs[I + K] != ':')
      continue;
    size_t Begin = I + K + 1, End = Begin;
    while (End < Size && OpAttrSpecs[End] != ' ' && OpAttrSpecs[End] != '=')
      ++End;
    std::string_view Type(OpAttrSpecs + Begin, End - Begin);
    if (!Type.empty() && Type.back() == '?')
      Type.remove_suffix(1);
    bool Known = false;
    for (size_t T = 0; T < std::size(AttrTypeNames); ++T)
      if (AttrTypeNames[T] == Type) {
        Types |= 1u << T;
        Known = true;
      }
    if (!Known)
      attribute_type_not_in_AttrTypeNames();
  }
  return Types;
}

} // namespace attr_check

/// An attribute name that some op of Ops.def declares, with one of Types
/// (any type when Types is empty). It converts implicitly from a string
/// literal, and the conversion is checked at compile time.
template <AttrType... Types> class AttrName {
public:
  /// Checks S against Ops.def; a failed check is a compile error.
  template <size_t N> consteval AttrName(const char (&S)[N]) : Name(S, N - 1) {
    unsigned Declared = attr_check::declaredAttrTypes(Name);
    if (!Declared)
      attr_check::attribute_name_not_in_Ops_def();
    if constexpr (sizeof...(Types) > 0)
      if (!(Declared & ((1u << static_cast<unsigned>(Types)) | ...)))
        attr_check::attribute_type_differs_from_Ops_def();
  }
  /// A typed name is also a name of any type.
  template <AttrType... Other>
  requires(sizeof...(Types) == 0 &&
           sizeof...(Other) > 0) constexpr AttrName(AttrName<Other...> N)
      : Name(N.str()) {}
  constexpr std::string_view str() const { return Name; }
  constexpr operator std::string_view() const { return Name; }

private:
  std::string_view Name;
};

/// A name some op declares, of any type.
using AnyAttrName = AttrName<>;
/// Names of attributes of the types the typed accessors read.
using IntAttrName = AttrName<AttrType::Int>;
using FloatAttrName = AttrName<AttrType::Float>;
using StringAttrName = AttrName<AttrType::String>;
using IntsAttrName = AttrName<AttrType::Ints>;

} // namespace nng::ir
