// ort_bench.js - times one ONNX model under ONNX Runtime (npm onnxruntime-node, CPU).
//
//   node bench/ort_bench.js MODEL.onnx IN.npy [--threads N] [--warmup W] [--runs R] [--serve] [--profile PREFIX]
//
// Creates the session with intraOpNumThreads = N, interOpNumThreads = 1,
// graphOptimizationLevel 'all', executionMode 'sequential' (what rlxc's
// binaries do: N threads inside each op, ops one after another), feeds IN.npy
// (float32) to the first input, runs W warm-ups, then prints
//
//     session_ms=X                      (InferenceSession.create: the one-time cost)
//     warmup_ms=a,b,...
//     times_ms=a,b,...                  (R timed runs, each one await of session.run)
//
// With --profile PREFIX the session runs with ORT's profiler on and, after the
// timed runs, writes PREFIX_<date>.json (Chrome trace events; each node's kernel
// time an event NODE_kernel_time: bench/layers.py reads them).
// With --serve it prints `ready` after the warm-ups instead of timing, then reads
// lines from stdin: each holds a count R and gets one `times_ms=...` line back,
// so that bench/models.py can keep the session warm and alternate runtimes in
// rounds. EOF ends it. ORT is looked up with require(), so run it with
// NODE_PATH pointing at the node_modules of `npm install onnxruntime-node`
// (bench/models.py uses build/ort/node_modules).
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

function die(msg) {
    process.stderr.write('ort_bench: ' + msg + '\n');
    process.exit(1);
}

// Only what the zoo's inputs need: a little-endian float32 C-order array.
function readNpyF32(path) {
    const buf = fs.readFileSync(path);
    if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') die(path + ': not a .npy file');
    const major = buf[6];
    const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
    const hstart = major === 1 ? 10 : 12;
    if (hstart + hlen > buf.length) die(path + ': truncated header');
    const header = buf.toString('latin1', hstart, hstart + hlen);
    if (!/'descr':\s*'<f4'/.test(header)) die(path + ': only float32 (<f4) inputs are supported');
    if (/'fortran_order':\s*True/.test(header)) die(path + ': Fortran order is not supported');
    const m = /'shape':\s*\(([^)]*)\)/.exec(header);
    if (!m) die(path + ': no shape in header');
    const dims = m[1].split(',').map(s => s.trim()).filter(s => s.length).map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    const start = hstart + hlen;
    if (start + 4 * count > buf.length) die(path + ': truncated data');
    // Copied so the Float32Array is aligned whatever the header length.
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = buf.readFloatLE(start + 4 * i);
    return new ort.Tensor('float32', data, dims);
}

async function timeRuns(session, feeds, n) {
    const times = [];
    for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return times;
}

const fmt = ts => ts.map(t => t.toFixed(4)).join(',');

async function main() {
    const argv = process.argv.slice(2);
    const pos = [];
    let threads = 1, warmup = 3, runs = 20, serve = false, profile = null;
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const num = () => {
            const v = Number(argv[++i]);
            if (!Number.isInteger(v) || v < 0) die(a + ' wants a count');
            return v;
        };
        if (a === '--threads') threads = num();
        else if (a === '--warmup') warmup = num();
        else if (a === '--runs') runs = num();
        else if (a === '--serve') serve = true;
        else if (a === '--profile' && i + 1 < argv.length) profile = argv[++i];
        else pos.push(a);
    }
    if (pos.length !== 2 || threads < 1)
        die('usage: ort_bench.js MODEL.onnx IN.npy [--threads N] [--warmup W] [--runs R] [--serve] [--profile PREFIX]');
    const t0 = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(pos[0], {
        executionProviders: ['cpu'],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        ...(profile ? {enableProfiling: true, profileFilePrefix: profile} : {}),
    });
    console.log('session_ms=' + (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(3));
    const feeds = {[session.inputNames[0]]: readNpyF32(pos[1])};
    console.log('warmup_ms=' + fmt(await timeRuns(session, feeds, warmup)));
    if (!serve) {
        console.log('times_ms=' + fmt(await timeRuns(session, feeds, runs)));
        if (profile) session.endProfiling();
        return;
    }
    console.log('ready');
    const rl = readline.createInterface({input: process.stdin, terminal: false});
    for await (const line of rl) {
        const n = Number(line.trim());
        if (!Number.isInteger(n) || n < 1) die('serve: want a run count, not "' + line + '"');
        console.log('times_ms=' + fmt(await timeRuns(session, feeds, n)));
    }
}

main().catch(e => die(String(e && e.message ? e.message : e)));
