//===- BuildInfo.h - Version and configuration of this build ----*- C++ -*-===//
//
// What a tool prints for --version: the nngraph version and which optional
// dependencies (oneDNN, LLVM, CUDA) the build was configured with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace nng {

/// "0.1.0".
const char *nngraphVersion();
/// "nngraph 0.1.0 (oneDNN: yes, LLVM 19: yes, CUDA: no, OpenMP threads: 2)".
std::string buildDescription();

} // namespace nng
