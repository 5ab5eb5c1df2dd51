//===- CudaBundleWriter.cpp - nngraph-cuda-bundle: kernels for a GPU ------===//
//
// Writes the device bundle (CudaBundle.h) of every kernel the CUDA code
// generator is tested on (CudaTestKernels.h): renders each with renderCuda,
// compiles it with NVRTC (a cubin, sm_90 unless --arch says otherwise),
// fills its inputs with deterministic pseudo-random data, runs the kernel
// IR interpreter for the expected outputs and records the launch
// arguments. Then it reads the file back with the runner's reader and
// checks that it holds what was written. cuda_bundle_run runs the bundle on
// a GPU.
//
//   nngraph-cuda-bundle OUT_DIR [--arch sm_90] [--only SUBSTRING]...
//
// OUT_DIR gets kernels.nngcb, index.txt (one line per kernel) and src/
// (each kernel's CUDA C, to read when a kernel fails on the device).
//
//===----------------------------------------------------------------------===//

#include "CudaBundle.h"
#include "CudaTestKernels.h"

#include "nngraph/backends/cuda/CudaCodeGen.h"
#include "nngraph/backends/kernel/Interpreter.h"
#include "nngraph/runtime/Half.h"
#include "nngraph/runtime/SplitMix64.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

namespace nng {
namespace {

using namespace backends::kernel;
using namespace kerneltest;
using namespace cudabundle;

/// The deterministic generator (splitmix64), the same on every host.
class Rng {
public:
  explicit Rng(uint64_t Seed) : Gen(Seed) {}
  uint64_t next() { return Gen.next(); }
  /// Uniform in [Lo, Hi).
  float uniform(float Lo, float Hi) {
    return static_cast<float>(Lo + (Hi - Lo) * Gen.uniform());
  }
  int32_t uniformInt(int32_t Lo, int32_t Hi) {
    return Lo +
           static_cast<int32_t>(next() % static_cast<uint64_t>(Hi - Lo + 1));
  }

private:
  SplitMix64 Gen;
};

uint64_t hashLabel(const std::string &S) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (unsigned char C : S)
    H = (H ^ C) * 0x100000001b3ull;
  return H;
}

ElemType elemType(DType T) {
  switch (T) {
  case DType::F32:
    return ElemType::F32;
  case DType::F16:
    return ElemType::F16;
  case DType::BF16:
    return ElemType::BF16;
  case DType::I32:
    return ElemType::I32;
  default:
    throw std::runtime_error("a kernel buffer of a type the bundle lacks");
  }
}

/// Writes F as element I of bytes of type T.
void setFloat(std::string &Bytes, ElemType T, size_t I, float F) {
  if (T == ElemType::F32) {
    std::memcpy(Bytes.data() + 4 * I, &F, 4);
    return;
  }
  uint16_t H = T == ElemType::F16 ? floatToHalfBits(F) : BFloat16(F).Bits;
  std::memcpy(Bytes.data() + 2 * I, &H, 2);
}

/// Fills an input of N elements: uniform in [Lo, Hi) (i32: [-50, 50]
/// unless a range is given), about one element in 16 special.
std::string randomInput(ElemType T, size_t N, Rng &R, const InputRange *Range,
                        bool Specials) {
  static const float SpecialF[] = {std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   0.0f,
                                   -0.0f,
                                   1e30f,
                                   -1e30f,
                                   1e-40f, // Subnormal.
                                   -1e-40f,
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::min(),
                                   0.5f,
                                   -2.0f};
  static const int32_t SpecialI[] = {INT32_MIN, INT32_MAX, 0,     1,
                                     -1,        65536,     -65536};
  std::string Bytes(N * elemSize(T), '\0');
  for (size_t I = 0; I < N; ++I) {
    bool Special = Specials && R.next() % 16 == 0;
    if (T == ElemType::I32) {
      int32_t V = Special ? SpecialI[R.next() % std::size(SpecialI)]
                  : Range ? R.uniformInt(static_cast<int32_t>(Range->Lo),
                                         static_cast<int32_t>(Range->Hi))
                          : R.uniformInt(-50, 50);
      std::memcpy(Bytes.data() + 4 * I, &V, 4);
      continue;
    }
    float V = Special ? SpecialF[R.next() % std::size(SpecialF)]
              : Range ? R.uniform(Range->Lo, Range->Hi)
                      : R.uniform(-3, 3);
    setFloat(Bytes, T, I, V);
  }
  return Bytes;
}

/// What the values stored to an output are computed with.
struct Numerics {
  bool InexactMath = false; ///< exp, log, tanh, erf, rsqrt, sigmoid, pow.
  bool FloatSum = false;    ///< An f32 add-reduction (the interpreter sums
                            ///< in double, the device in f32).
};

void collect(const Kernel &K, int Idx, std::set<int> &Seen, Numerics &N) {
  if (Idx < 0 || !Seen.insert(Idx).second)
    return;
  const Inst &I = K.Insts[Idx];
  switch (I.Opcode) {
  case Op::Exp:
  case Op::Log:
  case Op::Tanh:
  case Op::Erf:
  case Op::Rsqrt:
  case Op::Sigmoid:
  case Op::Pow:
    N.InexactMath = true;
    break;
  case Op::Reduce:
    if (I.RK == ReduceKind::Add && I.Type == ScalarType::F32)
      N.FloatSum = true;
    break;
  default:
    break;
  }
  for (int O : I.Operands)
    collect(K, O, Seen, N);
}

/// The tolerance of output buffer B: exact where the device computes what
/// the interpreter computes (IEEE +, -, *, /, sqrt, compares, casts, i32),
/// a few ulp for the math functions, 1e-4 for f32 sums, and about one unit
/// of the last place more for f16 and bf16 outputs.
void tolerance(const Kernel &K, int B, double &Rtol, double &Atol) {
  Numerics N;
  std::set<int> Seen;
  for (size_t Idx = 0; Idx < K.Insts.size(); ++Idx)
    if (K.Insts[Idx].Opcode == Op::Store && K.Insts[Idx].Buffer == B)
      collect(K, K.Insts[Idx].Operands[0], Seen, N);
  Rtol = Atol = 0;
  DType T = K.Buffers[B].Type;
  if (T == DType::I32 || (!N.InexactMath && !N.FloatSum))
    return;
  if (N.InexactMath)
    Rtol = 4e-6, Atol = 1e-6;
  if (N.FloatSum)
    Rtol = 1e-4, Atol = 1e-4;
  if (T == DType::F16)
    Rtol = std::max(Rtol, 2e-3), Atol = std::max(Atol, 1e-4);
  if (T == DType::BF16)
    Rtol = std::max(Rtol, 1.6e-2), Atol = std::max(Atol, 1e-3);
}

/// Strides of a strided buffer: row-major over its own axes, padded (the
/// last axis has stride 2, each other axis one element more than the
/// extent of the next), so neither the inner stride nor the others are the
/// dense ones. Returns the element count it spans.
size_t paddedStrides(const Kernel &K, int B, const std::vector<int64_t> &Sizes,
                     std::vector<int64_t> &Strides) {
  const BufferParam &P = K.Buffers[B];
  int64_t Stride = 2, Span = 1;
  for (size_t A = P.Dims.size(); A-- > 0;) {
    int D = P.Dims[A];
    Strides[B * K.Rank + D] = Stride;
    Span += (Sizes[D] - 1) * Stride;
    Stride = Stride * Sizes[D] + 1;
  }
  return static_cast<size_t>(Span);
}

BundleKernel makeKernel(const CudaTestKernel &C, const std::string &Arch) {
  const Kernel &K = C.K;
  backends::cuda::CudaKernelSource S = backends::cuda::renderCuda(K);
  BundleKernel BK;
  BK.Label = C.Label;
  BK.Entry = S.Entry;
  BK.Arch = Arch;
  BK.IR = printKernel(K);
  BK.Cubin = backends::cuda::compileWithNvrtc(S, Arch);
  BK.Sizes = C.Sizes;
  BK.MaxGrid = C.MaxGrid;
  std::vector<int64_t> Strides = rowMajorStrides(K, C.Sizes);
  Rng R(hashLabel(C.Label));
  std::vector<std::string> Data;
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    const BufferParam &P = K.Buffers[B];
    size_t N = 1;
    for (int D : P.Dims)
      N *= static_cast<size_t>(C.Sizes[D]);
    if (P.L == Layout::Strided)
      N = paddedStrides(K, static_cast<int>(B), C.Sizes, Strides);
    BundleBuffer Buf;
    Buf.Name = P.Name;
    Buf.Type = elemType(P.Type);
    Buf.IsOutput = P.IsOutput;
    const InputRange *Range = nullptr;
    for (const InputRange &IR : C.Ranges)
      if (IR.Buffer == P.Name)
        Range = &IR;
    // Outputs start as 0x5a bytes (finite in every type), so an element
    // the device leaves unwritten differs from the interpreter's.
    Buf.Initial = P.IsOutput ? std::string(N * elemSize(Buf.Type), '\x5a')
                             : randomInput(Buf.Type, N, R, Range, C.Specials);
    if (P.IsOutput)
      tolerance(K, static_cast<int>(B), Buf.Rtol, Buf.Atol);
    Data.push_back(Buf.Initial);
    BK.Buffers.push_back(std::move(Buf));
  }
  std::vector<void *> Ptrs;
  for (std::string &D : Data)
    Ptrs.push_back(D.data());
  interpretKernel(K, Ptrs, C.Sizes, Strides);
  for (size_t B = 0; B < K.Buffers.size(); ++B)
    if (K.Buffers[B].IsOutput)
      BK.Buffers[B].Expected = Data[B];
  BK.Args = packArgs(C.Sizes, Strides);
  return BK;
}

std::string indexLine(const BundleKernel &K) {
  std::ostringstream OS;
  OS << K.Label << " " << K.Entry << " " << K.Arch << " sizes=[";
  for (size_t D = 0; D < K.Sizes.size(); ++D)
    OS << (D ? "," : "") << K.Sizes[D];
  OS << "] rows=" << K.rows() << " max_grid=" << K.MaxGrid
     << " cubin=" << K.Cubin.size() << "B";
  for (const BundleBuffer &B : K.Buffers) {
    OS << " %" << B.Name << ":" << elemName(B.Type) << "["
       << B.Initial.size() / elemSize(B.Type) << "]";
    if (B.IsOutput)
      OS << "(out rtol=" << B.Rtol << " atol=" << B.Atol << ")";
  }
  return OS.str();
}

void writeFile(const std::filesystem::path &P, const std::string &Bytes) {
  std::ofstream F(P, std::ios::binary);
  F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
  if (!F.flush())
    throw std::runtime_error("cannot write " + P.string());
}

std::string readFile(const std::filesystem::path &P) {
  std::ifstream F(P, std::ios::binary);
  std::ostringstream OS;
  OS << F.rdbuf();
  if (!F)
    throw std::runtime_error("cannot read " + P.string());
  return OS.str();
}

int run(int Argc, char **Argv) {
  std::string Out, Arch = "sm_90";
  std::vector<std::string> Only;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--arch" && I + 1 < Argc)
      Arch = Argv[++I];
    else if (A == "--only" && I + 1 < Argc)
      Only.push_back(Argv[++I]);
    else if (!A.empty() && A[0] != '-' && Out.empty())
      Out = A;
    else {
      std::fprintf(stderr, "usage: nngraph-cuda-bundle OUT_DIR [--arch "
                           "sm_90] [--only SUBSTRING]...\n");
      return 2;
    }
  }
  if (Out.empty()) {
    std::fprintf(stderr, "nngraph-cuda-bundle: no output folder given\n");
    return 2;
  }
  if (!backends::cuda::nvrtcAvailable()) {
    std::printf("SKIPPED: built without the CUDA toolkit (NVRTC)\n");
    return 0;
  }
  std::filesystem::path Dir(Out);
  std::filesystem::create_directories(Dir / "src");
  Bundle B;
  std::set<std::string> Labels;
  std::string Index;
  for (const CudaTestKernel &C : cudaTestKernels()) {
    if (!Labels.insert(C.Label).second)
      throw std::runtime_error("two test kernels are labelled " + C.Label);
    bool Wanted = Only.empty();
    for (const std::string &S : Only)
      Wanted |= C.Label.find(S) != std::string::npos;
    if (!Wanted)
      continue;
    B.Kernels.push_back(makeKernel(C, Arch));
    writeFile(Dir / "src" / (C.Label + ".cu"),
              backends::cuda::renderCuda(C.K).Code);
    Index += indexLine(B.Kernels.back()) + "\n";
  }
  std::filesystem::path File = Dir / BundleFileName;
  writeFile(File, serializeBundle(B));
  writeFile(Dir / "index.txt", Index);
  // The round trip: the runner's reader gives back what was written.
  std::string Bytes = readFile(File);
  Bundle Back = parseBundle(Bytes);
  if (!(Back == B)) {
    std::fprintf(stderr, "nngraph-cuda-bundle: %s reads back differently\n",
                 File.string().c_str());
    return 1;
  }
  std::printf("wrote %zu kernels for %s, %zu bytes, to %s; read back "
              "identical\n",
              B.Kernels.size(), Arch.c_str(), Bytes.size(),
              File.string().c_str());
  return 0;
}

} // namespace
} // namespace nng

int main(int Argc, char **Argv) {
  try {
    return nng::run(Argc, Argv);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "nngraph-cuda-bundle: %s\n", E.what());
    return 1;
  }
}
