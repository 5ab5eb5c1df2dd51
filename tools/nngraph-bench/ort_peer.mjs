#!/usr/bin/env node
// ort_peer.mjs - ONNX Runtime (npm onnxruntime-node, CPU execution provider)
// as a peer process of nngraph-bench --vs-ort: it loads one model and one
// set of inputs once, then times runs when asked, so that nngraph-bench can
// interleave rounds of the two engines on the same inputs.
//
// Usage: node ort_peer.mjs MODEL.onnx IN_DIR [--threads T]
//
// IN_DIR is a tensor folder (tests/ort/tensor_dir.mjs) with the inputs. The
// session uses intraOpNumThreads=T (default 2), interOpNumThreads=1 and
// graphOptimizationLevel 'all' (ORT's default), as bench/cpu_vs_ort does.
// Once the session exists the script prints one JSON line
//   {"ready": true, "ort_version", "compile_ms", "baseline_rss_bytes"}
// and then answers commands read from stdin, one per line, each with one
// JSON line on stdout:
//   run N      -> {"runs_ms": [N times in ms]}
//   save DIR   -> {"saved": DIR}  (the last run's outputs as a tensor folder)
//   quit       -> {"peak_rss_bytes"} and exit 0
// Errors print {"error": MESSAGE} and exit with status 1. When
// onnxruntime-node cannot be loaded, the script prints "SKIP: <reason>" and
// exits with status 77 (tests/ort/load_ort.mjs).

import readline from 'node:readline';
import { performance } from 'node:perf_hooks';
import { loadOrt } from '../../tests/ort/load_ort.mjs';
import { feedsFor, readTensorDir, writeTensorDir } from '../../tests/ort/tensor_dir.mjs';

function usage(msg) {
  console.error(`ort_peer.mjs: ${msg}\nusage: node ort_peer.mjs MODEL.onnx ` +
                'IN_DIR [--threads T]');
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
if (positional.length !== 2) usage('expected MODEL.onnx IN_DIR');
const [modelPath, inDir] = positional;

const reply = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const die = (e) => {
  reply({ error: `${modelPath}: ${e.message || e}` });
  process.exit(1);
};

const { ort, version } = loadOrt();

async function main() {
  const baselineRss = process.memoryUsage().rss;
  const start = performance.now();
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const compileMs = performance.now() - start;
  const feeds = feedsFor(session, readTensorDir(ort, inDir, 'ort_peer.mjs'),
                         modelPath, inDir);
  reply({ ready: true, ort_version: version, compile_ms: compileMs,
          baseline_rss_bytes: baselineRss });

  let last = null;
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [cmd, ...rest] = line.trim().split(' ');
    const arg = rest.join(' ');
    if (cmd === 'run') {
      const n = Number(arg);
      if (!Number.isInteger(n) || n < 0) throw new Error(`bad command '${line}'`);
      const runsMs = [];
      for (let i = 0; i < n; ++i) {
        const t0 = performance.now();
        last = await session.run(feeds);
        runsMs.push(performance.now() - t0);
      }
      reply({ runs_ms: runsMs });
    } else if (cmd === 'save') {
      if (!last) last = await session.run(feeds);
      writeTensorDir(arg, session, last, { ort_version: version });
      reply({ saved: arg });
    } else if (cmd === 'quit') {
      break;
    } else {
      throw new Error(`unknown command '${line}'`);
    }
  }
  reply({ peak_rss_bytes: process.resourceUsage().maxRSS * 1024 });
  process.exit(0);
}

main().catch(die);
