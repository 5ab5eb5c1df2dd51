#!/usr/bin/python3
# ===- eager_vs_torch.py - nngraph eager vs PyTorch eager, side by side ----===#
#
# Runs the same two measurements in nngraph eager (the nngraph-bench-eager
# program, Google Benchmark, JSON output) and in PyTorch eager (here, with
# Debian's python3-torch), in one run with the same thread count, and prints
# a table of medians and the ratios nngraph / PyTorch:
#
#   (a) dispatch overhead: c = a + b on two f32[16] tensors, without and
#       with requires_grad (the latter also records the autograd node);
#   (b) one training step of the Fashion-MNIST example CNN at batch 64:
#       zero_grad, forward, cross-entropy, backward, SGD step (momentum 0.9).
#
# Targets (issue 3): training step <= 1.5x PyTorch, dispatch <= 1.0x.
# Start it through eager_vs_torch.sh, which sets the environment (threads,
# OpenBLAS) before either library loads; see README.md.
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def machine_description():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} logical CPUs, load average {load}"


def loaded_blas():
    """The BLAS library this process has mapped (after torch ran a GEMM)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line}
        return ", ".join(sorted(p for p in paths if p.startswith("/"))) or "none"
    except OSError:
        return "unknown"


# --- nngraph side -------------------------------------------------------------


def run_nngraph(binary, repetitions, min_time):
    """Runs nngraph-bench-eager; returns {name: (median wall seconds,
    median process CPU seconds)}."""
    cmd = [
        binary,
        "--benchmark_format=json",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_report_aggregates_only=true",
        f"--benchmark_min_time={min_time}",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        sys.exit(f"eager_vs_torch: cannot run {binary}: {e}; build it with "
                 "cmake --build BUILD --target nngraph-bench-eager")
    if proc.returncode != 0:
        sys.exit(f"eager_vs_torch: {binary} failed (exit {proc.returncode}):\n"
                 f"{proc.stderr[-4000:]}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"eager_vs_torch: {binary} printed no JSON report ({e})")
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    medians = {}
    for b in report.get("benchmarks", []):
        if b.get("error_occurred"):
            sys.exit(f"eager_vs_torch: {b['name']}: {b.get('error_message')}")
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        # Suffixes of UseRealTime() and MeasureProcessCPUTime().
        for suffix in ("/real_time", "/process_time"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        medians[name] = (b["real_time"] * scale[b["time_unit"]],
                         b["cpu_time"] * scale[b["time_unit"]])
    return medians


# --- PyTorch side -------------------------------------------------------------


def median_per_call(fn, calls, repeats, warmup):
    """(median wall, median process CPU) seconds over repeats of the mean
    time of one call in a loop of calls."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(calls):
            fn()
        wall.append((time.perf_counter() - t0) / calls)
        cpu.append((time.process_time() - c0) / calls)
    return statistics.median(wall), statistics.median(cpu)


def torch_add(torch, requires_grad, repeats):
    a = torch.randn(16, requires_grad=requires_grad)
    b = torch.randn(16, requires_grad=requires_grad)

    def step():
        return a + b

    return median_per_call(step, calls=20000, repeats=repeats, warmup=2000)


def torch_cnn(torch):
    """The example CNN (examples/fashion-mnist/Model.h), same layers."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10))


def torch_train_step(torch, batch, repeats):
    torch.manual_seed(0)
    model = torch_cnn(torch)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    # One step is milliseconds: time steps one by one.
    return median_per_call(step, calls=1, repeats=repeats, warmup=10)


# --- Report -------------------------------------------------------------------


def fmt_time(s):
    if s < 1e-6:
        return f"{s * 1e9:8.1f} ns"
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e3:8.2f} ms"


def main():
    ap = argparse.ArgumentParser(
        description="nngraph eager vs PyTorch eager: dispatch overhead and "
        "a training step of the Fashion-MNIST CNN, side by side")
    ap.add_argument("--nngraph-bench", required=True,
                    help="path of the nngraph-bench-eager program")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=10,
                    help="repetitions of each measurement (median reported)")
    ap.add_argument("--min-time", type=float, default=0.5,
                    help="seconds per nngraph repetition (Google Benchmark)")
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        sys.exit(f"eager_vs_torch: cannot import torch ({e}); run with "
                 "/usr/bin/python3 (Debian's python3-torch)")
    torch.set_num_threads(args.threads)

    nng = run_nngraph(args.nngraph_bench, args.repetitions, args.min_time)
    rows = [
        ("add f32[16]", "BM_AddDispatch/requires_grad:0",
         lambda: torch_add(torch, False, args.repetitions)),
        ("add f32[16], requires_grad", "BM_AddDispatch/requires_grad:1",
         lambda: torch_add(torch, True, args.repetitions)),
        (f"CNN train step, batch {args.batch}",
         f"BM_TrainStep/batch:{args.batch}",
         lambda: torch_train_step(torch, args.batch,
                                  max(args.repetitions * 3, 30))),
    ]
    targets = {0: 1.0, 1: 1.0, 2: 1.5}

    print(f"machine: {machine_description()}")
    print(f"threads: {args.threads} (OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, torch "
          f"{torch.__version__} get_num_threads()={torch.get_num_threads()})")
    results = []
    for i, (label, key, torch_fn) in enumerate(rows):
        if key not in nng:
            sys.exit(f"eager_vs_torch: {args.nngraph_bench} reported no "
                     f"'{key}' (got: {', '.join(sorted(nng)) or 'nothing'})")
        results.append((label, nng[key], torch_fn(), targets[i]))
    print(f"BLAS used by torch: {loaded_blas()} (OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')})")
    print()
    print(f"{'measurement':<30} {'nngraph':>11} {'PyTorch':>11} "
          f"{'ratio':>7} {'target':>7}  {'CPU: nngraph':>12} {'PyTorch':>11} "
          f"{'ratio':>7}")
    for label, n, t, target in results:
        ratio = n[0] / t[0]
        verdict = "ok" if ratio <= target else "MISSED"
        print(f"{label:<30} {fmt_time(n[0]):>11} {fmt_time(t[0]):>11} "
              f"{ratio:6.2f}x {target:5.1f}x  {fmt_time(n[1]):>12} "
              f"{fmt_time(t[1]):>11} {n[1] / t[1]:6.2f}x  {verdict}")
    print("\n(medians of wall-clock time, and of process CPU time (all "
          "threads, spinning included);\n ratio = nngraph / PyTorch, lower "
          "is better; the verdict compares the wall-clock ratio)")


if __name__ == "__main__":
    main()
