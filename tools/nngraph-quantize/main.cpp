//===- main.cpp - nngraph-quantize: post-training int8 quantization -------===//
//
// The program is the library's driver (tools/lib/QuantizeDriver.cpp); see
// `nngraph-quantize --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/QuantizeDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runQuantizeDriver({argv, argv + argc}, std::cout,
                                       std::cerr);
}
