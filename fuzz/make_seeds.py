#!/usr/bin/python3
"""make_seeds.py - writes the seeds of the full-loader harnesses
(fuzz/seeds/snapload, snapseries, restart): small GADGET format-1/2 files
and HDF5 recipes (fuzz/fuzz_h5.h) behind the option bytes that
fuzz/fuzz_files.h reads. Run from the repository root; standard library only."""
import os
import struct

SEP = b"\n=====\n"


def head(npart, mass, time, num_files=1, total=None, z=0.0, hubble=0.0, e="<"):
    total = total or npart
    h = struct.pack(e + "6i", *npart) + struct.pack(e + "6d", *mass)
    h += struct.pack(e + "2d", time, z) + struct.pack(e + "2i", 0, 0)
    h += struct.pack(e + "6I", *total) + struct.pack(e + "2i", 0, num_files)
    h += struct.pack(e + "4d", 0.0, 0.0, 0.0, hubble) + struct.pack(e + "2i", 0, 0)
    h += struct.pack(e + "6I", 0, 0, 0, 0, 0, 0) + struct.pack(e + "i", 0)
    return h + b"\0" * (256 - len(h))


def rec(b, e="<"):
    return struct.pack(e + "i", len(b)) + b + struct.pack(e + "i", len(b))


def gadget1(npart, mass, time, ids, pos, vel, masses=None, num_files=1, total=None,
            z=0.0, hubble=0.0, e="<", fmt2=False):
    blocks = [("HEAD", head(npart, mass, time, num_files, total, z, hubble, e)),
              ("POS ", struct.pack(e + "%df" % len(pos), *pos)),
              ("VEL ", struct.pack(e + "%df" % len(vel), *vel)),
              ("ID  ", struct.pack(e + "%dI" % len(ids), *ids))]
    if masses:
        blocks.append(("MASS", struct.pack(e + "%df" % len(masses), *masses)))
    out = b""
    for label, b in blocks:
        if fmt2:
            out += rec(label.encode() + struct.pack(e + "i", len(b) + 8), e)
        out += rec(b, e)
    return out


def rv(x):
    """The recipe byte whose value (rval in fuzz/fuzz_h5.h) is x."""
    special = [0, 1, 2, 3, 6, -1, 0.5, 0.7, 1e300, -1e300, 4294967296.0, 1e-300,
               3.085678e21, 1.989e43, 1e5, 0.25]
    if x in special:
        return special.index(x)
    assert x == int(x) and 0 <= x < 112
    return 128 + int(x)


def recipe(time, ids, pos, vel, masses, num_files=0, total=None):
    """A fuzz_h5.h recipe: Header with NumPart_ThisFile/Total (type 1), Time
    (and NumFilesPerSnapshot), PartType1 with Coordinates, Velocities,
    ParticleIDs, Masses."""
    n = len(ids)
    total = total if total is not None else n
    r = [0]  # flags: Header only
    r += [3] + [rv(0), rv(n), 0, 0, 0, 0, 0, 0]          # NumPart_ThisFile uint x6
    r += [3] + [rv(0), rv(total), 0, 0, 0, 0, 0, 0]      # NumPart_Total
    r += [0, 0]                                          # HighWord, MassTable absent
    r += [1] + [rv(time)] + [0] * 7                      # Time scalar
    r += [0, 0]                                          # Redshift, BoxSize
    r += ([1] + [rv(num_files)] + [0] * 7) if num_files else [0]
    r += [0, 0, 0]                                       # HubbleParam, Scale-factor, UnitLength
    r += [0, 1]                                          # PartType0 absent, PartType1 present

    def ds(mode, vals):
        return [mode, n] + [rv(v) for v in vals] + [0] * (24 - len(vals)) + [0]
    r += ds(1, pos) + ds(1, vel) + ds(4, ids) + ds(2, masses) + [0]
    r += [0, 0, 0, 0]                                    # PartType2..5 absent
    return bytes(r)


def opts(o0=0, o1=0, o2=0, o3=0, o4=0, o5=0, o6=0, o7=0):
    return bytes([o0, o1, o2, o3, o4, o5, o6, o7])


def w(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # two halo particles with MassTable, three disk particles with a MASS block
    pos = [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 1, 1, 1]
    vel = [0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0]
    one = gadget1([0, 2, 3, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.0, [1, 2, 3, 4, 5], pos, vel,
                  masses=[0.1, 0.2, 0.3])
    d = "fuzz/seeds/snapload"
    w(d, "f1-le.bin", opts() + one)
    w(d, "f1-be-nbody-ball.bin", opts(2, o6=1) + gadget1(
        [0, 2, 3, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.0, [1, 2, 3, 4, 5], pos, vel,
        masses=[0.1, 0.2, 0.3], e=">"))
    w(d, "f2-region-subsample.bin", opts(0x48, 0x40, 1, 0x31) + gadget1(
        [0, 2, 3, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.0, [1, 2, 3, 4, 5], pos, vel,
        masses=[0.1, 0.2, 0.3], fmt2=True))
    w(d, "f1-comoving-units-box.bin", opts(0x90, 0x82, 2, 0x23, 0x09, 0x05) + gadget1(
        [0, 2, 3, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.5, [1, 2, 3, 4, 5], pos, vel,
        masses=[0.1, 0.2, 0.3], z=1.0, hubble=0.7))
    # a two-file snapshot: 2 halo particles in each part
    p0 = gadget1([0, 2, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], 0.0, [1, 2], pos[:6], vel[:6],
                 num_files=2, total=[0, 4, 0, 0, 0, 0])
    p1 = gadget1([0, 2, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], 0.0, [3, 4], pos[6:12], vel[6:12],
                 num_files=2, total=[0, 4, 0, 0, 0, 0])
    w(d, "two-files.bin", opts() + p0 + SEP + p1)
    for name in ("two-halo.bin", "params-flag.bin"):
        with open("fuzz/seeds/snaph5/" + name, "rb") as f:
            w(d, "h5-" + name, opts(1) + f.read())

    # series: the same five IDs at times 0, 0.01, 0.02 (the last one lacks ID 5)
    d = "fuzz/seeds/snapseries"
    mem = [gadget1([0, 2, 3, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.01 * k, [1, 2, 3, 4, 5],
                   [x + 0.01 * k * v for x, v in zip(pos, vel)], vel, masses=[0.1, 0.2, 0.3])
           for k in range(2)]
    mem.append(gadget1([0, 2, 2, 0, 0, 0], [0, 0.5, 0, 0, 0, 0], 0.02, [1, 2, 3, 4],
                       pos[:12], vel[:12], masses=[0.1, 0.2]))
    w(d, "three-f1.bin", opts(o6=2 * 3) + mem[0] + SEP + mem[1] + SEP + mem[2])
    w(d, "two-f1-nbody-subsample.bin", opts(0, 0, 1, o6=1 + 2 * 7) + mem[0] + SEP + mem[1])
    w(d, "two-f1-region.bin", opts(0, 0x40, 0, 0x41) + mem[0] + SEP + mem[1])

    h5 = [recipe(k, [1, 2, 3], [0, 0, 0, 1, 0, 0, 0, 2, 0], [0, 1, 0, 1, 0, 0, 0, 0, 1],
                 [1, 2, 3]) for k in range(3)]
    h5[2] = recipe(2, [1, 2, 7], [0, 0, 0, 1, 0, 0, 0, 2, 0], [0, 1, 0, 1, 0, 0, 0, 0, 1],
                   [1, 2, 3])
    w(d, "h5-three.bin", opts(1, o6=2 * 2) + h5[0] + SEP + h5[1] + SEP + h5[2])
    w(d, "h5-two-nbody.bin", opts(1, o6=1) + h5[0] + SEP + h5[1])
    d = "fuzz/seeds/snapload"
    w(d, "h5-one.bin", opts(1) + h5[0])
    w(d, "h5-two-files.bin", opts(1, 0x40, 3, 0x40) +
      recipe(0, [1, 2], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0], [1, 2], 2, 4) + SEP +
      recipe(0, [3, 4], [0, 2, 0, 0, 0, 3], [0, 0, 0, 0, 0, 0], [3, 6], 2, 4))

    # restart: all zero bytes after the scene byte and flags are a right snapshot
    d = "fuzz/seeds/restart"
    w(d, "galactic-direct-frame3.bin", bytes([0, 0, 3]))
    w(d, "nbody-bh-frame5.bin", bytes([3, 0, 5]))
    w(d, "galactic-bh-reversed.bin", bytes([2, 4, 1]))
    w(d, "nbody-types.bin", bytes([1, 8, 2, 4, 4, 4, 1, 1]))


main()
