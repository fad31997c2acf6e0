#!/usr/bin/python3
"""export.py - exports the PyTorch model zoo to ONNX, with reference outputs.

    /usr/bin/python3 tests/zoo/export.py OUTDIR [NAME...]

For each model (all of them when no NAME is given) writes
OUTDIR/NAME/model.onnx, in_0.npy (the input), expected_0.npy (PyTorch's own
output for it), ops.txt (the sorted ONNX op types the graph uses) and
opset.txt. Everything is deterministic: torch.manual_seed before building
each model and before drawing its input, weights=None (torchvision's own
init, no downloads), eval mode, static shapes, do_constant_folding=True.
BatchNorm running statistics and affine parameters are randomised (seeded)
so that the eval-mode normalisation isn't the identity and is really tested.
Opset 17 is asked for first; only if the exporter refuses it do we fall
back to 14, then 13, and say so on stdout.
"""
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision

SEED = 1234
OPSETS = (17, 14, 13)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


class SmallLSTM(nn.Module):
    """A sequence classifier: one LSTM layer, the last step's state to a linear head."""
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=16, hidden_size=32, batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1, :])


def transformer():
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2)


# name -> (constructor, input shape)
MODELS = {
    "mlp": (mlp, (4, 32)),
    "cnn": (SmallCNN, (1, 3, 32, 32)),
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "mobilenetv2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "transformer": (transformer, (1, 16, 64)),
    "lstm": (SmallLSTM, (2, 10, 16)),
}


def randomise_batchnorm(model):
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)


def export(name, outdir, models=MODELS):
    make, shape = models[name]
    torch.manual_seed(SEED)
    model = make()
    randomise_batchnorm(model)
    model.eval()
    torch.manual_seed(SEED + 1)
    x = torch.randn(*shape, dtype=torch.float32)
    # Grad stays enabled: in eval mode under no_grad, PyTorch 1.13 takes a
    # fused "fast path" for TransformerEncoderLayer that the exporter can't
    # translate; the reference output comes from the same (slow) path.
    want = model(x).detach()
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    used = None
    for opset in OPSETS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, (x,), path, opset_version=opset, do_constant_folding=True,
                                  input_names=["x"], output_names=["y"],
                                  training=torch.onnx.TrainingMode.EVAL)
            used = opset
            break
        except Exception as e:  # the exporter's refusal of this opset
            print("%s: opset %d export failed (%s: %s)" % (name, opset, type(e).__name__, str(e).splitlines()[0]))
    if used is None:
        sys.exit("export.py: %s: no opset worked" % name)
    if used != OPSETS[0]:
        print("%s: fell back to opset %d" % (name, used))
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = sorted(set(n.op_type for n in m.graph.node))
    np.save(os.path.join(d, "in_0.npy"), x.numpy())
    np.save(os.path.join(d, "expected_0.npy"), want.numpy())
    with open(os.path.join(d, "ops.txt"), "w") as f:
        f.write(" ".join(ops) + "\n")
    with open(os.path.join(d, "opset.txt"), "w") as f:
        f.write("%d\n" % used)
    print("%s: opset %d, %d nodes, ops: %s" % (name, used, len(m.graph.node), " ".join(ops)))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export.py OUTDIR [NAME...]  (names: %s)" % " ".join(MODELS))
    names = sys.argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit("export.py: unknown model '%s' (names: %s)" % (n, " ".join(MODELS)))
    torch.set_num_threads(2)
    for n in names:
        export(n, sys.argv[1])


if __name__ == "__main__":
    main()
