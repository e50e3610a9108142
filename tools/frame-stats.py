#!/usr/bin/env python3
"""frame-stats.py - the look's measures on rendered 8-bit PNG frames (issue 14).

    tools/frame-stats.py out/demo/frames/frame_00000.png ...

Per frame: burn-out (pixels with all three channels at 255, percent), lit (pixels
whose brightest channel exceeds 2 % of the frame's maximum, percent; the fog measure
of docs/scenes.md), and the 99.9th percentile of the brightest channel. Needs numpy
and Pillow (Debian: python3-numpy python3-pil; the GPU machine's python3 has both)."""
import sys

import numpy as np
from PIL import Image


def stats(path):
    a = np.asarray(Image.open(path).convert("RGB"), dtype=np.int32)
    mx = a.max(axis=2)
    n = mx.size
    burnt = np.count_nonzero((a == 255).all(axis=2)) * 100.0 / n
    peak = int(mx.max())
    lit = np.count_nonzero(mx > 0.02 * peak) * 100.0 / n if peak > 0 else 0.0
    return burnt, lit, float(np.percentile(mx, 99.9))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    print("%-40s %9s %7s %7s" % ("frame", "burnt %", "lit %", "p99.9"))
    for p in argv[1:]:
        b, l, q = stats(p)
        print("%-40s %9.3f %7.1f %7.0f" % (p[-40:], b, l, q))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
