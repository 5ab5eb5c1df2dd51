//===- JitEngine.cpp - KernelJit: LLVM O3, object code, ORC LLJIT ---------===//
//
// KernelJit detects the host (CPU name and features through ORC's
// JITTargetMachineBuilder), owns one LLJIT and one TargetMachine, and turns
// a kernel into a JitKernel: the same compiled object when an equal kernel
// was compiled before in the process; else the object from the disk cache; else
// the kernel's LLVM module, optimized with the new pass manager's O3 pipeline,
// compiled to an object file (stored in the cache). Each kernel's object is
// linked into its own JITDylib, removed when the last JitKernel using it
// goes away. Every LLVM failure becomes an nng::Error.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/KernelJit.h"

#include "CodeGen.h"
#include "ObjectCache.h"

#include "nngraph/runtime/Error.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>

namespace nng::backends::cpu {

using namespace llvm;

namespace {

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - T0)
      .count();
}

[[noreturn]] void failLLVM(const std::string &What, llvm::Error E) {
  throw nng::Error(ErrorKind::Internal,
                   "kernel JIT: " + What + ": " + toString(std::move(E)) +
                       " (LLVM " LLVM_VERSION_STRING
                       "; rebuild with -DNNGRAPH_ENABLE_LLVM=OFF to run "
                       "without the JIT)");
}

template <typename T> T unwrap(Expected<T> V, const std::string &What) {
  if (!V)
    failLLVM(What, V.takeError());
  return std::move(*V);
}

} // namespace

bool kernelJitAvailable() { return true; }

struct KernelJit::Impl {
  std::mutex Mu;
  std::shared_ptr<orc::LLJIT> J;
  std::unique_ptr<TargetMachine> TM;
  jit::TargetInfo Target;
  jit::ObjectCache Cache{""};
  JitStats Stats;
  /// Kernels compiled in this process by printed form; past MaxLive, the
  /// ones nobody else holds are dropped.
  std::unordered_map<std::string, std::shared_ptr<const JitKernel>> Live;
  static constexpr size_t MaxLive = 512;
  uint64_t NextDylib = 0;

  explicit Impl(const JitOptions &O);
  std::string cacheKey(const std::string &Text) const;
  std::unique_ptr<Module> module(const kernel::Kernel &K, LLVMContext &Ctx,
                                 bool Optimize);
  std::string objectOf(Module &M, CodeGenFileType Kind);
  /// Links Object into a new JITDylib; null entry on failure (Err set).
  JitKernel::EntryFn link(const std::string &Object, orc::JITDylib *&JD,
                          std::string &Err);
};

KernelJit::Impl::Impl(const JitOptions &O) {
  static std::once_flag Init;
  std::call_once(Init, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
  auto JTMB = unwrap(orc::JITTargetMachineBuilder::detectHost(),
                     "cannot detect the host CPU");
  JTMB.setCodeGenOptLevel(CodeGenOptLevel::Aggressive);
  // Position-independent code with the small code model: the object's
  // references to its constants are PC-relative, so it links anywhere.
  JTMB.setRelocationModel(Reloc::PIC_);
  JTMB.setCodeModel(CodeModel::Small);
  std::vector<std::string> Features = JTMB.getFeatures().getFeatures();
  std::sort(Features.begin(), Features.end());
  std::string FS;
  for (const std::string &F : Features)
    FS += (FS.empty() ? "" : ",") + F;
  JTMB.getFeatures() = SubtargetFeatures(FS);
  TM = unwrap(JTMB.createTargetMachine(), "cannot create the target machine");
  Target.Triple = JTMB.getTargetTriple().str();
  Target.CPU = JTMB.getCPU();
  Target.Features = FS;
  Target.DataLayout = TM->createDataLayout().getStringRepresentation();
  Target.PreferWide =
      std::find(Features.begin(), Features.end(), "+avx512f") != Features.end();
  J = unwrap(orc::LLJITBuilder().setJITTargetMachineBuilder(JTMB).create(),
             "cannot create the ORC LLJIT");
  std::string Dir =
      O.DiskCache
          ? (O.CacheDir.empty() ? jit::ObjectCache::defaultDir() : O.CacheDir)
          : std::string();
  Cache = jit::ObjectCache(Dir);
}

std::string KernelJit::Impl::cacheKey(const std::string &Text) const {
  return Text + "--\ntriple " + Target.Triple + "\ncpu " + Target.CPU +
         "\nfeatures " + Target.Features +
         "\nllvm " LLVM_VERSION_STRING "\ncodegen " +
         std::to_string(jit::CodeGenVersion) + "\n";
}

std::unique_ptr<Module> KernelJit::Impl::module(const kernel::Kernel &K,
                                                LLVMContext &Ctx,
                                                bool Optimize) {
  std::unique_ptr<Module> M = jit::emitKernelModule(K, Ctx, Target);
  if (!Optimize)
    return M;
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PipelineTuningOptions PTO;
  PTO.LoopVectorization = true;
  PTO.SLPVectorization = true;
  PassBuilder PB(TM.get(), PTO);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  ModulePassManager MPM =
      PB.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  MPM.run(*M, MAM);
  return M;
}

std::string KernelJit::Impl::objectOf(Module &M, CodeGenFileType Kind) {
  SmallVector<char, 0> Buf;
  raw_svector_ostream OS(Buf);
  legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, OS, nullptr, Kind))
    throw nng::Error(ErrorKind::Internal,
                     "kernel JIT: the target machine cannot emit this file "
                     "type for " +
                         Target.Triple);
  PM.run(M);
  return std::string(Buf.begin(), Buf.end());
}

JitKernel::EntryFn KernelJit::Impl::link(const std::string &Object,
                                         orc::JITDylib *&JD, std::string &Err) {
  JD = nullptr;
  auto D = J->createJITDylib("nng.kernel." + std::to_string(NextDylib++));
  if (!D) {
    Err = toString(D.takeError());
    return nullptr;
  }
  JD = &*D;
  if (llvm::Error E = J->addObjectFile(
          *JD, MemoryBuffer::getMemBufferCopy(Object, "nng.kernel.o"))) {
    Err = toString(std::move(E));
    return nullptr;
  }
  auto Sym = J->lookup(*JD, jit::EntryName);
  if (!Sym) {
    Err = toString(Sym.takeError());
    return nullptr;
  }
  return Sym->toPtr<JitKernel::EntryFn>();
}

KernelJit::KernelJit(JitOptions O) : P(std::make_unique<Impl>(O)) {}
KernelJit::~KernelJit() = default;

KernelJit &KernelJit::global() {
  static KernelJit *G = new KernelJit(); // Never destroyed: kernels outlive.
  return *G;
}

std::shared_ptr<const JitKernel> KernelJit::compile(const kernel::Kernel &K) {
  kernel::verifyKernel(K);
  std::string Text = kernel::printKernel(K);
  std::lock_guard<std::mutex> L(P->Mu);
  if (auto It = P->Live.find(Text); It != P->Live.end()) {
    ++P->Stats.MemoryHits;
    return It->second;
  }
  auto T0 = std::chrono::steady_clock::now();
  std::string Key = P->cacheKey(Text);
  std::string Object;
  bool FromCache = false;
  switch (P->Cache.load(Key, Object)) {
  case jit::ObjectCache::Lookup::Hit:
    FromCache = true;
    P->Stats.LoadMs += msSince(T0);
    break;
  case jit::ObjectCache::Lookup::Corrupt:
    ++P->Stats.CorruptEntries;
    break;
  case jit::ObjectCache::Lookup::Miss:
    break;
  }
  auto Compile = [&] {
    auto TC = std::chrono::steady_clock::now();
    LLVMContext Ctx;
    std::unique_ptr<Module> M = P->module(K, Ctx, true);
    Object = P->objectOf(*M, CodeGenFileType::ObjectFile);
    ++P->Stats.Compiled;
    P->Stats.CompileMs += msSince(TC);
    if (P->Cache.enabled() && !P->Cache.store(Key, Object))
      ++P->Stats.WriteFailures;
  };
  if (!FromCache)
    Compile();
  auto TL = std::chrono::steady_clock::now();
  orc::JITDylib *JD = nullptr;
  std::string Err;
  JitKernel::EntryFn Fn = P->link(Object, JD, Err);
  auto Drop = [&] {
    if (JD)
      consumeError(P->J->getExecutionSession().removeJITDylib(*JD));
    JD = nullptr;
  };
  if (!Fn && FromCache) {
    // A cache entry that passed the checks but does not link: rebuild it.
    Drop();
    ++P->Stats.CorruptEntries;
    FromCache = false;
    Compile();
    TL = std::chrono::steady_clock::now();
    Fn = P->link(Object, JD, Err);
  }
  if (!Fn) {
    Drop();
    throw nng::Error(ErrorKind::Internal,
                     "kernel JIT: cannot link kernel @" + K.Name + ": " + Err);
  }
  P->Stats.LinkMs += msSince(TL);
  if (FromCache)
    ++P->Stats.DiskHits;
  std::shared_ptr<orc::LLJIT> J = P->J;
  std::shared_ptr<void> Owner(JD, [J](void *D) {
    consumeError(J->getExecutionSession().removeJITDylib(
        *static_cast<orc::JITDylib *>(D)));
  });
  std::shared_ptr<const JitKernel> Result(
      new JitKernel(K, Fn, std::move(Owner), FromCache, msSince(T0)));
  if (P->Live.size() >= Impl::MaxLive)
    std::erase_if(P->Live,
                  [](const auto &E) { return E.second.use_count() == 1; });
  P->Live[Text] = Result;
  return Result;
}

std::string KernelJit::llvmIR(const kernel::Kernel &K, bool Optimized) {
  std::lock_guard<std::mutex> L(P->Mu);
  LLVMContext Ctx;
  std::unique_ptr<Module> M = P->module(K, Ctx, Optimized);
  std::string S;
  raw_string_ostream OS(S);
  M->print(OS, nullptr);
  return OS.str();
}

std::string KernelJit::assembly(const kernel::Kernel &K) {
  std::lock_guard<std::mutex> L(P->Mu);
  LLVMContext Ctx;
  std::unique_ptr<Module> M = P->module(K, Ctx, true);
  return P->objectOf(*M, CodeGenFileType::AssemblyFile);
}

JitStats KernelJit::stats() const {
  std::lock_guard<std::mutex> L(P->Mu);
  return P->Stats;
}

void KernelJit::resetStats() {
  std::lock_guard<std::mutex> L(P->Mu);
  P->Stats = JitStats();
}

std::string KernelJit::cacheDir() const { return P->Cache.dir(); }
std::string KernelJit::hostCPU() const { return P->Target.CPU; }
std::string KernelJit::hostFeatures() const { return P->Target.Features; }

} // namespace nng::backends::cpu
