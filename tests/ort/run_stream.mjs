#!/usr/bin/env node
// run_stream.mjs - Runs a streaming model (a voice-activity detector, a
// wake-word model) in ONNX Runtime as its users do: the audio in chunks,
// one run per chunk, each run's state outputs fed back as the next run's
// state inputs. The corpus tests (tests/corpus/) check its outputs and the
// corpus benchmark (bench/corpus/run.py) times it.
//
// Usage: node tests/ort/run_stream.mjs MODEL.onnx IN_DIR OUT_DIR
//            --chunk INPUT=SIZE [--feedback OUTPUT=INPUT]...
//            [--threads N] [--passes P]
//
// IN_DIR is a tensor folder (tensor_dir.mjs) holding every input: INPUT
// with the whole stream along its last axis (a multiple of SIZE long), the
// others (initial state, sample rate) as the first run takes them. OUT_DIR
// receives, under their ONNX names, each output that is not fed back
// stacked over the chunks (a new leading axis) and each fed-back output of
// the last chunk. With --passes P the whole stream runs once more as a
// warm-up and then P times, and one JSON line {"ort_version", "chunks",
// "passes_ms": [P times in ms]} is printed; the outputs are the last pass's.
// When onnxruntime-node cannot be loaded the script prints "SKIP: <reason>"
// and exits with status 77 (load_ort.mjs).

import { performance } from 'node:perf_hooks';
import { cpuSession, loadOrt } from './load_ort.mjs';
import { FROM_ORT, readTensorDir } from './tensor_dir.mjs';
import fs from 'node:fs';
import path from 'node:path';

function usage(msg) {
  console.error(`run_stream.mjs: ${msg}\nusage: node run_stream.mjs ` +
                'MODEL.onnx IN_DIR OUT_DIR --chunk INPUT=SIZE ' +
                '[--feedback OUTPUT=INPUT]... [--threads N] [--passes P]');
  process.exit(2);
}

const args = process.argv.slice(2);
let threads = 2, passes = 0, chunk = null;
const feedback = {};  // output name -> input name
const positional = [];
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  const next = () => (i + 1 < args.length ? args[++i] : usage(`${a} needs a value`));
  if (a === '--threads' || a === '--passes') {
    const n = Number(next());
    if (!Number.isInteger(n) || n < (a === '--passes' ? 0 : 1)) usage(`bad ${a}`);
    if (a === '--threads') threads = n; else passes = n;
  } else if (a === '--chunk') {
    const m = /^([^=]+)=(\d+)$/.exec(next());
    if (!m || Number(m[2]) < 1) usage(`bad --chunk '${args[i]}'`);
    chunk = { name: m[1], size: Number(m[2]) };
  } else if (a === '--feedback') {
    const m = /^([^=]+)=([^=]+)$/.exec(next());
    if (!m) usage(`bad --feedback '${args[i]}'`);
    feedback[m[1]] = m[2];
  } else if (a.startsWith('--')) {
    usage(`unknown option ${a}`);
  } else {
    positional.push(a);
  }
}
if (positional.length !== 3) usage('expected MODEL.onnx IN_DIR OUT_DIR');
if (!chunk) usage('expected --chunk INPUT=SIZE');
const [modelPath, inDir, outDir] = positional;

const { ort, version } = loadOrt();

/// The chunks of tensor t along its last axis, each `size` long.
function split(t, size) {
  const dims = t.dims.map(Number);
  const len = dims[dims.length - 1];
  if (len % size !== 0)
    throw new Error(`input '${chunk.name}' is ${len} long, not a multiple ` +
                    `of the chunk ${size}`);
  const rows = t.size / len;
  const out = [];
  for (let k = 0; k < len / size; ++k) {
    const data = new t.data.constructor(rows * size);
    for (let r = 0; r < rows; ++r)
      data.set(t.data.subarray(r * len + k * size, r * len + (k + 1) * size),
               r * size);
    out.push(new ort.Tensor(t.type, data, [...dims.slice(0, -1), size]));
  }
  return out;
}

/// One pass over the stream: the outputs of every chunk.
async function stream(session, fixed, chunks) {
  const feeds = { ...fixed };
  const all = [];
  for (const c of chunks) {
    feeds[chunk.name] = c;
    const results = await session.run(feeds);
    for (const [o, i] of Object.entries(feedback)) feeds[i] = results[o];
    all.push(results);
  }
  return all;
}

function writeOutputs(session, all) {
  fs.mkdirSync(outDir, { recursive: true });
  const entries = session.outputNames.map((name, i) => {
    const file = `${i}.bin`;
    const parts = name in feedback ? [all[all.length - 1][name]]
                                   : all.map((r) => r[name]);
    const dtype = FROM_ORT[parts[0].type];
    if (!dtype) throw new Error(`output '${name}' has ORT type ${parts[0].type}`);
    const bufs = parts.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset,
                                              t.data.byteLength));
    fs.writeFileSync(path.join(outDir, file), Buffer.concat(bufs));
    const dims = parts[0].dims.map(Number);
    const shape = name in feedback ? dims : [parts.length, ...dims];
    return { name, dtype, shape, file };
  });
  fs.writeFileSync(path.join(outDir, 'tensors.json'),
                   JSON.stringify({ tensors: entries, ort_version: version }));
}

async function main() {
  const session = await cpuSession(ort, modelPath, threads);
  const fixed = {};
  let chunks = null;
  for (const { name, tensor } of readTensorDir(ort, inDir, 'run_stream.mjs')) {
    if (!session.inputNames.includes(name))
      throw new Error(`${inDir}: '${name}' is not an input of the model ` +
                      `(${session.inputNames.join(', ')})`);
    if (name === chunk.name) chunks = split(tensor, chunk.size);
    else fixed[name] = tensor;
  }
  if (!chunks) throw new Error(`${inDir} holds no input '${chunk.name}'`);
  let all = await stream(session, fixed, chunks);
  if (passes > 0) {
    const passesMs = [];
    for (let p = 0; p < passes; ++p) {
      const t0 = performance.now();
      all = await stream(session, fixed, chunks);
      passesMs.push(performance.now() - t0);
    }
    console.log(JSON.stringify({ ort_version: version, chunks: chunks.length,
                                 passes_ms: passesMs }));
  }
  writeOutputs(session, all);
}

main().catch((e) => {
  console.error(`run_stream.mjs: ${modelPath}: ${e.message || e}`);
  process.exit(1);
});
