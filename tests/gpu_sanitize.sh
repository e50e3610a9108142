#!/bin/sh
# gpu_sanitize.sh - compute-sanitizer memcheck and racecheck over the GPU
# direct-solver tests, small cases only (NB_GPU_SANITIZE=1 in the test), every
# compiled tile shape included. Needs a GPU and a CUDA build:
#
#   make CUDA_ARCH=sm_90 build/tests/test_gpu_direct && tests/gpu_sanitize.sh build
#
# Exits non-zero on the first hazard or memory error.
set -eu
B=${1:-build}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export NB_GPU_SANITIZE=1 CK_FORK=no
for tool in memcheck racecheck; do
	echo "== compute-sanitizer --tool $tool $B/tests/test_gpu_direct"
	"$CS" --tool "$tool" --error-exitcode 3 "$B/tests/test_gpu_direct"
done
echo "gpu_sanitize: memcheck and racecheck clean"
