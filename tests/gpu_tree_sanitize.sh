#!/bin/sh
# gpu_tree_sanitize.sh - compute-sanitizer memcheck and racecheck over the GPU
# Barnes-Hut tree on a 10k-body Plummer sphere (NB_GPU_SANITIZE=1 runs only
# test_gpu_tree's small cases: every walk variant, one and two bodies, and
# the migration's adversarial case on 4k bodies: simulation.reorder migrate).
# Needs a GPU and a CUDA build:
#
#   make CUDA_ARCH=sm_90 build/tests/test_gpu_tree && tests/gpu_tree_sanitize.sh build
#
# Exits non-zero on the first hazard or memory error.
set -eu
B=${1:-build}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export NB_GPU_SANITIZE=1 CK_FORK=no
for tool in memcheck racecheck; do
	echo "== compute-sanitizer --tool $tool $B/tests/test_gpu_tree"
	"$CS" --tool "$tool" --error-exitcode 3 "$B/tests/test_gpu_tree"
done
echo "gpu_tree_sanitize: memcheck and racecheck clean"
