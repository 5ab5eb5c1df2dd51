#!/usr/bin/env python3
# ===- run.py - Structured pruning: size, MACs and cpu latency -------------===#
#
# For each model (torch exports with random weights, made by
# bench/cpu_vs_ort/export_models.py) and each ratio, runs
#   nngraph-opt MODEL -p 'prune-channels{ratio=R}' -o MODEL.pR.onnx
# and reports parameters and MACs (nngraph-inspect --json), the file size,
# the cpu backend's latency before and after (nngraph-run --backend cpu,
# interleaved rounds, medians and minimums) and whether ONNX Runtime
# (onnxruntime-node) runs the pruned file with nngraph's outputs (max
# |difference| / max |output|). Random weights: the latencies and sizes are
# what pruning gives; accuracy needs fine-tuning (docs/pruning.md).
#
# Usage: /usr/bin/python3 bench/prune/run.py [--models a,b] [--ratios 0.3,0.5]
#            [--batch 1] [--rounds 3] [--runs 10] [--threads 2]
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(REPO, "build", "bin")
DEFAULT_MODELS = "resnet18,resnet50,mobilenet_v2,vgg11_bn,efficientnet_b0"


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"prune bench: {' '.join(cmd)} failed ({p.returncode}):\n"
                 f"{p.stderr[-2000:]}")
    return p.stdout


def inspect(path):
    j = json.loads(run([os.path.join(BIN, "nngraph-inspect"), path,
                        "--json"]))
    return j["parameters"]["count"], j["macs"]


def latency(args, path):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    out = run([os.path.join(BIN, "nngraph-run"), path, "--backend", "cpu",
               "--dim", f"N={args.batch}", "--repeat", str(1 + args.runs),
               "--json", "--max-values", "0"], env)
    return json.loads(out)["time_ms"]["runs"][1:]


def ort_check(path, out_dir):
    """max |nngraph - ORT| / max |ORT| on one random input, or a reason."""
    script = os.path.join(REPO, "tests", "ort", "run_onnx.mjs")
    import numpy as np
    rng = np.random.RandomState(0)
    ins = os.path.join(out_dir, "in")
    os.makedirs(ins, exist_ok=True)
    x = rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    x.tofile(os.path.join(ins, "x.bin"))
    with open(os.path.join(ins, "tensors.json"), "w") as f:
        json.dump({"tensors": [{"name": "input", "dtype": "f32",
                                "shape": list(x.shape), "file": "x.bin"}]},
                  f)
    outs = os.path.join(out_dir, "ort")
    p = subprocess.run(["node", script, path, ins, outs],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return f"ORT failed: {p.stderr.strip().splitlines()[-1:]}"
    ort = np.fromfile(os.path.join(outs, "0.bin"), np.float32)
    npz = os.path.join(out_dir, "x.npz")
    np.savez(npz, input=x)
    got = os.path.join(out_dir, "ours.npz")
    run([os.path.join(BIN, "nngraph-run"), path, "--backend", "cpu",
         "--inputs", npz, "--save-outputs", got])
    ours = np.load(got)
    ours = ours[list(ours.keys())[0]].ravel()
    return f"{np.abs(ours - ort).max() / max(np.abs(ort).max(), 1e-30):.1e}"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--ratios", default="0.3,0.5")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench",
                                                 "prune"))
    args = p.parse_args()
    models = [m for m in args.models.split(",") if m]
    ratios = [float(r) for r in args.ratios.split(",") if r]
    mdir = os.path.join(args.out, "models")
    os.makedirs(mdir, exist_ok=True)
    subprocess.run(["/usr/bin/python3",
                    os.path.join(REPO, "bench", "cpu_vs_ort",
                                 "export_models.py"), mdir, "--models",
                    ",".join(models)], check=True, stdout=sys.stderr)
    print(f"cpu backend, batch {args.batch}, {args.threads} threads, "
          f"{args.rounds} interleaved rounds x {args.runs} runs; load "
          f"average {os.getloadavg()[0]:.2f} at the start\n")
    print("| model | ratio | parameters | MACs | file MiB | median ms | "
          "min ms | speed-up (median) | ORT check |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    for m in models:
        base = os.path.join(mdir, m + ".onnx")
        files = [(0.0, base)]
        for r in ratios:
            out = os.path.join(mdir, f"{m}.p{r}.onnx")
            run([os.path.join(BIN, "nngraph-opt"), base, "-p",
                 f"prune-channels{{ratio={r}}}", "-o", out])
            files.append((r, out))
        times = {f: [] for _, f in files}
        for _ in range(args.rounds):
            for _, f in files:
                times[f] += latency(args, f)
        base_med = statistics.median(times[base])
        for r, f in files:
            params, macs = inspect(f)
            med, lo = statistics.median(times[f]), min(times[f])
            check = ort_check(f, os.path.join(args.out, "check",
                                              os.path.basename(f)))
            print(f"| {m} | {r:g} | {params / 1e6:.2f} M | {macs / 1e9:.2f} G "
                  f"| {os.path.getsize(f) / 2**20:.1f} | {med:.2f} | "
                  f"{lo:.2f} | {base_med / med:.2f}x | {check} |")


if __name__ == "__main__":
    main()
