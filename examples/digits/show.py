#!/usr/bin/python3
"""show.py - the digits demo's Python side (examples/demo.sh calls it).

    show.py samples LABELS.npy TORCH.npy      the held-out images the demo draws, "INDEX LABEL"
                                              a line: the first five, and the first one PyTorch misreads
    show.py pick HELDOUT.npy INDEX OUT.npy    write held-out image INDEX as [1,1,8,8]
    show.py draw IMAGE.npy PROBS.npy DIGIT.npy LABEL
        draw the image in ASCII shades and name the compiled model's digit,
        its probability and the runner-up, next to the true label
    show.py accuracy DIGITS.npy LABELS.npy TORCH.npy TORCH_ACCURACY.txt
        the compiled model's held-out accuracy next to PyTorch's, and in how
        many images the two predictions differ
"""
import sys

import numpy as np

SHADES = " .:-=+*#%@"


def samples(labels, torch_digits):
    y, t = np.load(labels).reshape(-1), np.load(torch_digits).reshape(-1)
    chosen = list(range(min(5, len(y))))
    chosen += [int(i) for i in np.nonzero(t != y)[0][:1] if i >= 5]
    for i in chosen:
        print(i, int(y[i]))


def pick(heldout, index, out):
    np.save(out, np.load(heldout)[int(index)][None])


def draw(image, probs, digit, label):
    img = np.load(image).reshape(8, 8)
    p = np.load(probs).reshape(-1)
    d = int(np.load(digit).reshape(-1)[0])
    for row in img:
        print("    |" + "".join(SHADES[int(round(v * (len(SHADES) - 1) / 16.0))] * 2 for v in row) + "|")
    second = int(np.argsort(-p)[1])
    verdict = "right" if d == int(label) else "wrong"
    print("    rlxc says %d (prob %.3f; next %d at %.3f); the label is %s: %s" % (d, p[d], second, p[second], label,
                                                                               verdict))


def accuracy(digits, labels, torch_digits, torch_accuracy):
    d, y, t = np.load(digits).reshape(-1), np.load(labels).reshape(-1), np.load(torch_digits).reshape(-1)
    correct = int((d == y).sum())
    torch_correct, total = (int(s) for s in open(torch_accuracy).read().split())
    print("held-out accuracy: rlxc %d of %d (%.2f%%), PyTorch %d of %d (%.2f%%); the predictions differ in %d images"
          % (correct, len(y), 100.0 * correct / len(y), torch_correct, total, 100.0 * torch_correct / total,
             int((d != t).sum())))


if __name__ == "__main__":
    cmds = {"samples": samples, "pick": pick, "draw": draw, "accuracy": accuracy}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
