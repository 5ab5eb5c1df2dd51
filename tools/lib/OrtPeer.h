//===- OrtPeer.h - ONNX Runtime as nngraph-bench's peer process -*- C++ -*-===//
//
// Private to nngraph_tools: starts tools/nngraph-bench/ort_peer.mjs under
// node (ONNX Runtime's npm package onnxruntime-node, CPU execution
// provider) on one model and one set of inputs, then asks it for timed runs
// and for its outputs, so that nngraph-bench --vs-ort can interleave rounds
// of nngraph and ONNX Runtime in one run order on the same inputs. The
// inputs and outputs travel as tensor folders (tensors.json plus one raw
// file per tensor, as tests/ort/tensor_dir.mjs reads and writes them); the
// commands and replies as JSON lines over a socket pair.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace nng::tools {

/// Where and how to start ONNX Runtime.
struct OrtPeerOptions {
  std::string Node;    ///< The node program ("node": looked up on PATH).
  std::string Script;  ///< ort_peer.mjs.
  std::string Model;   ///< The .onnx file.
  std::string WorkDir; ///< An empty folder for the tensor folders.
  int Threads = 2;     ///< intraOpNumThreads.
};

/// A running ort_peer.mjs. The destructor ends the process.
class OrtPeer {
public:
  /// Starts the peer on Inputs (named after the model's inputs). Returns
  /// null and sets Unavailable to the reason (what is missing and how to
  /// install it) when node or onnxruntime-node is missing; throws
  /// nng::Error with the peer's message when ONNX Runtime cannot load the
  /// model.
  static std::unique_ptr<OrtPeer>
  start(const OrtPeerOptions &O, const std::vector<std::string> &InputNames,
        const std::vector<rt::Tensor> &Inputs, std::string &Unavailable);
  ~OrtPeer();

  /// Runs the model N times; returns each run's time in ms.
  std::vector<double> run(int N);
  /// The outputs of the last run, in the model's output order.
  std::vector<rt::Tensor> outputs();
  /// Ends the peer; returns its peak RSS in bytes.
  int64_t quit();

  const std::string &version() const { return Version; }
  double compileMs() const { return CompileMs; }

private:
  OrtPeer() = default;
  /// Sends one command line and reads one JSON reply line (as text); throws
  /// nng::Error with the peer's error or stderr when it fails.
  std::string request(const std::string &Command);
  std::string readLine();
  [[noreturn]] void failWithPeerOutput(const std::string &What);

  OrtPeerOptions Opts;
  int Sock = -1;
  int Pid = -1;
  std::string Pending; ///< Bytes read past the last line.
  std::string ErrPath; ///< The peer's stderr.
  std::string Version;
  double CompileMs = 0;
};

/// Writes Tensors (named Names) to Dir as a tensor folder; throws
/// Error(IO) naming the file that cannot be written.
void writeTensorFolder(const std::string &Dir,
                       const std::vector<std::string> &Names,
                       const std::vector<rt::Tensor> &Tensors);
/// Reads a tensor folder; throws Error(IO/Parse) naming the folder.
std::vector<rt::Tensor> readTensorFolder(const std::string &Dir);

} // namespace nng::tools
