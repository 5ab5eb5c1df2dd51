//===- KernelIR.cpp - Kernel IR: names, builder, verifier, strides --------===//
//
// The kernel IR's op table (KernelOps.def: names, operand counts, type
// rules) and type names, the type rules' checks, the KernelBuilder (which
// checks types and scopes as instructions are added), the verifier (every
// invariant of a finished kernel) and the run-time stride helpers shared by
// the interpreter and the JIT.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/kernel/KernelIR.h"

#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

namespace nng::backends::kernel {

std::string_view scalarTypeName(ScalarType T) {
  switch (T) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::I32:
    return "i32";
  case ScalarType::Bool:
    return "bool";
  }
  return "?";
}

namespace {

/// One row of the op table.
struct OpInfo {
  std::string_view Mnemonic;
  int Arity;
  TypeRule Rule;
};

constexpr OpInfo OpTable[] = {
#define KERNEL_OP(Enum, Mnemonic, Arity, Rule)                                 \
  {Mnemonic, Arity, TypeRule::Rule},
#include "nngraph/backends/kernel/KernelOps.def"
};

constexpr size_t NumOps = sizeof(OpTable) / sizeof(OpTable[0]);

} // namespace

bool isKnownOp(Op O) { return static_cast<size_t>(O) < NumOps; }

std::string_view opName(Op O) {
  return isKnownOp(O) ? OpTable[static_cast<size_t>(O)].Mnemonic : "?";
}

int opArity(Op O) {
  return isKnownOp(O) ? OpTable[static_cast<size_t>(O)].Arity : 0;
}

TypeRule opTypeRule(Op O) {
  return isKnownOp(O) ? OpTable[static_cast<size_t>(O)].Rule
                      : TypeRule::Structure;
}

bool opNamed(std::string_view Name, Op &Out) {
  for (size_t I = 0; I < NumOps; ++I)
    if (OpTable[I].Mnemonic == Name) {
      Out = static_cast<Op>(I);
      return true;
    }
  return false;
}

std::string_view reduceKindName(ReduceKind K) {
  switch (K) {
  case ReduceKind::Add:
    return "add";
  case ReduceKind::Max:
    return "max";
  case ReduceKind::Min:
    return "min";
  }
  return "?";
}

bool reduceKindNamed(std::string_view Name, ReduceKind &Out) {
  for (ReduceKind K : {ReduceKind::Add, ReduceKind::Max, ReduceKind::Min})
    if (reduceKindName(K) == Name) {
      Out = K;
      return true;
    }
  return false;
}

int BufferParam::axisOf(int D) const {
  for (size_t A = 0; A < Dims.size(); ++A)
    if (Dims[A] == D)
      return static_cast<int>(A);
  return -1;
}

bool Kernel::isElementwise() const {
  for (int I : Blocks.at(0).Insts)
    if (Insts[I].Opcode == Op::Reduce || Insts[I].Opcode == Op::Store)
      return false;
  return true;
}

int Kernel::bufferNamed(std::string_view N) const {
  for (size_t B = 0; B < Buffers.size(); ++B)
    if (Buffers[B].Name == N)
      return static_cast<int>(B);
  return -1;
}

namespace {

/// The compute type of a buffer element type; false when unsupported.
bool computeTypeOf(DType T, ScalarType &Out) {
  switch (T) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    Out = ScalarType::F32;
    return true;
  case DType::I32:
    Out = ScalarType::I32;
    return true;
  default:
    return false;
  }
}

bool validName(std::string_view N) {
  if (N.empty())
    return false;
  for (char C : N)
    if (!(std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '.'))
      return false;
  // A name of digits only would read like a numbered value.
  return !std::all_of(N.begin(), N.end(),
                      [](char C) { return C >= '0' && C <= '9'; });
}

} // namespace

ScalarType exprResultType(const Kernel &K, const Inst &I) {
  auto T = [&](int J) { return K.Insts[I.Operands[J]].Type; };
  switch (opTypeRule(I.Opcode)) {
  case TypeRule::Numeric:
  case TypeRule::Logic:
    return T(0);
  case TypeRule::FloatMath:
    return ScalarType::F32;
  case TypeRule::Compare:
    return ScalarType::Bool;
  case TypeRule::Select:
    return T(1);
  case TypeRule::Cast:
  case TypeRule::Leaf:
  case TypeRule::Structure:
    break;
  }
  return I.Type;
}

std::string instTypeError(const Kernel &K, const Inst &I) {
  auto T = [&](int J) { return K.Insts[I.Operands[J]].Type; };
  auto Name = [](ScalarType S) { return std::string(scalarTypeName(S)); };
  int Arity = opArity(I.Opcode);
  switch (opTypeRule(I.Opcode)) {
  case TypeRule::Numeric:
    if (Arity == 1) {
      if (T(0) == ScalarType::Bool)
        return "needs an f32 or i32 operand, got bool";
      return T(0) == I.Type ? "" : "result type differs from the operand's";
    }
    if (T(0) != T(1) || T(0) == ScalarType::Bool)
      return "needs two f32 or two i32 operands, got " + Name(T(0)) + " and " +
             Name(T(1));
    return T(0) == I.Type ? "" : "result type differs from the operands'";
  case TypeRule::Logic:
    if (Arity == 1)
      return T(0) == ScalarType::Bool && I.Type == ScalarType::Bool
                 ? ""
                 : "needs a bool operand, got " + Name(T(0));
    return T(0) == ScalarType::Bool && T(1) == ScalarType::Bool
               ? ""
               : "needs two bool operands";
  case TypeRule::Compare:
    if (T(0) != T(1) || T(0) == ScalarType::Bool)
      return "compares two f32 or two i32 values, got " + Name(T(0)) + " and " +
             Name(T(1));
    return I.Type == ScalarType::Bool ? "" : "a comparison gives bool";
  case TypeRule::Select:
    if (T(0) != ScalarType::Bool)
      return "needs a bool condition, got " + Name(T(0));
    if (T(1) != T(2))
      return "selects between values of different types (" + Name(T(1)) + ", " +
             Name(T(2)) + ")";
    return T(1) == I.Type ? "" : "result type differs from the operands'";
  case TypeRule::FloatMath:
    for (int J = 0; J < Arity; ++J)
      if (T(J) != ScalarType::F32)
        return "needs f32 operands, got " + Name(T(J));
    return I.Type == ScalarType::F32 ? "" : "gives f32";
  case TypeRule::Cast:
  case TypeRule::Leaf:
  case TypeRule::Structure:
    break;
  }
  return "";
}

namespace {

/// The verifier's walk over a kernel.
class Verifier {
public:
  Verifier(const Kernel &K, int *FailedInst) : K(K), FailedInst(FailedInst) {
    if (FailedInst)
      *FailedInst = -1;
  }

  void run() {
    if (!validName(K.Name))
      fail("kernel name '" + K.Name + "' is not an identifier");
    if (K.Rank < 1)
      fail("kernel @" + K.Name + " has rank " + std::to_string(K.Rank) +
           "; the domain needs at least one dimension");
    if (K.Blocks.empty() || K.Blocks[0].Nested)
      fail("kernel @" + K.Name + " has no row body (block 0)");
    std::set<std::string> Names;
    for (const BufferParam &B : K.Buffers) {
      ScalarType Ignored;
      if (!validName(B.Name) || !Names.insert(B.Name).second)
        fail("buffer name '" + B.Name + "' is not a unique identifier");
      if (!computeTypeOf(B.Type, Ignored))
        fail("buffer %" + B.Name + " has element type " +
             std::string(dtypeName(B.Type)) +
             "; kernels take f32, f16, bf16 and i32");
      std::set<int> Seen;
      for (int D : B.Dims)
        if (D < 0 || D >= K.Rank || !Seen.insert(D).second)
          fail("buffer %" + B.Name + " follows dim " + std::to_string(D) +
               " twice or outside the domain of rank " +
               std::to_string(K.Rank));
    }
    Stored.assign(K.Buffers.size(), 0);
    Defined.assign(K.Insts.size(), -1);
    Used.assign(K.Blocks.size(), 0);
    walk(0);
    for (size_t B = 0; B < K.Buffers.size(); ++B)
      if (K.Buffers[B].IsOutput && Stored[B] != 1)
        fail("output %" + K.Buffers[B].Name + " is stored " +
             std::to_string(Stored[B]) + " times; it must be stored once");
    std::set<std::string> ValueNames;
    for (const Inst &I : K.Insts)
      if (!I.Name.empty() &&
          (!validName(I.Name) || !ValueNames.insert(I.Name).second))
        fail("value name '" + I.Name + "' is not a unique identifier");
  }

private:
  [[noreturn]] void fail(const std::string &Msg) const {
    throw Error(ErrorKind::Verify, "kernel IR: " + Msg);
  }
  [[noreturn]] void failAt(int Idx, const std::string &Msg) const {
    if (FailedInst)
      *FailedInst = Idx;
    fail("kernel @" + K.Name + ", instruction " + std::to_string(Idx) + " (" +
         std::string(opName(K.Insts[Idx].Opcode)) + "): " + Msg);
  }

  /// Visible in block Blk: defined in Blk, or in the row body.
  void checkOperand(int Idx, int Op, int Blk) const {
    if (Op < 0 || Op >= static_cast<int>(K.Insts.size()) || Defined[Op] < 0 ||
        !K.Insts[Op].hasResult())
      failAt(Idx, "uses a value not defined before it");
    if (Defined[Op] != Blk && Defined[Op] != 0)
      failAt(Idx, "uses a value of another loop or reduction");
  }

  void walk(int Blk) {
    if (Blk < 0 || Blk >= static_cast<int>(K.Blocks.size()) || Used[Blk]++)
      fail("kernel @" + K.Name + ": block " + std::to_string(Blk) +
           " is missing or used twice");
    const Block &B = K.Blocks[Blk];
    bool Nested = B.Nested;
    for (int Idx : B.Insts) {
      if (Idx < 0 || Idx >= static_cast<int>(K.Insts.size()) ||
          Defined[Idx] >= 0)
        fail("kernel @" + K.Name + ": instruction " + std::to_string(Idx) +
             " is missing or placed twice");
      const Inst &I = K.Insts[Idx];
      int Arity = opArity(I.Opcode);
      for (int J = 0; J < Arity; ++J)
        checkOperand(Idx, I.Operands[J], Blk);
      switch (I.Opcode) {
      case Op::Const:
        break;
      case Op::Dim:
      case Op::Index:
        if (I.I < 0 || I.I >= K.Rank || I.Type != ScalarType::I32)
          failAt(Idx, "names dim " + std::to_string(I.I) +
                          " outside the domain of rank " +
                          std::to_string(K.Rank));
        if (I.Opcode == Op::Index && I.I == K.inner() && !Nested)
          failAt(Idx, "the inner index exists only in loops and reductions");
        break;
      case Op::Load: {
        if (I.Buffer < 0 || I.Buffer >= static_cast<int>(K.Buffers.size()) ||
            K.Buffers[I.Buffer].IsOutput)
          failAt(Idx, "loads from something that is not an input buffer");
        const BufferParam &P = K.Buffers[I.Buffer];
        ScalarType CT = ScalarType::F32;
        computeTypeOf(P.Type, CT);
        if (CT != I.Type)
          failAt(Idx, "loads %" + P.Name + " as the wrong type");
        if (!Nested && !P.broadcasts(K.inner()))
          failAt(Idx, "loads %" + P.Name +
                          ", which follows the inner dim, outside a loop or "
                          "reduction");
        break;
      }
      case Op::Reduce:
      case Op::Loop: {
        if (Nested)
          failAt(Idx, "loops and reductions do not nest");
        if (I.Body <= 0 || I.Body >= static_cast<int>(K.Blocks.size()) ||
            !K.Blocks[I.Body].Nested)
          failAt(Idx, "has no nested block");
        LoopBlock = I.Opcode == Op::Loop ? I.Body : -1;
        walk(I.Body);
        LoopBlock = -1;
        if (I.Opcode == Op::Reduce) {
          checkOperand(Idx, I.Operands[0], I.Body);
          ScalarType T = K.Insts[I.Operands[0]].Type;
          if (T == ScalarType::Bool || T != I.Type)
            failAt(Idx, "reduces a value of type " +
                            std::string(scalarTypeName(T)) +
                            "; reductions take f32 or i32");
        }
        break;
      }
      case Op::Store: {
        checkOperand(Idx, I.Operands[0], Blk);
        if (I.Buffer < 0 || I.Buffer >= static_cast<int>(K.Buffers.size()) ||
            !K.Buffers[I.Buffer].IsOutput)
          failAt(Idx, "stores to something that is not an output buffer");
        const BufferParam &P = K.Buffers[I.Buffer];
        ScalarType CT = ScalarType::F32;
        computeTypeOf(P.Type, CT);
        if (K.Insts[I.Operands[0]].Type != CT)
          failAt(Idx,
                 "stores a " +
                     std::string(scalarTypeName(K.Insts[I.Operands[0]].Type)) +
                     " value to %" + P.Name + " of type " +
                     std::string(dtypeName(P.Type)) + "; cast it first");
        bool InLoop = Nested && LoopBlock == Blk;
        if (Nested && !InLoop)
          failAt(Idx, "stores inside a reduction");
        for (int D = 0; D < K.Rank; ++D) {
          bool Needs = InLoop || D != K.inner();
          if (Needs && P.broadcasts(D))
            failAt(Idx, "stores to %" + P.Name +
                            ", which is broadcast along d" + std::to_string(D) +
                            "; an output must follow every dim it is "
                            "stored over");
          if (!InLoop && D == K.inner() && !P.broadcasts(D))
            failAt(Idx, "stores a row scalar to %" + P.Name +
                            ", which follows the inner dim; store it in a "
                            "loop");
        }
        ++Stored[I.Buffer];
        break;
      }
      default:
        if (!isKnownOp(I.Opcode))
          failAt(Idx, "unknown op");
        if (std::string E = instTypeError(K, I); !E.empty())
          failAt(Idx, E);
      }
      Defined[Idx] = Blk;
    }
  }

  const Kernel &K;
  int *FailedInst; ///< Where failAt reports the instruction, or null.
  std::vector<int> Stored, Defined, Used;
  int LoopBlock = -1; ///< The loop block being walked, or -1.
};

} // namespace

void verifyKernel(const Kernel &K) { Verifier(K, nullptr).run(); }

void verifyKernel(const Kernel &K, int *FailedInst) {
  Verifier(K, FailedInst).run();
}

// --- KernelBuilder -----------------------------------------------------------

KernelBuilder::KernelBuilder(std::string Name, int Rank) {
  K.Name = std::move(Name);
  K.Rank = Rank;
  K.Blocks.push_back(Block{});
  if (Rank < 1)
    fail("the domain needs at least one dimension, got rank " +
         std::to_string(Rank));
}

void KernelBuilder::fail(const std::string &Msg) const {
  throw Error(ErrorKind::InvalidArgument,
              "kernel builder (@" + K.Name + "): " + Msg);
}

int KernelBuilder::input(std::string Name, DType T, std::vector<int> Dims,
                         Layout L) {
  K.Buffers.push_back({std::move(Name), T, false, std::move(Dims), L});
  return static_cast<int>(K.Buffers.size()) - 1;
}

int KernelBuilder::output(std::string Name, DType T, std::vector<int> Dims,
                          Layout L) {
  K.Buffers.push_back({std::move(Name), T, true, std::move(Dims), L});
  return static_cast<int>(K.Buffers.size()) - 1;
}

int KernelBuilder::append(Inst I) {
  K.Insts.push_back(std::move(I));
  int Idx = static_cast<int>(K.Insts.size()) - 1;
  K.Blocks[Current].Insts.push_back(Idx);
  return Idx;
}

void KernelBuilder::checkUsable(Value V, const char *What) const {
  if (V.Id < 0 || V.Id >= static_cast<int>(K.Insts.size()) ||
      !K.Insts[V.Id].hasResult())
    fail(std::string(What) + ": not a value of this kernel");
  // Visible: in the current block or the row body.
  for (int B : {Current, 0})
    for (int I : K.Blocks[B].Insts)
      if (I == V.Id)
        return;
  fail(std::string(What) + ": value " + std::to_string(V.Id) +
       " belongs to another loop or reduction");
}

Value KernelBuilder::constF32(float V) {
  Inst I;
  I.Opcode = Op::Const;
  I.Type = ScalarType::F32;
  // NaN constants are canonical (the printed form does not keep payloads).
  I.F = std::isnan(V) ? std::numeric_limits<float>::quiet_NaN() : V;
  return {append(I)};
}

Value KernelBuilder::constI32(int32_t V) {
  Inst I;
  I.Opcode = Op::Const;
  I.Type = ScalarType::I32;
  I.I = V;
  return {append(I)};
}

Value KernelBuilder::constBool(bool V) {
  Inst I;
  I.Opcode = Op::Const;
  I.Type = ScalarType::Bool;
  I.I = V ? 1 : 0;
  return {append(I)};
}

Value KernelBuilder::load(int Buf) {
  if (Buf < 0 || Buf >= static_cast<int>(K.Buffers.size()) ||
      K.Buffers[Buf].IsOutput)
    fail("load: buffer " + std::to_string(Buf) + " is not an input");
  Inst I;
  I.Opcode = Op::Load;
  I.Buffer = Buf;
  if (!computeTypeOf(K.Buffers[Buf].Type, I.Type))
    fail("load: %" + K.Buffers[Buf].Name + " has unsupported type " +
         std::string(dtypeName(K.Buffers[Buf].Type)));
  if (!K.Blocks[Current].Nested && !K.Buffers[Buf].broadcasts(K.inner()))
    fail("load: %" + K.Buffers[Buf].Name +
         " follows the inner dim; load it in a loop or reduction");
  return {append(I)};
}

Value KernelBuilder::dimSize(int D) {
  if (D < 0 || D >= K.Rank)
    fail("dim: d" + std::to_string(D) + " is outside the domain");
  Inst I;
  I.Opcode = Op::Dim;
  I.Type = ScalarType::I32;
  I.I = D;
  return {append(I)};
}

Value KernelBuilder::index(int D) {
  if (D < 0 || D >= K.Rank)
    fail("index: d" + std::to_string(D) + " is outside the domain");
  if (D == K.inner() && !K.Blocks[Current].Nested)
    fail("index: the inner index exists only in loops and reductions");
  Inst I;
  I.Opcode = Op::Index;
  I.Type = ScalarType::I32;
  I.I = D;
  return {append(I)};
}

Value KernelBuilder::unary(Op O, Value A) {
  if (opArity(O) != 1 || O == Op::Cast)
    fail(std::string(opName(O)) + " is not a unary op");
  checkUsable(A, opName(O).data());
  Inst I;
  I.Opcode = O;
  I.Operands[0] = A.Id;
  I.Type = exprResultType(K, I);
  if (std::string E = instTypeError(K, I); !E.empty())
    fail(std::string(opName(O)) + ": " + E);
  return {append(I)};
}

Value KernelBuilder::binary(Op O, Value A, Value B) {
  if (opArity(O) != 2)
    fail(std::string(opName(O)) + " is not a binary op");
  checkUsable(A, opName(O).data());
  checkUsable(B, opName(O).data());
  Inst I;
  I.Opcode = O;
  I.Operands[0] = A.Id;
  I.Operands[1] = B.Id;
  I.Type = exprResultType(K, I);
  if (std::string E = instTypeError(K, I); !E.empty())
    fail(std::string(opName(O)) + ": " + E);
  return {append(I)};
}

Value KernelBuilder::select(Value C, Value A, Value B) {
  checkUsable(C, "select");
  checkUsable(A, "select");
  checkUsable(B, "select");
  Inst I;
  I.Opcode = Op::Select;
  I.Operands[0] = C.Id;
  I.Operands[1] = A.Id;
  I.Operands[2] = B.Id;
  I.Type = exprResultType(K, I);
  if (std::string E = instTypeError(K, I); !E.empty())
    fail("select: " + E);
  return {append(I)};
}

Value KernelBuilder::cast(Value A, ScalarType To) {
  checkUsable(A, "cast");
  Inst I;
  I.Opcode = Op::Cast;
  I.Operands[0] = A.Id;
  I.Type = To;
  return {append(I)};
}

void KernelBuilder::store(int Buf, Value V) {
  checkUsable(V, "store");
  if (Buf < 0 || Buf >= static_cast<int>(K.Buffers.size()) ||
      !K.Buffers[Buf].IsOutput)
    fail("store: buffer " + std::to_string(Buf) + " is not an output");
  if (OpenInst >= 0 && K.Insts[OpenInst].Opcode == Op::Reduce)
    fail("store: not inside a reduction");
  Inst I;
  I.Opcode = Op::Store;
  I.Buffer = Buf;
  I.Operands[0] = V.Id;
  append(I);
}

void KernelBuilder::beginReduce(ReduceKind RK) {
  if (OpenInst >= 0)
    fail("reductions and loops do not nest");
  Inst I;
  I.Opcode = Op::Reduce;
  I.RK = RK;
  I.Body = static_cast<int>(K.Blocks.size());
  OpenInst = append(I);
  K.Blocks.push_back(Block{{}, true});
  Current = I.Body;
}

Value KernelBuilder::endReduce(Value Yield, std::string Name) {
  if (OpenInst < 0 || K.Insts[OpenInst].Opcode != Op::Reduce)
    fail("endReduce without beginReduce");
  checkUsable(Yield, "reduce");
  Inst &R = K.Insts[OpenInst];
  R.Operands[0] = Yield.Id;
  R.Type = K.Insts[Yield.Id].Type;
  if (R.Type == ScalarType::Bool)
    fail("reduce: reduces bool; reductions take f32 or i32");
  R.Name = std::move(Name);
  Value Result{OpenInst};
  OpenInst = -1;
  Current = 0;
  return Result;
}

void KernelBuilder::beginLoop() {
  if (OpenInst >= 0)
    fail("reductions and loops do not nest");
  Inst I;
  I.Opcode = Op::Loop;
  I.Body = static_cast<int>(K.Blocks.size());
  OpenInst = append(I);
  K.Blocks.push_back(Block{{}, true});
  Current = I.Body;
}

void KernelBuilder::endLoop() {
  if (OpenInst < 0 || K.Insts[OpenInst].Opcode != Op::Loop)
    fail("endLoop without beginLoop");
  OpenInst = -1;
  Current = 0;
}

void KernelBuilder::setName(Value V, std::string Name) {
  if (V.Id < 0 || V.Id >= static_cast<int>(K.Insts.size()))
    fail("setName: not a value of this kernel");
  K.Insts[V.Id].Name = std::move(Name);
}

Kernel KernelBuilder::finish() {
  if (OpenInst >= 0)
    fail("a loop or reduction is still open");
  verifyKernel(K);
  return std::move(K);
}

// --- Strides -----------------------------------------------------------------

std::vector<int64_t> rowMajorStrides(const Kernel &K,
                                     std::span<const int64_t> Sizes) {
  std::vector<int64_t> S(K.Buffers.size() * K.Rank, 0);
  for (size_t B = 0; B < K.Buffers.size(); ++B) {
    const BufferParam &P = K.Buffers[B];
    int64_t Stride = 1;
    for (size_t A = P.Dims.size(); A-- > 0;) {
      S[B * K.Rank + P.Dims[A]] = Stride;
      Stride *= Sizes[P.Dims[A]];
    }
  }
  return S;
}

void checkLaunch(const Kernel &K, size_t NumBuffers,
                 std::span<const int64_t> Sizes,
                 std::span<const int64_t> Strides) {
  auto Fail = [&](const std::string &Msg) {
    throw Error(ErrorKind::InvalidArgument,
                "kernel @" + K.Name + ": " + Msg +
                    " (pass one pointer per buffer parameter, one size per "
                    "domain dim, and no strides or buffers x rank of them)");
  };
  if (NumBuffers != K.Buffers.size())
    Fail("got " + std::to_string(NumBuffers) + " buffers, expected " +
         std::to_string(K.Buffers.size()));
  if (Sizes.size() != static_cast<size_t>(K.Rank))
    Fail("got " + std::to_string(Sizes.size()) + " domain sizes for rank " +
         std::to_string(K.Rank));
  for (size_t D = 0; D < Sizes.size(); ++D)
    if (Sizes[D] < 0)
      Fail("domain size d" + std::to_string(D) + " is negative (" +
           std::to_string(Sizes[D]) + ")");
  if (Strides.empty())
    return;
  if (Strides.size() != K.Buffers.size() * K.Rank)
    Fail("got " + std::to_string(Strides.size()) + " strides, expected " +
         std::to_string(K.Buffers.size() * K.Rank));
  for (size_t B = 0; B < K.Buffers.size(); ++B)
    for (int D = 0; D < K.Rank; ++D) {
      int64_t S = Strides[B * K.Rank + D];
      const BufferParam &P = K.Buffers[B];
      if (P.broadcasts(D) && S != 0)
        Fail("buffer %" + P.Name + " broadcasts along d" + std::to_string(D) +
             " but its stride there is " + std::to_string(S));
      if (P.unitStride(D) && S != 1)
        Fail("buffer %" + P.Name + " is row-major with stride 1 along d" +
             std::to_string(D) + " but got stride " + std::to_string(S));
    }
}

} // namespace nng::backends::kernel
