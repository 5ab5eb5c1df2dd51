# lit configuration for nngraph's text-IR, pass and tool tests: every *.nng
# and *.test file under tests/lit runs its RUN lines with the built tools and
# FileCheck on PATH.
import os
import lit.formats

config.name = "nngraph"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".nng", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join(
    [config.nngraph_tools_dir, os.path.dirname(config.filecheck),
     config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%nngraph_src", config.nngraph_src_dir))

# CPU features for tests whose schedule depends on the kernels oneDNN has
# here (REQUIRES: avx512-core): read from /proc/cpuinfo where it exists.
try:
    with open("/proc/cpuinfo") as f:
        flags = set()
        for line in f:
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
                break
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        config.available_features.add("avx512-core")
except OSError:
    pass

# Two CPUs or more in this process's affinity mask (the adaptive-threads
# test pins itself to CPUs 0 and 1).
try:
    if len(os.sched_getaffinity(0)) >= 2 and {0, 1} <= os.sched_getaffinity(0):
        config.available_features.add("two-cpus")
    # Exactly two CPUs online, both this process's: the runnable count of
    # /proc/loadavg is then about them (runtime/Contention.h).
    if os.cpu_count() == 2 and os.sched_getaffinity(0) == {0, 1}:
        config.available_features.add("two-cpu-machine")
except (AttributeError, OSError):
    pass
