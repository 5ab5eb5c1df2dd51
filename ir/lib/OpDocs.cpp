//===- OpDocs.cpp - Operator reference generated from the op table -------===//

#include "nngraph/ir/OpDocs.h"
#include "nngraph/ir/OpSchema.h"

#include <charconv>

namespace nng::ir {

static std::string operands(const std::vector<OperandSchema> &Ops) {
  if (Ops.empty())
    return "(none)";
  std::string S;
  for (const OperandSchema &O : Ops) {
    if (!S.empty())
      S += ", ";
    S += "`" + O.Name + (O.Optional ? "?" : "") + (O.Variadic ? "..." : "") +
         "`";
  }
  return S;
}

static std::string defaultText(const Attribute &A) {
  switch (A.type()) {
  case AttrType::Int:
    return std::to_string(A.i());
  case AttrType::Float: {
    char Buf[32];
    auto R = std::to_chars(Buf, Buf + sizeof(Buf), A.f());
    return std::string(Buf, R.ptr);
  }
  case AttrType::String:
    return "\"" + A.s() + "\"";
  default:
    return "(list)";
  }
}

void printOpReference(std::ostream &OS) {
  OS << "# Operator reference\n\n"
     << "Generated from `ir/include/nngraph/ir/Ops.def` by `nngraph-opt "
        "--print-op-reference`; do not edit by hand. Semantics are ONNX's at "
        "the listed opset version (domain `\"\"`), nngraph's own (domain "
        "`nng`), or ONNX Runtime's contrib ops (domain `com.microsoft`). `?` "
        "marks an optional operand, `...` a variadic one.\n\n"
     << "| op | since | inputs | outputs | summary |\n"
     << "|---|---|---|---|---|\n";
  for (const OpSchema &S : allOpSchemas())
    OS << "| [`" << S.qualifiedName() << "`](#" << S.qualifiedName() << ") | "
       << S.SinceVersion << " | " << operands(S.Inputs) << " | "
       << operands(S.Outputs) << " | " << S.Doc << " |\n";
  for (const OpSchema &S : allOpSchemas()) {
    OS << "\n## " << S.qualifiedName() << "\n\n"
       << S.Doc << ". Domain: `" << (S.Domain.empty() ? "ai.onnx" : S.Domain)
       << "`, version " << S.SinceVersion << ".\n\n"
       << "- Inputs: " << operands(S.Inputs) << "\n"
       << "- Outputs: " << operands(S.Outputs) << "\n";
    if (S.Traits)
      OS << "- Traits: " << S.traitNames() << "\n";
    if (S.Attrs.empty()) {
      OS << "- Attributes: none\n";
      continue;
    }
    OS << "- Attributes:\n";
    for (const AttrSchema &A : S.Attrs) {
      OS << "  - `" << A.Name << "`: " << attrTypeName(A.Type);
      if (A.Required)
        OS << ", required";
      else if (A.Default)
        OS << ", default " << defaultText(*A.Default);
      else
        OS << ", optional";
      OS << "\n";
    }
  }
}

} // namespace nng::ir
