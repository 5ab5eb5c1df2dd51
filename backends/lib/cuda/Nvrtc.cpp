//===- Nvrtc.cpp - Compiling generated CUDA C with NVRTC ------------------===//
//
// compileWithNvrtc (CudaCodeGen.h): one NVRTC program per source, C++17,
// the toolkit's include folder for cuda_fp16.h / cuda_bf16.h, a cubin for
// sm_XX targets and PTX for compute_XX. Builds without the CUDA toolkit
// say so when asked to compile.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cuda/CudaCodeGen.h"

#include "nngraph/runtime/BuildConfig.h"
#include "nngraph/runtime/Error.h"

#if NNGRAPH_HAVE_CUDA
#include <nvrtc.h>
#endif

#include <cstring>
#include <sstream>
#include <vector>

namespace nng::backends::cuda {

bool nvrtcAvailable() { return NNGRAPH_HAVE_CUDA != 0; }

#if NNGRAPH_HAVE_CUDA

namespace {

/// The source with line numbers (NVRTC's log refers to them).
std::string numbered(const std::string &Code) {
  std::istringstream IS(Code);
  std::ostringstream OS;
  std::string Line;
  for (int N = 1; std::getline(IS, Line); ++N)
    OS << N << ": " << Line << "\n";
  return OS.str();
}

void check(nvrtcResult R, const char *What) {
  if (R != NVRTC_SUCCESS)
    fail(ErrorKind::Internal, "NVRTC ", What, ": ", nvrtcGetErrorString(R));
}

} // namespace

std::string compileWithNvrtc(const CudaKernelSource &S,
                             const std::string &Arch) {
  nvrtcProgram P;
  check(nvrtcCreateProgram(&P, S.Code.c_str(), (S.Entry + ".cu").c_str(), 0,
                           nullptr, nullptr),
        "nvrtcCreateProgram");
  std::string ArchOpt = "--gpu-architecture=" + Arch;
  std::string Include = std::string("--include-path=") + NNGRAPH_CUDA_INCLUDE_DIR;
  std::vector<const char *> Opts = {ArchOpt.c_str(), Include.c_str(),
                                    "--std=c++17", "--fmad=false"};
  nvrtcResult R =
      nvrtcCompileProgram(P, static_cast<int>(Opts.size()), Opts.data());
  if (R != NVRTC_SUCCESS) {
    size_t LogSize = 0;
    nvrtcGetProgramLogSize(P, &LogSize);
    std::string Log(LogSize, '\0');
    nvrtcGetProgramLog(P, Log.data());
    Log.resize(std::strlen(Log.c_str())); // (LogSize counts the NUL.)
    nvrtcDestroyProgram(&P);
    fail(ErrorKind::Internal, "NVRTC could not compile kernel ", S.Entry,
         " for ", Arch, " (", nvrtcGetErrorString(R), "):\n", Log,
         "\nsource:\n", numbered(S.Code));
  }
  std::string Binary;
  bool Cubin = Arch.rfind("sm_", 0) == 0;
  size_t Size = 0;
  if (Cubin) {
    check(nvrtcGetCUBINSize(P, &Size), "nvrtcGetCUBINSize");
    Binary.resize(Size);
    check(nvrtcGetCUBIN(P, Binary.data()), "nvrtcGetCUBIN");
  } else {
    check(nvrtcGetPTXSize(P, &Size), "nvrtcGetPTXSize");
    Binary.resize(Size);
    check(nvrtcGetPTX(P, Binary.data()), "nvrtcGetPTX");
  }
  nvrtcDestroyProgram(&P);
  return Binary;
}

#else

std::string compileWithNvrtc(const CudaKernelSource &S, const std::string &) {
  fail(ErrorKind::Unsupported, "cannot compile CUDA kernel ", S.Entry,
       ": this build has no CUDA toolkit (NNGRAPH_ENABLE_CUDA=OFF or "
       "/usr/local/cuda missing)");
}

#endif

} // namespace nng::backends::cuda
