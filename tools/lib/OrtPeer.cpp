//===- OrtPeer.cpp - ONNX Runtime as a peer process of nngraph-bench ------===//
//
// Spawns `node ort_peer.mjs MODEL IN_DIR --threads T` with a socket pair as
// its stdin and stdout (writes use MSG_NOSIGNAL, so a peer that died makes
// an error, not a SIGPIPE) and its stderr in a file of the work folder,
// whose text goes into the messages when the peer fails.
//
//===----------------------------------------------------------------------===//

#include "OrtPeer.h"

#include "nngraph/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace nng::tools {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The status ort_peer.mjs exits with when onnxruntime-node is missing.
constexpr int SkipStatus = 77;
/// How long one reply may take (session creation of a big model included).
constexpr int ReplyTimeoutMs = 600 * 1000;

std::string fileText(const std::string &Path) {
  std::ifstream IS(Path);
  std::stringstream SS;
  SS << IS.rdbuf();
  std::string S = SS.str();
  while (!S.empty() && (S.back() == '\n' || S.back() == ' '))
    S.pop_back();
  return S;
}

/// Waits for Pid; returns its exit status, or -1 when a signal ended it.
int waitExit(int Pid) {
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

} // namespace

void writeTensorFolder(const std::string &Dir,
                       const std::vector<std::string> &Names,
                       const std::vector<rt::Tensor> &Tensors) {
  fs::create_directories(Dir);
  json List = json::array();
  for (size_t I = 0; I < Tensors.size(); ++I) {
    rt::Tensor C = Tensors[I].contiguous();
    std::string File = std::to_string(I) + ".bin";
    fs::path Path = fs::path(Dir) / File;
    std::ofstream OS(Path, std::ios::binary | std::ios::trunc);
    OS.write(static_cast<const char *>(C.rawData()),
             static_cast<std::streamsize>(C.nbytes()));
    if (!OS)
      fail(ErrorKind::IO, "cannot write ", Path.string());
    List.push_back({{"name", Names[I]},
                    {"dtype", std::string(dtypeName(C.dtype()))},
                    {"shape", C.shape().dims()},
                    {"file", File}});
  }
  fs::path Manifest = fs::path(Dir) / "tensors.json";
  std::ofstream OS(Manifest, std::ios::trunc);
  OS << json{{"tensors", List}}.dump(1);
  if (!OS)
    fail(ErrorKind::IO, "cannot write ", Manifest.string());
}

std::vector<rt::Tensor> readTensorFolder(const std::string &Dir) {
  fs::path Manifest = fs::path(Dir) / "tensors.json";
  std::ifstream IS(Manifest);
  if (!IS)
    fail(ErrorKind::IO, "cannot read ", Manifest.string());
  std::vector<rt::Tensor> Out;
  try {
    json J = json::parse(IS);
    for (const json &E : J.at("tensors")) {
      std::string DT = E.at("dtype").get<std::string>();
      std::optional<DType> T = parseDType(DT);
      if (!T)
        fail(ErrorKind::Parse, Manifest.string(), ": unknown dtype '", DT, "'");
      rt::Tensor X = rt::Tensor::empty(
          Shape(E.at("shape").get<std::vector<int64_t>>()), *T);
      fs::path File = fs::path(Dir) / E.at("file").get<std::string>();
      std::ifstream In(File, std::ios::binary);
      In.read(static_cast<char *>(X.rawData()),
              static_cast<std::streamsize>(X.nbytes()));
      if (!In || static_cast<size_t>(In.gcount()) != X.nbytes())
        fail(ErrorKind::IO, File.string(), ": expected ", X.nbytes(), " bytes");
      Out.push_back(std::move(X));
    }
  } catch (const json::exception &E) {
    fail(ErrorKind::Parse, Manifest.string(), ": ", E.what());
  }
  return Out;
}

std::unique_ptr<OrtPeer> OrtPeer::start(
    const OrtPeerOptions &O, const std::vector<std::string> &InputNames,
    const std::vector<rt::Tensor> &Inputs, std::string &Unavailable) {
  if (!fs::exists(O.Script)) {
    Unavailable = "the ONNX Runtime script '" + O.Script +
                  "' does not exist (pass --ort-script PATH or set "
                  "NNGRAPH_ORT_SCRIPT to tools/nngraph-bench/ort_peer.mjs of "
                  "an nngraph checkout)";
    return nullptr;
  }
  std::string InDir = (fs::path(O.WorkDir) / "inputs").string();
  writeTensorFolder(InDir, InputNames, Inputs);

  std::unique_ptr<OrtPeer> P(new OrtPeer());
  P->Opts = O;
  P->ErrPath = (fs::path(O.WorkDir) / "ort_peer.stderr").string();
  int Fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Fds) != 0)
    fail(ErrorKind::IO, "cannot create a socket pair for ONNX Runtime: ",
         std::strerror(errno));
  posix_spawn_file_actions_t Acts;
  posix_spawn_file_actions_init(&Acts);
  posix_spawn_file_actions_adddup2(&Acts, Fds[1], 0);
  posix_spawn_file_actions_adddup2(&Acts, Fds[1], 1);
  posix_spawn_file_actions_addopen(&Acts, 2, P->ErrPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string Threads = std::to_string(O.Threads);
  std::vector<std::string> Args = {O.Node, O.Script,    O.Model,
                                   InDir,  "--threads", Threads};
  std::vector<char *> Argv;
  for (std::string &A : Args)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  pid_t Pid = -1;
  int Err =
      posix_spawnp(&Pid, O.Node.c_str(), &Acts, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&Acts);
  close(Fds[1]);
  if (Err != 0) {
    close(Fds[0]);
    Unavailable = "node (Node.js) cannot be started as '" + O.Node + "' (" +
                  std::strerror(Err) +
                  "); install it (apt-get install nodejs npm, then "
                  "scripts/setup.sh --tests for onnxruntime-node) or set "
                  "NNGRAPH_NODE";
    return nullptr;
  }
  P->Sock = Fds[0];
  P->Pid = Pid;

  std::string Line;
  try {
    Line = P->readLine();
  } catch (const Error &) {
    close(P->Sock);
    P->Sock = -1;
    int Status = waitExit(P->Pid);
    P->Pid = -1;
    if (Status == SkipStatus) {
      Unavailable = "onnxruntime-node cannot be loaded";
      return nullptr;
    }
    if (Status == 127) {
      Unavailable = "node (Node.js) not found as '" + O.Node +
                    "' (apt-get install nodejs npm, then scripts/setup.sh "
                    "--tests; or set NNGRAPH_NODE)";
      return nullptr;
    }
    std::string Out = P->Pending + fileText(P->ErrPath);
    try {
      json J = json::parse(P->Pending);
      Out = J.value("error", Out);
    } catch (const json::exception &) {
    }
    fail(ErrorKind::Unsupported, "ONNX Runtime cannot run '", O.Model, "' (",
         O.Script, " exit status ", Status,
         "): ", Out.empty() ? "it printed nothing" : Out);
  }
  if (Line.rfind("SKIP: ", 0) == 0) { // load_ort.mjs: no onnxruntime-node.
    Unavailable = Line.substr(6);
    return nullptr; // The destructor reaps the peer.
  }
  json J = json::parse(Line, nullptr, false);
  if (J.is_discarded() || !J.value("ready", false)) {
    if (J.is_object() && J.contains("error"))
      fail(ErrorKind::Unsupported, "ONNX Runtime cannot run '", O.Model,
           "': ", J["error"].get<std::string>());
    P->failWithPeerOutput("an unexpected first line '" + Line + "'");
  }
  P->Version = J.value("ort_version", std::string("unknown"));
  P->CompileMs = J.value("compile_ms", 0.0);
  return P;
}

OrtPeer::~OrtPeer() {
  if (Sock >= 0)
    close(Sock); // The peer's stdin ends: it exits.
  if (Pid > 0) {
    kill(Pid, SIGTERM);
    waitExit(Pid);
  }
}

std::string OrtPeer::readLine() {
  for (;;) {
    size_t Nl = Pending.find('\n');
    if (Nl != std::string::npos) {
      std::string Line = Pending.substr(0, Nl);
      Pending.erase(0, Nl + 1);
      return Line;
    }
    pollfd Pfd{Sock, POLLIN, 0};
    int Ready = poll(&Pfd, 1, ReplyTimeoutMs);
    if (Ready < 0 && errno == EINTR)
      continue;
    if (Ready == 0)
      fail(ErrorKind::IO, "ONNX Runtime did not answer within ",
           ReplyTimeoutMs / 1000, " s");
    char Buf[4096];
    ssize_t N = recv(Sock, Buf, sizeof(Buf), 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      fail(ErrorKind::IO, "ONNX Runtime's process ended");
    Pending.append(Buf, static_cast<size_t>(N));
  }
}

void OrtPeer::failWithPeerOutput(const std::string &What) {
  std::string Err = fileText(ErrPath);
  fail(ErrorKind::Internal, "ONNX Runtime (", Opts.Script, ") gave ", What,
       Err.empty() ? "" : "; its stderr: " + Err);
}

std::string OrtPeer::request(const std::string &Command) {
  std::string Msg = Command + "\n";
  size_t Sent = 0;
  while (Sent < Msg.size()) {
    ssize_t N = send(Sock, Msg.data() + Sent, Msg.size() - Sent, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      failWithPeerOutput("no answer to '" + Command + "' (it ended)");
    Sent += static_cast<size_t>(N);
  }
  std::string Line;
  try {
    Line = readLine();
  } catch (const Error &E) {
    failWithPeerOutput(std::string("no answer to '") + Command + "' (" +
                       E.message() + ")");
  }
  json J = json::parse(Line, nullptr, false);
  if (J.is_object() && J.contains("error"))
    fail(ErrorKind::Unsupported, "ONNX Runtime failed on '", Opts.Model,
         "': ", J["error"].get<std::string>());
  if (J.is_discarded())
    failWithPeerOutput("an unreadable answer '" + Line + "' to '" + Command +
                       "'");
  return Line;
}

std::vector<double> OrtPeer::run(int N) {
  json J = json::parse(request("run " + std::to_string(N)));
  return J.at("runs_ms").get<std::vector<double>>();
}

std::vector<rt::Tensor> OrtPeer::outputs() {
  std::string Dir = (fs::path(Opts.WorkDir) / "ort_outputs").string();
  request("save " + Dir);
  return readTensorFolder(Dir);
}

int64_t OrtPeer::quit() {
  json J = json::parse(request("quit"));
  close(Sock);
  Sock = -1;
  waitExit(Pid);
  Pid = -1;
  return J.value("peak_rss_bytes", int64_t(0));
}

} // namespace nng::tools
