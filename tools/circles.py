#!/usr/bin/env python3
"""circles.py - circles of calls between the files of one folder.

Usage: tools/circles.py BUILD_DIR [--quiet]

Reads the objects of a build with nm (BUILD_DIR/FOLDER/FILE.o; a CUDA build
adds sim/cuda and render/cuda): file A points at file B of the same folder
when A uses a name B defines. A circle is a set of two or more files of one
folder that reach each other through such arrows (a strongly connected
component): none of them can be read, tested or replaced without the
others. Prints one line per circle, "FOLDER: N files: a.c b.c ..." with
the arrows that close it, then the count; exits 1 when there is any.

Between folders the layers forbid circles already (tools/check-layers.sh);
this looks inside each folder, where the include table says nothing.
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVWC":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def sccs(nodes, edges):
    """Tarjan's algorithm, iterative enough for a folder's few dozen files."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[2])
        return 2
    build = argv[0].rstrip("/")
    quiet = "--quiet" in argv
    folders = {}
    for root, _, names in os.walk(build):
        rel = os.path.relpath(root, build)
        if rel.startswith(("tests", "fuzz", "bench")) or rel == ".":
            continue
        objs = [os.path.join(root, n) for n in names if n.endswith(".o")]
        if objs:
            folders[rel] = sorted(objs)
    total = 0
    for folder in sorted(folders):
        info = {}
        for obj in folders[folder]:
            src = os.path.basename(obj)[:-2]
            info[src] = symbols(obj)
        owner = {}
        for f, (defined, _) in info.items():
            for s in defined:
                owner.setdefault(s, f)
        edges = {}
        why = {}
        for f, (_, used) in info.items():
            for s in used:
                g = owner.get(s)
                if g and g != f:
                    edges.setdefault(f, set()).add(g)
                    why.setdefault((f, g), s)
        for comp in sccs(list(info), edges):
            if len(comp) < 2:
                continue
            total += 1
            if quiet:
                continue
            arrows = ["%s->%s (%s)" % (a, b, why[(a, b)])
                      for a in comp for b in sorted(edges.get(a, ())) if b in comp]
            print("%s: %d files: %s" % (folder, len(comp), " ".join(comp)))
            for a in arrows:
                print("    " + a)
    print("circles: %d" % total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
