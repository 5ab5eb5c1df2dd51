//===- cuda_bundle_run.cpp - Runs a CUDA device bundle on a GPU -----------===//
//
// The device half of the CUDA device check: reads a bundle written by
// nngraph-cuda-bundle (format: CudaBundle.h), and for each kernel loads its
// cubin, uploads the inputs, launches it (grid-stride over rows, 128
// threads a block), copies the outputs back and compares them with the
// interpreter's (i32 exactly, floats within the bundle's tolerance; NaN
// matches NaN). One line per kernel with the largest absolute, relative and
// ulp error and the share of bit-exact elements, then "N passed, N failed";
// exit status 1 on any failure. Without a CUDA driver or device it prints
// "SKIPPED: <reason>" and exits 0.
//
// It depends on nothing but the C and C++ libraries: the driver API comes
// from dlopen("libcuda.so.1") (cuda.h only gives the types), so a build with
// -static-libstdc++ -static-libgcc runs on any machine with the NVIDIA
// driver and a glibc as new as the build's.
//
//   cuda_bundle_run BUNDLE [--list] [--verbose] [--only SUBSTRING]...
//
// BUNDLE is the bundle folder or its kernels.nngcb. --list prints the
// kernels without touching a device; --verbose prints every output buffer.
//
//===----------------------------------------------------------------------===//

#include "CudaBundle.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <type_traits>

using namespace nng::cudabundle;

namespace {

/// The driver API entry points this program uses, looked up by their
/// versioned names.
struct Driver {
  decltype(&::cuInit) Init = nullptr;
  decltype(&::cuDriverGetVersion) DriverGetVersion = nullptr;
  decltype(&::cuDeviceGetCount) DeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) PrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) PrimaryCtxRelease = nullptr;
  decltype(&::cuDevicePrimaryCtxReset) PrimaryCtxReset = nullptr;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) CtxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuMemAlloc) MemAlloc = nullptr;
  decltype(&::cuMemFree) MemFree = nullptr;
  decltype(&::cuMemcpyHtoD) MemcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH) MemcpyDtoH = nullptr;
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuEventCreate) EventCreate = nullptr;
  decltype(&::cuEventRecord) EventRecord = nullptr;
  decltype(&::cuEventSynchronize) EventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) EventElapsedTime = nullptr;
  decltype(&::cuEventDestroy) EventDestroy = nullptr;

  /// Loads libcuda.so.1; false with Why set when it or a symbol is missing.
  bool load(std::string &Why) {
    void *Lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!Lib) {
      const char *E = dlerror();
      Why = std::string("no CUDA driver (dlopen libcuda.so.1: ") +
            (E ? E : "?") + ")";
      return false;
    }
    bool Ok = true;
    auto Sym = [&](auto &Fn, const char *Name, bool Required = true) {
      Fn = reinterpret_cast<std::remove_reference_t<decltype(Fn)>>(
          dlsym(Lib, Name));
      if (!Fn && Required) {
        Why += std::string(Why.empty() ? "" : ", ") + Name;
        Ok = false;
      }
    };
    Sym(Init, "cuInit");
    Sym(DriverGetVersion, "cuDriverGetVersion");
    Sym(DeviceGetCount, "cuDeviceGetCount");
    Sym(DeviceGet, "cuDeviceGet");
    Sym(DeviceGetName, "cuDeviceGetName");
    Sym(DeviceGetAttribute, "cuDeviceGetAttribute");
    Sym(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    Sym(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    Sym(PrimaryCtxReset, "cuDevicePrimaryCtxReset_v2");
    Sym(CtxSetCurrent, "cuCtxSetCurrent");
    Sym(CtxSynchronize, "cuCtxSynchronize");
    Sym(ModuleLoadData, "cuModuleLoadData");
    Sym(ModuleGetFunction, "cuModuleGetFunction");
    Sym(ModuleUnload, "cuModuleUnload");
    Sym(MemAlloc, "cuMemAlloc_v2");
    Sym(MemFree, "cuMemFree_v2");
    Sym(MemcpyHtoD, "cuMemcpyHtoD_v2");
    Sym(MemcpyDtoH, "cuMemcpyDtoH_v2");
    Sym(LaunchKernel, "cuLaunchKernel");
    Sym(GetErrorName, "cuGetErrorName");
    // Timing is optional (cuEventElapsedTime_v2 came with CUDA 12.8).
    Sym(EventCreate, "cuEventCreate", false);
    Sym(EventRecord, "cuEventRecord", false);
    Sym(EventSynchronize, "cuEventSynchronize", false);
    Sym(EventElapsedTime, "cuEventElapsedTime_v2", false);
    if (!EventElapsedTime)
      Sym(EventElapsedTime, "cuEventElapsedTime", false);
    Sym(EventDestroy, "cuEventDestroy_v2", false);
    if (!Ok)
      Why = "the CUDA driver lacks " + Why;
    return Ok;
  }
  bool canTime() const {
    return EventCreate && EventRecord && EventSynchronize && EventElapsedTime &&
           EventDestroy;
  }
  std::string name(CUresult R) const {
    const char *S = nullptr;
    if (GetErrorName)
      GetErrorName(R, &S);
    return S ? S : "CUDA error " + std::to_string(static_cast<int>(R));
  }
};

Driver Cu;

/// A failed driver call: what, and the error's name.
struct CudaFailure {
  std::string What;
  CUresult R;
};

void check(CUresult R, const char *What) {
  if (R != CUDA_SUCCESS)
    throw CudaFailure{What, R};
}

// --- Comparison -------------------------------------------------------------

float halfToFloat(uint16_t H) {
  uint32_t Sign = (H & 0x8000u) << 16, E = (H >> 10) & 0x1f, M = H & 0x3ff;
  if (E == 0) {
    float F = std::ldexp(static_cast<float>(M), -24);
    return Sign ? -F : F;
  }
  uint32_t Bits = Sign | (E == 31 ? 0x7f800000u | (M << 13)
                                  : ((E + 112) << 23) | (M << 13));
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

/// Element I of bytes of type T as float, and its ordered integer key (for
/// distances in ulp of T).
float element(const std::string &B, ElemType T, size_t I, int64_t &Key) {
  if (T == ElemType::F32 || T == ElemType::I32) {
    int32_t Bits;
    std::memcpy(&Bits, B.data() + 4 * I, 4);
    Key = Bits < 0 ? int64_t(INT32_MIN) - Bits : Bits;
    float F;
    std::memcpy(&F, &Bits, 4);
    return F;
  }
  uint16_t H;
  std::memcpy(&H, B.data() + 2 * I, 2);
  Key = H & 0x8000u ? -int64_t(H & 0x7fffu) : int64_t(H);
  uint32_t Wide = uint32_t(H) << 16;
  float F;
  std::memcpy(&F, &Wide, 4);
  return T == ElemType::F16 ? halfToFloat(H) : F;
}

/// How one output agrees with its expected bytes.
struct Agreement {
  size_t Count = 0, Exact = 0, Bad = 0;
  double MaxAbs = 0, MaxRel = 0;
  int64_t MaxUlp = 0;
  std::string FirstBad;
};

Agreement compare(const BundleBuffer &B, const std::string &Got) {
  Agreement A;
  A.Count = B.Expected.size() / elemSize(B.Type);
  for (size_t I = 0; I < A.Count; ++I) {
    int64_t KG, KE;
    double G = element(Got, B.Type, I, KG);
    double E = element(B.Expected, B.Type, I, KE);
    bool Ok;
    double Abs = 0;
    if (B.Type == ElemType::I32) {
      int32_t GI, EI;
      std::memcpy(&GI, Got.data() + 4 * I, 4);
      std::memcpy(&EI, B.Expected.data() + 4 * I, 4);
      Ok = GI == EI;
      Abs = std::fabs(double(GI) - double(EI));
      A.Exact += Ok;
      A.MaxUlp = std::max<int64_t>(A.MaxUlp, static_cast<int64_t>(Abs));
      G = GI, E = EI;
    } else if (std::isnan(E) || std::isnan(G)) {
      Ok = std::isnan(E) && std::isnan(G);
      A.Exact += Ok;
      if (!Ok)
        A.MaxUlp = INT64_MAX;
    } else {
      Abs = std::fabs(G - E);
      if (std::isinf(E) || std::isinf(G))
        Ok = G == E, Abs = Ok ? 0 : INFINITY;
      else
        Ok = Abs <= B.Atol + B.Rtol * std::fabs(E);
      int64_t Ulp = G == E ? 0 : std::llabs(KG - KE);
      A.Exact += Ulp == 0;
      A.MaxUlp = std::max(A.MaxUlp, Ulp);
      if (E != 0 && std::isfinite(Abs))
        A.MaxRel = std::max(A.MaxRel, Abs / std::fabs(E));
    }
    A.MaxAbs = std::max(A.MaxAbs, Abs);
    if (!Ok && A.Bad++ == 0) {
      char Buf[160];
      if (B.Type == ElemType::I32)
        std::snprintf(Buf, sizeof(Buf), "[%zu]: got %.0f, expected %.0f", I, G,
                      E);
      else
        std::snprintf(Buf, sizeof(Buf), "[%zu]: got %.9g, expected %.9g", I, G,
                      E);
      A.FirstBad = Buf;
    }
  }
  return A;
}

std::string ulpText(int64_t U) {
  return U == INT64_MAX ? "nan" : std::to_string(U);
}

// --- Running ----------------------------------------------------------------

struct Device {
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  int SMs = 1;
};

/// Runs K once to check it and once to time it; false on a mismatch. A
/// driver failure throws CudaFailure.
bool runKernel(const Device &D, const BundleKernel &K, bool Verbose,
               std::string &Line, std::vector<std::string> &Details) {
  // Aligned copies: the cubin image and the argument struct.
  std::vector<uint64_t> Image((K.Cubin.size() + 7) / 8 + 1, 0);
  std::memcpy(Image.data(), K.Cubin.data(), K.Cubin.size());
  std::vector<uint64_t> Args(K.Args.size() / 8);
  std::memcpy(Args.data(), K.Args.data(), K.Args.size());
  CUmodule Mod = nullptr;
  check(Cu.ModuleLoadData(&Mod, Image.data()), "cuModuleLoadData");
  std::vector<CUdeviceptr> Ptrs(K.Buffers.size(), 0);
  auto Cleanup = [&] {
    for (CUdeviceptr P : Ptrs)
      if (P)
        Cu.MemFree(P);
    Cu.ModuleUnload(Mod);
  };
  float Ms = -1;
  try {
    CUfunction Fn;
    check(Cu.ModuleGetFunction(&Fn, Mod, K.Entry.c_str()),
          "cuModuleGetFunction");
    for (size_t B = 0; B < K.Buffers.size(); ++B) {
      const std::string &Init = K.Buffers[B].Initial;
      check(Cu.MemAlloc(&Ptrs[B], std::max<size_t>(Init.size(), 16)),
            "cuMemAlloc");
      if (!Init.empty())
        check(Cu.MemcpyHtoD(Ptrs[B], Init.data(), Init.size()), "cuMemcpyHtoD");
    }
    std::vector<void *> Params;
    for (CUdeviceptr &P : Ptrs)
      Params.push_back(&P);
    Params.push_back(Args.data());
    const unsigned Block = 128;
    int64_t Rows = K.rows();
    int64_t Cap = K.MaxGrid ? K.MaxGrid : int64_t(D.SMs) * 16;
    unsigned Grid = static_cast<unsigned>(
        std::clamp<int64_t>((Rows + Block - 1) / Block, 1, Cap));
    auto Launch = [&] {
      check(Cu.LaunchKernel(Fn, Grid, 1, 1, Block, 1, 1, 0, nullptr,
                            Params.data(), nullptr),
            "cuLaunchKernel");
    };
    Launch();
    check(Cu.CtxSynchronize(), "cuCtxSynchronize after the launch");
    // The second run, timed, writes the same outputs.
    if (Cu.canTime()) {
      CUevent Start, Stop;
      check(Cu.EventCreate(&Start, CU_EVENT_DEFAULT), "cuEventCreate");
      check(Cu.EventCreate(&Stop, CU_EVENT_DEFAULT), "cuEventCreate");
      check(Cu.EventRecord(Start, nullptr), "cuEventRecord");
      Launch();
      check(Cu.EventRecord(Stop, nullptr), "cuEventRecord");
      check(Cu.EventSynchronize(Stop), "cuEventSynchronize");
      check(Cu.EventElapsedTime(&Ms, Start, Stop), "cuEventElapsedTime");
      Cu.EventDestroy(Start);
      Cu.EventDestroy(Stop);
    } else {
      auto T0 = std::chrono::steady_clock::now();
      Launch();
      check(Cu.CtxSynchronize(), "cuCtxSynchronize");
      Ms = std::chrono::duration<float, std::milli>(
               std::chrono::steady_clock::now() - T0)
               .count();
    }
    bool Pass = true;
    Agreement All;
    std::string Worst;
    for (size_t B = 0; B < K.Buffers.size(); ++B) {
      const BundleBuffer &Buf = K.Buffers[B];
      if (!Buf.IsOutput)
        continue;
      std::string Got(Buf.Initial.size(), '\0');
      check(Cu.MemcpyDtoH(Got.data(), Ptrs[B], Got.size()), "cuMemcpyDtoH");
      Agreement A = compare(Buf, Got);
      Pass &= A.Bad == 0;
      if (Worst.empty() || A.MaxUlp > All.MaxUlp)
        Worst = Buf.Name;
      All.Count += A.Count, All.Exact += A.Exact, All.Bad += A.Bad;
      All.MaxAbs = std::max(All.MaxAbs, A.MaxAbs);
      All.MaxRel = std::max(All.MaxRel, A.MaxRel);
      All.MaxUlp = std::max(All.MaxUlp, A.MaxUlp);
      char Buf2[512];
      std::snprintf(
          Buf2, sizeof(Buf2),
          "    %%%s %s[%zu]: max_abs %.3g max_rel %.3g max_ulp %s "
          "bit-exact %zu/%zu (rtol %g atol %g)%s%s%s",
          Buf.Name.c_str(), elemName(Buf.Type), A.Count, A.MaxAbs, A.MaxRel,
          ulpText(A.MaxUlp).c_str(), A.Exact, A.Count, Buf.Rtol, Buf.Atol,
          A.Bad ? "; " : "", A.Bad ? std::to_string(A.Bad).c_str() : "",
          A.Bad ? (" out of tolerance, first " + A.FirstBad).c_str() : "");
      if (Verbose || A.Bad)
        Details.push_back(Buf2);
    }
    char L[512];
    std::snprintf(
        L, sizeof(L),
        "%s %-18s rows %-6lld grid %ux%u  %8.4f ms  max_abs %.3g "
        "max_rel %.3g max_ulp %s (%%%s)  bit-exact %.2f%%",
        Pass ? "PASS" : "FAIL", K.Label.c_str(), static_cast<long long>(Rows),
        Grid, Block, double(Ms), All.MaxAbs, All.MaxRel,
        ulpText(All.MaxUlp).c_str(), Worst.c_str(),
        All.Count ? 100.0 * double(All.Exact) / double(All.Count) : 100.0);
    Line = L;
    Cleanup();
    return Pass;
  } catch (...) {
    Cleanup();
    throw;
  }
}

std::string readFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  if (!F)
    throw std::runtime_error("cannot open " + Path);
  std::ostringstream OS;
  OS << F.rdbuf();
  return OS.str();
}

int run(int Argc, char **Argv) {
  std::string Path;
  bool List = false, Verbose = false;
  std::vector<std::string> Only;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--list")
      List = true;
    else if (A == "--verbose")
      Verbose = true;
    else if (A == "--only" && I + 1 < Argc)
      Only.push_back(Argv[++I]);
    else if (!A.empty() && A[0] != '-' && Path.empty())
      Path = A;
    else {
      std::fprintf(stderr, "usage: cuda_bundle_run BUNDLE [--list] "
                           "[--verbose] [--only SUBSTRING]...\n");
      return 2;
    }
  }
  if (Path.empty()) {
    std::fprintf(stderr, "cuda_bundle_run: no bundle given\n");
    return 2;
  }
  if (Path.size() < 6 || Path.substr(Path.size() - 6) != ".nngcb")
    Path += std::string("/") + BundleFileName;
  std::string Bytes = readFile(Path);
  Bundle B = parseBundle(Bytes);
  std::vector<const BundleKernel *> Todo;
  for (const BundleKernel &K : B.Kernels) {
    bool Wanted = Only.empty();
    for (const std::string &S : Only)
      Wanted |= K.Label.find(S) != std::string::npos;
    if (Wanted)
      Todo.push_back(&K);
  }
  std::printf("bundle %s: %zu kernels, %zu bytes\n", Path.c_str(),
              B.Kernels.size(), Bytes.size());
  if (List) {
    for (const BundleKernel *K : Todo)
      std::printf("%s %s %s rows %lld, %zu buffers, cubin %zu bytes\n",
                  K->Label.c_str(), K->Entry.c_str(), K->Arch.c_str(),
                  static_cast<long long>(K->rows()), K->Buffers.size(),
                  K->Cubin.size());
    return 0;
  }
  std::string Why;
  if (!Cu.load(Why)) {
    if (Why.rfind("no CUDA driver", 0) != 0)
      throw std::runtime_error(Why); // A driver too old: an error.
    std::printf("SKIPPED: %s\n", Why.c_str());
    return 0;
  }
  if (CUresult R = Cu.Init(0); R != CUDA_SUCCESS) {
    std::printf("SKIPPED: no usable CUDA device (cuInit: %s)\n",
                Cu.name(R).c_str());
    return 0;
  }
  int Count = 0, Version = 0;
  Cu.DriverGetVersion(&Version);
  if (Cu.DeviceGetCount(&Count) != CUDA_SUCCESS || Count == 0) {
    std::printf("SKIPPED: no CUDA device (driver %d)\n", Version);
    return 0;
  }
  Device D;
  char Name[256] = {0};
  int Major = 0, Minor = 0;
  check(Cu.DeviceGet(&D.Dev, 0), "cuDeviceGet");
  Cu.DeviceGetName(Name, sizeof(Name) - 1, D.Dev);
  Cu.DeviceGetAttribute(&Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                        D.Dev);
  Cu.DeviceGetAttribute(&Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                        D.Dev);
  Cu.DeviceGetAttribute(&D.SMs, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                        D.Dev);
  std::printf("device 0 of %d: %s, sm_%d%d, %d SMs, driver API %d\n", Count,
              Name, Major, Minor, D.SMs, Version);
  auto Attach = [&] {
    check(Cu.PrimaryCtxRetain(&D.Ctx, D.Dev), "cuDevicePrimaryCtxRetain");
    check(Cu.CtxSetCurrent(D.Ctx), "cuCtxSetCurrent");
  };
  Attach();
  int Passed = 0, Failed = 0;
  for (const BundleKernel *K : Todo) {
    std::string Line;
    std::vector<std::string> Details;
    bool Ok = false;
    try {
      Ok = runKernel(D, *K, Verbose, Line, Details);
    } catch (const CudaFailure &F) {
      Line = "FAIL " + K->Label + ": " + F.What + ": " + Cu.name(F.R);
      // A launch failure leaves the context unusable: start a fresh one.
      Cu.PrimaryCtxRelease(D.Dev);
      Cu.PrimaryCtxReset(D.Dev);
      Attach();
    }
    (Ok ? Passed : Failed)++;
    std::printf("%s\n", Line.c_str());
    for (const std::string &S : Details)
      std::printf("%s\n", S.c_str());
    std::fflush(stdout);
  }
  Cu.PrimaryCtxRelease(D.Dev);
  std::printf("%d passed, %d failed\n", Passed, Failed);
  return Failed ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) {
  try {
    return run(Argc, Argv);
  } catch (const CudaFailure &F) {
    std::fprintf(stderr, "cuda_bundle_run: %s: %s\n", F.What.c_str(),
                 Cu.name(F.R).c_str());
  } catch (const std::exception &E) {
    std::fprintf(stderr, "cuda_bundle_run: %s\n", E.what());
  }
  return 1;
}
