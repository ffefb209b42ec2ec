#!/usr/bin/env node
// ONNX Runtime (npm onnxruntime-node, its bundled linux-x64 CPU library) timing one ONNX model:
// one session with the given intra-op threads (one inter-op thread, sequential execution, every
// graph optimization), `warmup` untimed runs, then `repeats` timed runs on a seeded random input.
// Prints {"ms": [...], "version": "..."} on stdout. Driven by bench/cpu_peers.py.
//
//   node bench/ort_bench.js --ort .ort --model resnet50.onnx --input 16,3,224,224 --threads 2
'use strict';
const path = require('path');

function parse(argv) {
    const a = {warmup: 3, repeats: 10, threads: 2};
    for (let i = 2; i < argv.length; i += 2) {
        const key = argv[i], value = argv[i + 1];
        if (value === undefined) throw new Error(`${key} needs a value`);
        if (key === '--ort') a.ort = value;
        else if (key === '--model') a.model = value;
        else if (key === '--input') a.input = value.split(',').map(Number);
        else if (key === '--threads') a.threads = Number(value);
        else if (key === '--warmup') a.warmup = Number(value);
        else if (key === '--repeats') a.repeats = Number(value);
        else throw new Error(`unknown option ${key}`);
    }
    if (!a.ort || !a.model || !a.input || a.input.some((d) => !(d > 0)))
        throw new Error('usage: ort_bench.js --ort DIR --model FILE --input N,C,H,W [--threads T --warmup W --repeats R]');
    return a;
}

async function main() {
    const a = parse(process.argv);
    const ort = require(path.resolve(a.ort, 'node_modules', 'onnxruntime-node'));
    const session = await ort.InferenceSession.create(a.model, {
        intraOpNumThreads: a.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
    });
    const count = a.input.reduce((x, y) => x * y, 1);
    const data = new Float32Array(count);
    let s = 12345;  // a small LCG: the input's values do not change the arithmetic done
    for (let i = 0; i < count; ++i) {
        s = (s * 1103515245 + 12345) % 2147483648;
        data[i] = s / 1073741824 - 1;
    }
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, a.input)};
    for (let i = 0; i < a.warmup; ++i) await session.run(feeds);
    const ms = [];
    for (let i = 0; i < a.repeats; ++i) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const version = require(path.resolve(a.ort, 'node_modules', 'onnxruntime-node', 'package.json')).version;
    process.stdout.write(JSON.stringify({ms, version}) + '\n');
}

main().catch((e) => {
    process.stderr.write(`ort_bench: ${e.message}\n`);
    process.exit(1);
});
