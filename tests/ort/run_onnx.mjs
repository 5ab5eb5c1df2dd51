#!/usr/bin/env node
// run_onnx.mjs - Runs an ONNX model in ONNX Runtime (npm onnxruntime-node,
// CPU execution provider) on tensors read from a folder, and writes the
// outputs to another folder. The check harness of exported models
// (tests/fx/OrtTestUtils.h) drives it; it also works by hand.
//
// Usage: node tests/ort/run_onnx.mjs MODEL.onnx IN_DIR OUT_DIR [--threads N]
//
// A tensor folder (tensor_dir.mjs) holds tensors.json, {"tensors": [{"name", "dtype",
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

import { cpuSession, loadOrt } from './load_ort.mjs';
import { feedsFor, readTensorDir, writeTensorDir } from './tensor_dir.mjs';


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

async function main() {
  const session = await cpuSession(ort, modelPath, threads);
  const feeds = feedsFor(session, readTensorDir(ort, inDir, 'run_onnx.mjs'),
                         modelPath, inDir);
  const results = await session.run(feeds);
  writeTensorDir(outDir, session, results, { ort_version: version });
}

main().catch((e) => {
  console.error(`run_onnx.mjs: ${modelPath}: ${e.message || e}`);
  process.exit(1);
});
