//===- Progress.cpp - Progress of long operations on stderr --------------===//
//
// The in-place bar on a terminal, plain step and milestone lines otherwise,
// and the thread that prints a held-back line once the delay has passed
// (Progress.h).
//
//===----------------------------------------------------------------------===//

#include "Progress.h"

#include <iostream>

#include <unistd.h>

namespace nng::tools {

Progress::Progress(std::ostream &Err, std::string_view Tool, bool Quiet,
                   std::chrono::milliseconds Delay)
    : Err(Err), Tool(Tool), Quiet(Quiet),
      Tty(&Err == &std::cerr && ::isatty(2)),
      Start(std::chrono::steady_clock::now()), Delay(Delay) {
  if (!Quiet && !Tty && Delay.count() > 0)
    Ticker = std::thread([this] { waitForDelay(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  Wake.notify_all();
  if (Ticker.joinable())
    Ticker.join();
  clear();
}

void Progress::waitForDelay() {
  std::unique_lock<std::mutex> L(M);
  Wake.wait_until(L, Start + Delay, [this] { return Stopping; });
  if (!Stopping && !Pending.empty())
    Err << Tool << ": " << Pending << "\n" << std::flush;
  Pending.clear();
}

bool Progress::started() const {
  return Tty || std::chrono::steady_clock::now() - Start >= Delay;
}

void Progress::show(const std::string &Line) {
  if (Quiet)
    return;
  std::lock_guard<std::mutex> L(M);
  if (!started()) {
    Pending = Line;
    return;
  }
  Pending.clear();
  if (Tty) {
    Err << "\r\033[K" << Tool << ": " << Line << std::flush;
    Shown = true;
  } else {
    Err << Tool << ": " << Line << "\n" << std::flush;
  }
}

void Progress::step(const std::string &Text) {
  Total = 0;
  show(Text);
}

void Progress::begin(const std::string &L, size_t N, const std::string &U) {
  Label = L;
  Unit = U;
  Total = N;
  LastMilestone = -1;
  advance(0);
}

void Progress::advance(size_t Done, const std::string &Detail) {
  if (Quiet || Total == 0)
    return;
  std::string Count = std::to_string(Done) + "/" + std::to_string(Total) +
                      (Unit.empty() ? "" : " " + Unit);
  int Percent = static_cast<int>(100 * Done / Total);
  if (Tty) {
    // At most ten redraws a second: a loop of quick items (nngraph-run's
    // --repeat) must not spend its time on the terminal.
    auto Now = std::chrono::steady_clock::now();
    if (Done != 0 && Done != Total &&
        Now - LastDraw < std::chrono::milliseconds(100))
      return;
    LastDraw = Now;
    constexpr size_t Width = 24;
    size_t Fill = Width * Done / Total;
    show(Label + " [" + std::string(Fill, '=') +
         std::string(Width - Fill, ' ') + "] " + Count +
         (Detail.empty() ? "" : " " + Detail));
    return;
  }
  // Plain lines: at most one per 10% (every item when there are few).
  int Milestone = Total <= 10 ? static_cast<int>(Done) : Percent / 10;
  if (Done == 0 || Milestone <= LastMilestone)
    return;
  LastMilestone = Milestone;
  show(Label + ": " + Count + " (" + std::to_string(Percent) + "%)");
}

void Progress::clear() {
  std::lock_guard<std::mutex> L(M);
  Pending.clear();
  if (Shown)
    Err << "\r\033[K" << std::flush;
  Shown = false;
}

} // namespace nng::tools
