//===- main.cpp - nngraph-convert: convert and inspect weight files -------===//
//
// The program is the library's driver (tools/lib/ConvertDriver.cpp); see
// `nngraph-convert --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ConvertDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runConvertDriver({argv, argv + argc}, std::cout,
                                      std::cerr);
}
