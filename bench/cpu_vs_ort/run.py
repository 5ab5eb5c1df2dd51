#!/usr/bin/python3
# ===- run.py - nngraph cpu vs ONNX Runtime, side by side (issue 14) -------===#
#
# The one command of the side-by-side benchmark: exports the models with
# export_models.py (Debian's python3-torch, random weights, fixed seed),
# then for each model and batch size runs interleaved rounds, each a fresh
# process: nngraph-run on the `cpu` backend, then ONNX Runtime (ort_time.mjs:
# onnxruntime-node, CPU EP), then nngraph-run again, ... with the same thread
# count. Prints a markdown table of medians, minimums, p90s and the ratios
# nngraph / ORT, peak RSS and compile times, and writes every measurement to
# --json.
#
# Both sides run on the same inputs (nngraph-run's splitmix64 inputs, seed
# 0, which ort_time.mjs reproduces), so the first --check-values output
# values of the two are compared too ("max |diff|" in the table).
#
# Usage: python3 bench/cpu_vs_ort/run.py [--models mlp,transformer,...]
#            [--batches 1,8] [--threads 2] [--rounds 5] [--runs 10]
#            [--nngraph build/bin/nngraph-run] [--out build/bench/cpu_vs_ort]
#            [--competitors 0,1,2] [--json FILE]
# --competitors measures every model under each number of busy competing
# processes (Python loops, started before and killed after the condition's
# runs): the shared-machine benchmark (issue 32), one table per condition.
# See bench/README.md.
#
# ===----------------------------------------------------------------------===#

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from sidebyside import (Competitors, cell_text, comma_counts,  # noqa: E402
                        comma_ints,
                        cpu_flags, cpu_model, exit_text, fmt_mib, fmt_ms,
                        last_lines, load_average, logger, run_child)
MODELS = ["mlp", "transformer", "resnet18", "mobilenet_v2", "resnet50"]
SKIP_STATUS = 77


log = logger("cpu_vs_ort")


def parse_args():
    p = argparse.ArgumentParser(
        description="nngraph cpu backend vs ONNX Runtime (CPU EP), side by "
        "side: interleaved rounds, medians and ratios, peak RSS, compile "
        "times.")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of " + ", ".join(MODELS)
                   + " (default: all)")
    p.add_argument("--batches", type=comma_ints, default=[1, 8],
                   help="batch sizes, bound to the input dim N (default 1,8)")
    p.add_argument("--threads", type=int, default=2,
                   help="threads of both: OMP_NUM_THREADS for nngraph, "
                   "intraOpNumThreads for ORT (default 2)")
    p.add_argument("--rounds", type=int, default=5,
                   help="interleaved rounds per model and batch; each round "
                   "is one nngraph-run process and one ORT process "
                   "(default 5)")
    p.add_argument("--runs", type=int, default=10,
                   help="timed runs per process, after one warm-up run "
                   "(default 10)")
    p.add_argument("--nngraph", default=os.path.join(REPO, "build", "bin",
                                                     "nngraph-run"),
                   help="the nngraph-run program (default "
                   "build/bin/nngraph-run of this checkout)")
    p.add_argument("--out", default=os.path.join(REPO, "build", "bench",
                                                 "cpu_vs_ort"),
                   help="working folder: models/ holds the exports "
                   "(default build/bench/cpu_vs_ort)")
    p.add_argument("--json", help="write all measurements to this file "
                   "(default OUT/results.json)")
    p.add_argument("--check-values", type=int, default=4096,
                   help="compare the first K output values of nngraph and "
                   "ORT (default 4096; 0: no check)")
    p.add_argument("--precision", default="f32",
                   help="comma-separated: f32 (the exports) and/or int8 "
                   "(each export quantized statically by nngraph-quantize, "
                   "calibrated on 8 random samples: fine for speed, not for "
                   "accuracy; both engines run the same QDQ file); "
                   "default f32")
    p.add_argument("--competitors", type=comma_counts, default=[0],
                   help="comma-separated numbers of busy competing processes "
                   "to measure under, e.g. 0,1,2 (default 0: a quiet machine)")
    p.add_argument("--force-export", action="store_true",
                   help="export the models again even when the files exist")
    args = p.parse_args()
    args.precision = [x for x in args.precision.split(",") if x]
    bad = [x for x in args.precision if x not in ("f32", "int8")]
    if bad or not args.precision:
        p.error("--precision takes f32 and/or int8")
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; known: "
                + ", ".join(MODELS))
    for name in ("threads", "rounds", "runs"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if args.check_values < 0:
        p.error("--check-values must be at least 0")
    args.json = args.json or os.path.join(args.out, "results.json")
    return args


def run_nngraph(args, model_path, batch):
    """One nngraph-run process: returns a dict with compile_ms, warmup_ms,
    runs_ms, peak_rss_bytes, values; or {"error": message}."""
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    cmd = [args.nngraph, model_path, "--backend", "cpu", "--dim",
           f"N={batch}", "--repeat", str(1 + args.runs), "--json",
           "--max-values", str(args.check_values)]
    try:
        code, out, err, rss = run_child(cmd, env)
    except OSError as e:
        return {"error": f"cannot run {args.nngraph}: {e}"}
    if code != 0:
        # The model's path is in the table's row already.
        message = last_lines(err).replace(model_path + ": ", "")
        return {"error": f"nngraph-run {exit_text(code)}: {message}"}
    try:
        report = json.loads(out)
        times = report["time_ms"]
        runs = times["runs"]
        values = report["outputs"][0]["values"] if report["outputs"] else []
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return {"error": f"nngraph-run printed no usable JSON ({e}): "
                f"{last_lines(out + err)}"}
    # nngraph-run optimizes (-O2) before it compiles; ORT's session
    # creation does both, so both count.
    compile_ms = times["compile"] + times.get("optimize", 0.0)
    return {"compile_ms": compile_ms, "warmup_ms": runs[:1],
            "runs_ms": runs[1:], "peak_rss_bytes": rss, "values": values}


def run_ort(args, model_path, batch):
    """One ort_time.mjs process; like run_nngraph, plus baseline_rss_bytes
    and ort_version. A dict with "skip" when onnxruntime-node is missing."""
    cmd = ["node", os.path.join(HERE, "ort_time.mjs"), model_path, "--dim",
           f"N={batch}", "--threads", str(args.threads), "--warmup", "1",
           "--runs", str(args.runs), "--max-values", str(args.check_values)]
    try:
        code, out, err, rss = run_child(cmd)
    except OSError as e:
        return {"error": f"cannot run node: {e}"}
    if code == SKIP_STATUS:
        return {"skip": last_lines(out + err)}
    if code != 0:
        return {"error": f"ort_time.mjs {exit_text(code)}: {last_lines(err)}"}
    try:
        report = json.loads(out.strip().splitlines()[-1])
        values = report["outputs"][0]["values"] if report["outputs"] else []
        return {"compile_ms": report["compile_ms"],
                "warmup_ms": report["warmup_ms"], "runs_ms": report["runs_ms"],
                "peak_rss_bytes": max(rss, report["peak_rss_bytes"]),
                "baseline_rss_bytes": report["baseline_rss_bytes"],
                "ort_version": report["ort_version"], "values": values}
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return {"error": f"ort_time.mjs printed no usable JSON ({e}): "
                f"{last_lines(out + err)}"}


def nngraph_version(binary):
    try:
        code, out, err, _ = run_child([binary, "--version"])
    except OSError:
        return None
    return "; ".join(out.strip().splitlines()) if code == 0 and out.strip() \
        else None


# --- statistics ---------------------------------------------------------------


def summarize(rounds):
    """Statistics over all timed runs of the successful rounds."""
    ok = [r for r in rounds if "runs_ms" in r]
    runs = [t for r in ok for t in r["runs_ms"]]
    if not runs:
        return None
    ordered = sorted(runs)
    # p90 and p99 by nearest rank.
    def rank(p):
        return ordered[min(len(ordered) - 1, -(-p * len(ordered) // 100) - 1)]
    s = {"min_ms": ordered[0], "median_ms": statistics.median(runs),
         "p90_ms": rank(90), "p99_ms": rank(99), "timed_runs": len(runs),
         "compile_ms": statistics.median(r["compile_ms"] for r in ok),
         "first_run_ms": None,
         "peak_rss_bytes": max(r["peak_rss_bytes"] for r in ok)}
    firsts = [r["warmup_ms"][0] for r in ok if r["warmup_ms"]]
    if firsts:
        # The untimed warm-up run: where a lazy backend compiles.
        s["first_run_ms"] = statistics.median(firsts)
    if all("baseline_rss_bytes" in r for r in ok):
        s["baseline_rss_bytes"] = max(r["baseline_rss_bytes"] for r in ok)
    return s


def compare_values(a, b):
    """Max |a - b| over the common prefix and the largest |b| (the scale)."""
    n = min(len(a), len(b))
    if n == 0:
        return None
    diff = max(abs(x - y) for x, y in zip(a[:n], b[:n]))
    scale = max(abs(y) for y in b[:n])
    return {"compared": n, "max_abs_diff": diff, "max_abs_ort": scale,
            "relative": diff / scale if scale > 0 else diff}


# --- one model ----------------------------------------------------------------


def quantized_model(args, model):
    """models/MODEL.int8.onnx, written by nngraph-quantize (next to
    nngraph-run) when missing or --force-export; None when it fails."""
    src = os.path.join(args.out, "models", model + ".onnx")
    dst = os.path.join(args.out, "models", model + ".int8.onnx")
    if os.path.exists(dst) and not args.force_export:
        return dst
    tool = os.path.join(os.path.dirname(args.nngraph), "nngraph-quantize")
    cmd = [tool, src, "-o", dst, "--random-calibration", "8"]
    log("quantizing: " + " ".join(cmd))
    try:
        code, out, err, _ = run_child(cmd)
    except OSError as e:
        log(f"cannot run {tool}: {e}")
        return None
    if code != 0:
        log(f"nngraph-quantize {exit_text(code)}: {last_lines(err)}")
        return None
    return dst


def measure(args, model, batch, path=None, label=None):
    path = path or os.path.join(args.out, "models", model + ".onnx")
    model = label or model
    nng_rounds, ort_rounds = [], []
    nng_error = ort_error = None
    for r in range(args.rounds):
        if nng_error is None:
            log(f"{model} batch {batch} round {r + 1}/{args.rounds}: nngraph")
            res = run_nngraph(args, path, batch)
            nng_rounds.append(res)
            if "error" in res:
                nng_error = res["error"]
                log(f"  nngraph failed, not retried: {nng_error}")
        if ort_error is None:
            log(f"{model} batch {batch} round {r + 1}/{args.rounds}: ORT")
            res = run_ort(args, path, batch)
            if "skip" in res:
                return {"skip": res["skip"]}
            ort_rounds.append(res)
            if "error" in res:
                ort_error = res["error"]
                log(f"  ORT failed, not retried: {ort_error}")
        if nng_error and ort_error:
            break
    row = {"model": model, "batch": batch, "nngraph_rounds": nng_rounds,
           "ort_rounds": ort_rounds, "nngraph": summarize(nng_rounds),
           "ort": summarize(ort_rounds), "nngraph_error": nng_error,
           "ort_error": ort_error, "check": None}
    nng_ok = [x for x in nng_rounds if "values" in x]
    ort_ok = [x for x in ort_rounds if "values" in x]
    if nng_ok and ort_ok:
        row["check"] = compare_values(nng_ok[0]["values"], ort_ok[0]["values"])
    for rounds in (nng_rounds, ort_rounds):
        for x in rounds:
            x.pop("values", None)
    n, o = row["nngraph"], row["ort"]
    if n and o:
        row["ratio_median"] = n["median_ms"] / o["median_ms"]
        row["ratio_min"] = n["min_ms"] / o["min_ms"]
    return row


# --- report -------------------------------------------------------------------


def table(rows):
    """The markdown table. "output diff" is max |nngraph - ORT| / max |ORT|
    over the compared output values."""
    head = ["model", "batch", "nngraph median ms", "ORT median ms",
            "ratio (median)", "nngraph min", "ORT min", "ratio (min)",
            "nngraph p90", "ORT p90", "ratio (p90)", "nngraph p99",
            "ORT p99", "nngraph peak MiB",
            "ORT peak MiB (base)", "nngraph optimize+compile ms",
            "nngraph 1st run ms", "ORT session ms", "ORT 1st run ms",
            "output diff"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 2 else "--:"
                            for i in range(len(head))) + "|"]
    for row in rows:
        n, o = row["nngraph"] or {}, row["ort"] or {}
        cells = [row["model"], str(row["batch"])]
        cells += [fmt_ms(n.get("median_ms")), fmt_ms(o.get("median_ms")),
                  f"{row['ratio_median']:.2f}x" if "ratio_median" in row
                  else "-",
                  fmt_ms(n.get("min_ms")), fmt_ms(o.get("min_ms")),
                  f"{row['ratio_min']:.2f}x" if "ratio_min" in row else "-",
                  fmt_ms(n.get("p90_ms")), fmt_ms(o.get("p90_ms")),
                  (f"{n['p90_ms'] / o['p90_ms']:.2f}x"
                   if n.get("p90_ms") and o.get("p90_ms") else "-"),
                  fmt_ms(n.get("p99_ms")), fmt_ms(o.get("p99_ms")),
                  fmt_mib(n.get("peak_rss_bytes")),
                  (f"{fmt_mib(o['peak_rss_bytes'])} "
                   f"({fmt_mib(o.get('baseline_rss_bytes'))})" if o else "-"),
                  fmt_ms(n.get("compile_ms")), fmt_ms(n.get("first_run_ms")),
                  fmt_ms(o.get("compile_ms")), fmt_ms(o.get("first_run_ms"))]
        c = row["check"]
        cells.append(f"{c['relative']:.1e} ({c['compared']} values)"
                     if c else "-")
        if row["nngraph_error"] and not n:
            cells[2] = "error: " + cell_text(row["nngraph_error"])
        if row["ort_error"] and not o:
            cells[3] = "error: " + cell_text(row["ort_error"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    models_dir = os.path.join(args.out, "models")
    export = ["/usr/bin/python3", os.path.join(HERE, "export_models.py"),
              models_dir, "--models", ",".join(args.models)]
    if args.force_export:
        export.append("--force")
    log("exporting models: " + " ".join(export))
    if subprocess.run(export, stdout=sys.stderr).returncode != 0:
        sys.exit("cpu_vs_ort: exporting the models failed (see above)")

    version = nngraph_version(args.nngraph)
    if version is None:
        log(f"warning: {args.nngraph} does not run; build it with "
            "`cmake --build build --target nngraph-run` (or pass --nngraph); "
            "timing ORT only")
    info = {"cpu": cpu_model(), "isa": cpu_flags(),
            "logical_cpus": os.cpu_count(), "threads": args.threads,
            "rounds": args.rounds, "runs_per_round": args.runs,
            "nngraph_run": args.nngraph, "nngraph_version": version,
            "started": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%d %H:%M UTC"),
            "load_average_before": load_average()}
    if info["load_average_before"][0] > 0.5:
        log(f"warning: load average {info['load_average_before']}: other "
            "work is running; with more runnable threads than cores the "
            "medians (nngraph's OpenMP barriers above all) are noise")
    rows = []
    for competitors in args.competitors:
        with Competitors("/usr/bin/python3", competitors, log):
            for precision in args.precision:
                for model in args.models:
                    path, label = None, None
                    if precision == "int8":
                        path = quantized_model(args, model)
                        label = model + " int8"
                        if path is None:
                            sys.exit(f"cpu_vs_ort: quantizing {model} failed "
                                     "(see above)")
                    for batch in args.batches:
                        row = measure(args, model, batch, path, label)
                        if "skip" in row:
                            print(row["skip"])
                            sys.exit(SKIP_STATUS)
                        row["competitors"] = competitors
                        rows.append(row)
    info["load_average_after"] = load_average()
    info["finished"] = (datetime.datetime.now(datetime.timezone.utc)
                        .strftime("%Y-%m-%d %H:%M UTC"))
    ort_versions = {r.get("ort_version") for row in rows
                    for r in row["ort_rounds"] if "ort_version" in r}
    info["ort_version"] = ", ".join(sorted(ort_versions)) or None

    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"machine": info, "results": rows}, f, indent=1)

    print(f"nngraph `cpu` ({version or 'nngraph-run not available'}) vs "
          f"ONNX Runtime {info['ort_version'] or '?'} (onnxruntime-node, "
          "CPU EP)")
    print(f"CPU: {info['cpu']} ({info['isa']}), {info['logical_cpus']} "
          f"logical CPUs; {args.threads} threads each; {args.rounds} "
          f"interleaved rounds x {args.runs} timed runs (after 1 warm-up "
          f"run per process); load average {info['load_average_before']} "
          f"before, {info['load_average_after']} after; "
          f"{info['started']} to {info['finished']}")
    for competitors in args.competitors:
        print()
        if len(args.competitors) > 1 or competitors:
            print(f"With {competitors} busy competing process"
                  f"{'' if competitors == 1 else 'es'}:" if competitors
                  else "Quiet (no competing process):")
            print()
        print(table([r for r in rows if r["competitors"] == competitors]))
    print()
    print("ratio = nngraph / ORT (below 1: nngraph faster); ORT peak RSS in "
          "parentheses: the node process with onnxruntime-node loaded, before "
          "the session; output diff = max |nngraph - ORT| / max |ORT| over "
          f"the first {args.check_values} output values. Full data: "
          f"{args.json}")
    failed = [r for r in rows if r["nngraph_error"] or r["ort_error"]]
    for r in failed:
        for side in ("nngraph", "ort"):
            if r[side + "_error"]:
                print(f"{r['model']} batch {r['batch']}: {side} failed: "
                      f"{r[side + '_error']}")


if __name__ == "__main__":
    main()
