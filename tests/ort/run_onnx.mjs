#!/usr/bin/env node
// run_onnx.mjs - Runs an ONNX model in ONNX Runtime (npm onnxruntime-node,
// CPU execution provider) on tensors read from a folder, and writes the
// outputs to another folder. The check harness of exported models
// (tests/fx/OrtTestUtils.h) drives it; it also works by hand.
//
// Usage: node tests/ort/run_onnx.mjs MODEL.onnx IN_DIR OUT_DIR [--threads N]
//
// A tensor folder holds tensors.json, {"tensors": [{"name", "dtype",
// "shape", "file"}, ...]}, and one raw little-endian, row-major file per
// tensor. dtype uses nngraph's names (f32, f64, f16, i8, i16, i32, i64, u8,
// u16, bool). Inputs are bound by name when the name is one of the model's
// inputs, else by position. OUT_DIR receives the outputs in the model's
// output order, under their ONNX names, plus "ort_version".
//
// onnxruntime-node is looked up in $NNGRAPH_ORT_NODE_MODULES (a node_modules
// folder), else in .cache/npm/node_modules of the checkout, where
// `scripts/setup.sh --tests` installs it (with ONNXRUNTIME_NODE_INSTALL=skip:
// the CPU library ships in the package). When it cannot be loaded the script
// prints "SKIP: <reason>" and exits with status 77.

import fs from 'node:fs';
import path from 'node:path';
import { loadOrt } from './load_ort.mjs';


function usage(msg) {
  console.error(`run_onnx.mjs: ${msg}\nusage: node run_onnx.mjs MODEL.onnx ` +
                'IN_DIR OUT_DIR [--threads N]');
  process.exit(2);
}

const args = process.argv.slice(2);
let threads = 2;
const positional = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--threads') {
    threads = Number(args[++i]);
    if (!Number.isInteger(threads) || threads < 1) usage('bad --threads');
  } else {
    positional.push(args[i]);
  }
}
if (positional.length !== 3) usage('expected MODEL.onnx IN_DIR OUT_DIR');
const [modelPath, inDir, outDir] = positional;

const { ort, version } = loadOrt();

// nngraph dtype name -> [ORT type, TypedArray].
const TYPES = {
  f32: ['float32', Float32Array], f64: ['float64', Float64Array],
  f16: ['float16', Uint16Array], i8: ['int8', Int8Array],
  i16: ['int16', Int16Array], i32: ['int32', Int32Array],
  i64: ['int64', BigInt64Array], u8: ['uint8', Uint8Array],
  u16: ['uint16', Uint16Array], bool: ['bool', Uint8Array],
};
const FROM_ORT = Object.fromEntries(
    Object.entries(TYPES).map(([k, [o]]) => [o, k]));

function readTensors(dir) {
  const manifest = JSON.parse(
      fs.readFileSync(path.join(dir, 'tensors.json'), 'utf8'));
  return manifest.tensors.map((t) => {
    const ty = TYPES[t.dtype];
    if (!ty) throw new Error(`${dir}: tensor '${t.name}' has dtype ` +
                             `'${t.dtype}', which run_onnx.mjs cannot pass`);
    const bytes = fs.readFileSync(path.join(dir, t.file));
    const Arr = ty[1];
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    const data = new Arr(copy.buffer, 0, bytes.byteLength / Arr.BYTES_PER_ELEMENT);
    return { name: t.name, tensor: new ort.Tensor(ty[0], data, t.shape) };
  });
}

async function main() {
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const inputs = readTensors(inDir);
  if (inputs.length !== session.inputNames.length)
    throw new Error(`${modelPath} has ${session.inputNames.length} inputs ` +
                    `(${session.inputNames.join(', ')}) but ${inDir} holds ` +
                    `${inputs.length} tensors`);
  const feeds = {};
  inputs.forEach((t, i) => {
    const name = session.inputNames.includes(t.name) ? t.name
                                                     : session.inputNames[i];
    feeds[name] = t.tensor;
  });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  const entries = session.outputNames.map((name, i) => {
    const t = results[name];
    const dtype = FROM_ORT[t.type];
    if (!dtype) throw new Error(`output '${name}' has ORT type ${t.type}`);
    const file = `${i}.bin`;
    const d = t.data;
    fs.writeFileSync(path.join(outDir, file),
                     Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    return { name, dtype, shape: t.dims.map(Number), file };
  });
  fs.writeFileSync(path.join(outDir, 'tensors.json'),
                   JSON.stringify({ tensors: entries, ort_version: version }));
}

main().catch((e) => {
  console.error(`run_onnx.mjs: ${modelPath}: ${e.message || e}`);
  process.exit(1);
});
