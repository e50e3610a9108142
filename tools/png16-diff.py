#!/usr/bin/env python3
"""png16-diff.py A.png B.png [MAX_LSB] - compare two 8- or 16-bit RGB PNGs value by value.

Prints the largest difference (in LSB of the files' depth) and how many values differ;
exits 1 when the largest difference exceeds MAX_LSB (default 0). Decodes the PNG itself
(zlib + the five filters), because Pillow reads 16-bit RGB as 8-bit. Needs numpy."""
import struct
import sys
import zlib

import numpy as np


def read_png(path):
    d = open(path, "rb").read()
    i, idat = 8, b""
    while i < len(d):
        n = struct.unpack(">I", d[i:i + 4])[0]
        t = d[i + 4:i + 8]
        if t == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", d[i + 8:i + 18])
        elif t == b"IDAT":
            idat += d[i + 8:i + 8 + n]
        i += 12 + n
    assert ctype == 2, "RGB PNGs only"
    bpp = 3 * depth // 8
    stride = w * bpp
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), np.int64)
    prev = np.zeros(stride, np.int64)
    for r in range(h):
        f, line = raw[r, 0], raw[r, 1:].astype(np.int64)
        cur = np.zeros(stride, np.int64)
        if f in (0, 2):
            cur = (line + (prev if f == 2 else 0)) & 255
        else:
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    p = a
                elif f == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + p) & 255
        out[r] = cur
        prev = cur
    if depth == 16:
        out = out.reshape(h, w * 3, 2) @ np.array([256, 1])
    return out.reshape(h, w, 3)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip())
        return 2
    a, b = read_png(argv[1]), read_png(argv[2])
    tol = int(argv[3]) if len(argv) > 3 else 0
    d = np.abs(a - b)
    print("%s vs %s: max |diff| %d LSB, %d values differ, peak %d" %
          (argv[1], argv[2], d.max(), (d > 0).sum(), a.max()))
    return 0 if d.max() <= tol else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
