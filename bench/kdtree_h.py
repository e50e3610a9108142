"""kdtree_h.py - the external side of the CPU-vs-SPLASH timing in
docs/BENCHMARKS.md ("Adaptive smoothing on the CPU against SPLASH"):
h = distance to the k-th nearest other star by scipy's cKDTree (2 workers),
timed alone, and SPLASH's ascii input written from it.

  /usr/bin/python3 bench/kdtree_h.py STATE.csv OUT.dat [k]    (OUT '-': time only)

STATE.csv is a state file (output.initial_state). OUT.dat holds the columns
x y z particle_mass h density that SPLASH reads, with h_splash = h / 2
(SPLASH's cubic spline reaches 2 h, nbody-render's reaches h) and
density = m (1.2 / h_splash)^3, so SPLASH's weight m / (rho h^3) is the same
for every star. OUT.dat.h.npy keeps h itself, to compare with
render_adaptive_h."""
import resource
import sys
import time

import numpy as np
from scipy.spatial import cKDTree

src, out = sys.argv[1], sys.argv[2]
k = int(sys.argv[3]) if len(sys.argv) > 3 else 32
t0 = time.time()
a = np.loadtxt(src, delimiter=',', skiprows=1, usecols=(2, 3, 4, 5))
print(f"read {len(a)} stars in {time.time() - t0:.1f} s", file=sys.stderr)
m, pos = a[:, 0], np.ascontiguousarray(a[:, 1:4])
ru0 = resource.getrusage(resource.RUSAGE_SELF)
w0 = time.time()
tree = cKDTree(pos)
d, _ = tree.query(pos, k=k + 1, workers=2)  # the star itself comes first, at 0
w1 = time.time()
ru1 = resource.getrusage(resource.RUSAGE_SELF)
h = d[:, k]
cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
print(f"kdtree k={k}: wall {w1 - w0:.3f} s cpu {cpu:.3f} s", flush=True)
if out != '-':
    hs = h / 2
    rho = m * (1.2 / hs) ** 3
    np.savetxt(out, np.column_stack([pos, m, hs, rho]), fmt='%.9g',
               header='x y z particle_mass h density', comments='# ')
    np.save(out + '.h.npy', h)
