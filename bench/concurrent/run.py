#!/usr/bin/python3
# ===- run.py - Throughput of callers on several threads (issue 32) --------===#
#
# One compiled model, called from 1 thread and then from --clients threads
# at once (Python threads; nngraph releases the GIL during run), as a server
# with a thread per request would: runs per second of each, interleaved
# over --rounds rounds, and the ratio. The cpu executable runs concurrent
# callers on lanes (their own programs and arena) and gives each overlapping
# run its share of the threads, so more callers should never mean less
# throughput; before lanes a mutex ran them one at a time.
#
# Usage: python3 bench/concurrent/run.py [--models mlp,transformer,resnet18]
#            [--clients 4] [--runs 40] [--rounds 3] [--batch 1]
#            [--models-dir build/bench/cpu_vs_ort/models] [--json FILE]
# The models are the side-by-side benchmark's exports
# (bench/cpu_vs_ort/run.py makes them; this script exports them the same
# way when they are missing). Needs build/python on PYTHONPATH (set here).
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "build", "python"))
sys.path.insert(0, os.path.dirname(HERE))
from sidebyside import cpu_model  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(
        description="Runs per second of one compiled model called from one "
        "thread and from several at once (nngraph cpu backend).")
    p.add_argument("--models", default="mlp,transformer,resnet18",
                   help="comma-separated model names (default: "
                   "mlp,transformer,resnet18)")
    p.add_argument("--clients", type=int, default=4,
                   help="threads calling at once (default 4)")
    p.add_argument("--runs", type=int, default=40,
                   help="runs per round, split over the callers (default 40)")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds (default 3)")
    p.add_argument("--batch", type=int, default=1,
                   help="bound to the input dim N (default 1)")
    p.add_argument("--models-dir",
                   default=os.path.join(REPO, "build", "bench", "cpu_vs_ort",
                                        "models"))
    p.add_argument("--json", help="write the measurements to this file")
    return p.parse_args()


def feed(session, batch, np):
    """Random inputs: the symbolic dim N is the batch, others are 1."""
    rng = np.random.default_rng(0)
    out = {}
    for i in session.get_inputs():
        shape = [batch if d == "N" else (d if isinstance(d, int) else 1)
                 for d in i.shape]
        out[i.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def throughput(session, inputs, callers, runs):
    """Runs per second with `callers` threads doing `runs` runs in all."""
    per = [runs // callers + (1 if k < runs % callers else 0)
           for k in range(callers)]
    errors = []

    def work(n):
        try:
            for _ in range(n):
                session.run(None, inputs)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in per]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return runs / elapsed


def main():
    args = parse_args()
    import numpy as np
    import nngraph
    models = [m for m in args.models.split(",") if m]
    missing = [m for m in models
               if not os.path.exists(os.path.join(args.models_dir,
                                                  m + ".onnx"))]
    if missing:
        subprocess.run([sys.executable,
                        os.path.join(REPO, "bench", "cpu_vs_ort",
                                     "export_models.py"),
                        args.models_dir, "--models",
                        ",".join(missing)], check=True)
    print(f"CPU: {cpu_model()}; {os.cpu_count()} CPUs; nngraph threads "
          f"{nngraph.get_num_threads()}; batch {args.batch}; "
          f"{args.clients} callers vs 1; {args.runs} runs per round, "
          f"{args.rounds} rounds interleaved")
    rows = []
    for m in models:
        s = nngraph.InferenceSession(os.path.join(args.models_dir,
                                                  m + ".onnx"),
                                     backend="cpu")
        inputs = feed(s, args.batch, np)
        # Warm: compile, and a lane per caller.
        throughput(s, inputs, args.clients, 2 * args.clients)
        throughput(s, inputs, 1, 2)
        one, many = [], []
        for _ in range(args.rounds):
            one.append(throughput(s, inputs, 1, args.runs))
            many.append(throughput(s, inputs, args.clients, args.runs))
        stats = s.stats() or {}
        lanes = stats.get("threads", {}).get("lanes", "?")
        rows.append({"model": m, "one_caller_runs_per_s": one,
                     "callers_runs_per_s": many, "lanes": lanes})
    print()
    print(f"| model | 1 caller runs/s median (max) | {args.clients} callers "
          "runs/s median (max) | ratio of medians | lanes |")
    print("|---|---|---|---|---|")
    for r in rows:
        a, b = statistics.median(r["one_caller_runs_per_s"]), \
            statistics.median(r["callers_runs_per_s"])
        print(f"| {r['model']} | {a:.1f} ({max(r['one_caller_runs_per_s']):.1f})"
              f" | {b:.1f} ({max(r['callers_runs_per_s']):.1f}) | "
              f"{b / a:.2f} | {r['lanes']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"clients": args.clients, "batch": args.batch,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
