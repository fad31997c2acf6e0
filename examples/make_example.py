#!/usr/bin/python3
"""make_example.py - trains the bundled example model and writes it as .rlxg.

The task: 8x8 grey images that each hold one noisy stroke pattern, one of
CLASSES below, at a random place and size. The model is a tiny CNN:

    image [1,1,8,8] -> Conv 3x3 (6 filters, pad 1) -> Relu -> MaxPool 2x2
          -> Flatten [1,96] -> Gemm (6 classes) -> Softmax -> probs [1,6]
                                                         -> ArgMax -> class [1]

It is trained here with plain numpy (im2col convolution, hand-written
backward pass, Adam) from a fixed seed in a few seconds. The weights are
rounded to 4 decimals so the JSON stays small and readable, and the accuracy
is measured again with the rounded weights. Outputs, next to this script:

    shapes.rlxg          the model (pure-JSON .rlxg, weights inline)
    samples/NAME.npy     a few test images, f32 [1,1,8,8], named by their class
                         (noisy_bar has extra noise, so the model is less sure)

Run with /usr/bin/python3 (it has numpy); rerunning rewrites the same files.
"""
import json
import os
import sys

import numpy as np

CLASSES = ["horizontal bar", "vertical bar", "diagonal \\", "diagonal /", "box", "plus"]
HERE = os.path.dirname(os.path.abspath(__file__))


def draw(rng, cls):
    img = np.zeros((8, 8), dtype=np.float64)
    ink = rng.uniform(0.7, 1.0)
    if cls in (0, 1):
        n = rng.integers(4, 9)
        fixed, start = rng.integers(0, 8), rng.integers(0, 9 - n)
        if cls == 0:
            img[fixed, start:start + n] = ink
        else:
            img[start:start + n, fixed] = ink
    elif cls in (2, 3):
        n = rng.integers(4, 9)
        r, c = rng.integers(0, 9 - n), rng.integers(0, 9 - n)
        for i in range(n):
            img[r + i, c + i if cls == 2 else c + n - 1 - i] = ink
    elif cls == 4:
        h, w = rng.integers(3, 7), rng.integers(3, 7)
        r, c = rng.integers(0, 9 - h), rng.integers(0, 9 - w)
        img[r, c:c + w] = img[r + h - 1, c:c + w] = ink
        img[r:r + h, c] = img[r:r + h, c + w - 1] = ink
    else:
        a = rng.integers(1, 4)
        r, c = rng.integers(a, 8 - a), rng.integers(a, 8 - a)
        img[r, c - a:c + a + 1] = ink
        img[r - a:r + a + 1, c] = ink
    img += rng.normal(0, 0.12, img.shape)
    return np.clip(img, 0, 1)


def dataset(rng, n):
    y = rng.integers(0, len(CLASSES), n)
    x = np.stack([draw(rng, c) for c in y])
    return x, y


def patches(x):
    """im2col for a 3x3 kernel with pad 1: [N,8,8] -> [N,64,9]."""
    xp = np.pad(x, [(0, 0), (1, 1), (1, 1)])
    cols = [xp[:, p:p + 8, q:q + 8] for p in range(3) for q in range(3)]
    return np.stack(cols, axis=-1).reshape(len(x), 64, 9)


def forward(params, x):
    wc, bc, wf, bf = params
    pt = patches(x)
    conv = pt @ wc.reshape(6, 9).T + bc                    # [N,64,6], position = h*8+w
    relu = np.maximum(conv, 0)
    blocks = relu.reshape(-1, 4, 2, 4, 2, 6)
    pool = blocks.max(axis=(2, 4))                         # [N,4,4,6]
    flat = pool.transpose(0, 3, 1, 2).reshape(len(x), 96)  # channel-major, as ONNX Flatten
    logits = flat @ wf.T + bf
    return logits, (pt, conv, blocks, pool, flat)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def grads(params, x, y):
    wc, bc, wf, bf = params
    logits, (pt, conv, blocks, pool, flat) = forward(params, x)
    n = len(x)
    d_logits = softmax(logits)
    d_logits[np.arange(n), y] -= 1
    d_logits /= n
    g_wf, g_bf = d_logits.T @ flat, d_logits.sum(axis=0)
    d_pool = (d_logits @ wf).reshape(n, 6, 4, 4).transpose(0, 2, 3, 1)
    mask = blocks == pool[:, :, None, :, None, :]
    mask = mask / mask.sum(axis=(2, 4), keepdims=True)     # ties share the gradient
    d_relu = (mask * d_pool[:, :, None, :, None, :]).reshape(n, 64, 6)
    d_conv = d_relu * (conv > 0)
    g_wc = np.einsum("npk,npc->ck", pt, d_conv).reshape(6, 1, 3, 3)
    g_bc = d_conv.sum(axis=(0, 1))
    return [g_wc, g_bc, g_wf, g_bf]


def train(rng):
    params = [rng.normal(0, 0.4, (6, 1, 3, 3)), np.zeros(6), rng.normal(0, 0.1, (6, 96)), np.zeros(6)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    x, y = dataset(rng, 6000)
    lr, b1, b2 = 0.01, 0.9, 0.999
    for step in range(1, 1501):
        idx = rng.integers(0, len(x), 128)
        g = grads(params, x[idx], y[idx])
        for i in range(4):
            m[i] = b1 * m[i] + (1 - b1) * g[i]
            v[i] = b2 * v[i] + (1 - b2) * g[i] ** 2
            params[i] -= lr * (m[i] / (1 - b1 ** step)) / (np.sqrt(v[i] / (1 - b2 ** step)) + 1e-8)
    return params


def weight(name, arr):
    arr = np.asarray(arr, dtype=np.float32)
    return {"name": name, "dtype": "f32", "shape": list(arr.shape),
            "data": [round(float(v), 4) for v in arr.reshape(-1)]}


def graph(params):
    wc, bc, wf, bf = params
    return {
        "rlxg": 1, "name": "shapes",
        "inputs": [{"name": "image", "dtype": "f32", "shape": [1, 1, 8, 8]}],
        "outputs": [{"name": "class", "dtype": "i64", "shape": [1]},
                    {"name": "probs", "dtype": "f32", "shape": [1, 6]}],
        "weights": [weight("conv_w", wc), weight("conv_b", bc), weight("fc_w", wf), weight("fc_b", bf)],
        "nodes": [
            {"name": "conv", "op": "Conv", "inputs": ["image", "conv_w", "conv_b"], "outputs": ["conv"],
             "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
            {"name": "relu", "op": "Relu", "inputs": ["conv"], "outputs": ["relu"]},
            {"name": "pool", "op": "MaxPool", "inputs": ["relu"], "outputs": ["pool"],
             "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
            {"name": "flatten", "op": "Flatten", "inputs": ["pool"], "outputs": ["flat"]},
            {"name": "fc", "op": "Gemm", "inputs": ["flat", "fc_w", "fc_b"], "outputs": ["logits"],
             "attrs": {"transB": 1}},
            {"name": "softmax", "op": "Softmax", "inputs": ["logits"], "outputs": ["probs"]},
            {"name": "argmax", "op": "ArgMax", "inputs": ["probs"], "outputs": ["class"],
             "attrs": {"axis": 1, "keepdims": 0}},
        ],
    }


def main():
    rng = np.random.default_rng(2024)
    params = train(rng)
    params = [np.round(p, 4).astype(np.float32).astype(np.float64) for p in params]  # as stored
    xt, yt = dataset(np.random.default_rng(99), 2000)
    acc = (forward(params, xt)[0].argmax(axis=1) == yt).mean()
    print("test accuracy with the stored weights: %.3f" % acc)
    if acc < 0.9:
        sys.exit("make_example.py: accuracy too low, not writing the model")
    with open(os.path.join(HERE, "shapes.rlxg"), "w") as f:
        json.dump(graph(params), f, separators=(",", ":"))
        f.write("\n")
    os.makedirs(os.path.join(HERE, "samples"), exist_ok=True)
    srng = np.random.default_rng(7)
    for cls, fname, noise in ((5, "plus", 0), (4, "box", 0), (2, "diagonal", 0), (1, "noisy_bar", 0.2)):
        img = np.clip(draw(srng, cls) + srng.normal(0, noise, (8, 8)) * (noise > 0), 0, 1)
        img = img.astype(np.float32).reshape(1, 1, 8, 8)
        np.save(os.path.join(HERE, "samples", fname + ".npy"), img)
        p = softmax(forward(params, img.reshape(1, 8, 8).astype(np.float64))[0])[0]
        print("samples/%s.npy: numpy predicts %s (prob %.3f)" % (fname, CLASSES[p.argmax()], p.max()))


if __name__ == "__main__":
    main()
