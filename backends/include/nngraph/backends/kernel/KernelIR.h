//===- KernelIR.h - The target-independent kernel IR ------------*- C++ -*-===//
//
// The kernel IR is the one description of a fused region's semantics: a
// small loop/expression form that the cpu backend lowers to LLVM IR (and the
// cuda backend renders to CUDA C). A kernel has buffer parameters, an index
// space (a rank-k domain whose sizes are run-time arguments, so one compiled
// kernel serves every batch size) and a body. It holds no LLVM types.
//
// The domain is [d0, ..., d(k-1)]: d(k-1) is the *inner* dimension, the
// others are *outer*. The body runs once per outer point (a "row") and is a
// sequence of
//   - row scalars: expressions of constants, earlier row scalars and loads
//     of buffers that do not follow the inner dimension;
//   - reductions over the inner dimension (add, max, min), each a block of
//     per-point expressions ending in `yield`, producing a row scalar;
//   - loops over the inner dimension, each a block of per-point expressions
//     and stores;
//   - stores of row scalars to outputs that do not follow the inner dim.
// An elementwise kernel is one loop; softmax is max-reduce, add-reduce,
// loop; layer normalization is add-reduce, add-reduce, loop.
//
// Buffer parameters. Each buffer lists, per axis of its own (row-major)
// shape, the domain dimension that axis follows: `%b: f32[d0, d2]` over the
// domain [d0, d1, d2] has shape [size(d0), size(d2)] and is broadcast along
// d1; `%t: f32[d1, d0]` is a transposed view. So which dimensions broadcast
// (stride 0) and whether the inner stride is 1 are static; the other strides
// are run-time values: derived from the domain sizes (rowMajorStrides) or,
// for a `strided` buffer, given by the caller (any strides; the inner one is
// then not assumed to be 1). Outputs never broadcast along a dimension they
// are stored over.
//
// Scalar types are f32, i32 and bool (compare results). Buffers hold f32,
// f16, bf16 or i32: f16/bf16 load as f32 (exact) and store rounding to
// nearest even; i32 computes in i32 (wrapping add/sub/mul/neg/abs; division
// truncates, x / 0 = 0, INT_MIN / -1 = INT_MIN). Max and min follow the
// reference kernels: a NaN operand propagates (the first one if both are),
// otherwise max(a, b) = a < b ? b : a and min(a, b) = b < a ? b : a; Relu is
// max(x, 0.0) and Clip min(max(x, lo), hi), so NaN stays NaN. Casts:
// f32 -> i32 truncates toward zero, saturates, NaN -> 0; to bool is x != 0.
// Reductions of f32 accumulate in f32 (the interpreter: in double) in a fixed
// order; max/min reductions propagate NaN like max/min; an empty reduction
// gives 0 (add), -inf / INT_MIN (max), +inf / INT_MAX (min).
//
// Text form (printKernel; deterministic, the JIT cache key; parseKernel reads
// it back exactly):
//
//   kernel @softmax(%x: f32[d0, d1] in, %y: f32[d0, d1] out) domain [d0, d1] {
//     %m = reduce.max d1 {
//       %0 = load %x
//       yield %0
//     }
//     %1 = abs %m
//     %2 = lt %1, inf
//     %3 = select %2, %m, 0.0
//     %s = reduce.add d1 {
//       %4 = load %x
//       %5 = sub %4, %3
//       %6 = exp %5
//       yield %6
//     }
//     loop d1 {
//       %7 = load %x
//       %8 = sub %7, %3
//       %9 = exp %8
//       %10 = div %9, %s
//       store %y, %10
//     }
//   }
//
// `%n = dim d1` is a run-time domain size and `%i = index d1` the current
// index along a dim (both i32). Values print as %name when named, else %N
// numbered in print order; constants print inline as operands (f32 in the
// shortest form that reads back exactly, always with a '.', 'e', "inf" or
// "nan"; i32 as an integer; bool as true/false); casts print their result type
// (`cast %4 : i32`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nng::backends::kernel {

/// The type of a value of a kernel body.
enum class ScalarType : uint8_t { F32, I32, Bool };

/// "f32", "i32", "bool".
std::string_view scalarTypeName(ScalarType T);

/// The operations of a kernel body, one per row of KernelOps.def (which
/// documents each).
enum class Op : uint8_t {
#define KERNEL_OP(Enum, Mnemonic, Arity, Rule) Enum,
#include "nngraph/backends/kernel/KernelOps.def"
};

/// The operand / result type rule of an op (KernelOps.def explains each).
enum class TypeRule : uint8_t {
  Leaf,
  Numeric,
  FloatMath,
  Logic,
  Compare,
  Cast,
  Select,
  Structure,
};

/// The text name of an op ("add", "reduce", ...); "?" outside the table.
std::string_view opName(Op O);
/// Operand count of an expression op (0 for leaves and structure).
int opArity(Op O);
/// The type rule of an op (Structure outside the table).
TypeRule opTypeRule(Op O);
/// True when O is a row of the op table.
bool isKnownOp(Op O);
/// The op whose mnemonic is Name (reductions: "reduce"), if any.
bool opNamed(std::string_view Name, Op &Out);

/// How a reduction combines.
enum class ReduceKind : uint8_t { Add, Max, Min };
std::string_view reduceKindName(ReduceKind K);
/// The reduction kind named Name ("add", "max", "min"), if any.
bool reduceKindNamed(std::string_view Name, ReduceKind &Out);

/// How a buffer's run-time strides arise.
enum class Layout : uint8_t {
  RowMajor, ///< Row-major over its axes; strides follow from the sizes.
  Strided,  ///< The caller passes the strides of its axes.
};

/// A buffer parameter of a kernel.
struct BufferParam {
  std::string Name;
  DType Type = DType::F32; ///< F32, F16, BF16 or I32.
  bool IsOutput = false;
  /// Per axis of the buffer (outermost first): the domain dimension it
  /// follows. Domain dims not listed broadcast (stride 0).
  std::vector<int> Dims;
  Layout L = Layout::RowMajor;

  /// The buffer axis following domain dim D, or -1 (broadcast).
  int axisOf(int D) const;
  bool broadcasts(int D) const { return axisOf(D) < 0; }
  /// True when the stride along domain dim D is statically 1 (a row-major
  /// buffer whose last axis follows D).
  bool unitStride(int D) const {
    return L == Layout::RowMajor && !Dims.empty() && Dims.back() == D;
  }
};

/// One instruction. Instructions with a result define the value of the
/// same index.
struct Inst {
  Op Opcode = Op::Const;
  ScalarType Type = ScalarType::F32; ///< The result's type.
  /// Expression operands; Reduce: the value yielded; Store: the value.
  int Operands[3] = {-1, -1, -1};
  int Buffer = -1; ///< Load, Store.
  int Body = -1;   ///< Reduce, Loop: the nested block.
  ReduceKind RK = ReduceKind::Add;
  float F = 0;      ///< Const f32.
  int32_t I = 0;    ///< Const i32 and bool (0/1); Dim, Index: the dim.
  std::string Name; ///< Optional (printing); unique within the kernel.

  bool hasResult() const { return Opcode != Op::Loop && Opcode != Op::Store; }
};

/// A sequence of instructions: the row body (block 0) or the body of a
/// reduction or a loop.
struct Block {
  std::vector<int> Insts;
  bool Nested = false; ///< Runs per point of the inner dimension.
};

/// A kernel: parameters, domain rank and body.
class Kernel {
public:
  std::string Name;
  int Rank = 1;
  std::vector<BufferParam> Buffers;
  std::vector<Inst> Insts;
  std::vector<Block> Blocks; ///< Blocks[0] is the row body.

  int inner() const { return Rank - 1; }
  /// True when the body is loops of stores only (no reductions, no row
  /// scalars stored): every point is independent, so a run may split the
  /// inner dimension too.
  bool isElementwise() const;
  /// The buffer named Name, or -1.
  int bufferNamed(std::string_view Name) const;
};

/// The result type that the type rule of expression instruction I of K
/// gives it from its operands' types (Numeric and Logic: the first
/// operand's, FloatMath: f32, Compare: bool, Select: the second operand's,
/// Cast: I.Type).
ScalarType exprResultType(const Kernel &K, const Inst &I);
/// What is wrong with the types of expression instruction I of K (its
/// operands' and its own, by the op's type rule), or an empty string.
std::string instTypeError(const Kernel &K, const Inst &I);

/// A value under construction (an instruction index).
struct Value {
  int Id = -1;
};

/// Builds a kernel in order, checking types and scopes as it goes (Error of
/// kind InvalidArgument naming the kernel and the instruction).
class KernelBuilder {
public:
  KernelBuilder(std::string Name, int Rank);

  /// Adds an input / output buffer following the domain dims Dims.
  int input(std::string Name, DType T, std::vector<int> Dims,
            Layout L = Layout::RowMajor);
  int output(std::string Name, DType T, std::vector<int> Dims,
             Layout L = Layout::RowMajor);

  Value constF32(float V);
  Value constI32(int32_t V);
  Value constBool(bool V);
  /// The element of input buffer Buf at the current point (its type's
  /// compute type: f32 for f32/f16/bf16, i32 for i32).
  Value load(int Buf);
  /// The size of domain dim D / the current index along it (i32).
  Value dimSize(int D);
  Value index(int D);
  Value unary(Op O, Value A);
  Value binary(Op O, Value A, Value B);
  Value select(Value C, Value A, Value B);
  Value cast(Value A, ScalarType To);
  void store(int Buf, Value V);

  Value add(Value A, Value B) { return binary(Op::Add, A, B); }
  Value sub(Value A, Value B) { return binary(Op::Sub, A, B); }
  Value mul(Value A, Value B) { return binary(Op::Mul, A, B); }
  Value div(Value A, Value B) { return binary(Op::Div, A, B); }
  Value min(Value A, Value B) { return binary(Op::Min, A, B); }
  Value max(Value A, Value B) { return binary(Op::Max, A, B); }
  Value exp(Value A) { return unary(Op::Exp, A); }
  Value neg(Value A) { return unary(Op::Neg, A); }

  /// Opens the block of a reduction over the inner dimension; endReduce
  /// closes it with the value reduced and returns the row scalar.
  void beginReduce(ReduceKind K);
  Value endReduce(Value Yield, std::string Name = {});
  /// Opens / closes a loop over the inner dimension.
  void beginLoop();
  void endLoop();

  /// Names value V in the printed form (letters, digits, '_', '.').
  void setName(Value V, std::string Name);

  /// The finished kernel (verified).
  Kernel finish();

private:
  int append(Inst I);
  void checkUsable(Value V, const char *What) const;
  [[noreturn]] void fail(const std::string &Msg) const;
  Kernel K;
  int Current = 0;   ///< The block being filled.
  int OpenInst = -1; ///< The Reduce/Loop instruction of an open block.
};

/// Checks every invariant of K (types, scopes, buffer use, stores); throws
/// Error (kind Verify) saying what is wrong where.
void verifyKernel(const Kernel &K);
/// Like verifyKernel; before throwing, sets *FailedInst to the index of the
/// instruction at fault, or -1 when the fault is not one instruction's.
void verifyKernel(const Kernel &K, int *FailedInst);

/// The text form of K (see the top of this file); deterministic.
std::string printKernel(const Kernel &K);

/// Parses the text form (printKernel's output; '#' starts a comment) into
/// a verified kernel: printKernel(parseKernel(printKernel(K))) equals
/// printKernel(K). Errors are Error(Parse) "NAME:LINE:COL: error: ..."
/// (what was expected, an unknown op, a wrong operand count, an undefined
/// value, a type mismatch, a number out of range) with the source line and
/// a caret, or Error(Verify) from verifyKernel for a kernel that reads
/// well but breaks a rule of the IR. BufferName names the text in messages.
Kernel parseKernel(std::string_view Text,
                   std::string_view BufferName = "<string>");

/// Element strides (buffer-major: Strides[B * Rank + D]) of every buffer
/// along every domain dim for domain sizes Sizes: 0 where a buffer
/// broadcasts, row-major over its axes otherwise. Strided buffers get
/// their row-major strides too (a caller with other strides passes its own).
std::vector<int64_t> rowMajorStrides(const Kernel &K,
                                     std::span<const int64_t> Sizes);

/// Checks run-time arguments against K: Buffers.size() buffers (non-null
/// unless the domain is empty), Sizes.size() == Rank with every size >= 0,
/// and Strides empty or NumBuffers * Rank entries that are 0 where a buffer
/// broadcasts and 1 where its stride is statically 1. Throws Error naming
/// the kernel and the argument.
void checkLaunch(const Kernel &K, size_t NumBuffers,
                 std::span<const int64_t> Sizes,
                 std::span<const int64_t> Strides);

} // namespace nng::backends::kernel
