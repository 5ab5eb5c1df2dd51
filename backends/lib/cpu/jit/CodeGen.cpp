//===- CodeGen.cpp - Kernel IR to LLVM IR ---------------------------------===//
//
// Lowers a kernel to one LLVM function (the signature and loop structure
// are in CodeGen.h). Per outer row the function computes each buffer's row
// pointer from the row's multi-index, then emits the row body in order: row
// scalars as scalar code, each reduction and loop as a 16-lane vector loop
// and a scalar tail. Instructions of a loop body that do not depend on the
// inner index (constants, loads of buffers broadcast along it, and what is
// computed from those and row scalars) are hoisted before the loop.
//
//===----------------------------------------------------------------------===//

#include "CodeGen.h"
#include "Math.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "nngraph/runtime/Error.h"

#include <cmath>

// Every op of KernelOps.def has a case in expr(): a new op without one
// does not compile.
#pragma GCC diagnostic error "-Wswitch"

namespace nng::backends::cpu::jit {

using namespace llvm;
using kernel::Inst;
using kernel::Kernel;
using kernel::Op;
using kernel::ReduceKind;
using kernel::ScalarType;

namespace {

class Emitter {
public:
  Emitter(const Kernel &K, LLVMContext &Ctx, Module &M)
      : K(K), Ctx(Ctx), M(M), B(Ctx), Mx(B), Row(K.Insts.size()),
        Cur(K.Insts.size()), Hoisted(K.Insts.size(), 0) {
    I64 = B.getInt64Ty();
    PtrTy = B.getPtrTy();
  }

  Function *emit(const TargetInfo &T);

private:
  // --- Types ---------------------------------------------------------------
  Type *scalarType(ScalarType T) {
    switch (T) {
    case ScalarType::F32:
      return B.getFloatTy();
    case ScalarType::I32:
      return B.getInt32Ty();
    case ScalarType::Bool:
      return B.getInt1Ty();
    }
    return nullptr;
  }
  Type *storageType(int Buf) {
    switch (K.Buffers[Buf].Type) {
    case DType::F16:
    case DType::BF16:
      return B.getInt16Ty();
    case DType::I32:
      return B.getInt32Ty();
    default:
      return B.getFloatTy();
    }
  }
  Type *vec(Type *T) { return FixedVectorType::get(T, Lanes); }
  Value *splat(Value *V) { return B.CreateVectorSplat(Lanes, V); }
  Value *maybeSplat(Value *V, bool Vec) { return Vec ? splat(V) : V; }
  /// <0, 1, ..., 15> as i64.
  Value *laneIndices() {
    SmallVector<Constant *, 16> C;
    for (unsigned L = 0; L < Lanes; ++L)
      C.push_back(ConstantInt::get(I64, L));
    return ConstantVector::get(C);
  }

  // --- Memory --------------------------------------------------------------
  /// Element pointer(s) of buffer Buf at inner index J (scalar i64 or
  /// null for the row pointer), as one pointer or a vector of 16.
  Value *address(int Buf, Value *J, bool Vec, bool &Gather) {
    Gather = false;
    Value *S = Stride[Buf][K.inner()];
    Type *ET = storageType(Buf);
    if (!J || K.Buffers[Buf].broadcasts(K.inner()))
      return RowBase[Buf];
    if (!Vec || K.Buffers[Buf].unitStride(K.inner()))
      return B.CreateGEP(ET, RowBase[Buf], B.CreateMul(J, S));
    Gather = true;
    Value *Idx = B.CreateMul(B.CreateAdd(splat(J), laneIndices()), splat(S));
    return B.CreateGEP(ET, RowBase[Buf], Idx);
  }

  Value *load(int Buf, Value *J, bool Vec) {
    bool Gather;
    Value *P = address(Buf, J, Vec, Gather);
    Type *ET = storageType(Buf);
    Align A(ET->getPrimitiveSizeInBits() / 8);
    Value *V;
    if (Gather)
      V = B.CreateMaskedGather(vec(ET), P, A);
    else if (Vec)
      V = B.CreateAlignedLoad(vec(ET), P, A);
    else
      V = B.CreateAlignedLoad(ET, P, A);
    switch (K.Buffers[Buf].Type) {
    case DType::F16:
      return Mx.halfToFloat(V);
    case DType::BF16:
      return Mx.bfloatToFloat(V);
    default:
      return V;
    }
  }

  void store(int Buf, Value *J, Value *V) {
    bool Vec = V->getType()->isVectorTy();
    switch (K.Buffers[Buf].Type) {
    case DType::F16:
      V = Mx.floatToHalf(V);
      break;
    case DType::BF16:
      V = Mx.floatToBfloat(V);
      break;
    default:
      break;
    }
    bool Scatter;
    Value *P = address(Buf, J, Vec, Scatter);
    Align A(storageType(Buf)->getPrimitiveSizeInBits() / 8);
    if (Scatter)
      B.CreateMaskedScatter(V, P, A);
    else
      B.CreateAlignedStore(V, P, A);
  }

  // --- Expressions ---------------------------------------------------------
  /// Operand Id for the current mode: row scalars and hoisted values are
  /// scalars, splatted in vector mode.
  Value *operand(int Id, bool Vec) {
    if (Row[Id])
      return Vec ? splat(Row[Id]) : Row[Id];
    return Cur[Id];
  }

  Value *constant(const Inst &I, bool Vec) {
    Value *C;
    if (I.Type == ScalarType::F32)
      C = ConstantFP::get(B.getFloatTy(), I.F);
    else if (I.Type == ScalarType::I32)
      C = B.getInt32(static_cast<uint32_t>(I.I));
    else
      C = B.getInt1(I.I != 0);
    return Vec ? splat(C) : C;
  }

  Value *cast(const Inst &I, Value *X) {
    ScalarType From = K.Insts[I.Operands[0]].Type, To = I.Type;
    Type *ToTy = scalarType(To);
    if (auto *VT = dyn_cast<VectorType>(X->getType()))
      ToTy = VectorType::get(ToTy, VT->getElementCount());
    if (From == To)
      return X;
    if (To == ScalarType::Bool)
      return From == ScalarType::F32
                 ? B.CreateFCmpUNE(X, ConstantFP::get(X->getType(), 0.0))
                 : B.CreateICmpNE(X, ConstantInt::get(X->getType(), 0));
    if (From == ScalarType::Bool)
      return To == ScalarType::F32 ? B.CreateUIToFP(X, ToTy)
                                   : B.CreateZExt(X, ToTy);
    return To == ScalarType::I32 ? Mx.floatToInt(X) : B.CreateSIToFP(X, ToTy);
  }

  Value *intDiv(Value *A, Value *D) {
    Type *T = A->getType();
    Value *Zero = ConstantInt::get(T, 0);
    Value *IsZero = B.CreateICmpEQ(D, Zero);
    Value *Ovf =
        B.CreateAnd(B.CreateICmpEQ(A, ConstantInt::get(T, 0x80000000u)),
                    B.CreateICmpEQ(D, ConstantInt::get(T, 0xffffffffu)));
    Value *Safe =
        B.CreateSelect(B.CreateOr(IsZero, Ovf), ConstantInt::get(T, 1), D);
    return B.CreateSelect(IsZero, Zero, B.CreateSDiv(A, Safe));
  }

  Value *expr(int Id, Value *J, bool Vec) {
    const Inst &I = K.Insts[Id];
    auto A = [&](int N) { return operand(I.Operands[N], Vec); };
    bool IsF = kernel::opArity(I.Opcode) > 0 &&
               K.Insts[I.Operands[0]].Type == ScalarType::F32;
    switch (I.Opcode) {
    case Op::Const:
      return constant(I, Vec);
    case Op::Load:
      return load(I.Buffer, J, Vec);
    case Op::Dim:
      return maybeSplat(B.CreateTrunc(SizeV[I.I], B.getInt32Ty()), Vec);
    case Op::Index:
      if (I.I != K.inner())
        return maybeSplat(B.CreateTrunc(OuterIdx[I.I], B.getInt32Ty()), Vec);
      if (!Vec)
        return B.CreateTrunc(J, B.getInt32Ty());
      return B.CreateTrunc(B.CreateAdd(splat(J), laneIndices()),
                           vec(B.getInt32Ty()));
    case Op::Neg:
      return IsF ? B.CreateFNeg(A(0)) : B.CreateNeg(A(0));
    case Op::Abs:
      if (IsF)
        return B.CreateUnaryIntrinsic(Intrinsic::fabs, A(0));
      return B.CreateSelect(
          B.CreateICmpSLT(A(0), ConstantInt::get(A(0)->getType(), 0)),
          B.CreateNeg(A(0)), A(0));
    case Op::Exp:
      return Mx.exp(A(0));
    case Op::Log:
      return Mx.log(A(0));
    case Op::Tanh:
      return Mx.tanh(A(0));
    case Op::Erf:
      return Mx.erf(A(0));
    case Op::Sqrt:
      return B.CreateUnaryIntrinsic(Intrinsic::sqrt, A(0));
    case Op::Rsqrt:
      return B.CreateFDiv(ConstantFP::get(A(0)->getType(), 1.0),
                          B.CreateUnaryIntrinsic(Intrinsic::sqrt, A(0)));
    case Op::Sigmoid:
      return Mx.sigmoid(A(0));
    case Op::Not:
      return B.CreateNot(A(0));
    case Op::Cast:
      return cast(I, A(0));
    case Op::Add:
      return IsF ? B.CreateFAdd(A(0), A(1)) : B.CreateAdd(A(0), A(1));
    case Op::Sub:
      return IsF ? B.CreateFSub(A(0), A(1)) : B.CreateSub(A(0), A(1));
    case Op::Mul:
      return IsF ? B.CreateFMul(A(0), A(1)) : B.CreateMul(A(0), A(1));
    case Op::Div:
      return IsF ? B.CreateFDiv(A(0), A(1)) : intDiv(A(0), A(1));
    case Op::Min:
      return IsF ? Mx.minF(A(0), A(1))
                 : B.CreateBinaryIntrinsic(Intrinsic::smin, A(0), A(1));
    case Op::Max:
      return IsF ? Mx.maxF(A(0), A(1))
                 : B.CreateBinaryIntrinsic(Intrinsic::smax, A(0), A(1));
    case Op::Pow:
      return Mx.pow(A(0), A(1));
    case Op::And:
      return B.CreateAnd(A(0), A(1));
    case Op::Or:
      return B.CreateOr(A(0), A(1));
    case Op::Eq:
      return IsF ? B.CreateFCmpOEQ(A(0), A(1)) : B.CreateICmpEQ(A(0), A(1));
    case Op::Ne:
      return IsF ? B.CreateFCmpUNE(A(0), A(1)) : B.CreateICmpNE(A(0), A(1));
    case Op::Lt:
      return IsF ? B.CreateFCmpOLT(A(0), A(1)) : B.CreateICmpSLT(A(0), A(1));
    case Op::Le:
      return IsF ? B.CreateFCmpOLE(A(0), A(1)) : B.CreateICmpSLE(A(0), A(1));
    case Op::Gt:
      return IsF ? B.CreateFCmpOGT(A(0), A(1)) : B.CreateICmpSGT(A(0), A(1));
    case Op::Ge:
      return IsF ? B.CreateFCmpOGE(A(0), A(1)) : B.CreateICmpSGE(A(0), A(1));
    case Op::Select:
      return B.CreateSelect(A(0), A(1), A(2));
    case Op::Reduce:
    case Op::Loop:
    case Op::Store:
      break; // Structure: emitInner and emit's row walk.
    }
    throw Error(ErrorKind::Internal, "kernel JIT: cannot emit '" +
                                         std::string(kernel::opName(I.Opcode)) +
                                         "' as an expression");
  }

  // --- Reductions and loops ------------------------------------------------
  Value *combine(ReduceKind RK, ScalarType T, Value *A, Value *X) {
    bool IsF = T == ScalarType::F32;
    switch (RK) {
    case ReduceKind::Add:
      return IsF ? B.CreateFAdd(A, X) : B.CreateAdd(A, X);
    case ReduceKind::Max:
      return IsF ? Mx.maxF(A, X)
                 : B.CreateBinaryIntrinsic(Intrinsic::smax, A, X);
    case ReduceKind::Min:
      return IsF ? Mx.minF(A, X)
                 : B.CreateBinaryIntrinsic(Intrinsic::smin, A, X);
    }
    return nullptr;
  }

  Constant *identity(ReduceKind RK, ScalarType T) {
    if (T == ScalarType::F32)
      return ConstantFP::get(B.getFloatTy(), RK == ReduceKind::Add ? 0.0
                                             : RK == ReduceKind::Max
                                                 ? -INFINITY
                                                 : INFINITY);
    return B.getInt32(RK == ReduceKind::Add   ? 0
                      : RK == ReduceKind::Max ? 0x80000000u
                                              : 0x7fffffffu);
  }

  /// Lane i combined with lane i + h for h = 8, 4, 2, 1.
  Value *treeReduce(ReduceKind RK, ScalarType T, Value *Acc) {
    for (unsigned H = Lanes / 2; H >= 1; H /= 2) {
      SmallVector<int, 16> Lo, Hi;
      for (unsigned L = 0; L < H; ++L) {
        Lo.push_back(L);
        Hi.push_back(L + H);
      }
      Acc = combine(RK, T, B.CreateShuffleVector(Acc, Lo),
                    B.CreateShuffleVector(Acc, Hi));
    }
    return B.CreateExtractElement(Acc, uint64_t(0));
  }

  void emitBody(const Inst &Owner, Value *J, bool Vec) {
    for (int Id : K.Blocks[Owner.Body].Insts) {
      if (Hoisted[Id])
        continue;
      const Inst &I = K.Insts[Id];
      if (I.Opcode == Op::Store)
        store(I.Buffer, J, operand(I.Operands[0], Vec));
      else
        Cur[Id] = expr(Id, J, Vec);
    }
  }

  /// Marks and emits (before the loop) the instructions of Owner's block
  /// that do not depend on the inner index.
  void hoist(const Inst &Owner) {
    for (int Id : K.Blocks[Owner.Body].Insts) {
      const Inst &I = K.Insts[Id];
      bool Inv;
      if (I.Opcode == Op::Store)
        Inv = false;
      else if (I.Opcode == Op::Load)
        Inv = K.Buffers[I.Buffer].broadcasts(K.inner());
      else if (I.Opcode == Op::Index)
        Inv = I.I != K.inner();
      else {
        Inv = true;
        for (int N = 0; N < kernel::opArity(I.Opcode); ++N)
          Inv = Inv && Row[I.Operands[N]] != nullptr;
      }
      if (Inv) {
        Row[Id] = expr(Id, nullptr, false);
        Hoisted[Id] = 1;
      }
    }
  }

  /// Emits a reduction (returns its row scalar) or a loop (null).
  Value *emitInner(const Inst &Owner) {
    bool IsReduce = Owner.Opcode == Op::Reduce;
    ScalarType T = Owner.Type;
    hoist(Owner);
    Value *Begin = IsReduce ? B.getInt64(0) : InnerBegin;
    Value *End = IsReduce ? InnerSize : InnerEnd;
    // A reduction of a hoisted value still runs the loop (n additions).
    BasicBlock *Pre = B.GetInsertBlock();
    BasicBlock *VH = BasicBlock::Create(Ctx, "vec.head", F);
    BasicBlock *VB = BasicBlock::Create(Ctx, "vec.body", F);
    BasicBlock *VX = BasicBlock::Create(Ctx, "vec.exit", F);
    BasicBlock *TH = BasicBlock::Create(Ctx, "tail.head", F);
    BasicBlock *TB = BasicBlock::Create(Ctx, "tail.body", F);
    BasicBlock *TX = BasicBlock::Create(Ctx, "tail.exit", F);
    B.CreateBr(VH);

    B.SetInsertPoint(VH);
    PHINode *J = B.CreatePHI(I64, 2, "j");
    J->addIncoming(Begin, Pre);
    PHINode *Acc = nullptr;
    if (IsReduce) {
      Acc = B.CreatePHI(vec(scalarType(T)), 2, "acc");
      Acc->addIncoming(splat(identity(Owner.RK, T)), Pre);
    }
    Value *More = B.CreateICmpSGE(B.CreateSub(End, J), B.getInt64(Lanes));
    B.CreateCondBr(More, VB, VX);

    B.SetInsertPoint(VB);
    emitBody(Owner, J, true);
    if (IsReduce)
      Acc->addIncoming(
          combine(Owner.RK, T, Acc, operand(Owner.Operands[0], true)),
          B.GetInsertBlock());
    J->addIncoming(B.CreateAdd(J, B.getInt64(Lanes)), B.GetInsertBlock());
    B.CreateBr(VH);

    B.SetInsertPoint(VX);
    Value *Partial = IsReduce ? treeReduce(Owner.RK, T, Acc) : nullptr;
    B.CreateBr(TH);

    B.SetInsertPoint(TH);
    PHINode *TJ = B.CreatePHI(I64, 2, "t");
    TJ->addIncoming(J, VX);
    PHINode *S = nullptr;
    if (IsReduce) {
      S = B.CreatePHI(scalarType(T), 2, "s");
      S->addIncoming(Partial, VX);
    }
    B.CreateCondBr(B.CreateICmpSLT(TJ, End), TB, TX);

    B.SetInsertPoint(TB);
    emitBody(Owner, TJ, false);
    if (IsReduce)
      S->addIncoming(combine(Owner.RK, T, S, operand(Owner.Operands[0], false)),
                     B.GetInsertBlock());
    TJ->addIncoming(B.CreateAdd(TJ, B.getInt64(1)), B.GetInsertBlock());
    BranchInst *Back = B.CreateBr(TH);
    // The tail has fewer than 16 iterations: keep the vectorizer off it.
    MDNode *NoVec =
        MDNode::get(Ctx, {MDString::get(Ctx, "llvm.loop.vectorize.enable"),
                          ConstantAsMetadata::get(B.getFalse())});
    MDNode *Loop = MDNode::getDistinct(Ctx, {nullptr, NoVec});
    Loop->replaceOperandWith(0, Loop);
    Back->setMetadata(LLVMContext::MD_loop, Loop);

    B.SetInsertPoint(TX);
    return S;
  }

  const Kernel &K;
  LLVMContext &Ctx;
  Module &M;
  IRBuilder<> B;
  MathEmitter Mx;
  Function *F = nullptr;
  Type *I64, *PtrTy;
  std::vector<Value *> RowBase;
  std::vector<Value *> SizeV, OuterIdx; ///< i64 domain sizes, row index.
  std::vector<std::vector<Value *>> Stride;
  Value *InnerSize = nullptr, *InnerBegin = nullptr, *InnerEnd = nullptr;
  std::vector<Value *> Row; ///< Row scalars and hoisted values.
  std::vector<Value *> Cur; ///< Per-point values of the current mode.
  std::vector<char> Hoisted;
};

Function *Emitter::emit(const TargetInfo &T) {
  FunctionType *FT = FunctionType::get(
      B.getVoidTy(), {PtrTy, PtrTy, PtrTy, I64, I64, I64, I64}, false);
  F = Function::Create(FT, Function::ExternalLinkage, EntryName, M);
  F->addFnAttr(Attribute::NoUnwind);
  F->addFnAttr("target-cpu", T.CPU);
  F->addFnAttr("target-features", T.Features);
  if (T.PreferWide) {
    F->addFnAttr("prefer-vector-width", "512");
    F->addFnAttr("min-legal-vector-width", "512");
  }
  Argument *Bufs = F->getArg(0), *Sizes = F->getArg(1), *Strides = F->getArg(2);
  Value *OB = F->getArg(3), *OE = F->getArg(4);
  InnerBegin = F->getArg(5);
  InnerEnd = F->getArg(6);
  for (int A = 0; A < 3; ++A) {
    F->addParamAttr(A, Attribute::NoAlias);
    F->addParamAttr(A, Attribute::ReadOnly);
  }

  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", F);
  B.SetInsertPoint(Entry);
  int R = K.Rank;
  std::vector<Value *> Size(R);
  for (int D = 0; D < R; ++D)
    Size[D] =
        B.CreateLoad(I64, B.CreateConstGEP1_64(I64, Sizes, D), "d" + Twine(D));
  InnerSize = Size[R - 1];
  SizeV = Size;
  size_t NB = K.Buffers.size();
  std::vector<Value *> Base(NB);
  Stride.assign(NB, std::vector<Value *>(R));
  for (size_t Bf = 0; Bf < NB; ++Bf) {
    Base[Bf] = B.CreateLoad(PtrTy, B.CreateConstGEP1_64(PtrTy, Bufs, Bf),
                            K.Buffers[Bf].Name);
    for (int D = 0; D < R; ++D) {
      const kernel::BufferParam &P = K.Buffers[Bf];
      if (P.broadcasts(D))
        Stride[Bf][D] = B.getInt64(0);
      else if (P.unitStride(D))
        Stride[Bf][D] = B.getInt64(1);
      else
        Stride[Bf][D] =
            B.CreateLoad(I64, B.CreateConstGEP1_64(I64, Strides, Bf * R + D));
    }
  }

  BasicBlock *Head = BasicBlock::Create(Ctx, "row.head", F);
  BasicBlock *Body = BasicBlock::Create(Ctx, "row.body", F);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "exit", F);
  B.CreateBr(Head);
  B.SetInsertPoint(Head);
  PHINode *O = B.CreatePHI(I64, 2, "row");
  O->addIncoming(OB, Entry);
  B.CreateCondBr(B.CreateICmpSLT(O, OE), Body, Exit);

  B.SetInsertPoint(Body);
  // The row's multi-index (the last outer dim fastest) and row pointers.
  std::vector<Value *> Off(NB, B.getInt64(0));
  Value *Rest = O;
  OuterIdx.assign(R, nullptr);
  for (int D = R - 2; D >= 0; --D) {
    Value *Idx = Rest;
    if (D > 0) {
      Idx = B.CreateURem(Rest, Size[D]);
      Rest = B.CreateUDiv(Rest, Size[D]);
    }
    OuterIdx[D] = Idx;
    for (size_t Bf = 0; Bf < NB; ++Bf)
      if (!K.Buffers[Bf].broadcasts(D))
        Off[Bf] = B.CreateAdd(Off[Bf], B.CreateMul(Idx, Stride[Bf][D]));
  }
  RowBase.resize(NB);
  for (size_t Bf = 0; Bf < NB; ++Bf)
    RowBase[Bf] = B.CreateGEP(storageType(Bf), Base[Bf], Off[Bf]);

  for (int Id : K.Blocks[0].Insts) {
    const Inst &I = K.Insts[Id];
    switch (I.Opcode) {
    case Op::Reduce:
      Row[Id] = emitInner(I);
      break;
    case Op::Loop:
      emitInner(I);
      break;
    case Op::Store:
      store(I.Buffer, nullptr, Row[I.Operands[0]]);
      break;
    default:
      Row[Id] = expr(Id, nullptr, false);
    }
  }
  O->addIncoming(B.CreateAdd(O, B.getInt64(1)), B.GetInsertBlock());
  B.CreateBr(Head);

  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  return F;
}

} // namespace

std::unique_ptr<Module> emitKernelModule(const Kernel &K, LLVMContext &Ctx,
                                         const TargetInfo &T) {
  kernel::verifyKernel(K);
  auto M = std::make_unique<Module>("nng." + K.Name, Ctx);
  M->setTargetTriple(T.Triple);
  M->setDataLayout(T.DataLayout);
  Emitter(K, Ctx, *M).emit(T);
  std::string Msg;
  raw_string_ostream OS(Msg);
  if (verifyModule(*M, &OS))
    throw Error(
        ErrorKind::Internal,
        "kernel JIT: the LLVM IR of kernel @" + K.Name +
            " does not verify (a bug in the code generator): " + OS.str());
  return M;
}

} // namespace nng::backends::cpu::jit
