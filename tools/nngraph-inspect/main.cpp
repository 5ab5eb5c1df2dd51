//===- main.cpp - nngraph-inspect: what a model holds and costs -----------===//
//
// The program is the library's driver (tools/lib/InspectDriver.cpp); see
// `nngraph-inspect --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/InspectDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runInspectDriver({argv, argv + argc}, std::cout,
                                      std::cerr);
}
