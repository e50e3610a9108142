#!/bin/sh
# deps.sh - install the Debian packages nbody-render needs, if any is missing.
# Run by `make deps` (and so by `make test` and `make demo`); `deps.sh fuzz`
# (make fuzz) also installs clang-14 with libFuzzer and its OpenMP runtime.
set -e
need=""
if [ "${1:-}" = fuzz ]; then
	command -v clang-14 >/dev/null 2>&1 || need="$need clang-14"
	ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
		need="$need libclang-rt-14-dev"
	[ -e /usr/lib/llvm-14/lib/libomp.so ] || need="$need libomp-14-dev"
fi
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v cc >/dev/null 2>&1 || need="$need build-essential"
have_pc yaml-0.1 || need="$need libyaml-dev"
for p in libavcodec libavformat libavutil libswscale; do
	have_pc $p || need="$need $p-dev"
done
have_pc libpng || need="$need libpng-dev"
have_pc check || need="$need check"
[ -f /usr/include/stb/stb_image_write.h ] || need="$need libstb-dev"
command -v ffprobe >/dev/null 2>&1 || need="$need ffmpeg"
# Snapshots and FITS maps (issue 16; read and written): the libraries, and the
# Python readers the tests hold them against (Debian's python3, /usr/bin).
have_pc hdf5 || need="$need libhdf5-dev"
have_pc cfitsio || need="$need libcfitsio-dev"
for m in h5py yt astropy; do
	[ -d /usr/lib/python3/dist-packages/$m ] || need="$need python3-$m"
done
# MPI (issue 19, dist/): OpenMPI's headers for the MPI build the tests
# launch (make MPI=1; make test builds one in build-mpi/) and mpirun.
have_pc ompi-c || need="$need libopenmpi-dev"
command -v mpirun >/dev/null 2>&1 || need="$need openmpi-bin"
if [ -z "$need" ]; then
	echo "deps: all present"
	exit 0
fi
cmd="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$need"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $cmd
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	echo "deps: installing with sudo:$need"
	sudo apt-get update -qq
	sudo DEBIAN_FRONTEND=noninteractive $cmd
else
	echo "deps: missing:$need"
	echo "deps: run as root:  apt-get update && $cmd"
	exit 1
fi
