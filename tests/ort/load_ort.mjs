// load_ort.mjs - Finds and loads onnxruntime-node for the scripts that run
// ONNX Runtime: tests/ort/run_onnx.mjs (the export checks),
// bench/cpu_vs_ort/ort_time.mjs (the side-by-side benchmark) and
// tools/nngraph-bench/ort_peer.mjs (nngraph-bench --vs-ort); and the
// session they all make (cpuSession).
//
// onnxruntime-node is looked up in $NNGRAPH_ORT_NODE_MODULES (a
// node_modules folder), else in .cache/npm/node_modules of the checkout,
// where `scripts/setup.sh --tests` installs it (with
// ONNXRUNTIME_NODE_INSTALL=skip: the CPU library ships in the package). When
// it cannot be loaded, loadOrt() prints "SKIP: <reason>" and exits with
// status 77, which the callers' harnesses read as a skip.

import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SKIP_STATUS = 77;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)),
                              '..', '..');

/// { ort, version }: the onnxruntime-node module and its package version
/// ('unknown' when the package file cannot be read).
export function loadOrt() {
  const modulesDir = process.env.NNGRAPH_ORT_NODE_MODULES ||
                     path.join(repoRoot, '.cache', 'npm', 'node_modules');
  const require = createRequire(path.join(modulesDir, 'noop.js'));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    console.log(`SKIP: cannot load onnxruntime-node from ${modulesDir} ` +
                `(${String(e.message).split('\n')[0]}); install it with ` +
                '`scripts/setup.sh --tests` (or: ONNXRUNTIME_NODE_INSTALL=skip ' +
                'npm install --prefix .cache/npm onnxruntime-node@1)');
    process.exit(SKIP_STATUS);
  }
  let version = 'unknown';
  try {
    version = require('onnxruntime-node/package.json').version;
  } catch (e) { /* the version is informative only */ }
  return { ort, version };
}

/// An InferenceSession of modelPath on ORT's CPU provider with `threads`
/// intra-op threads, one inter-op thread and every graph optimization (ORT's
/// default level): the session every comparison and benchmark here runs.
export function cpuSession(ort, modelPath, threads) {
  return ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
}
