//===- CudaCodeGen.cpp - Kernel IR to CUDA C ------------------------------===//
//
// renderCuda (CudaCodeGen.h): a prelude of device helpers that carry the
// IR's exact semantics (KernelInterpreter.cpp is the oracle), then the
// kernel: each thread takes rows (outer points) in a grid-stride loop,
// computes every buffer's row offset from the outer multi-index, and runs
// the row body; a reduction or loop becomes a C for loop over the inner
// dimension whose body declares that block's values.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cuda/CudaCodeGen.h"

#include "nngraph/runtime/Error.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

// Every op of KernelOps.def has a case in expr(): a new op without one
// does not compile.
#pragma GCC diagnostic error "-Wswitch"

namespace nng::backends::cuda {

using namespace kernel;

namespace {

/// Device helpers with the kernel IR's semantics.
constexpr const char *Prelude = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>

// NaN-propagating max/min (the first NaN operand wins), else a < b ? b : a.
__device__ __forceinline__ float nng_maxf(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
  return a < b ? b : a;
}
__device__ __forceinline__ float nng_minf(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
  return b < a ? b : a;
}
__device__ __forceinline__ int nng_maxi(int a, int b) { return a < b ? b : a; }
__device__ __forceinline__ int nng_mini(int a, int b) { return b < a ? b : a; }
// Wrapping i32 arithmetic.
__device__ __forceinline__ int nng_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int nng_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int nng_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ int nng_div(int a, int b) {
  if (b == 0) return 0;
  if (a == (int)0x80000000 && b == -1) return a;
  return a / b;
}
__device__ __forceinline__ int nng_absi(int a) { return a < 0 ? nng_sub(0, a) : a; }
// f32 -> i32: toward zero, saturating, NaN -> 0.
__device__ __forceinline__ int nng_f2i(float f) {
  if (isnan(f)) return 0;
  if (f >= 2147483648.0f) return 2147483647;
  if (f <= -2147483648.0f) return (int)0x80000000;
  return (int)f;
}
__device__ __forceinline__ float nng_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float nng_rsqrt(float x) { return 1.0f / sqrtf(x); }
)";

std::string f32Literal(float F) {
  if (std::isnan(F))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(F))
    return F > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%af", static_cast<double>(F));
  return Buf;
}

const char *cType(ScalarType T) {
  switch (T) {
  case ScalarType::F32:
    return "float";
  case ScalarType::I32:
    return "int";
  case ScalarType::Bool:
    return "bool";
  }
  return "float";
}

const char *bufferType(DType T) {
  switch (T) {
  case DType::F32:
    return "float";
  case DType::F16:
    return "__half";
  case DType::BF16:
    return "__nv_bfloat16";
  default:
    return "int";
  }
}

class Renderer {
public:
  explicit Renderer(const Kernel &K) : K(K) {}

  CudaKernelSource render() {
    verifyKernel(K);
    CudaKernelSource S;
    S.Entry = "nng_" + sanitize(K.Name);
    size_t NB = K.Buffers.size();
    int R = K.Rank;
    OS << Prelude << "\n// " << printKernelFirstLine() << "\n";
    OS << "struct " << S.Entry << "_args {\n  long long sizes[" << R
       << "];\n  long long strides[" << NB * R << "];\n};\n\n";
    OS << "extern \"C\" __global__ void " << S.Entry << "(";
    for (size_t B = 0; B < NB; ++B) {
      const BufferParam &P = K.Buffers[B];
      OS << (P.IsOutput ? "" : "const ") << bufferType(P.Type) << " *"
         << (P.IsOutput ? "" : "__restrict__ ") << "b" << B << ", ";
    }
    OS << "const " << S.Entry << "_args a) {\n";
    OS << "  long long rows = 1;\n";
    for (int D = 0; D < K.inner(); ++D)
      OS << "  rows *= a.sizes[" << D << "];\n";
    OS << "  const long long n_inner = a.sizes[" << K.inner() << "];\n";
    OS << "  (void)n_inner;\n";
    OS << "  for (long long row = blockIdx.x * (long long)blockDim.x + "
          "threadIdx.x; row < rows;\n       row += (long long)gridDim.x * "
          "blockDim.x) {\n";
    OS << "    long long rest = row;\n";
    for (size_t B = 0; B < NB; ++B)
      OS << "    long long base" << B << " = 0;\n";
    for (int D = K.inner() - 1; D >= 0; --D) {
      OS << "    const long long i" << D << " = rest % a.sizes[" << D
         << "];\n    rest /= a.sizes[" << D << "];\n";
      for (size_t B = 0; B < NB; ++B)
        if (!K.Buffers[B].broadcasts(D))
          OS << "    base" << B << " += i" << D << " * a.strides[" << B * R + D
             << "];\n";
    }
    OS << "    (void)rest;\n";
    block(0, "    ", /*Inner=*/false);
    OS << "  }\n}\n";
    S.Code = OS.str();
    return S;
  }

private:
  static std::string sanitize(const std::string &Name) {
    std::string S;
    for (char C : Name)
      S += std::isalnum(static_cast<unsigned char>(C)) ? C : '_';
    return S.empty() ? "kernel" : S;
  }

  std::string printKernelFirstLine() const {
    std::string P = printKernel(K);
    return P.substr(0, P.find('\n'));
  }

  std::string v(int I) const { return "v" + std::to_string(I); }

  /// The element offset of buffer B at the current point.
  std::string offset(int B, bool Inner) const {
    std::string Base = "base" + std::to_string(B);
    const BufferParam &P = K.Buffers[B];
    if (!Inner || P.broadcasts(K.inner()))
      return Base;
    if (P.unitStride(K.inner()))
      return Base + " + j";
    return Base + " + j * a.strides[" +
           std::to_string(B * K.Rank + K.inner()) + "]";
  }

  std::string load(int B, bool Inner) const {
    std::string E = "b" + std::to_string(B) + "[" + offset(B, Inner) + "]";
    switch (K.Buffers[B].Type) {
    case DType::F16:
      return "__half2float(" + E + ")";
    case DType::BF16:
      return "__bfloat162float(" + E + ")";
    default:
      return E;
    }
  }

  std::string storeValue(int B, const std::string &X) const {
    switch (K.Buffers[B].Type) {
    case DType::F16:
      return "__float2half_rn(" + X + ")";
    case DType::BF16:
      return "__float2bfloat16_rn(" + X + ")";
    default:
      return X;
    }
  }

  /// The C expression of expression instruction I.
  std::string expr(int Idx, bool Inner) const {
    const Inst &I = K.Insts[Idx];
    auto A = [&](int J) { return v(I.Operands[J]); };
    bool IsF = opArity(I.Opcode) > 0 &&
               K.Insts[I.Operands[0]].Type == ScalarType::F32;
    switch (I.Opcode) {
    case Op::Const:
      if (I.Type == ScalarType::F32)
        return f32Literal(I.F);
      if (I.Type == ScalarType::Bool)
        return I.I ? "true" : "false";
      return I.I == INT32_MIN ? "(int)0x80000000" : std::to_string(I.I);
    case Op::Load:
      return load(I.Buffer, Inner);
    case Op::Dim:
      return "(int)a.sizes[" + std::to_string(I.I) + "]";
    case Op::Index:
      return I.I == K.inner() ? "(int)j" : "(int)i" + std::to_string(I.I);
    case Op::Neg:
      return IsF ? "-" + A(0) : "nng_sub(0, " + A(0) + ")";
    case Op::Abs:
      return IsF ? "fabsf(" + A(0) + ")" : "nng_absi(" + A(0) + ")";
    case Op::Exp:
      return "expf(" + A(0) + ")";
    case Op::Log:
      return "logf(" + A(0) + ")";
    case Op::Tanh:
      return "tanhf(" + A(0) + ")";
    case Op::Erf:
      return "erff(" + A(0) + ")";
    case Op::Sqrt:
      return "sqrtf(" + A(0) + ")";
    case Op::Rsqrt:
      return "nng_rsqrt(" + A(0) + ")";
    case Op::Sigmoid:
      return "nng_sigmoid(" + A(0) + ")";
    case Op::Not:
      return "!" + A(0);
    case Op::Cast: {
      ScalarType From = K.Insts[I.Operands[0]].Type;
      if (I.Type == ScalarType::Bool)
        return From == ScalarType::F32 ? "(" + A(0) + " != 0.0f)"
                                       : "(" + A(0) + " != 0)";
      if (I.Type == ScalarType::F32)
        return "(float)" + A(0);
      return From == ScalarType::F32 ? "nng_f2i(" + A(0) + ")" : "(int)" + A(0);
    }
    case Op::Add:
      return IsF ? A(0) + " + " + A(1) : "nng_add(" + A(0) + ", " + A(1) + ")";
    case Op::Sub:
      return IsF ? A(0) + " - " + A(1) : "nng_sub(" + A(0) + ", " + A(1) + ")";
    case Op::Mul:
      return IsF ? A(0) + " * " + A(1) : "nng_mul(" + A(0) + ", " + A(1) + ")";
    case Op::Div:
      return IsF ? A(0) + " / " + A(1) : "nng_div(" + A(0) + ", " + A(1) + ")";
    case Op::Min:
      return std::string(IsF ? "nng_minf(" : "nng_mini(") + A(0) + ", " + A(1) +
             ")";
    case Op::Max:
      return std::string(IsF ? "nng_maxf(" : "nng_maxi(") + A(0) + ", " + A(1) +
             ")";
    case Op::Pow:
      return "powf(" + A(0) + ", " + A(1) + ")";
    case Op::And:
      return A(0) + " && " + A(1);
    case Op::Or:
      return A(0) + " || " + A(1);
    case Op::Eq:
      return A(0) + " == " + A(1);
    case Op::Ne:
      return A(0) + " != " + A(1);
    case Op::Lt:
      return A(0) + " < " + A(1);
    case Op::Le:
      return A(0) + " <= " + A(1);
    case Op::Gt:
      return A(0) + " > " + A(1);
    case Op::Ge:
      return A(0) + " >= " + A(1);
    case Op::Select:
      return A(0) + " ? " + A(1) + " : " + A(2);
    case Op::Reduce:
    case Op::Loop:
    case Op::Store:
      break; // Structure: block().
    }
    fail(ErrorKind::Internal, "renderCuda: instruction ", Idx,
         " is not an expression");
  }

  void block(int Blk, const std::string &Ind, bool Inner) {
    for (int Idx : K.Blocks[Blk].Insts) {
      const Inst &I = K.Insts[Idx];
      switch (I.Opcode) {
      case Op::Store:
        OS << Ind << "b" << I.Buffer << "[" << offset(I.Buffer, Inner)
           << "] = " << storeValue(I.Buffer, v(I.Operands[0])) << ";\n";
        break;
      case Op::Loop:
        OS << Ind << "for (long long j = 0; j < n_inner; ++j) {\n";
        block(I.Body, Ind + "  ", true);
        OS << Ind << "}\n";
        break;
      case Op::Reduce: {
        bool IsF = I.Type == ScalarType::F32;
        const char *Init = "0";
        if (I.RK == ReduceKind::Add)
          Init = IsF ? "0.0f" : "0";
        else if (I.RK == ReduceKind::Max)
          Init = IsF ? "__int_as_float(0xff800000)" : "(int)0x80000000";
        else
          Init = IsF ? "__int_as_float(0x7f800000)" : "2147483647";
        OS << Ind << cType(I.Type) << " " << v(Idx) << " = " << Init << ";\n";
        OS << Ind << "for (long long j = 0; j < n_inner; ++j) {\n";
        block(I.Body, Ind + "  ", true);
        std::string X = v(I.Operands[0]), Acc = v(Idx);
        std::string Step;
        if (I.RK == ReduceKind::Add)
          Step = IsF ? Acc + " + " + X : "nng_add(" + Acc + ", " + X + ")";
        else if (I.RK == ReduceKind::Max)
          Step = std::string(IsF ? "nng_maxf(" : "nng_maxi(") + Acc + ", " + X + ")";
        else
          Step = std::string(IsF ? "nng_minf(" : "nng_mini(") + Acc + ", " + X + ")";
        OS << Ind << "  " << Acc << " = " << Step << ";\n";
        OS << Ind << "}\n";
        break;
      }
      default:
        OS << Ind << "const " << cType(I.Type) << " " << v(Idx) << " = "
           << expr(Idx, Inner) << ";\n";
      }
    }
  }

  const Kernel &K;
  std::ostringstream OS;
};

} // namespace

CudaKernelSource renderCuda(const Kernel &K) { return Renderer(K).render(); }

} // namespace nng::backends::cuda
