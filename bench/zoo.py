#!/usr/bin/python3
"""zoo.py - the benchmark's wider zoo: common torchvision and torch.nn models.

    /usr/bin/python3 bench/zoo.py [OUTDIR] [NAME...]

Exports each model (all when no NAME is given) the way a user would, through
tests/zoo/export.py's own export(): torch.onnx.export at opset 17, random
weights (seeded; torchvision's own init, weights=None, no downloads), eval
mode, BatchNorm statistics randomised, static shapes. Writes
OUTDIR/NAME/{model.onnx,in_0.npy,expected_0.npy,ops.txt,opset.txt}
(default OUTDIR: build/wzoo), the layout bench/models.py reads, and PyTorch's
own output on the input as the reference rlxc's output is checked against.

The families, each for what it exercises:

    efficientnet_b0, efficientnet_v2_s   SiLU, squeeze-excitation, depthwise 3x3/5x5
                                         (v2: fused MBConv, plain 3x3 + SiLU)
    mobilenetv3_large, mobilenetv3_small HardSwish, squeeze-excitation with HardSigmoid
    shufflenet_v2                        channel shuffle (Reshape/Transpose), Split, Concat
    squeezenet                           1x1/3x3 fire modules, Concat, ceil-mode pools
    densenet121                          long Concat chains, BatchNorm before convolution
    resnext50, regnet_y_400mf            grouped convolutions (regnet: with SE)
    lstm_small, lstm_medium              LSTM, hidden 32 and 256
    gru_small, gru_medium                GRU, hidden 32 and 256
    transformer_small, transformer_medium  encoder layers with GELU, d 128 and 256
    audio1d                              1-D convolutions over a raw waveform (M5-like)
    unet_small                           encoder-decoder, ConvTranspose, skip Concats

bench/torch_bench.py builds the same modules (imported from here) to time
PyTorch.
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
import export as tzoo  # noqa: E402  (tests/zoo/export.py)

SEED = tzoo.SEED


class SeqHead(nn.Module):
    """A recurrent sequence classifier: the last step's output through a linear head."""

    def __init__(self, cell, inputs, hidden, layers, classes=10):
        super().__init__()
        self.rnn = cell(input_size=inputs, hidden_size=hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1, :])


def encoder(d, heads, ff, layers):
    layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ff, batch_first=True,
                                       activation="gelu")
    return nn.TransformerEncoder(layer, num_layers=layers)


class Audio1D(nn.Module):
    """An M5-style keyword classifier over one second of 16 kHz audio."""

    def __init__(self, ch=32, classes=35):
        super().__init__()

        def block(cin, cout, k, stride=1):
            return [nn.Conv1d(cin, cout, k, stride=stride, padding=k // 2), nn.BatchNorm1d(cout), nn.ReLU()]

        self.net = nn.Sequential(
            *block(1, ch, 80, stride=16), nn.MaxPool1d(4),
            *block(ch, ch, 3), nn.MaxPool1d(4),
            *block(ch, 2 * ch, 3), nn.MaxPool1d(4),
            *block(2 * ch, 2 * ch, 3), nn.AdaptiveAvgPool1d(1))
        self.head = nn.Linear(2 * ch, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.net(x), 1))


class UNet(nn.Module):
    """A small U-Net: three levels down by max pooling, up by ConvTranspose, skips by Concat."""

    def __init__(self, cin=3, base=16, classes=2):
        super().__init__()

        def double(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(),
                                 nn.Conv2d(b, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU())

        c = [base, 2 * base, 4 * base, 8 * base]
        self.down = nn.ModuleList([double(cin, c[0]), double(c[0], c[1]), double(c[1], c[2])])
        self.mid = double(c[2], c[3])
        self.up = nn.ModuleList([nn.ConvTranspose2d(c[i + 1], c[i], 2, stride=2) for i in (2, 1, 0)])
        self.dec = nn.ModuleList([double(2 * c[i], c[i]) for i in (2, 1, 0)])
        self.out = nn.Conv2d(c[0], classes, 1)

    def forward(self, x):
        skips = []
        for d in self.down:
            x = d(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.mid(x)
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], 1))
        return self.out(x)


tv = torchvision.models
IMAGE = (1, 3, 224, 224)

# name -> (constructor, input shape)
MODELS = {
    "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), IMAGE),
    "efficientnet_v2_s": (lambda: tv.efficientnet_v2_s(weights=None), IMAGE),
    "mobilenetv3_large": (lambda: tv.mobilenet_v3_large(weights=None), IMAGE),
    "mobilenetv3_small": (lambda: tv.mobilenet_v3_small(weights=None), IMAGE),
    "shufflenet_v2": (lambda: tv.shufflenet_v2_x1_0(weights=None), IMAGE),
    "squeezenet": (lambda: tv.squeezenet1_1(weights=None), IMAGE),
    "densenet121": (lambda: tv.densenet121(weights=None), IMAGE),
    "resnext50": (lambda: tv.resnext50_32x4d(weights=None), IMAGE),
    "regnet_y_400mf": (lambda: tv.regnet_y_400mf(weights=None), IMAGE),
    "lstm_small": (lambda: SeqHead(nn.LSTM, 16, 32, 1), (2, 10, 16)),
    "lstm_medium": (lambda: SeqHead(nn.LSTM, 128, 256, 2), (4, 32, 128)),
    "gru_small": (lambda: SeqHead(nn.GRU, 16, 32, 1), (2, 10, 16)),
    "gru_medium": (lambda: SeqHead(nn.GRU, 128, 256, 2), (4, 32, 128)),
    "transformer_small": (lambda: encoder(128, 4, 512, 2), (1, 32, 128)),
    "transformer_medium": (lambda: encoder(256, 8, 1024, 4), (1, 128, 256)),
    "audio1d": (Audio1D, (1, 1, 16000)),
    "unet_small": (UNet, (1, 3, 128, 128)),
}


def main():
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return
    if any(a.startswith("-") for a in args):
        sys.exit("zoo.py: unknown option '%s' (usage: bench/zoo.py [OUTDIR] [NAME...])" %
                 next(a for a in args if a.startswith("-")))
    outdir = os.path.join(ROOT, "build", "wzoo")
    if args and args[0] not in MODELS:
        outdir, args = args[0], args[1:]
    for n in args:
        if n not in MODELS:
            sys.exit("zoo.py: unknown model '%s' (names: %s)" % (n, " ".join(MODELS)))
    torch.set_num_threads(2)
    for n in args or list(MODELS):
        tzoo.export(n, outdir, MODELS)


if __name__ == "__main__":
    main()
