// ort_layers.js - ONNX Runtime's own per-node profile of one model (driven by bench/layers.py).
//
//   node bench/ort_layers.js MODEL.onnx IN.npy THREADS RUNS PREFIX
//
// The session as bench/ort_bench.js makes it (intraOpNumThreads THREADS,
// interOpNumThreads 1, graphOptimizationLevel 'all', executionMode
// sequential) with enableProfiling on: 5 warm-up runs, RUNS runs, then
// endProfiling() writes PREFIX_<date>.json (Chrome trace events; each node's
// kernel time is an event named NODE_kernel_time). Needs NODE_PATH at the
// node_modules of `npm install onnxruntime-node` (bench/README.md).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function die(msg) {
    process.stderr.write('ort_layers: ' + msg + '\n');
    process.exit(1);
}

// A little-endian float32 C-order array, as ort_bench.js reads it.
function readNpyF32(path) {
    const buf = fs.readFileSync(path);
    if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') die(path + ': not a .npy file');
    const major = buf[6];
    const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
    const hstart = major === 1 ? 10 : 12;
    const header = buf.toString('latin1', hstart, hstart + hlen);
    if (!/'descr':\s*'<f4'/.test(header)) die(path + ': only float32 (<f4) inputs are supported');
    const shape = (header.match(/'shape':\s*\(([^)]*)\)/) || die(path + ': no shape'))[1]
        .split(',').filter((s) => s.trim()).map((s) => parseInt(s, 10));
    const bytes = buf.subarray(hstart + hlen);
    return {shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))};
}

(async () => {
    const [model, inp, threads, runs, prefix] = process.argv.slice(2);
    if (!prefix) die('usage: ort_layers.js MODEL.onnx IN.npy THREADS RUNS PREFIX');
    const s = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all',
        executionMode: 'sequential', enableProfiling: true, profileFilePrefix: prefix,
    });
    const x = readNpyF32(inp);
    const feeds = {[s.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
    for (let i = 0; i < 5; i++) await s.run(feeds);
    for (let i = 0; i < Number(runs); i++) await s.run(feeds);
    s.endProfiling();
})().catch((e) => die(String(e)));
