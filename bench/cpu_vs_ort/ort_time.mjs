#!/usr/bin/env node
// ort_time.mjs - Times one ONNX model in ONNX Runtime (npm onnxruntime-node,
// CPU execution provider): session creation (ORT's "compile"), W warm-up
// runs, then R timed runs, and prints one JSON line. The ORT half of
// bench/cpu_vs_ort/run.py; it also works by hand.
//
// Usage: node bench/cpu_vs_ort/ort_time.mjs MODEL.onnx [--dim NAME=VALUE]...
//            [--threads T] [--warmup W] [--runs R] [--input-seed S]
//            [--max-values K]
//
// The session uses intraOpNumThreads=T (default 2), interOpNumThreads=1 and
// graphOptimizationLevel 'all' (ORT's default). The inputs are the ones
// nngraph-run makes (backends/lib/Inputs.cpp): symbolic dims bound by
// --dim (1 when unbound), one splitmix64 stream per input seeded from
// --input-seed (default 0), floats uniform in [-1, 1), integers in [0, 10),
// bools 0 or 1; so the outputs can be compared with nngraph-run's.
//
// Output, one line: {"model", "ort_version", "threads", "inputs": [{"name",
// "dtype", "shape"}], "compile_ms", "warmup_ms": [...], "runs_ms": [...],
// "outputs": [{"name", "dtype", "shape", "numel", "values": first K (default
// 8)}], "baseline_rss_bytes" (RSS after loading onnxruntime-node, before
// creating the session), "peak_rss_bytes" (the process's peak RSS)}.
//
// onnxruntime-node is found by tests/ort/load_ort.mjs (as for the export
// checks); when it cannot be loaded the script prints "SKIP: <reason>" and
// exits with status 77.

import { performance } from 'node:perf_hooks';
import { loadOrt } from '../../tests/ort/load_ort.mjs';


function usage(msg) {
  console.error(`ort_time.mjs: ${msg}\nusage: node ort_time.mjs MODEL.onnx ` +
                '[--dim NAME=VALUE]... [--threads T] [--warmup W] [--runs R] ' +
                '[--input-seed S] [--max-values K]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { dims: {}, threads: 2, warmup: 1, runs: 10, seed: 0n,
              maxValues: 8, model: null };
  const count = (name, text, min) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) usage(`bad ${name} '${text}'`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(next());
      if (!m) usage(`bad --dim '${argv[i]}', expected NAME=VALUE`);
      o.dims[m[1]] = Number(m[2]);
    } else if (a === '--threads') o.threads = count(a, next(), 1);
    else if (a === '--warmup') o.warmup = count(a, next(), 0);
    else if (a === '--runs') o.runs = count(a, next(), 1);
    else if (a === '--max-values') o.maxValues = count(a, next(), 0);
    else if (a === '--input-seed') {
      const s = next();
      if (!/^\d+$/.test(s)) usage(`bad --input-seed '${s}'`);
      o.seed = BigInt(s);
    } else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (o.model === null) o.model = a;
    else usage(`unexpected argument '${a}'`);
  }
  if (o.model === null) usage('expected MODEL.onnx');
  return o;
}

// splitmix64, as backends/lib/Inputs.cpp: the same seed gives the same values.
const MASK64 = (1n << 64n) - 1n;
class SplitMix64 {
  constructor(seed) { this.state = BigInt.asUintN(64, seed); }
  next() {
    this.state = (this.state + 0x9E3779B97F4A7C15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
    return z ^ (z >> 31n);
  }
  uniform() { return Number(this.next() >> 11n) * 2 ** -53; }
}

// ORT type -> [TypedArray, kind of values]; the kinds follow Inputs.cpp.
const TYPES = {
  float32: [Float32Array, 'float'], float64: [Float64Array, 'float'],
  int8: [Int8Array, 'int'], int16: [Int16Array, 'int'],
  int32: [Int32Array, 'int'], int64: [BigInt64Array, 'int64'],
  uint8: [Uint8Array, 'int'], uint16: [Uint16Array, 'int'],
  bool: [Uint8Array, 'bool'],
};

function deterministicTensor(ort, type, shape, seed) {
  const entry = TYPES[type];
  if (!entry) throw new Error(`an input of type ${type}, which ort_time.mjs ` +
                              'cannot make');
  const [Arr, kind] = entry;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Arr(n);
  const gen = new SplitMix64(seed);
  for (let i = 0; i < n; ++i) {
    if (kind === 'float') data[i] = gen.uniform() * 2 - 1;
    else if (kind === 'int') data[i] = Number(gen.next() % 10n);
    else if (kind === 'int64') data[i] = gen.next() % 10n;
    else data[i] = Number(gen.next() & 1n);
  }
  return new ort.Tensor(type, data, shape);
}

const opts = parseArgs(process.argv.slice(2));
const { ort, version } = loadOrt();

async function main() {
  const baselineRss = process.memoryUsage().rss;

  let start = performance.now();
  const session = await ort.InferenceSession.create(opts.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const compileMs = performance.now() - start;

  const seeds = new SplitMix64(opts.seed);
  const feeds = {};
  const inputs = session.inputMetadata.map((m) => {
    const shape = m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d
                                      : opts.dims[d] ?? 1));
    feeds[m.name] = deterministicTensor(ort, m.type, shape, seeds.next());
    return { name: m.name, dtype: m.type, shape };
  });

  const time = async () => {
    const t0 = performance.now();
    const out = await session.run(feeds);
    return [performance.now() - t0, out];
  };
  const warmupMs = [], runsMs = [];
  let results;
  for (let i = 0; i < opts.warmup; ++i) {
    const [ms, out] = await time();
    warmupMs.push(ms);
    results = out;
  }
  for (let i = 0; i < opts.runs; ++i) {
    const [ms, out] = await time();
    runsMs.push(ms);
    results = out;
  }

  const outputs = session.outputNames.map((name) => {
    const t = results[name];
    const values = Array.from(t.data.slice(0, opts.maxValues), Number);
    return { name, dtype: t.type, shape: t.dims.map(Number), numel: t.size,
             values };
  });
  console.log(JSON.stringify({
    model: opts.model, ort_version: version, threads: opts.threads, inputs,
    compile_ms: compileMs, warmup_ms: warmupMs, runs_ms: runsMs, outputs,
    baseline_rss_bytes: baselineRss,
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
  }));
}

main().catch((e) => {
  console.error(`ort_time.mjs: ${opts.model}: ${e.message || e}`);
  process.exit(1);
});
