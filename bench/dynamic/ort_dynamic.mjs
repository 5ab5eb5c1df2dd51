#!/usr/bin/env node
// ort_dynamic.mjs - The ONNX Runtime half of bench/dynamic/run.py: serves an
// encoder with a list of sequence lengths, or decodes greedily with a
// decoder's KV cache, in onnxruntime-node (CPU EP), and prints one JSON
// line. run.py runs the nngraph half (dynamic.py) on the same inputs.
//
// Usage:
//   node ort_dynamic.mjs serve MODEL.onnx --lengths 8,200,... [--batch B]
//        [--threads T] [--width 384] [--repeats 8]
//   node ort_dynamic.mjs decode MODEL.onnx [--batch B] [--cache 32]
//        [--tokens 128] [--threads T]
//
// serve: one run per length (input f32[B,L,width]), after one warm-up run
// at the first length; prints {"times_ms": [...], "repeat_ms": [...]}
// where repeat_ms times a second run at each of the first --repeats lengths
// (default 8; so a new-shape cost is times - repeat), "checksums" (sum of
// each output), "abs_sums" (sum of |x|: the encoder ends in a LayerNorm, so
// plain sums are rounding noise near 0) and "heads" (the first 8 values of
// each output).
// decode: the cache starts as P=cache positions of fixed values, the first
// token of row b is b+1; each step feeds the argmax token and the present
// keys/values back; prints {"tokens": [[...] per row], "times_ms": [...]}.
// Both print "session_ms" (creating the session: loading and optimising
// the model), "peak_rss_bytes" and "ort_version". Input values follow
// inputValues() below, which dynamic.py reproduces exactly.

import { performance } from 'node:perf_hooks';
import { loadOrt } from '../../tests/ort/load_ort.mjs';

function usage(msg) {
  console.error(`ort_dynamic.mjs: ${msg}\nusage: node ort_dynamic.mjs ` +
                'serve|decode MODEL.onnx [options]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { mode: argv[0], model: argv[1], lengths: [], batch: 1,
              threads: 2, width: 384, cache: 32, tokens: 128, repeats: 8 };
  if (!['serve', 'decode'].includes(o.mode) || !o.model)
    usage('expected serve|decode MODEL.onnx');
  for (let i = 2; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--lengths') o.lengths = next().split(',').map(Number);
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--threads') o.threads = Number(next());
    else if (a === '--width') o.width = Number(next());
    else if (a === '--cache') o.cache = Number(next());
    else if (a === '--tokens') o.tokens = Number(next());
    else if (a === '--repeats') o.repeats = Number(next());
    else usage(`unknown option ${a}`);
  }
  return o;
}

/// Deterministic values in [-0.5, 0.5): element i of a tensor with offset K.
export function inputValues(n, k = 0) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; ++i) a[i] = (((i + k) * 7919) % 1000) / 1000 - 0.5;
  return a;
}

const o = parseArgs(process.argv.slice(2));
const { ort, version } = loadOrt();
const sessionStart = performance.now();
const session = await ort.InferenceSession.create(o.model, {
  intraOpNumThreads: o.threads, interOpNumThreads: 1,
  graphOptimizationLevel: 'all' });
const sessionMs = performance.now() - sessionStart;

function sum(t) {
  let s = 0;
  for (const v of t.data) s += v;
  return s;
}

function absSum(t) {
  let s = 0;
  for (const v of t.data) s += Math.abs(v);
  return s;
}

const result = { mode: o.mode, ort_version: version, threads: o.threads,
                 batch: o.batch, session_ms: sessionMs };
if (o.mode === 'serve') {
  const name = session.inputNames[0];
  const feed = (len) => ({ [name]: new ort.Tensor('float32',
      inputValues(o.batch * len * o.width), [o.batch, len, o.width]) });
  await session.run(feed(o.lengths[0]));
  const times = [], repeat = [], sums = [], absSums = [], heads = [];
  for (let r = 0; r < o.lengths.length; ++r) {
    const f = feed(o.lengths[r]);
    const t0 = performance.now();
    const out = await session.run(f);
    times.push(performance.now() - t0);
    const y = out[session.outputNames[0]];
    sums.push(sum(y));
    absSums.push(absSum(y));
    heads.push(Array.from(y.data.subarray(0, 8)));
    if (r < o.repeats) {
      const t1 = performance.now();
      await session.run(f);
      repeat.push(performance.now() - t1);
    }
  }
  Object.assign(result, { times_ms: times, repeat_ms: repeat,
                          checksums: sums, abs_sums: absSums, heads });
} else {
  const pastNames = session.inputNames.filter((n) => n !== 'input_ids');
  // The benchmark decoder's cache: 8 heads of 64 (export_models.py).
  const heads = 8, headDim = 64;
  const feed = {};
  pastNames.forEach((n, j) => {
    feed[n] = new ort.Tensor('float32',
      inputValues(o.batch * heads * o.cache * headDim, j * 13),
      [o.batch, heads, o.cache, headDim]);
  });
  let ids = new BigInt64Array(o.batch);
  for (let b = 0; b < o.batch; ++b) ids[b] = BigInt(b + 1);
  const tokens = Array.from({ length: o.batch }, () => []);
  const times = [];
  for (let step = 0; step < o.tokens; ++step) {
    feed.input_ids = new ort.Tensor('int64', ids, [o.batch, 1]);
    const t0 = performance.now();
    const out = await session.run(feed);
    const logits = out.logits.data;
    const vocab = out.logits.dims[2];
    const next = new BigInt64Array(o.batch);
    for (let b = 0; b < o.batch; ++b) {
      let best = 0;
      for (let v = 1; v < vocab; ++v)
        if (logits[b * vocab + v] > logits[b * vocab + best]) best = v;
      next[b] = BigInt(best);
      tokens[b].push(best);
    }
    pastNames.forEach((n) => {
      feed[n] = out[n.replace('past', 'present')];
    });
    ids = next;
    times.push(performance.now() - t0);
  }
  Object.assign(result, { tokens, times_ms: times });
}
result.peak_rss_bytes = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify(result));
