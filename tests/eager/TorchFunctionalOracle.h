//===- TorchFunctionalOracle.h - PyTorch as the oracle of tensor ops ------===//
//
// A harness comparing nng tensor ops and nng::F functions with the same
// torch calls. Each case names its inputs, a C++ function of them and the
// equivalent Python expression. run() writes all inputs into one request
// file and runs tests/eager/scripts/torch_functional_oracle.py once with
// Debian's torch ($NNGRAPH_PYTHON, else /usr/bin/python3, else python3),
// keeping torch's answers (cached in the build tree for the next process
// with the identical request); compare() computes one case in C++ (outputs,
// and input gradients of sum(output0 * G) for a fixed pseudo-random G) and
// compares. Without torch, run() returns the skip reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nng::test {

/// One comparison.
struct FunctionalCase {
  std::string Name;
  /// (variable name, tensor); floating tensors listed in Grads get
  /// requires_grad.
  std::vector<std::pair<std::string, Tensor>> Inputs;
  std::vector<std::string> Grads;
  /// The C++ side: outputs from the named inputs (output 0 is
  /// differentiated).
  std::function<std::vector<Tensor>(std::map<std::string, Tensor> &)> Fn;
  /// The Python side: an expression over the input names, torch, F, math.
  std::string Torch;
  double Atol = 1e-5, Rtol = 1e-5;
};

class FunctionalOracle {
public:
  void add(FunctionalCase C) { Cases.push_back(std::move(C)); }
  const std::vector<FunctionalCase> &cases() const { return Cases; }
  /// Runs every case in C++ and in torch; returns a skip reason when no
  /// Python with torch exists (empty on success). Throws on other errors.
  std::string run();
  /// Computes case I in C++; "" when it matches torch, else every
  /// mismatch (one per line).
  std::string compare(size_t I);

private:
  struct Result {
    std::vector<Tensor> Outputs;
    std::map<std::string, Tensor> Grads;
    std::string Error;
  };
  void computeMine(size_t I);
  std::vector<FunctionalCase> Cases;
  std::vector<Result> Mine, Theirs;
};

} // namespace nng::test
