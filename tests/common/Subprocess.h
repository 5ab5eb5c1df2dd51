//===- Subprocess.h - Running oracle scripts from tests ----------*- C++ -*-===//
//
// What every test that asks Python (torch, torchvision, numpy) or node for
// an oracle needs: run a shell command and collect its output, quote an
// argument for the shell, and the Pythons to try ($NNGRAPH_PYTHON when set,
// else Debian's /usr/bin/python3, then python3 on PATH; the pyenv python3
// often first on PATH lacks torch). Oracle scripts exit with
// OracleSkipStatus when a module they need is missing, so the caller can
// SKIP with the script's reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace nng::test {

/// The exit status of an oracle script whose runtime is not installed.
inline constexpr int OracleSkipStatus = 77;

/// Runs Command through the shell; returns its exit status (-1 when it did
/// not exit normally) and appends its stdout and stderr to Output.
inline int runCommand(const std::string &Command, std::string &Output) {
  FILE *P = ::popen((Command + " 2>&1").c_str(), "r");
  if (!P)
    return -1;
  char Buf[4096];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof(Buf), P)) > 0)
    Output.append(Buf, N);
  int Status = ::pclose(P);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

/// S in single quotes for the shell.
inline std::string shellQuote(const std::string &S) {
  std::string Q = "'";
  for (char C : S)
    Q += C == '\'' ? std::string("'\\''") : std::string(1, C);
  return Q + "'";
}

/// The Python interpreters to try, in order.
inline std::vector<std::string> pythonCandidates() {
  if (const char *P = std::getenv("NNGRAPH_PYTHON"); P && *P)
    return {P};
  return {"/usr/bin/python3", "python3"};
}

} // namespace nng::test
