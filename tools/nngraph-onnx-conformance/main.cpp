//===- main.cpp - nngraph-onnx-conformance: the ONNX backend test suite ---===//
//
// The program is the library's driver (tools/lib/ConformanceDriver.cpp); see
// `nngraph-onnx-conformance --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ConformanceDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runConformanceDriver({argv, argv + argc}, std::cout,
                                          std::cerr);
}
