//===- Progress.h - Progress of long operations on stderr -------*- C++ -*-===//
//
// Private to nngraph_tools: the one way every tool shows the progress of an
// operation that can take more than a second (conversion, conformance,
// calibration, a pass pipeline, a JIT compile, benchmark rounds). On a
// terminal: one line redrawn in place (a bar for counted work), erased when
// done. Otherwise: plain lines, one per step and, for counted work, one per
// 10% milestone. With --quiet: nothing. A reporter with a delay holds its
// plain lines back until the delay has passed; a small thread then prints
// the line of the step still running, so a long step shows while it runs.
// The driver calls clear() before it writes anything else to the error
// stream; from then until the next step, the reporter writes nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

namespace nng::tools {

/// Progress lines of one tool run on its error stream.
class Progress {
public:
  /// Reports to Err as "TOOL: ...". The in-place bar is drawn only when Err
  /// is std::cerr on a terminal. Plain lines start only once Delay has
  /// passed since construction, so that quick runs of a tool whose
  /// operations are usually short (nngraph-opt, nngraph-run) stay silent in
  /// logs and pipes; the terminal line shows at once.
  Progress(std::ostream &Err, std::string_view Tool, bool Quiet,
           std::chrono::milliseconds Delay = std::chrono::milliseconds(0));
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// A named step ("compiling on cpu").
  void step(const std::string &Text);
  /// Starts counted work: Total items of Unit ("tests", "batches") under
  /// Label ("running tests").
  void begin(const std::string &Label, size_t Total,
             const std::string &Unit = "");
  /// Done of the begun Total items are finished; Detail names the last one.
  void advance(size_t Done, const std::string &Detail = "");
  /// Erases the terminal line (before other output to the error stream, and
  /// when the operation ends).
  void clear();

  /// Whether progress is redrawn in place (stderr is a terminal).
  bool terminal() const { return Tty; }

private:
  bool started() const;
  void show(const std::string &Line);
  /// The delay thread: prints the pending line once the delay has passed.
  void waitForDelay();

  std::ostream &Err;
  std::string Tool;
  bool Quiet, Tty, Shown = false;
  std::chrono::steady_clock::time_point Start;
  std::chrono::milliseconds Delay;
  std::string Label, Unit;
  size_t Total = 0;
  int LastMilestone = -1;
  std::chrono::steady_clock::time_point LastDraw; ///< Of the terminal bar.
  /// Guards the stream and Pending between the driver and Ticker.
  std::mutex M;
  std::condition_variable Wake;
  bool Stopping = false;
  std::string Pending; ///< The line held back by the delay.
  std::thread Ticker;
};

} // namespace nng::tools
