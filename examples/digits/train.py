#!/usr/bin/python3
"""train.py - trains the digits example model and writes what `make demo` uses.

    /usr/bin/python3 examples/digits/train.py

The data: the 8x8 handwritten digits that Debian's python3-sklearn ships
(sklearn.datasets.load_digits: 1797 images, pixels 0..16, labels 0..9),
split once into 1347 training and 450 held-out images (stratified by label,
random_state 0). The model, a small CNN (1,898 weights):

    pixels u8 [N,1,8,8] -> /16 -> Conv 3x3 (8, pad 1) -> Relu -> MaxPool 2x2
      -> Conv 3x3 (16, pad 1) -> Relu -> MaxPool 2x2 -> Flatten [N,64]
      -> Linear (10) -> logits -> Softmax -> probs [N,10]
                                -> ArgMax  -> digit [N]

trained with Adam for 60 epochs on one thread from a fixed seed, then
exported with torch.onnx.export (opset 17, the batch N symbolic: rlxc binds
it with --dim batch=N). It takes the pixels as they are stored (uint8), so
the held-out split is fed to the compiled model unchanged. Writes, next to
this script:

    model.onnx             the model
    heldout_pixels.npy     the held-out images, uint8 [450,1,8,8]
    heldout_labels.npy     their labels, uint8 [450]
    torch_digits.npy       PyTorch's predicted digit for each, uint8 [450]
    torch_accuracy.txt     PyTorch's held-out accuracy: "correct total"

Rerunning rewrites them; the training is deterministic on one machine, but
another torch build may round differently, so these outputs are committed and
`make demo` never trains.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0
EPOCHS = 60


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(64, 10)

    def logits(self, pixels):
        x = pixels.to(torch.float32) / 16.0
        return self.head(torch.flatten(self.features(x), 1))

    def forward(self, pixels):
        z = self.logits(pixels)
        return torch.softmax(z, dim=1), torch.argmax(z, dim=1)


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    digits = load_digits()
    pixels = digits.images.astype(np.uint8).reshape(-1, 1, 8, 8)
    labels = digits.target.astype(np.uint8)
    x_train, x_test, y_train, y_test = train_test_split(pixels, labels, test_size=450, random_state=SEED,
                                                        stratify=labels)
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train.astype(np.int64))
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), 32):
            idx = order[i:i + 32]
            loss = nn.functional.cross_entropy(model.logits(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        _, pred = model(torch.from_numpy(x_test))
    pred = pred.numpy().astype(np.uint8)
    correct = int((pred == y_test).sum())
    print("train.py: held-out accuracy %d of %d (%.2f%%)" % (correct, len(y_test), 100.0 * correct / len(y_test)))

    torch.onnx.export(model, torch.zeros(1, 1, 8, 8, dtype=torch.uint8), os.path.join(HERE, "model.onnx"),
                      opset_version=17, input_names=["pixels"], output_names=["probs", "digit"],
                      dynamic_axes={"pixels": {0: "batch"}, "probs": {0: "batch"}, "digit": {0: "batch"}})
    np.save(os.path.join(HERE, "heldout_pixels.npy"), x_test)
    np.save(os.path.join(HERE, "heldout_labels.npy"), y_test)
    np.save(os.path.join(HERE, "torch_digits.npy"), pred)
    with open(os.path.join(HERE, "torch_accuracy.txt"), "w") as f:
        f.write("%d %d\n" % (correct, len(y_test)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
