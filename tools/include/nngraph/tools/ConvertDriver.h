//===- ConvertDriver.h - The nngraph-convert driver -------------*- C++ -*-===//
//
// nngraph-convert converts state dicts between PyTorch .pt, safetensors and
// .npz by file extension (IN OUT), lists a file's tensors (--list, --json),
// picks a sub-dict of a .pt checkpoint (--select) and remaps keys
// (--strip-prefix, --add-prefix, --rename). With --arch NAME --weights W
// -o MODEL.onnx it instead builds a zoo architecture, loads W into it
// strictly, traces it (batch dim dynamic, "N", unless --batch N) and writes
// the graph as ONNX or .nng. Output is written atomically.
// The whole program lives here so that tests run it in-process; main() only
// forwards to it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nng::tools {

/// Runs nngraph-convert with Args (Args[0] is the program name), writing to
/// Out and Err. Returns the exit status: 0 success, 1 bad input (unreadable
/// or malformed file, bad key path, a dtype the output format cannot hold,
/// a key collision, weights that do not fit --arch, a failed trace; nothing
/// is written), 2 bad command line (including an unknown --arch name).
int runConvertDriver(const std::vector<std::string> &Args, std::ostream &Out,
                     std::ostream &Err);

} // namespace nng::tools
