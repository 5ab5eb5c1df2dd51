#!/usr/bin/python3
# ===- dynamic.py - The nngraph half of the dynamic-shape benchmark --------===#
#
# Serves an encoder with a list of sequence lengths, or decodes greedily
# with a decoder's KV cache, through the Python module as a user would
# (nngraph.load, Model.optimize("O2"), Model.compile("cpu"),
# InferenceSession.run), and prints one JSON line with the same fields as
# ort_dynamic.mjs, its ONNX Runtime twin. run.py runs both.
#
# Usage:
#   dynamic.py serve MODEL.onnx --lengths 8,200,... [--batch B] [--threads T]
#       [--width 384] [--repeats 8]
#   dynamic.py decode MODEL.onnx [--batch B] [--cache 32] [--tokens 128]
#       [--threads T]
#
# serve: one run per length (input f32[B,L,width]) after one untimed warm-up
# run at the first length; "times_ms" per length, "repeat_ms" a second run
# at each of the first --repeats lengths (new-shape cost = times - repeat),
# "checksums" (sum of the output), "abs_sums" (sum of |x|) and "heads" (its
# first 8 values) per length.
# decode: the cache starts as --cache positions of fixed values, the first
# token of row b is b+1; each step feeds the argmax token and the present
# keys/values back; "tokens" per row and "times_ms" per step (the run, the
# argmax and the feed for the next step, as ort_dynamic.mjs times them).
# Both print "compile_ms" (load, optimize and compile: the counterpart of
# ORT's session_ms), "peak_rss_bytes" (this process's high-water mark) and
# "nngraph_version".
#
# Threads: the module has no thread setting of its own; the cpu backend
# takes NNGRAPH_NUM_THREADS, else OMP_NUM_THREADS (read when the module is
# imported), so --threads sets both before the import.
#
# Input values are ort_dynamic.mjs's inputValues(): element i of a tensor
# with offset k is (((i + k) * 7919) % 1000) / 1000 - 0.5 in double,
# rounded to float32; past tensor j (in input order) has offset 13 * j.
#
# The module is the build's (build/python, on PYTHONPATH as the Python
# tests have it); run.py sets PYTHONPATH.
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import resource
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(
        description="The nngraph half of bench/dynamic/run.py: serve an "
        "encoder at a list of sequence lengths, or decode greedily with a "
        "KV cache, through the Python module; prints one JSON line.")
    p.add_argument("mode", choices=["serve", "decode"])
    p.add_argument("model", help="the .onnx file (export_models.py)")
    p.add_argument("--lengths", default="",
                   help="serve: comma-separated sequence lengths, one "
                   "request each")
    p.add_argument("--batch", type=int, default=1, help="batch (dim N)")
    p.add_argument("--threads", type=int, default=2,
                   help="sets NNGRAPH_NUM_THREADS and OMP_NUM_THREADS "
                   "before importing nngraph (default 2)")
    p.add_argument("--width", type=int, default=384,
                   help="serve: the model width (default 384)")
    p.add_argument("--repeats", type=int, default=8,
                   help="serve: time a second run at each of the first K "
                   "lengths (default 8)")
    p.add_argument("--cache", type=int, default=32,
                   help="decode: positions in the initial KV cache "
                   "(default 32)")
    p.add_argument("--tokens", type=int, default=128,
                   help="decode: tokens to generate (default 128)")
    args = p.parse_args()
    try:
        args.lengths = [int(x) for x in args.lengths.split(",") if x]
    except ValueError:
        p.error(f"--lengths takes integers, got '{args.lengths}'")
    if args.mode == "serve" and not args.lengths:
        p.error("serve needs --lengths")
    return args


def input_values(np, n, k=0):
    """ort_dynamic.mjs's inputValues(n, k), bit for bit."""
    i = np.arange(n, dtype=np.int64) + k
    return (((i * 7919) % 1000) / 1000.0 - 0.5).astype(np.float32)


def serve(np, session, args):
    name = session.get_inputs()[0].name

    def feed(length):
        shape = (args.batch, length, args.width)
        return {name: input_values(np, args.batch * length * args.width)
                .reshape(shape)}

    session.run(None, feed(args.lengths[0]))
    times, repeat, sums, abs_sums, heads = [], [], [], [], []
    for r, length in enumerate(args.lengths):
        f = feed(length)
        t0 = time.perf_counter()
        (y,) = session.run(None, f)[:1]
        times.append((time.perf_counter() - t0) * 1000)
        flat = y.reshape(-1)
        sums.append(float(flat.sum(dtype=np.float64)))
        abs_sums.append(float(np.abs(flat).sum(dtype=np.float64)))
        heads.append([float(v) for v in flat[:8]])
        if r < args.repeats:
            t1 = time.perf_counter()
            session.run(None, f)
            repeat.append((time.perf_counter() - t1) * 1000)
    return {"times_ms": times, "repeat_ms": repeat, "checksums": sums,
            "abs_sums": abs_sums, "heads": heads}


def decode(np, session, args):
    inputs = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    past = [n for n in inputs if n != "input_ids"]
    # The benchmark decoder's cache: 8 heads of 64 (export_models.py).
    heads, head_dim = 8, 64
    shape = (args.batch, heads, args.cache, head_dim)
    feed = {n: input_values(np, args.batch * heads * args.cache * head_dim,
                            j * 13).reshape(shape)
            for j, n in enumerate(past)}
    ids = np.arange(1, args.batch + 1, dtype=np.int64).reshape(args.batch, 1)
    present = {n: outputs.index(n.replace("past", "present")) for n in past}
    logits_at = outputs.index("logits")
    tokens = [[] for _ in range(args.batch)]
    times = []
    for _ in range(args.tokens):
        feed["input_ids"] = ids
        t0 = time.perf_counter()
        out = session.run(None, feed)
        logits = out[logits_at]
        # np.argmax takes the first maximum, as the loop in the .mjs does.
        best = logits[:, 0, :].argmax(axis=1)
        for b in range(args.batch):
            tokens[b].append(int(best[b]))
        for n, k in present.items():
            feed[n] = out[k]
        ids = best.astype(np.int64).reshape(args.batch, 1)
        times.append((time.perf_counter() - t0) * 1000)
    return {"tokens": tokens, "times_ms": times}


def main():
    args = parse_args()
    os.environ["NNGRAPH_NUM_THREADS"] = str(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import nngraph

    start = time.perf_counter()
    model = nngraph.load(args.model)
    model.optimize("O2")
    session = model.compile("cpu")
    compile_ms = (time.perf_counter() - start) * 1000
    result = {"mode": args.mode, "nngraph_version": nngraph.__version__,
              "threads": args.threads, "batch": args.batch,
              "compile_ms": compile_ms}
    if args.mode == "serve":
        result.update(serve(np, session, args))
    else:
        result.update(decode(np, session, args))
    # ru_maxrss is in KiB on Linux.
    result["peak_rss_bytes"] = (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(json.dumps(result))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line naming the failure, for run.py's table
        sys.exit(f"dynamic.py: {type(e).__name__}: {e}")
