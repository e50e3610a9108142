#!/bin/sh
# device-stage-mpi.sh - pack Debian's OpenMPI runtime for the lent GPU
# machine, which has no MPI (issue 19: GPU ranks there; docs/BENCHMARKS.md).
#
#   make MPI=1 CUDA_ARCH=sm_90 BUILD=build-mpi-gpu build-mpi-gpu/nbody-render
#   tools/device-stage-mpi.sh        # -> .dev/mpi.tar.xz
#
# The archive holds, under mpi/:
#   root/  OpenMPI's and PMIx's own folders at their Debian paths
#          (usr/lib/x86_64-linux-gnu/openmpi, .../pmix2, usr/share/openmpi,
#          usr/bin/orterun): OpenMPI finds its components and help files by
#          those absolute paths, so on the device they are unpacked into /
#          with tar --skip-old-files (nothing there is replaced);
#   lib/   every shared library they and the MPI build need (stage-runtime-libs);
#   bin/   the stripped MPI build of nbody-render.
# On the device (tools/device-check.sh does this when .dev/mpi.tar.xz came):
#   tar -xJf .dev/mpi.tar.xz -C /tmp/nb && tar -xf /tmp/nb/mpi/root.tar -C / --skip-old-files
#   export LD_LIBRARY_PATH=/tmp/nb/mpi/lib:$LD_LIBRARY_PATH PATH=/usr/bin:$PATH
#   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 ...
# Components that need fabrics the machine lacks (verbs, UCX, OFI, PSM)
# are left out of the library staging and switched off with
# OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_mtl=^ofi,psm2 OMPI_MCA_osc=^ucx.
set -e
STAGE=${STAGE:-../shared/tools/stage-runtime-libs}
D=.dev/mpi-pack
rm -rf $D .dev/mpi.tar.xz
mkdir -p $D/mpi/bin
# the MPI build with CUDA, in a folder of its own (make test's MPI build, build-mpi/, is CPU-only)
MB=${MPI_BUILD:-build-mpi-gpu}
strip -o $D/mpi/bin/nbody-render $MB/nbody-render
ML=/usr/lib/x86_64-linux-gnu
# the fabrics' components: left out (their libraries are large and useless there)
SKIP='ucx|ofi|psm|openib|verbs|usnic|portals|ofi|fca|hcoll|mxm|cuda|ucc'
comps=$(ls $ML/openmpi/lib/openmpi3/*.so $ML/pmix2/lib/pmix/*.so | grep -Ev "mca_[a-z]+_($SKIP)")
tar -cf $D/mpi/root.tar -C / --exclude='*.a' --exclude='*/include/*' \
	$(cd / && ls -d usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 usr/lib/x86_64-linux-gnu/pmix2 \
		usr/share/openmpi usr/bin/orterun usr/bin/orted etc/openmpi 2>/dev/null)
# what .dev/rt.tar.xz (tools/device-stage.sh, run first) already carries is left out
STAGE_EXCLUDE="$(ls .dev/rt/lib 2>/dev/null | tr '\n' ' ')" \
STAGE_EXCLUDE_RE='^(libucp|libucs|libuct|libucm|libfabric|libibverbs|librdmacm|libpsm|libnl-|libefa|libmlx)' \
	"$STAGE" $D/mpi/stage $MB/nbody-render /usr/bin/orterun /usr/bin/orted $ML/libmpi.so.40 \
	$comps >/dev/null
mv $D/mpi/stage/lib $D/mpi/lib
rm -rf $D/mpi/stage $D/mpi/stage.tar.xz
tar -cJf .dev/mpi.tar.xz -C $D mpi
ls -l .dev/mpi.tar.xz
