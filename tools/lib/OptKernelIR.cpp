//===- OptKernelIR.cpp - nngraph-opt --kernel-ir --------------------------===//
//
// Reads a kernel in the kernel IR's text form (parseKernel), prints it back
// (printKernel: the round trip lit tests check) and, with domain sizes,
// runs it on the kernel interpreter with the given input values and
// appends each output as a comment line, so the result still parses.
//
//===----------------------------------------------------------------------===//

#include "OptKernelIR.h"

#include "nngraph/backends/kernel/Interpreter.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Half.h"

#include <charconv>
#include <cstring>
#include <map>

namespace nng::tools {

namespace {

using namespace backends::kernel;

/// F in the shortest form that reads back exactly.
std::string shortest(float F) {
  char Buf[64];
  auto [End, Ec] = std::to_chars(Buf, Buf + sizeof(Buf), F);
  return std::string(Buf, End);
}

/// Bytes per element of a kernel buffer type.
size_t elementSize(DType T) {
  return T == DType::F16 || T == DType::BF16 ? 2 : 4;
}

/// Element I of a buffer as text.
std::string elementText(DType T, const char *P, size_t I) {
  uint16_t H;
  switch (T) {
  case DType::F16:
    std::memcpy(&H, P + 2 * I, 2);
    return shortest(halfBitsToFloat(H));
  case DType::BF16:
    std::memcpy(&H, P + 2 * I, 2);
    return shortest(static_cast<float>(BFloat16::fromBits(H)));
  case DType::I32: {
    int32_t V;
    std::memcpy(&V, P + 4 * I, 4);
    return std::to_string(V);
  }
  default: {
    float V;
    std::memcpy(&V, P + 4 * I, 4);
    return shortest(V);
  }
  }
}

/// Stores the number Text as element I of a buffer of type T.
void setElement(DType T, char *P, size_t I, std::string_view Text,
                const std::string &Buf) {
  auto Bad = [&] {
    fail(ErrorKind::InvalidArgument, "--kernel-input: '", Text,
         "' is not a number of buffer %", Buf, "'s type ", dtypeName(T));
  };
  const char *B = Text.data(), *E = Text.data() + Text.size();
  if (T == DType::I32) {
    int32_t V;
    auto [End, Ec] = std::from_chars(B, E, V);
    if (Ec != std::errc() || End != E)
      Bad();
    std::memcpy(P + 4 * I, &V, 4);
    return;
  }
  float V;
  auto [End, Ec] = std::from_chars(B, E, V);
  if (Ec != std::errc() || End != E)
    Bad();
  if (T == DType::F16) {
    uint16_t H = floatToHalfBits(V);
    std::memcpy(P + 2 * I, &H, 2);
  } else if (T == DType::BF16) {
    uint16_t H = BFloat16(V).Bits;
    std::memcpy(P + 2 * I, &H, 2);
  } else {
    std::memcpy(P + 4 * I, &V, 4);
  }
}

/// Runs K on the interpreter and prints its outputs as comment lines.
std::string interpret(const Kernel &K, const KernelIROptions &O) {
  if (O.Sizes.size() != static_cast<size_t>(K.Rank))
    fail(ErrorKind::InvalidArgument, "--kernel-sizes: kernel @", K.Name,
         " has a domain of rank ", K.Rank, ", got ", O.Sizes.size(), " sizes");
  std::map<std::string, std::string_view, std::less<>> Given;
  for (const std::string &In : O.Inputs) {
    size_t Eq = In.find('=');
    if (Eq == std::string::npos)
      fail(ErrorKind::InvalidArgument,
           "--kernel-input: expected NAME=V,V,...,"
           " got '",
           In, "'");
    std::string Name = In.substr(0, Eq);
    if (K.bufferNamed(Name) < 0 || K.Buffers[K.bufferNamed(Name)].IsOutput)
      fail(ErrorKind::InvalidArgument, "--kernel-input: kernel @", K.Name,
           " has no input buffer %", Name);
    Given[Name] = std::string_view(In).substr(Eq + 1);
  }
  std::vector<std::vector<char>> Storage(K.Buffers.size());
  std::vector<void *> Ptrs;
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    const BufferParam &P = K.Buffers[B];
    size_t N = 1;
    for (int D : P.Dims) {
      if (O.Sizes[D] < 0)
        fail(ErrorKind::InvalidArgument, "--kernel-sizes: d", D,
             " is negative");
      N *= static_cast<size_t>(O.Sizes[D]);
    }
    Storage[B].assign(std::max<size_t>(N, 1) * elementSize(P.Type), 0);
    Ptrs.push_back(Storage[B].data());
    if (P.IsOutput)
      continue;
    auto It = Given.find(P.Name);
    if (It == Given.end())
      fail(ErrorKind::InvalidArgument,
           "--kernel-input: no values for input "
           "buffer %",
           P.Name, " (", N, " elements)");
    std::vector<std::string_view> Values;
    std::string_view Rest = It->second;
    while (!Rest.empty()) {
      size_t Comma = Rest.find(',');
      Values.push_back(Rest.substr(0, Comma));
      Rest = Comma == std::string_view::npos ? "" : Rest.substr(Comma + 1);
    }
    if (Values.size() != N)
      fail(ErrorKind::InvalidArgument, "--kernel-input: buffer %", P.Name,
           " has ", N, " elements for these sizes, got ", Values.size(),
           " values");
    for (size_t I = 0; I < N; ++I)
      setElement(P.Type, Storage[B].data(), I, Values[I], P.Name);
  }
  interpretKernel(K, Ptrs, O.Sizes);
  std::string Out;
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    const BufferParam &P = K.Buffers[B];
    if (!P.IsOutput)
      continue;
    Out += "# %" + P.Name + ": " + std::string(dtypeName(P.Type)) + "[";
    size_t N = 1;
    for (size_t A = 0; A < P.Dims.size(); ++A) {
      Out += (A ? ", " : "") + std::to_string(O.Sizes[P.Dims[A]]);
      N *= static_cast<size_t>(O.Sizes[P.Dims[A]]);
    }
    Out += "] = [";
    for (size_t I = 0; I < N; ++I)
      Out += (I ? ", " : "") + elementText(P.Type, Storage[B].data(), I);
    Out += "]\n";
  }
  return Out;
}

} // namespace

std::string runKernelIR(const std::string &Text, const std::string &Name,
                        const KernelIROptions &O) {
  Kernel K = parseKernel(Text, Name);
  std::string Out = printKernel(K);
  if (!O.Sizes.empty())
    Out += interpret(K, O);
  return Out;
}

} // namespace nng::tools
