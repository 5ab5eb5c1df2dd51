#!/usr/bin/python3
# ===- sidebyside.py - What the side-by-side benchmarks share --------------===#
#
# The helpers of bench/cpu_vs_ort/run.py and bench/dynamic/run.py: the
# machine (CPU model and ISA, load average), child processes with their
# peak RSS, comma-separated integer options, the cells of the markdown
# tables, and the loop of the model exporters. Imported from the bench/
# folder (each script puts it on sys.path).
#
# ===----------------------------------------------------------------------===#

import argparse
import os
import subprocess
import sys
import tempfile
import time


def logger(prefix):
    """A log function printing "PREFIX: message" to stderr."""
    def log(msg):
        print(f"{prefix}: {msg}", file=sys.stderr, flush=True)
    return log


def comma_ints(text, least=1):
    """argparse type: a comma-separated list of integers of at least
    `least` (positive by default)."""
    try:
        values = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers, got '{text}'")
    if not values or min(values) < least:
        what = "positive" if least == 1 else f"at least {least}"
        raise argparse.ArgumentTypeError(f"expected {what} integers, "
                                         f"got '{text}'")
    return values


def comma_counts(text):
    """argparse type: a comma-separated list of integers of 0 or more."""
    return comma_ints(text, least=0)


# --- machine ------------------------------------------------------------------


def cpu_model():
    """The CPU's model name, with the family and model numbers (lscpu, else
    /proc/cpuinfo): virtual machines often report just "AMD EPYC"."""
    fields = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True,
                             check=False).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
        name = fields.get("Model name")
        family, model = fields.get("CPU family"), fields.get("Model")
    except OSError:
        name = None
    if not name:
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    fields.setdefault(key.strip(), value.strip())
            name = fields.get("model name")
            family, model = fields.get("cpu family"), fields.get("model")
        except OSError:
            pass
    if not name:
        return "unknown CPU"
    return f"{name} (family {family}, model {model})" if family else name


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    if "avx512f" in flags:
                        return "AVX-512"
                    return "AVX2" if "avx2" in flags else "no AVX2"
    except OSError:
        pass
    return "unknown ISA"


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


# --- processes ----------------------------------------------------------------


def run_child(cmd, env=None):
    """Runs cmd to completion; returns (exit code, stdout, stderr, peak RSS
    in bytes). The peak RSS is the child's own, from wait4's rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env,
                                stdin=subprocess.DEVNULL)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), usage.ru_maxrss * 1024)


def last_lines(text, n=3):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-n:]) if lines else "(no message)"


def exit_text(code):
    return f"signal {-code}" if code < 0 else f"exit {code}"


# --- report cells -------------------------------------------------------------


def fmt_ms(x):
    return "-" if x is None else (f"{x:.3f}" if abs(x) < 10 else
                                  f"{x:.2f}" if abs(x) < 100 else f"{x:.1f}")


def fmt_mib(b):
    return "-" if b is None else f"{b / 2**20:.0f}"


def cell_text(text, limit=80):
    text = text.replace("|", "/")
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --- exporters -----------------------------------------------------------------


def export_all(prog, names, out_dir, force, export):
    """Writes OUT_DIR/NAME.onnx with export(name, path) for each name,
    skipping files that exist unless force; exits naming the model that
    failed."""
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        path = os.path.join(out_dir, name + ".onnx")
        if os.path.exists(path) and not force:
            print(f"{prog}: {path} exists, skipped (--force to redo)")
            continue
        start = time.monotonic()
        try:
            export(name, path)
        except Exception as e:  # report which model, then stop
            sys.exit(f"{prog}: exporting {name} to {path} failed: "
                     f"{type(e).__name__}: {e}")
        print(f"{prog}: wrote {path} "
              f"({os.path.getsize(path) / 2**20:.1f} MiB, "
              f"{time.monotonic() - start:.1f} s)")


class Competitors:
    """N busy processes (Python loops) for the duration of a with block;
    none for N = 0. They are killed on leaving it, whatever happened."""

    def __init__(self, python, n, log):
        self.python, self.n, self.log = python, n, log
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            proc = subprocess.Popen([self.python, "-c", "while True: pass"],
                                    stdin=subprocess.DEVNULL)
            self.procs.append(proc)
            self.log(f"competitor: busy process {proc.pid} started")
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()
            self.log(f"competitor: busy process {proc.pid} stopped")
        self.procs = []
