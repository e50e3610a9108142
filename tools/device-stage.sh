#!/bin/sh
# device-stage.sh - pack a Hopper build for the lent GPU machine (docs/BENCHMARKS.md).
#
#   make CUDA_ARCH=sm_90 all bench $(ls tests/test_*.c | sed 's#tests/\(.*\)\.c#build/tests/\1#')
#   tools/device-stage.sh            # -> .dev/nb.tar.xz (stripped binaries, scenes, test data)
#                                    #    .dev/rt.tar.xz (runtime libraries that machine lacks)
# On the device (run from the repo root, carry .dev):
#   mkdir -p /tmp/nb && mkdir -p /tmp/nb/rt && tar -xJf .dev/nb.tar.xz -C /tmp/nb \
#     && tar -xJf .dev/rt.tar.xz -C /tmp/nb/rt
#   cd /tmp/nb && export LD_LIBRARY_PATH=/tmp/nb/rt/lib
# .dev/ is kept out of git through .git/info/exclude.
set -e
STAGE=${STAGE:-../shared/tools/stage-runtime-libs}
mkdir -p .dev/pack/build/tests
rm -rf .dev/pack/build/tests/* .dev/rt .dev/rt.tar.xz
# DEVICE_TESTS: the test programs to pack (default: those the GPU machine
# runs; the carry limit is 64 MiB with the runtime libraries)
TESTS=${DEVICE_TESTS:-"test_gpu_* test_pipeline test_timestep test_film test_dist"}
for f in build/nbody-render build/nbody-bench $(for t in $TESTS; do ls build/tests/$t; done); do
	case $f in *.d|*.o) continue ;; esac
	[ -x "$f" ] || continue
	strip -o .dev/pack/$f $f
done
cp -r scenes tests tools .dev/pack/ 2>/dev/null
rm -rf .dev/pack/tests/*.c .dev/pack/tests/*.h .dev/pack/data
# NB_STAGE_DATA=1: GADGET-2's example (read in place here, packed only for
# the device's run of scenes/gadget2-galaxy.yaml; never in the repository)
if [ -n "${NB_STAGE_DATA:-}" ] && [ -f ../shared/data/gadget2-ics/galaxy_littleendian.dat ]; then
	mkdir -p .dev/pack/data
	cp ../shared/data/gadget2-ics/galaxy_littleendian.dat .dev/pack/data/
fi
tar -cf - -C .dev/pack . | xz -9e -T2 >.dev/nb.tar.xz  # -9e: its large window shares the test programs' common code (13 MB -> 4.5 MB)
"$STAGE" .dev/rt build/nbody-render build/nbody-bench build/tests/test_* >/dev/null
ls -l .dev/*.tar.xz
