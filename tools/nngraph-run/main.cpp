//===- main.cpp - nngraph-run: run a model on deterministic inputs --------===//
//
// The program is the library's driver (tools/lib/RunDriver.cpp); see
// `nngraph-run --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/RunDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runRunDriver({argv, argv + argc}, std::cout, std::cerr);
}
