#!/usr/bin/env python3
"""long-functions.py - list C functions longer than a limit.

Usage: tools/long-functions.py [--max N] [FILE_OR_DIR...]
       (default: --max 80, every folder of sources: scene sim render engine
       output dist app bench tests fuzz, with sim/cuda and render/cuda)

A function's length is counted from the first line of its definition (the
line where the return type starts) to the line of its closing brace, both
included. Comments, strings and preprocessor lines are skipped when looking
for braces. In .cu files only host functions count: a function declared
__global__ or __device__ (and not also __host__) is device code, whose
length follows the kernel's register and unrolling needs, not a reader's. Prints "LENGTH FILE:LINE NAME", longest first, and exits 1 when
any function is over the limit.
"""
import os
import re
import sys

DEFAULT_DIRS = ["scene", "sim", "render", "engine", "output", "dist", "app", "bench", "tests", "fuzz"]


def strip_code(text):
    """Blank out comments, string and char literals and preprocessor lines,
    keeping newlines so that line numbers stay."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # preprocessor line, with backslash continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    """Yield (name, first_line, length) for each function defined in PATH."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    depth = 0
    head_start = None  # offset where the current top-level declaration starts
    start = None
    name = None
    for i, c in enumerate(code):
        if depth == 0 and head_start is None and not c.isspace() and c not in ";}":
            head_start = i
        if c == "{":
            if depth == 0:
                head = code[head_start:i] if head_start is not None else ""
                m = re.search(r"([A-Za-z_]\w*)\s*\([^;]*\)\s*$", head, re.S)
                device = (("__global__" in head or "__device__" in head)
                          and "__host__" not in head)
                if m and "=" not in head.split("(")[0] and not device:
                    name = m.group(1)
                    start = head_start
                else:
                    name = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if name is not None:
                    first = code.count("\n", 0, start) + 1
                    last = code.count("\n", 0, i) + 1
                    yield name, first, last - first + 1
                name = None
                head_start = None
        elif c == ";" and depth == 0:
            head_start = None


def main(argv):
    limit = 80
    args = list(argv)
    if len(args) >= 2 and args[0] == "--max":
        limit = int(args[1])
        args = args[2:]
    if not args:
        args = DEFAULT_DIRS
    files = []
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                files += [os.path.join(root, x) for x in names if x.endswith((".c", ".cu"))]
        else:
            files.append(a)
    found = []
    for p in sorted(files):
        for name, line, length in functions(p):
            if length > limit:
                found.append((length, "%s:%d" % (p, line), name))
    found.sort(key=lambda t: (-t[0], t[1]))
    for length, where, name in found:
        print("%4d %s %s" % (length, where, name))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
