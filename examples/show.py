#!/usr/bin/python3
"""show.py - prints what the example model computed, in words.

    show.py IMAGE.npy CLASS.npy PROBS.npy

IMAGE is the model's input (f32 [1,1,8,8]), CLASS and PROBS its outputs as
written by the model binary with -o. Draws the image in ASCII shades and
names the predicted class with its probability and the runners-up.
"""
import sys

import numpy as np

CLASSES = ["horizontal bar", "vertical bar", "diagonal \\", "diagonal /", "box", "plus"]
SHADES = " .:-=+*#%@"


def main(argv):
    image = np.load(argv[1]).reshape(8, 8)
    cls = int(np.load(argv[2]).reshape(-1)[0])
    probs = np.load(argv[3]).reshape(-1)
    for row in image:
        print("    |" + "".join(SHADES[int(round(min(max(v, 0), 1) * (len(SHADES) - 1)))] * 2 for v in row) + "|")
    order = np.argsort(-probs)
    others = ", ".join("%s %.3f" % (CLASSES[i], probs[i]) for i in order[1:3])
    print("    predicted class %d: %s (prob %.3f); next: %s" % (cls, CLASSES[cls], probs[cls], others))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
