//===- KernelPrinter.cpp - The text form of a kernel ----------------------===//
//
// printKernel writes a kernel in the text form documented in KernelIR.h.
// The output is a pure function of the kernel (values numbered in print
// order, constants in their shortest exact form), so it serves as the key of
// the JIT's object cache.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/KernelIR.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace nng::backends::kernel {

namespace {

std::string dimName(int D) {
  std::string S = "d"; // Not "d" + to_string(): GCC 12's -Wrestrict misfires.
  S += std::to_string(D);
  return S;
}

/// F in the shortest form that reads back exactly, marked as a float.
std::string floatLiteral(float F) {
  if (std::isnan(F))
    return "nan";
  if (std::isinf(F))
    return F < 0 ? "-inf" : "inf";
  char Buf[64];
  auto [End, Ec] = std::to_chars(Buf, Buf + sizeof(Buf), F);
  std::string S(Buf, End);
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}

class Printer {
public:
  explicit Printer(const Kernel &K) : K(K), Names(K.Insts.size()) {}

  std::string print() {
    OS << "kernel @" << K.Name << "(";
    for (size_t B = 0; B < K.Buffers.size(); ++B) {
      const BufferParam &P = K.Buffers[B];
      OS << (B ? ", " : "") << "%" << P.Name << ": " << dtypeName(P.Type)
         << "[";
      for (size_t A = 0; A < P.Dims.size(); ++A)
        OS << (A ? ", " : "") << dimName(P.Dims[A]);
      OS << "] " << (P.IsOutput ? "out" : "in");
      if (P.L == Layout::Strided)
        OS << " strided";
    }
    OS << ") domain [";
    for (int D = 0; D < K.Rank; ++D)
      OS << (D ? ", " : "") << dimName(D);
    OS << "] {\n";
    block(0, "  ");
    OS << "}\n";
    return OS.str();
  }

private:
  const std::string &define(int I) {
    Names[I] =
        K.Insts[I].Name.empty() ? std::to_string(Next++) : K.Insts[I].Name;
    return Names[I];
  }

  std::string operand(int I) const {
    const Inst &V = K.Insts[I];
    if (V.Opcode == Op::Const) {
      if (V.Type == ScalarType::F32)
        return floatLiteral(V.F);
      if (V.Type == ScalarType::Bool)
        return V.I ? "true" : "false";
      return std::to_string(V.I);
    }
    return "%" + Names[I];
  }

  void block(int B, const std::string &Indent) {
    for (int I : K.Blocks[B].Insts) {
      const Inst &V = K.Insts[I];
      switch (V.Opcode) {
      case Op::Const:
        break; // Printed inline where used.
      case Op::Load:
        OS << Indent << "%" << define(I) << " = load %"
           << K.Buffers[V.Buffer].Name << "\n";
        break;
      case Op::Dim:
      case Op::Index:
        OS << Indent << "%" << define(I) << " = " << opName(V.Opcode) << " "
           << dimName(V.I) << "\n";
        break;
      case Op::Reduce:
        OS << Indent << "%" << define(I) << " = reduce." << reduceKindName(V.RK)
           << " " << dimName(K.inner()) << " {\n";
        block(V.Body, Indent + "  ");
        OS << Indent << "  yield " << operand(V.Operands[0]) << "\n"
           << Indent << "}\n";
        break;
      case Op::Loop:
        OS << Indent << "loop " << dimName(K.inner()) << " {\n";
        block(V.Body, Indent + "  ");
        OS << Indent << "}\n";
        break;
      case Op::Store:
        OS << Indent << "store %" << K.Buffers[V.Buffer].Name << ", "
           << operand(V.Operands[0]) << "\n";
        break;
      default: {
        // An expression: its mnemonic and operands from the op table.
        // Operands first: define() assigns this instruction's number.
        std::string Ops;
        for (int J = 0; J < opArity(V.Opcode); ++J)
          Ops += (J ? ", " : "") + operand(V.Operands[J]);
        OS << Indent << "%" << define(I) << " = " << opName(V.Opcode) << " "
           << Ops;
        if (opTypeRule(V.Opcode) == TypeRule::Cast)
          OS << " : " << scalarTypeName(V.Type);
        OS << "\n";
      }
      }
    }
  }

  const Kernel &K;
  std::vector<std::string> Names;
  int Next = 0;
  std::ostringstream OS;
};

} // namespace

std::string printKernel(const Kernel &K) { return Printer(K).print(); }

} // namespace nng::backends::kernel
