//===- main.cpp - nngraph-bench: latency, throughput, memory of a model ---===//
//
// The program is the library's driver (tools/lib/BenchDriver.cpp); see
// `nngraph-bench --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/BenchDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runBenchDriver({argv, argv + argc}, std::cout, std::cerr);
}
