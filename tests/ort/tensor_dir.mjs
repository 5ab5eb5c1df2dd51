// tensor_dir.mjs - Tensor folders for the scripts that run ONNX Runtime:
// tests/ort/run_onnx.mjs (the export checks) and tools/nngraph-bench/
// ort_peer.mjs (nngraph-bench --vs-ort).
//
// A tensor folder holds tensors.json, {"tensors": [{"name", "dtype",
// "shape", "file"}, ...]}, and one raw little-endian, row-major file per
// tensor. dtype uses nngraph's names (f32, f64, f16, i8, i16, i32, i64, u8,
// u16, bool).

import fs from 'node:fs';
import path from 'node:path';

/// nngraph dtype name -> [ORT type, TypedArray].
export const TYPES = {
  f32: ['float32', Float32Array], f64: ['float64', Float64Array],
  f16: ['float16', Uint16Array], i8: ['int8', Int8Array],
  i16: ['int16', Int16Array], i32: ['int32', Int32Array],
  i64: ['int64', BigInt64Array], u8: ['uint8', Uint8Array],
  u16: ['uint16', Uint16Array], bool: ['bool', Uint8Array],
};
/// ORT type -> nngraph dtype name.
export const FROM_ORT = Object.fromEntries(
    Object.entries(TYPES).map(([k, [o]]) => [o, k]));

/// The tensors of folder dir as [{name, tensor}] (ort.Tensor), in the
/// manifest's order; `who` names the caller in messages.
export function readTensorDir(ort, dir, who) {
  const manifest = JSON.parse(
      fs.readFileSync(path.join(dir, 'tensors.json'), 'utf8'));
  return manifest.tensors.map((t) => {
    const ty = TYPES[t.dtype];
    if (!ty) throw new Error(`${dir}: tensor '${t.name}' has dtype ` +
                             `'${t.dtype}', which ${who} cannot pass`);
    const bytes = fs.readFileSync(path.join(dir, t.file));
    const Arr = ty[1];
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    const data = new Arr(copy.buffer, 0, bytes.byteLength / Arr.BYTES_PER_ELEMENT);
    return { name: t.name, tensor: new ort.Tensor(ty[0], data, t.shape) };
  });
}

/// Binds tensors ([{name, tensor}]) to the session's inputs: by name when
/// the name is one of the model's inputs, else by position.
export function feedsFor(session, tensors, modelPath, dir) {
  if (tensors.length !== session.inputNames.length)
    throw new Error(`${modelPath} has ${session.inputNames.length} inputs ` +
                    `(${session.inputNames.join(', ')}) but ${dir} holds ` +
                    `${tensors.length} tensors`);
  const feeds = {};
  tensors.forEach((t, i) => {
    const name = session.inputNames.includes(t.name) ? t.name
                                                     : session.inputNames[i];
    feeds[name] = t.tensor;
  });
  return feeds;
}

/// Writes the session's outputs (results of session.run) to folder dir, in
/// the model's output order, under their ONNX names; extra members go into
/// tensors.json too.
export function writeTensorDir(dir, session, results, extra) {
  fs.mkdirSync(dir, { recursive: true });
  const entries = session.outputNames.map((name, i) => {
    const t = results[name];
    const dtype = FROM_ORT[t.type];
    if (!dtype) throw new Error(`output '${name}' has ORT type ${t.type}`);
    const file = `${i}.bin`;
    const d = t.data;
    fs.writeFileSync(path.join(dir, file),
                     Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    return { name, dtype, shape: t.dims.map(Number), file };
  });
  fs.writeFileSync(path.join(dir, 'tensors.json'),
                   JSON.stringify({ tensors: entries, ...extra }));
}
