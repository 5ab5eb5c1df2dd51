//===- ProgressBar.cpp - A per-epoch progress bar on stderr ---------------===//
//
// Draws the bar with a carriage return on a terminal (throttled to ~10
// redraws a second, so that drawing never costs training time), and as a
// few whole lines elsewhere.
//
//===----------------------------------------------------------------------===//

#include "ProgressBar.h"

#include <unistd.h>

#include <algorithm>

namespace fmnist {

namespace {
constexpr int BarWidth = 24;
using Clock = std::chrono::steady_clock;
} // namespace

ProgressBar::ProgressBar(std::string Title, int64_t Total, std::FILE *Out)
    : Title(std::move(Title)), Total(std::max<int64_t>(Total, 1)), Out(Out),
      IsTerminal(isatty(fileno(Out)) != 0), Start(Clock::now()),
      LastDraw(Start) {
  if (IsTerminal)
    draw(false);
}

ProgressBar::~ProgressBar() {
  // Destroyed without finish() (an exception is on its way): only end the
  // terminal's line, so the error message starts on a fresh one.
  if (!Finished && IsTerminal)
    std::fputc('\n', Out);
}

void ProgressBar::update(int64_t DoneNow, int64_t BatchImages, double Loss) {
  Done = DoneNow;
  Images += BatchImages;
  LossSum += Loss * double(BatchImages);
  if (IsTerminal) {
    Clock::time_point Now = Clock::now();
    if (Now - LastDraw >= std::chrono::milliseconds(100) || Done == Total) {
      LastDraw = Now;
      draw(false);
    }
    return;
  }
  // Non-terminal: one line at each quarter (the last one by finish()).
  if (NextQuarter < 4 && Done * 4 >= Total * NextQuarter) {
    while (NextQuarter < 4 && Done * 4 >= Total * NextQuarter)
      ++NextQuarter;
    draw(false);
  }
}

void ProgressBar::finish() {
  if (Finished)
    return;
  Finished = true;
  draw(true);
}

double ProgressBar::seconds() const {
  return std::chrono::duration<double>(Clock::now() - Start).count();
}

double ProgressBar::imagesPerSecond() const {
  double S = seconds();
  return S > 0 ? double(Images) / S : 0.0;
}

void ProgressBar::draw(bool Final) {
  const int Filled = static_cast<int>(BarWidth * Done / Total);
  char Bar[BarWidth + 1];
  for (int I = 0; I < BarWidth; ++I)
    Bar[I] = I < Filled ? '=' : (I == Filled ? '>' : ' ');
  if (Filled >= BarWidth)
    Bar[BarWidth - 1] = '=';
  Bar[BarWidth] = '\0';
  const int Width = static_cast<int>(std::to_string(Total).size());
  std::fprintf(Out, "%s%s [%s] %*lld/%lld loss %.4f %6.0f img/s %5.1fs%s",
               IsTerminal ? "\r" : "", Title.c_str(), Bar, Width,
               static_cast<long long>(Done), static_cast<long long>(Total),
               meanLoss(), imagesPerSecond(), seconds(),
               (Final || !IsTerminal) ? "\n" : "");
  std::fflush(Out);
}

} // namespace fmnist
