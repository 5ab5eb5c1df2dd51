//===- ProgressBar.h - A per-epoch progress bar on stderr ---------*- C++ -*-===//
//
// Shows the progress of one training epoch: batch i/n, the running mean of
// the loss and the throughput in images per second, e.g.
//
//   epoch 2/10 [=========>          ] 412/938 loss 0.3121  5210 img/s  4.1s
//
// On a terminal the line is redrawn in place (at most ~10 times a second);
// otherwise (a log file, ctest) a line is printed at every 25% so logs stay
// short. Independent of the nngraph frontend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace fmnist {

class ProgressBar {
public:
  /// A bar titled Title ("epoch 2/10") over Total batches, written to Out.
  ProgressBar(std::string Title, int64_t Total, std::FILE *Out = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &operator=(const ProgressBar &) = delete;

  /// Records that batch Done (1-based) of Images images finished with
  /// mean loss Loss; redraws when due.
  void update(int64_t Done, int64_t Images, double Loss);
  /// Draws the final state and ends the line.
  void finish();

  /// The running mean loss over the batches so far (image-weighted).
  double meanLoss() const { return Images ? LossSum / double(Images) : 0.0; }
  /// Images per second since construction.
  double imagesPerSecond() const;
  /// Seconds since construction.
  double seconds() const;

private:
  void draw(bool Final);

  std::string Title;
  int64_t Total;
  std::FILE *Out;
  bool IsTerminal;
  bool Finished = false;
  int64_t Done = 0;
  int64_t Images = 0;
  double LossSum = 0;
  /// The next quarter to print in non-terminal mode (1..4).
  int NextQuarter = 1;
  std::chrono::steady_clock::time_point Start;
  std::chrono::steady_clock::time_point LastDraw;
};

} // namespace fmnist
