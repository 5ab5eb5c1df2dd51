//===- main.cpp - nngraph-opt: read, verify, transform and print a model --===//
//
// The program is the library's driver (tools/lib/OptDriver.cpp); see
// `nngraph-opt --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/OptDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runOptDriver({argv, argv + argc}, std::cin, std::cout,
                                  std::cerr);
}
