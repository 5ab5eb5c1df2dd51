#!/usr/bin/python3
# ===- run.py - Dynamic shapes: nngraph vs ONNX Runtime (issue 31) ---------===#
#
# The one command of the dynamic-shape benchmark: exports the models with
# export_models.py (Debian's python3-torch, random weights, fixed seed),
# then runs two cases in interleaved rounds, each side a fresh process:
# nngraph through its Python module (dynamic.py: load, optimize O2, compile
# on `cpu`, run), then ONNX Runtime (ort_dynamic.mjs: onnxruntime-node, CPU
# EP), then nngraph again, ... with the same thread count and the same
# deterministic inputs:
#
#   serve   the 6-layer d384 encoder, one request per sequence length drawn
#           at random (seeded) from [--min-len, --max-len], at each batch;
#           p50, p99 and sum of the request latencies, and the new-shape
#           cost: the first run at a length not seen before minus a repeat
#           run at that length, median over the shapes;
#   decode  the GPT-style decoder step, greedy decoding of --tokens tokens
#           from a KV cache of --cache positions (every step a new cache
#           length); tokens per second, p50/p99 per step, and whether both
#           engines chose the same tokens.
#
# Prints markdown tables (ratios nngraph / ORT of medians and minimums,
# peak RSS, the spread of the rounds) and writes every measurement to
# --json. --competitor keeps one busy process running meanwhile;
# --jit-cache says whether nngraph's on-disk JIT cache starts empty in every
# process (cold, the default) or is shared and filled first (warm).
#
# Usage: python3 bench/dynamic/run.py [--cases serve,decode] [--batches 1,4]
#            [--threads 2] [--rounds 3] [--requests 60] [--tokens 128]
#            [--jit-cache cold|warm] [--competitor] [--json FILE]
# See bench/README.md.
#
# ===----------------------------------------------------------------------===#

import argparse
import contextlib
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, os.path.dirname(HERE))
from sidebyside import (Competitors, cell_text, comma_ints,  # noqa: E402
                        cpu_flags, cpu_model, exit_text, fmt_mib, fmt_ms,
                        last_lines, load_average, logger, run_child)

CASES = ["serve", "decode"]
SKIP_STATUS = 77
NOISY_SPREAD = 0.10  # Rounds further apart than this (of the median) are noisy.


log = logger("dynamic")


def parse_args():
    p = argparse.ArgumentParser(
        description="Dynamic shapes, nngraph (Python module, cpu backend) vs "
        "ONNX Runtime (onnxruntime-node, CPU EP): serving an encoder at "
        "random sequence lengths and greedy decoding with a KV cache, in "
        "interleaved fresh processes; p50/p99, sums, new-shape cost, "
        "tokens/s, peak RSS and ratios nngraph / ORT.")
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma-separated subset of serve, decode "
                   "(default both)")
    p.add_argument("--batches", type=comma_ints, default=[1, 4],
                   help="batch sizes (dim N; default 1,4)")
    p.add_argument("--threads", type=int, default=2,
                   help="threads of both: NNGRAPH_NUM_THREADS and "
                   "OMP_NUM_THREADS for nngraph, intraOpNumThreads for ORT "
                   "(default 2)")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds per case and batch; each round is "
                   "one nngraph process and one ORT process (default 3)")
    p.add_argument("--requests", type=int, default=60,
                   help="serve: requests per process, one per drawn length "
                   "(default 60)")
    p.add_argument("--min-len", type=int, default=8,
                   help="serve: shortest sequence length drawn (default 8)")
    p.add_argument("--max-len", type=int, default=256,
                   help="serve: longest sequence length drawn (default 256)")
    p.add_argument("--seed", type=int, default=0,
                   help="serve: seed of the drawn lengths (Python's "
                   "random.Random; default 0); every round and batch and "
                   "both engines get the same list")
    p.add_argument("--tokens", type=int, default=128,
                   help="decode: tokens generated per process (default 128)")
    p.add_argument("--cache", type=int, default=32,
                   help="decode: positions in the initial KV cache "
                   "(default 32)")
    p.add_argument("--jit-cache", choices=["cold", "warm"], default="cold",
                   help="nngraph's on-disk JIT object cache "
                   "(NNGRAPH_CACHE_DIR): cold (default) gives every nngraph "
                   "process an empty one, so each round pays what a first "
                   "start pays; warm shares one, filled by an untimed "
                   "nngraph process before the rounds of each case and "
                   "batch (a restarted server's case)")
    p.add_argument("--competitor", action="store_true",
                   help="keep one busy process (a Python loop) running "
                   "during the measurements, as on a machine where one "
                   "other process wants a core")
    p.add_argument("--python", default="/usr/bin/python3",
                   help="the interpreter of dynamic.py and the export "
                   "(default /usr/bin/python3: Debian's numpy and torch)")
    p.add_argument("--pythonpath", default=os.path.join(REPO, "build",
                                                        "python"),
                   help="where the nngraph package is (default build/python "
                   "of this checkout)")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench",
                                                 "dynamic"),
                   help="working folder: the exported models go here "
                   "(default build/bench/dynamic)")
    p.add_argument("--json", help="write all measurements to this file "
                   "(default OUT/results.json)")
    p.add_argument("--force-export", action="store_true",
                   help="export the models again even when the files exist")
    args = p.parse_args()
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in args.cases if c not in CASES]
    if unknown or not args.cases:
        p.error(f"unknown case(s) {', '.join(unknown)}; known: "
                + ", ".join(CASES))
    for name in ("threads", "rounds", "requests", "tokens", "cache",
                 "min_len"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_len < args.min_len:
        p.error("--max-len must be at least --min-len")
    args.json = args.json or os.path.join(args.out, "results.json")
    return args


# --- processes ----------------------------------------------------------------


def run_side(side, cmd, env=None):
    """One process of one engine: its JSON report, with peak_rss_bytes the
    larger of its own report and wait4's; or {"error"} / {"skip"}."""
    try:
        code, out, err, rss = run_child(cmd, env)
    except OSError as e:
        return {"error": f"cannot run {cmd[0]}: {e}"}
    if code == SKIP_STATUS:
        return {"skip": last_lines(out + err)}
    if code != 0:
        return {"error": f"{side} {exit_text(code)}: {last_lines(err)}"}
    try:
        report = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        return {"error": f"{side} printed no usable JSON ({e}): "
                f"{last_lines(out + err)}"}
    report["peak_rss_bytes"] = max(rss, report.get("peak_rss_bytes", 0))
    return report


def case_args(args, case, batch, lengths):
    if case == "serve":
        return ["--batch", str(batch), "--lengths",
                ",".join(map(str, lengths)), "--repeats", str(len(lengths)),
                "--threads", str(args.threads)]
    return ["--batch", str(batch), "--cache", str(args.cache), "--tokens",
            str(args.tokens), "--threads", str(args.threads)]


def run_nngraph(args, case, model, batch, lengths):
    """One dynamic.py process, with the JIT cache --jit-cache asks for."""
    cmd = [args.python, os.path.join(HERE, "dynamic.py"), case, model]
    cmd += case_args(args, case, batch, lengths)
    if args.jit_cache == "warm":
        return run_side("dynamic.py", cmd,
                        nngraph_env(args, os.path.join(args.out, "jit-cache")))
    cache = tempfile.mkdtemp(prefix="jit-cache-", dir=args.out)
    try:
        return run_side("dynamic.py", cmd, nngraph_env(args, cache))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run_ort(args, case, model, batch, lengths):
    cmd = ["node", os.path.join(HERE, "ort_dynamic.mjs"), case, model]
    return run_side("ort_dynamic.mjs",
                    cmd + case_args(args, case, batch, lengths))


def nngraph_env(args, cache_dir=None):
    env = dict(os.environ, NNGRAPH_NUM_THREADS=str(args.threads),
               OMP_NUM_THREADS=str(args.threads))
    if cache_dir:
        env["NNGRAPH_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = os.pathsep.join(
        x for x in (args.pythonpath, os.environ.get("PYTHONPATH")) if x)
    return env


def module_version(args):
    """nngraph.__version__ as dynamic.py will import it, or None."""
    try:
        code, out, _, _ = run_child(
            [args.python, "-c", "import nngraph; print(nngraph.__version__)"],
            nngraph_env(args))
    except OSError:
        return None
    return out.strip() if code == 0 else None


# --- statistics ---------------------------------------------------------------


def percentile(values, p):
    """The p-th percentile, interpolated between the closest ranks (numpy's
    default, as nngraph-bench)."""
    s = sorted(values)
    pos = p / 100 * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def spread(per_round):
    """(max - min) / median of one figure per round; None with one round."""
    if len(per_round) < 2:
        return None
    med = statistics.median(per_round)
    return (max(per_round) - min(per_round)) / med if med > 0 else None


def new_shape_costs(lengths, report):
    """First run minus repeat run at each length not seen before (the
    warm-up ran at lengths[0], so that one is not new)."""
    seen = {lengths[0]}
    costs = []
    for r, length in enumerate(lengths[:len(report["repeat_ms"])]):
        if length in seen:
            continue
        seen.add(length)
        costs.append(report["times_ms"][r] - report["repeat_ms"][r])
    return costs


def summarize_serve(rounds, lengths):
    ok = [r for r in rounds if "times_ms" in r]
    if not ok:
        return None
    times = [t for r in ok for t in r["times_ms"]]
    repeats = [t for r in ok for t in r["repeat_ms"]]
    costs = [c for r in ok for c in new_shape_costs(lengths, r)]
    sums = [sum(r["times_ms"]) for r in ok]
    s = {"p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99),
         "min_ms": min(times), "sum_ms": statistics.median(sums),
         "sum_ms_rounds": sums, "sum_spread": spread(sums),
         "repeat_p50_ms": percentile(repeats, 50) if repeats else None,
         "new_shape_cost_ms": statistics.median(costs) if costs else None,
         "new_shape_cost_max_ms": max(costs) if costs else None,
         "new_shapes": len(costs), "requests": len(times),
         "peak_rss_bytes": max(r["peak_rss_bytes"] for r in ok),
         "setup_ms": statistics.median(r.get("compile_ms",
                                             r.get("session_ms", 0))
                                       for r in ok)}
    return s


def summarize_decode(rounds):
    ok = [r for r in rounds if "times_ms" in r]
    if not ok:
        return None
    steps = [t for r in ok for t in r["times_ms"]]
    per_round = [sum(r["times_ms"]) for r in ok]
    rates = [r["batch"] * len(r["times_ms"]) / (sum(r["times_ms"]) / 1000)
             for r in ok]
    return {"tokens_per_s": statistics.median(rates), "tokens_per_s_rounds":
            rates, "p50_ms": percentile(steps, 50),
            "p99_ms": percentile(steps, 99), "min_ms": min(steps),
            "first_step_ms": statistics.median(r["times_ms"][0] for r in ok),
            "total_spread": spread(per_round), "steps": len(steps),
            "peak_rss_bytes": max(r["peak_rss_bytes"] for r in ok),
            "setup_ms": statistics.median(r.get("compile_ms",
                                                r.get("session_ms", 0))
                                          for r in ok)}


def compare_serve(nng, ort):
    """How far nngraph's outputs are from ORT's: the largest relative
    difference of the sums of |x|, and of the first 8 values (to the
    largest |ORT| among them), over the requests."""
    sums = max(abs(a - b) / max(abs(b), 1e-30)
               for a, b in zip(nng["abs_sums"], ort["abs_sums"]))
    heads = 0.0
    for a, b in zip(nng["heads"], ort["heads"]):
        scale = max(max(abs(y) for y in b), 1e-30)
        heads = max(heads, max(abs(x - y) for x, y in zip(a, b)) / scale)
    return {"abs_sum_rel": sums, "heads_rel": heads}


def compare_tokens(nng_rounds, ort_rounds):
    """"yes", or where the first round of each first differs; also says when
    an engine's own rounds disagree."""
    nr = [r["tokens"] for r in nng_rounds if "tokens" in r]
    orr = [r["tokens"] for r in ort_rounds if "tokens" in r]
    if not nr or not orr:
        return None
    a, b = nr[0], orr[0]
    text = "yes"
    for row, (x, y) in enumerate(zip(a, b)):
        diff = [i for i, (p, q) in enumerate(zip(x, y)) if p != q]
        if diff:
            text = f"no: row {row} from step {diff[0]}"
            break
    if any(t != a for t in nr) or any(t != b for t in orr):
        text += " (an engine's rounds differ)"
    return text


# --- one case -----------------------------------------------------------------


def measure(args, case, model, batch, lengths):
    nng_rounds, ort_rounds = [], []
    nng_error = ort_error = None
    row = {"case": case, "batch": batch}
    if args.jit_cache == "warm":
        log(f"{case} batch {batch}: nngraph, untimed, filling the JIT cache")
        res = run_nngraph(args, case, model, batch, lengths)
        row["nngraph_priming"] = res
        if "error" in res:
            nng_error = res["error"]
            log(f"  nngraph failed, not retried: {nng_error}")
    for r in range(args.rounds):
        if nng_error is None:
            log(f"{case} batch {batch} round {r + 1}/{args.rounds}: nngraph")
            res = run_nngraph(args, case, model, batch, lengths)
            nng_rounds.append(res)
            if "error" in res:
                nng_error = res["error"]
                log(f"  nngraph failed, not retried: {nng_error}")
        if ort_error is None:
            log(f"{case} batch {batch} round {r + 1}/{args.rounds}: ORT")
            res = run_ort(args, case, model, batch, lengths)
            if "skip" in res:
                return {"skip": res["skip"]}
            ort_rounds.append(res)
            if "error" in res:
                ort_error = res["error"]
                log(f"  ORT failed, not retried: {ort_error}")
        if nng_error and ort_error:
            break
    row.update({"nngraph_rounds": nng_rounds, "ort_rounds": ort_rounds,
                "nngraph_error": nng_error, "ort_error": ort_error})
    if case == "serve":
        row["lengths"] = lengths
        row["nngraph"] = summarize_serve(nng_rounds, lengths)
        row["ort"] = summarize_serve(ort_rounds, lengths)
        nok = [x for x in nng_rounds if "abs_sums" in x]
        ook = [x for x in ort_rounds if "abs_sums" in x]
        row["check"] = compare_serve(nok[0], ook[0]) if nok and ook else None
    else:
        row["nngraph"] = summarize_decode(nng_rounds)
        row["ort"] = summarize_decode(ort_rounds)
        row["same_tokens"] = compare_tokens(nng_rounds, ort_rounds)
    n, o = row["nngraph"], row["ort"]
    if n and o:
        row["ratio_median"] = n["p50_ms"] / o["p50_ms"]
        row["ratio_min"] = n["min_ms"] / o["min_ms"]
        row["ratio_p99"] = n["p99_ms"] / o["p99_ms"]
        if case == "serve":
            row["ratio_sum"] = n["sum_ms"] / o["sum_ms"]
    return row


# --- report -------------------------------------------------------------------


def fmt_ratio(row, key):
    return f"{row[key]:.2f}x" if key in row else "-"


def fmt_spread(*values):
    """The larger spread of the two engines' rounds, flagged when noisy."""
    vals = [v for v in values if v is not None]
    if not vals:
        return "-"
    worst = max(vals)
    return f"{worst:.0%}" + (" noisy" if worst > NOISY_SPREAD else "")


def markdown(head, rows):
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 1 else "--:"
                            for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def errors_into(cells, row, n_col, o_col):
    if row["nngraph_error"] and not row["nngraph"]:
        cells[n_col] = "error: " + cell_text(row["nngraph_error"])
    if row["ort_error"] and not row["ort"]:
        cells[o_col] = "error: " + cell_text(row["ort_error"])


def serve_table(rows):
    head = ["batch", "nngraph p50 ms", "ORT p50 ms", "ratio (p50)",
            "nngraph p99", "ORT p99", "ratio (p99)", "nngraph min", "ORT min",
            "ratio (min)", "nngraph sum ms", "ORT sum ms", "ratio (sum)",
            "nngraph new-shape cost ms", "ORT new-shape cost ms",
            "nngraph repeat p50", "ORT repeat p50", "nngraph peak MiB",
            "ORT peak MiB", "nngraph load+compile ms", "ORT session ms",
            "output diff", "spread of rounds"]
    out = []
    for row in rows:
        n, o = row["nngraph"] or {}, row["ort"] or {}
        c = row["check"]
        cells = [str(row["batch"]),
                 fmt_ms(n.get("p50_ms")), fmt_ms(o.get("p50_ms")),
                 fmt_ratio(row, "ratio_median"),
                 fmt_ms(n.get("p99_ms")), fmt_ms(o.get("p99_ms")),
                 fmt_ratio(row, "ratio_p99"),
                 fmt_ms(n.get("min_ms")), fmt_ms(o.get("min_ms")),
                 fmt_ratio(row, "ratio_min"),
                 fmt_ms(n.get("sum_ms")), fmt_ms(o.get("sum_ms")),
                 fmt_ratio(row, "ratio_sum"),
                 fmt_ms(n.get("new_shape_cost_ms")),
                 fmt_ms(o.get("new_shape_cost_ms")),
                 fmt_ms(n.get("repeat_p50_ms")),
                 fmt_ms(o.get("repeat_p50_ms")),
                 fmt_mib(n.get("peak_rss_bytes")),
                 fmt_mib(o.get("peak_rss_bytes")),
                 fmt_ms(n.get("setup_ms")), fmt_ms(o.get("setup_ms")),
                 (f"{c['heads_rel']:.1e} / {c['abs_sum_rel']:.1e}" if c
                  else "-"),
                 fmt_spread(n.get("sum_spread"), o.get("sum_spread"))]
        errors_into(cells, row, 1, 2)
        out.append(cells)
    return markdown(head, out)


def decode_table(rows):
    head = ["batch", "nngraph tokens/s", "ORT tokens/s", "nngraph p50 ms",
            "ORT p50 ms", "ratio (p50)", "nngraph p99", "ORT p99",
            "ratio (p99)", "nngraph min", "ORT min", "ratio (min)",
            "nngraph 1st step", "ORT 1st step", "same tokens",
            "nngraph peak MiB", "ORT peak MiB", "nngraph load+compile ms",
            "ORT session ms", "spread of rounds"]
    out = []
    for row in rows:
        n, o = row["nngraph"] or {}, row["ort"] or {}
        rate = lambda s: f"{s['tokens_per_s']:.1f}" if s else "-"
        cells = [str(row["batch"]), rate(n), rate(o),
                 fmt_ms(n.get("p50_ms")), fmt_ms(o.get("p50_ms")),
                 fmt_ratio(row, "ratio_median"),
                 fmt_ms(n.get("p99_ms")), fmt_ms(o.get("p99_ms")),
                 fmt_ratio(row, "ratio_p99"),
                 fmt_ms(n.get("min_ms")), fmt_ms(o.get("min_ms")),
                 fmt_ratio(row, "ratio_min"),
                 fmt_ms(n.get("first_step_ms")),
                 fmt_ms(o.get("first_step_ms")),
                 row["same_tokens"] or "-",
                 fmt_mib(n.get("peak_rss_bytes")),
                 fmt_mib(o.get("peak_rss_bytes")),
                 fmt_ms(n.get("setup_ms")), fmt_ms(o.get("setup_ms")),
                 fmt_spread(n.get("total_spread"), o.get("total_spread"))]
        errors_into(cells, row, 1, 2)
        out.append(cells)
    return markdown(head, out)


def export_models(args, cases):
    names = [{"serve": "encoder", "decode": "decoder"}[c] for c in cases]
    cmd = [args.python, os.path.join(HERE, "export_models.py"),
           os.path.join(args.out, "models"), "--models", ",".join(names)]
    if args.force_export:
        cmd.append("--force")
    log("exporting models: " + " ".join(cmd))
    if subprocess.run(cmd, stdout=sys.stderr).returncode != 0:
        sys.exit("dynamic: exporting the models failed (see above)")
    return {c: os.path.join(args.out, "models", n + ".onnx")
            for c, n in zip(cases, names)}


def now():
    return (datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%d %H:%M UTC"))


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    models = export_models(args, args.cases)
    shutil.rmtree(os.path.join(args.out, "jit-cache"), ignore_errors=True)
    if module_version(args) is None:
        log(f"warning: {args.python} cannot import nngraph from "
            f"{args.pythonpath}; build it with `cmake --build build --target "
            "_nngraph` (or pass --pythonpath); timing ORT only")
    rng = random.Random(args.seed)
    lengths = [rng.randint(args.min_len, args.max_len)
               for _ in range(args.requests)]
    info = {"cpu": cpu_model(), "isa": cpu_flags(),
            "logical_cpus": os.cpu_count(), "threads": args.threads,
            "rounds": args.rounds, "competitor": args.competitor,
            "jit_cache": args.jit_cache,
            "started": now(), "load_average_before": load_average()}
    if info["load_average_before"][0] > 0.5:
        log(f"warning: load average {info['load_average_before']}: other "
            "work is running; with more runnable threads than cores the "
            "figures (nngraph's OpenMP barriers above all) are noise")
    rows = []
    with (Competitors(args.python, 1, log) if args.competitor
          else contextlib.nullcontext()):
        for case in args.cases:
            for batch in args.batches:
                row = measure(args, case, models[case], batch, lengths)
                if "skip" in row:
                    print(row["skip"])
                    sys.exit(SKIP_STATUS)
                rows.append(row)
    info["load_average_after"] = load_average()
    info["finished"] = now()
    versions = lambda key: ", ".join(sorted(
        {r[key] for row in rows for side in ("nngraph_rounds", "ort_rounds")
         for r in row[side] if key in r})) or None
    info["ort_version"] = versions("ort_version")
    info["nngraph_version"] = versions("nngraph_version")
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"machine": info, "options": {
            k: v for k, v in vars(args).items() if k != "json"},
            "results": rows}, f, indent=1)

    print(f"nngraph {info['nngraph_version'] or '?'} (Python module, `cpu` "
          f"backend, O2) vs ONNX Runtime {info['ort_version'] or '?'} "
          "(onnxruntime-node, CPU EP)")
    print(f"CPU: {info['cpu']} ({info['isa']}), {info['logical_cpus']} "
          f"logical CPUs; {args.threads} threads each; {args.rounds} "
          f"interleaved rounds of fresh processes; nngraph's JIT cache "
          f"{args.jit_cache}; "
          + ("one busy competing process; " if args.competitor else "")
          + f"load average {info['load_average_before']} before, "
          f"{info['load_average_after']} after; {info['started']} to "
          f"{info['finished']}")
    serve_rows = [r for r in rows if r["case"] == "serve"]
    decode_rows = [r for r in rows if r["case"] == "decode"]
    if serve_rows:
        print()
        print(f"Serving the encoder (6 layers, d 384): {args.requests} "
              f"requests per process, sequence lengths drawn from "
              f"[{args.min_len}, {args.max_len}] (seed {args.seed}; "
              f"{len(set(lengths))} distinct), one warm-up run at the first")
        print()
        print(serve_table(serve_rows))
    if decode_rows:
        print()
        print(f"Greedy decoding (8 blocks, d 512, vocabulary 16384): "
              f"{args.tokens} tokens from a KV cache of {args.cache}, no "
              "warm-up (every step is a new cache length); tokens/s counts "
              "every row of the batch")
        print()
        print(decode_table(decode_rows))
    print()
    print("ratio = nngraph / ORT (below 1: nngraph faster) of the p50, p99, "
          "minimum and sum over all requests (steps) of all rounds; sum = "
          "median over rounds of one process's total. New-shape cost = "
          "first run at a length not seen before minus the repeat run right "
          "after it, median over those lengths of all rounds; repeat p50 = "
          "the repeat runs' median. Output diff = largest |nngraph - ORT| "
          "of the first 8 output values (relative to the largest |ORT| "
          "among them) / largest relative difference of the sums of |x|, "
          "over the requests. Spread of rounds = (max - min) / median of "
          "the rounds' totals, the larger of the two engines; "
          f"'noisy' above {NOISY_SPREAD:.0%}. Full data: {args.json}")
    for r in rows:
        for side in ("nngraph", "ort"):
            if r[side + "_error"]:
                print(f"{r['case']} batch {r['batch']}: {side} failed: "
                      f"{r[side + '_error']}")


if __name__ == "__main__":
    main()
