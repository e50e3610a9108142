#!/bin/sh
# device-check.sh - what a session runs on the lent GPU machine, in one call
# (docs/BENCHMARKS.md says which figures came from which step).
#
# Here (2 cores, no GPU):
#   make CUDA_ARCH=sm_90 all bench $(ls tests/test_*.c | sed 's#tests/\(.*\)\.c#build/tests/\1#')
#   tools/device-stage.sh     # -> .dev/nb.tar.xz, .dev/rt.tar.xz (kept out of git)
#   optional: a baseline binary at .dev/pack/base/nbody-render (stripped),
#   packed by device-stage.sh with the rest
# There, from the repository root, carrying .dev:
#   sh tools/device-check.sh STEP...     # logs and frames into $OUT/check.tar
# Steps:
#   tests       the GPU test programs (and the CPU ones that drive the GPU)
#   hostile     tests/test_hostile.c on the GPU backend, signal cases included
#   e2e         the default scene end to end, new against base, alternated,
#               twice each (/usr/bin/time), plus frames 0 115 260 400 of
#               the first run and their burn-out / fog measures
#               and every frame of new-1 against base-1 and base-2
#               byte for byte (issue 28: no change in behaviour)
#   same        tools/same-frames.sh --backend cuda base/nbody-render
#               build/nbody-render (the small cases; gadget2-galaxy left out:
#               ../shared/data is not carried)
#   benchalt    nbody-bench render --look (1080p 1M, 4K 10M) and bh (1M, 4M),
#               base and new alternated, three times each
#   look        nbody-bench render --look at 1080p 1M and 4K 10M
#   keys        exposure keys on the GPU: keyed frame = manual frame
#   sanitize    compute-sanitizer memcheck on test_gpu_render and
#               test_gpu_projection; tests/gpu_tree_sanitize.sh
#   scenes      scenes/dome-collision.yaml and vr-collision.yaml as written
#   steps       the default scene with shared and individual time steps
#   mpi         test_dist and test_dist_domains with GPU ranks (carry
#               .dev/mpi.tar.xz too: tools/device-stage-mpi.sh; MPI_CASE:
#               one test case, e.g. "gpu ranks")
#   domains     issue 31: CPU ranks that own their bodies over 1, 2, 4
#               ranks: bytes a body, peak RSS, the step's split, LET bytes
#               (DOM_N millions of the default mix; DOM_THETA at 2 ranks;
#               needs .dev/mpi.tar.xz: an MPI build, CPU-only is enough)
#   gdomains    issue 31: domains with the forces on the GPU (--backend
#               cuda) against one GPU (statistics and frames, GDOM_K x 100k
#               bodies, under $L/gdom-*), then GDOM_N millions over GDOM_NP
#               ranks: bytes a body on host and device, the step's split
#   mpitime     force / exchange / rebalance per step over 1, 2, 4 ranks
#               (MPITIME_N: millions of bodies of the default mix; MPITIME_NP)
#   scale       issue 20: strong and weak scaling over the host's GPUs
#   movie       issue 20: the default scene at MOVIE_N million, 1/2/4 GPUs
#   batch4      issue 20: the sweep, mpirun batch beside --jobs
#   estimate    issue 29: every shipped scene as written, --dry-run's "time in
#               all" against the run's wall time, after a fresh calibration
#               (batches too, each capped at EST_CAP s; gadget2-galaxy when
#               device-stage.sh packed GADGET-2's example: NB_STAGE_DATA=1); EST_ONLY: names
#   presets     issue 30: the default scene under each simulation.accuracy
#               preset: wall time, max |dE/E0|, frames 115 260 400
#   treevar     issue 30: nbody-bench bh's tree variants (+rK refit, +mF
#               monopole-far, +g graphs) and the default, alternated twice in one
#               process at 1M and 4M (ms per step, mean, stages, median and
#               99th error against the bench's direct sums; the refit error
#               at the last refit before a build), then TREEVAR_BEST
#               (default+r4+g unless set) beside the default at 16M (no
#               direct sum there), and the refit variants on the default
#               scene's bodies at frame 100 with its own dt: $L/treevar.txt
set -u
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR/check" /tmp/nb/rt
# .dev/nb.tar.xz (everything) or .dev/nbs.tar.xz (a slim pack: NB_SLIM in device-stage.sh)
for p in .dev/nb.tar.xz .dev/nbs.tar.xz; do
	[ -f $p ] && { tar -xJf $p -C /tmp/nb || exit 1; }
done
tar -xJf .dev/rt.tar.xz -C /tmp/nb/rt || exit 1
export LD_LIBRARY_PATH=/tmp/nb/rt/lib
L=$OUTDIR/check
# MPI for the GPU ranks' steps: the machine's own OpenMPI when it has one
# (its libmpi.so.40 serves the MPI build), else Debian's, carried
# (tools/device-stage-mpi.sh: its folders at their Debian paths, nothing
# there replaced, fabrics off). NCCL from the machine's Python packages
# when it has them; NVLink multicast off.
MPI_PACK=$PWD/.dev/mpi.tar.xz
# The default scene's mix (per galaxy: disk 200k, bulge 50k, halo 250k) x N.
mix_sets() {
	for k in 0 1; do
		printf ' --set bodies.%s.disk.count=%s --set bodies.%s.bulge.count=%s --set bodies.%s.halo.count=%s' \
			$k $((200000 * $1)) $k $((50000 * $1)) $k $((250000 * $1))
	done
}
# dom_sweep BACKEND TAG WORDS NS NPS THETAS TN: the domains' sweep (steps
# domains and gdomains): the default scene's mix at each of NS millions over
# each of NPS ranks of this host (OMP_NUM_THREADS = cores / ranks), 3 frames
# of 2 steps, no outputs: each rank's report line and peak RSS; then at 2
# ranks and TN millions each theta of THETAS (the LET volume). Logs under
# $L/TAG-N-np.log and $L/TAG-theta-T.log; WORDS follow each heading.
# DOM_SWEEP_SETS: more --set for the sweep's runs (a PNG directory: the
# frames' rendering time).
dom_sweep() {
	sets="--set simulation.ranks=domains --backend $1 --set output.frames=3
	      --set simulation.steps_per_frame=2 --set output.video= --set output.stats=
	      --set output.preview= --set output.png_dir= --set render.width=320
	      --set render.height=180 --set render.diffuse=0 --set camera.follow=all
	      --set camera.frame=keys ${DOM_SWEEP_SETS:-}"
	cores=$(nproc)
	for N in $4; do
		for np in $5; do
			env OMP_NUM_THREADS=$((cores / np)) mpirun --bind-to none -x OMP_NUM_THREADS \
				-np $np /usr/bin/time -f "rank peak RSS %M KiB, %e s" \
				/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $sets \
				$(mix_sets $N) >"$L/$2-$N-$np.log" 2>&1
			echo "N ${N}M np $np$3:"; grep -h "rank [0-9]*: owns\|peak RSS\|error\|done\|render:" \
				"$L/$2-$N-$np.log" | cut -c1-400
		done
	done
	for th in $6; do
		env OMP_NUM_THREADS=$((cores / 2)) mpirun --bind-to none -x OMP_NUM_THREADS -np 2 \
			/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $sets \
			$(mix_sets $7) --set simulation.theta=$th >"$L/$2-theta-$th.log" 2>&1
		echo "theta $th np 2$3:"; grep -h "rank [0-9]*: owns\|error" "$L/$2-theta-$th.log" | cut -c1-400
	done
}
mpi_setup() {
	[ -x /tmp/nb/mpi/bin/nbody-render ] && [ -n "${MPI_READY:-}" ] && return 0
	[ -f "$MPI_PACK" ] || { echo "no .dev/mpi.tar.xz carried"; return 1; }
	tar -xJf "$MPI_PACK" -C /tmp/nb || return 1
	nccl=$(find /opt /usr/local /usr/lib -name libnccl.so.2 2>/dev/null | head -1)
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
	if command -v mpirun >/dev/null && mpirun --version 2>&1 | grep -q "Open MPI"; then
		export LD_LIBRARY_PATH=/tmp/nb/rt/lib${nccl:+:$(dirname "$nccl")}
		echo "mpi: the machine's own: $(mpirun --version 2>&1 | head -1)"
	else
		tar -xf /tmp/nb/mpi/root.tar -C / --skip-old-files || return 1
		ln -sf /usr/bin/orterun /tmp/nb/mpi/bin/mpirun
		export PATH=/tmp/nb/mpi/bin:$PATH
		export LD_LIBRARY_PATH=/tmp/nb/mpi/lib:/tmp/nb/rt/lib${nccl:+:$(dirname "$nccl")}
		export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_mtl='^ofi,psm2' OMPI_MCA_osc='^ucx'
		export OMPI_MCA_btl_vader_single_copy_mechanism=none
		echo "mpi: carried: $(mpirun --version 2>&1 | head -1)"
	fi
	MPI_READY=1
	echo "nccl: ${nccl:-none}; GPUs: $(nvidia-smi -L | wc -l); libmpi: $(LD_LIBRARY_PATH=$LD_LIBRARY_PATH ldd /tmp/nb/mpi/bin/nbody-render | grep libmpi)"
}
cd /tmp/nb
# GADGET-2's example, where scenes/gadget2-galaxy.yaml looks for it
# (../../shared/data from scenes/), when device-stage.sh packed it
if [ -f data/galaxy_littleendian.dat ]; then
	mkdir -p /tmp/shared/data/gadget2-ics
	cp data/galaxy_littleendian.dat /tmp/shared/data/gadget2-ics/
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$L/gpu.txt"
for step in "$@"; do
	echo "=== $step $(date -u +%H:%M:%S)"
	case $step in
	hostile)
		# issue 27: every row of the outputs table, hostile cases with
		# signals, through the GPU simulation and renderer
		NB_TEST_BACKEND=cuda NB_HOSTILE_SLOW=1 NB_BIN=build/nbody-render build/tests/test_hostile \
			>"$L/test_hostile-cuda.log" 2>&1
		tail -3 "$L/test_hostile-cuda.log" ;;
	tests)
		for t in build/tests/test_gpu_* build/tests/test_pipeline build/tests/test_timestep; do
			echo "--- $t"
			NB_BIN=build/nbody-render "$t" >"$L/$(basename "$t").log" 2>&1
			tail -3 "$L/$(basename "$t").log"
		done ;;
	e2e)
		S=scenes/galaxy-collision.yaml
		for i in 1 2; do
			for b in new base; do
				bin=build/nbody-render
				[ $b = base ] && bin=base/nbody-render
				[ -x "$bin" ] || continue
				d=/tmp/e2e-$b-$i
				rm -rf "$d"
				/usr/bin/time -f "$b run $i: %e s wall" "$bin" "$S" \
					--set output.video=$d/m.mp4 --set output.png_dir=$d/frames \
					--set output.stats=$d/stats.csv --set output.preview=$d/sheet.jpg \
					>"$L/e2e-$b-$i.log" 2>&1
				tail -1 "$L/e2e-$b-$i.log"
				grep -h "camera:\|energy\|simulation" "$L/e2e-$b-$i.log" | tail -4
			done
		done
		mkdir -p "$L/frames"
		for f in 00000 00115 00260 00400 00599; do
			for b in new base; do
				[ -f /tmp/e2e-$b-1/frames/frame_$f.png ] &&
					cp /tmp/e2e-$b-1/frames/frame_$f.png "$L/frames/$b-$f.png"
			done
		done
		cp /tmp/e2e-new-1/sheet.jpg /tmp/e2e-new-1/stats.csv "$L/" 2>/dev/null
		for pair in "new-1 base-1" "base-2 base-1" "new-2 new-1"; do
			set -- $pair
			[ -d /tmp/e2e-$1/frames ] && [ -d /tmp/e2e-$2/frames ] || continue
			nd=0; nf=0
			for f in /tmp/e2e-$2/frames/*.png; do
				nf=$((nf + 1))
				cmp -s "$f" "/tmp/e2e-$1/frames/${f##*/}" || nd=$((nd + 1))
			done
			cmp -s /tmp/e2e-$1/stats.csv /tmp/e2e-$2/stats.csv && st=same || st=DIFFERENT
			echo "frames $1 vs $2: $nd of $nf PNG differ; stats.csv $st" | tee -a "$L/e2e-same.txt"
		done
		python3 tools/frame-stats.py "$L"/frames/*.png 2>&1 | tee "$L/frame-stats.txt" ;;
	same)
		[ -x base/nbody-render ] || { echo "same: no base/nbody-render packed"; continue; }
		NB_SAME_SKIP="gadget2-galaxy ${NB_SAME_SKIP:-}" sh -c 'bash tools/same-frames.sh --backend cuda --keep /tmp/same base/nbody-render build/nbody-render' \
			>"$L/same-frames-cuda.log" 2>&1
		cat "$L/same-frames-cuda.log" | tail -22 ;;
	benchalt)
		for i in 1 2 3; do
			for b in base new; do
				bb=build/nbody-bench
				[ $b = base ] && bb=base/nbody-bench
				[ -x "$bb" ] || continue
				echo "--- $b $i" >>"$L/benchalt.txt"
				$bb render --look --sizes 1080p,4k --n 1000000,10000000 --scenes scene >>"$L/benchalt.txt" 2>&1
				$bb bh --n 1000000,4000000 >>"$L/benchalt.txt" 2>&1
			done
		done
		tail -40 "$L/benchalt.txt" ;;
	treevar)
		R=default,default+r4,default+r8,default+m1.5,default+m2,default+g,default+r4+g
		R=$R,default+r4+m1.5+g,fast,0.45:2:bmax:16:1+m1.5  # equal error: theta against F
		build/nbody-bench bh --n 1000000,4000000 --steps 8 --configs $R,$R \
			>"$L/treevar.txt" 2>&1
		build/nbody-bench bh --n 16000000 --steps 8 --accuracy-max 0 \
			--configs "default,${TREEVAR_BEST:-default+r4+g}" >>"$L/treevar.txt" 2>&1
		build/nbody-bench bh --scene scenes/galaxy-collision.yaml --frames 100 --steps 8 \
			--configs default,default+r4,default+r8,default+r4+g,default \
			>>"$L/treevar.txt" 2>&1
		cat "$L/treevar.txt" ;;
	look)
		build/nbody-bench render --look --sizes 1080p,4k --n 1000000,10000000 \
			--scenes scene 2>&1 | tee "$L/look.txt" | tail -12 ;;
	keys)
		C="build/nbody-render tests/data/plummer-small.yaml --backend cuda -q
		   --set output.frames=3 --set output.video= --set output.stats=
		   --set output.initial_state= --set output.final_state=
		   --set output.png_depth=16 --set render.glow=0"
		$C --set output.png_dir=/tmp/k/a --set 'camera.keys=[{frame: 0, position: [0, -8, 3], target: [0, 0, 0], exposure: 1}, {frame: 2, position: [0, -8, 3], target: [0, 0, 0], exposure: 4, ease: in-out}]'
		$C --set output.png_dir=/tmp/k/b --set render.exposure=1
		$C --set output.png_dir=/tmp/k/c --set render.exposure=2
		python3 tools/png16-diff.py /tmp/k/a/frame_00000.png /tmp/k/b/frame_00000.png 1 && echo "keys GPU frame 0 = exposure 1 within 1 LSB: PASS" || echo "keys GPU frame 0: FAIL"
		python3 tools/png16-diff.py /tmp/k/a/frame_00001.png /tmp/k/c/frame_00001.png 1 && echo "keys GPU frame 1 = exposure 2 within 1 LSB: PASS" || echo "keys GPU frame 1: FAIL" ;;
	sanitize)
		cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
		for t in test_gpu_render test_gpu_projection; do
			[ -n "$cs" ] && CK_FORK=no "$cs" --tool memcheck build/tests/$t >"$L/memcheck-$t.log" 2>&1
			tail -2 "$L/memcheck-$t.log"
		done
		sh tests/gpu_tree_sanitize.sh build >"$L/tree-sanitize.log" 2>&1
		tail -2 "$L/tree-sanitize.log" ;;
	estimate)
		rm -f "$L/estimate.txt"
		build/nbody-render scenes/galaxy-collision.yaml --calibrate >"$L/calibrate.log" 2>&1
		tail -3 "$L/calibrate.log"
		for s in scenes/*.yaml; do
			name=$(basename "$s" .yaml)
			[ -n "${EST_ONLY:-}" ] && ! echo " $EST_ONLY " | grep -q " $name " && continue
			extra=""
			if [ "$name" = gadget2-galaxy ]; then
				[ -f /tmp/shared/data/gadget2-ics/galaxy_littleendian.dat ] || continue
			fi
			cmd="build/nbody-render"
			grep -q '^runs:' "$s" && cmd="build/nbody-render batch"
			rm -rf out
			pred=$($cmd "$s" --dry-run $extra 2>&1 | tee "$L/est-$name-dry.log" |
				grep "time in all\|expected wall time" | tail -1 | sed 's/.*in all (\([0-9.]*\) s.*/\1/')
			t0=$(date +%s.%N)
			timeout ${EST_CAP:-150} $cmd "$s" $extra >"$L/est-$name.log" 2>&1
			rc=$?
			t1=$(date +%s.%N)
			act=$(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}')
			echo "$name predicted ${pred:-?} s actual $act s rc $rc" | tee -a "$L/estimate.txt"
			mkdir -p "$L/frames"
			f=$(ls out/*/frames/*.png out/*/*/frame_*.png 2>/dev/null | sort | sed -n '100p')
			[ -n "$f" ] && cp "$f" "$L/frames/est-$name.png"
		done
		rm -rf out ;;
	presets)
		for a in default draft fine; do
			d=/tmp/pre-$a
			/usr/bin/time -f "$a: %e s wall" build/nbody-render scenes/galaxy-collision.yaml \
				--set simulation.accuracy=$a --set output.stats=$d/stats.csv \
				--set output.video=$d/m.mp4 --set output.png_dir=$d/frames \
				--set output.preview= >"$L/preset-$a.log" 2>&1
			tail -1 "$L/preset-$a.log"
			grep -h "accuracy\|force evaluations\|done:" "$L/preset-$a.log" | tail -3
			awk -F, 'NR==2{e0=$5} NR>1{d=($5-e0)/e0; if(d<0)d=-d; if(d>x)x=d} END{printf "  max |dE/E0| %.3g\n", x}' $d/stats.csv
			mkdir -p "$L/frames"
			for f in 00115 00260 00400; do
				cp $d/frames/frame_$f.png "$L/frames/preset-$a-$f.png" 2>/dev/null
			done
			rm -rf $d/frames
		done ;;
	steps)
		# the default scene with individual time steps (issue 18): wall time,
		# force evaluations per body per frame (the run's last lines) and
		# max |dE/E0| from its statistics, beside shared steps
		# STEPS_VARIANTS: ";"-separated runs, each "MODE [eta=X] [dt=X] [spf=N] [blocks=N]
		# [margin=X] [level=N] [theta=X] [opening=bmax|com] [bodies=N] [frames=N]"; bodies=N scales the scene's
		# six components to N in all (disk N/5, bulge N/20, halo N/4 a galaxy), as the
		# reduced-N CPU runs of docs/BENCHMARKS.md (issue 18)
		V=${STEPS_VARIANTS:-"shared;individual;individual eta=0.1;individual eta=0.1 dt=3 spf=1"}
		echo "$V" | tr ';' '\n' | while IFS= read -r v; do
			[ -n "$v" ] || continue
			set -- $v
			m=$1; sets="--set simulation.timesteps=$m"
			shift
			for kv in "$@"; do
				case $kv in
				eta=*) sets="$sets --set simulation.eta=${kv#eta=}" ;;
				dt=*) sets="$sets --set simulation.dt=${kv#dt=}" ;;
				spf=*) sets="$sets --set simulation.steps_per_frame=${kv#spf=}" ;;
				blocks=*) sets="$sets --set simulation.blocks_per_frame=${kv#blocks=}" ;;
				margin=*) sets="$sets --set simulation.coarsen_margin=${kv#margin=}" ;;
				level=*) sets="$sets --set simulation.max_level=${kv#level=}" ;;
				theta=*) sets="$sets --set simulation.theta=${kv#theta=}" ;;
				opening=*) sets="$sets --set simulation.opening=${kv#opening=}" ;;
				frames=*) sets="$sets --set output.frames=${kv#frames=}" ;;
				bodies=*)
					nb=${kv#bodies=}
					for g in 0 1; do
						sets="$sets --set bodies.$g.disk.count=$((nb / 5))"
						sets="$sets --set bodies.$g.bulge.count=$((nb / 20))"
						sets="$sets --set bodies.$g.halo.count=$((nb / 4))"
					done ;;
				esac
			done
			tag=$(echo "$v" | tr ' =' '__')
			d=/tmp/ts-$tag
			/usr/bin/time -f "$v: %e s wall" build/nbody-render scenes/galaxy-collision.yaml $sets \
				--set output.stats=$d/stats.csv --set output.video=$d/m.mp4 \
				--set output.png_dir=$d/frames --set output.preview= >"$L/steps-$tag.log" 2>&1
			tail -1 "$L/steps-$tag.log"
			grep -h "force evaluations\|levels\|done:" "$L/steps-$tag.log" | tail -3
			awk -F, 'NR==2{e0=$5} NR>1{d=($5-e0)/e0; if(d<0)d=-d; if(d>x)x=d} END{printf "  max |dE/E0| %.3g\n", x}' $d/stats.csv
			cp $d/stats.csv "$L/stats-$tag.csv" 2>/dev/null
			mkdir -p "$L/frames"
			for f in 00115 00260 00400; do
				cp $d/frames/frame_$f.png "$L/frames/steps-$tag-$f.png" 2>/dev/null
			done
			rm -rf $d/frames
		done ;;
	scenes)
		# the dome and VR scenes as written (1M bodies, 600 frames, 2048^2), frames kept
		for s in dome-collision vr-collision; do
			d=/tmp/sc-$s
			/usr/bin/time -f "$s: %e s wall" build/nbody-render scenes/$s.yaml -q \
				--set output.video=$d/m.mp4 --set output.png_dir=$d/frames \
				--set output.stats=$d/stats.csv --set output.preview=$d/sheet.jpg \
				>"$L/scene-$s.log" 2>&1
			tail -2 "$L/scene-$s.log"
			mkdir -p "$L/frames"
			for f in 00150 00300 00450; do
				cp $d/frames/frame_$f.png "$L/frames/$s-$f.png" 2>/dev/null
			done
			cp $d/sheet.jpg "$L/$s-sheet.jpg" 2>/dev/null
		done ;;
	mpi)
		# GPU ranks (issue 19): test_dist's cases, the GPU ones with 2 and 3
		# ranks sharing this machine's GPU (OpenMPI carried: mpi_setup)
		mpi_setup || continue
		for t in test_dist test_dist_domains; do
			[ -x build/tests/$t ] || continue
			[ -n "${MPI_CASE:-}" ] && export CK_RUN_CASE="$MPI_CASE"
			NB_BIN=/tmp/nb/mpi/bin/nbody-render NB_MPI_BIN=/tmp/nb/mpi/bin/nbody-render \
				build/tests/$t >"$L/$t.log" 2>&1
			unset CK_RUN_CASE
			grep "dist:\|domains\|SKIP\|Checks\|:F:\|:E:" "$L/$t.log"
		done ;;
	domains)
		# issue 31: CPU ranks that own their bodies (simulation.ranks:
		# domains) over 1, 2, 4 ranks of this host: each rank's report line
		# (owned bodies, bytes a body, force / exchange / migration / cuts
		# per step, bytes sent) and its peak RSS (/usr/bin/time per rank);
		# DOM_N: millions of bodies of the default scene's mix; DOM_THETA:
		# opening angles at 2 ranks (the LET volume against theta)
		mpi_setup || continue
		cores=$(nproc)
		dom_sweep cpu domains "" "${DOM_N:-1 4}" "${DOM_NP:-1 2 4}" "${DOM_THETA:-0.4 0.5 0.7}" 1 ;;
	gdomains)
		# issue 31: ranks that own their bodies with the forces on the GPU
		# (simulation.ranks: domains, --backend cuda: locally essential
		# trees on the device) over ranks of this host's GPUs (ranks share
		# a GPU when there are fewer GPUs than ranks).
		# 1) against one GPU: GDOM_K x 100k bodies of the default mix, 6
		#    frames of 4 steps: the statistics CSV and frames of one GPU's
		#    plain run, of 1, 2, 3 GPU domain ranks and of 2 CPU domain
		#    ranks, all under $L/gdom-* (compared here after the call)
		# 2) GDOM_N millions of the default mix over GDOM_NP ranks: each
		#    rank's report line (owned bodies, host and device bytes a body,
		#    force / exchange / migration per step, LET bytes), peak RSS
		#    (GDOM_SWEEP=0: not run)
		# GDOM_SETS: more --set for every run of 1) (individual time steps:
		# "--set simulation.timesteps=individual"); GDOM_TAG: the logs' and
		# frames' prefix instead of gdom (two variants in one call)
		mpi_setup || continue
		cores=$(nproc)
		K=${GDOM_K:-2}
		small=""
		for k in 0 1; do
			small="$small --set bodies.$k.disk.count=$((40000 * K)) --set bodies.$k.bulge.count=$((10000 * K)) --set bodies.$k.halo.count=$((50000 * K))"
		done
		base="--set output.frames=6 --set simulation.steps_per_frame=4 --set output.video=
		      --set output.preview= --set render.width=480 --set render.height=270
		      --set camera.follow=all --set camera.frame=keys $small ${GDOM_SETS:-}"
		G=${GDOM_TAG:-gdom}
		/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $base --backend cuda \
			--set output.stats=$L/$G-ref.csv --set output.png_dir=$L/$G-ref >"$L/$G-ref.log" 2>&1
		echo "one GPU: rc $?"; grep -h "error\|done\|individual time steps:" "$L/$G-ref.log" | tail -4
		for run in "1 cuda" "2 cuda" "3 cuda" "2 cpu"; do
			set -- $run
			env OMP_NUM_THREADS=$((cores / $1)) mpirun --bind-to none -x OMP_NUM_THREADS -np $1 \
				/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $base \
				--set simulation.ranks=domains --backend $2 --set output.stats=$L/$G-$1-$2.csv \
				--set output.png_dir=$L/$G-$1-$2 >"$L/$G-$1-$2.log" 2>&1
			echo "domains np $1 $2: rc $?"
			grep -h "rank [0-9]*: owns\|error\|over [0-9]* MPI\|done\|individual time steps:" \
				"$L/$G-$1-$2.log" | cut -c1-400
		done
		[ "${GDOM_SWEEP:-1}" = 0 ] || dom_sweep cuda gdomains " (GPU)" "${GDOM_N:-4}" "${GDOM_NP:-1 2 4}" "${GDOM_THETA:-}" "${GDOM_TN:-4}" ;;
	mpitime)
		# force / exchange / rebalance per step over 1, 2, 4 ranks of this host
		# (MPITIME_N bodies of the default scene's mix, MPITIME_FRAMES frames
		# of 6 steps, no outputs); MPITIME_NP: the rank counts
		mpi_setup || continue
		N=${MPITIME_N:-1}
		for np in ${MPITIME_NP:-1 2 4}; do
			sets="--set output.frames=${MPITIME_FRAMES:-11} --set output.video= --set output.stats=
			      --set output.preview= --set output.png_dir= --set render.width=640
			      --set render.height=360 --backend cuda"
			sets="$sets $(mix_sets $N)"
			cores=$(nproc)
			/usr/bin/time -f "np $np: %e s wall" env OMP_NUM_THREADS=$((cores / np)) \
				mpirun --bind-to none -x OMP_NUM_THREADS -x NB_DIST_NCCL -np $np /tmp/nb/mpi/bin/nbody-render \
				scenes/galaxy-collision.yaml $sets >"$L/mpitime-$N-$np.log" 2>&1
			grep -h "rank .*per step\|hold the same\|error\|cuda over\|s wall\|done" \
				"$L/mpitime-$N-$np.log" | tail -8
		done ;;
	scale)
		# issue 20: strong and weak scaling over this host's GPUs. The bodies:
		# the default scene's mix x SCALE_N million, made once and written as a
		# snapshot (film mode: no forces), then read by every run (so no rank
		# spends minutes making them). Runs of SCALE_FRAMES frames of 10
		# steps; np 1 goes through dist/ too (NB_DIST_ONE) for its per-step
		# split. Weak: SCALE_N/G million a GPU (the snapshot's subsample).
		mpi_setup || continue
		G=$(nvidia-smi -L | wc -l)
		N=${SCALE_N:-64}
		S=/tmp/scale
		mkdir -p $S
		sets="--set simulation.solver=none --set output.frames=1 --set output.video=
		      --set output.stats= --set output.preview= --set output.snapshots.every=1
		      --set output.snapshots.dir=$S/snap"
		sets="$sets $(mix_sets $N)"
		[ -f $S/snap/snap_000.hdf5 ] || /usr/bin/time -f "bodies ${N}M made and written: %e s" \
			/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $sets -q 2>&1 | tail -2
		for run in $(for np in 1 2 4 8; do [ $np -le $G ] && echo strong-$np:$np:1; done) \
			   $(for np in 1 2 4 8; do [ $np -lt $G ] && echo weak-$np:$np:$(awk "BEGIN{print $np / $G}"); done); do
			tag=${run%%:*}; rest=${run#*:}; np=${rest%%:*}; sub=${rest#*:}
			printf '%s\n' "units: galactic" \
				"simulation: {solver: barnes-hut, theta: 0.5, multipoles: 2, softening: 0.1, dt: 0.5, steps_per_frame: 10, backend: cuda}" \
				"bodies:" \
				"  - {name: all, model: snapshot, file: $S/snap/snap_000.hdf5, subsample: $sub}" \
				"camera: {fov: 40, keys: [{frame: 0, position: [0, -230, 140], target: [0, 0, 0]}]}" \
				"render: {width: 640, height: 360}" \
				"output: {frames: ${SCALE_FRAMES:-3}, fps: 30}" >$S/$tag.yaml
			/usr/bin/time -f "$tag: %e s wall" env NB_DIST_ONE=1 OMP_NUM_THREADS=$(( $(nproc) / np )) \
				mpirun --bind-to none -x NB_DIST_ONE -x OMP_NUM_THREADS -x NB_DIST_NCCL -x NCCL_NVLS_ENABLE \
				-np $np /tmp/nb/mpi/bin/nbody-render $S/$tag.yaml >"$L/scale-$tag.log" 2>&1
			grep -h "bodies,\|rank .*per step\|hold the same\|error\|s wall\|done" "$L/scale-$tag.log" | tail -8
		done ;;
	movie)
		# issue 20: the default scene at MOVIE_N million bodies, MOVIE_FRAMES
		# frames, end to end (MP4 + PNG), on 1 GPU and over 2 and 4
		mpi_setup || continue
		G=$(nvidia-smi -L | wc -l)
		N=${MOVIE_N:-10}
		sets="--set output.frames=${MOVIE_FRAMES:-600} --set output.preview="
		sets="$sets $(mix_sets $N)"
		for np in 1 2 4; do
			[ $np -le $G ] || continue
			d=/tmp/movie-$np
			/usr/bin/time -f "movie ${N}M np $np: %e s wall" env OMP_NUM_THREADS=$(( $(nproc) / np )) \
				mpirun --bind-to none -x OMP_NUM_THREADS -x NB_DIST_NCCL -x NCCL_NVLS_ENABLE -np $np \
				/tmp/nb/mpi/bin/nbody-render scenes/galaxy-collision.yaml $sets \
				--set output.video=$d/m.mp4 --set output.png_dir=$d/frames --set output.stats=$d/stats.csv \
				>"$L/movie-$np.log" 2>&1
			grep -h "bodies,\|rank 0:.*per step\|hold the same\|error\|s wall\|done" "$L/movie-$np.log" | tail -6
			mkdir -p "$L/frames"
			cp $d/frames/frame_00100.png "$L/frames/movie-np$np-00100.png" 2>/dev/null
		done ;;
	batch4)
		# issue 20: the pericentre sweep, mpirun -np G batch beside --jobs G
		mpi_setup || continue
		G=$(nvidia-smi -L | wc -l)
		for t in jobs mpi; do
			sed "s#^output_dir:.*#output_dir: /tmp/sw-$t#" scenes/sweep-pericenter.yaml >scenes/sweep-$t.yaml
		done
		/usr/bin/time -f "batch --jobs $G, one process: %e s wall" /tmp/nb/mpi/bin/nbody-render batch \
			scenes/sweep-jobs.yaml --jobs $G >"$L/batch-jobs.log" 2>&1
		tail -9 "$L/batch-jobs.log"
		/usr/bin/time -f "mpirun -np $G batch: %e s wall" mpirun --bind-to none -np $G \
			/tmp/nb/mpi/bin/nbody-render batch scenes/sweep-mpi.yaml \
			>"$L/batch-mpi.log" 2>&1
		tail -9 "$L/batch-mpi.log" ;;
	*)
		sh -c "$step" 2>&1 | tee -a "$L/extra.log" | tail -20 ;;
	esac
done
# Frames come back at half size (8-bit PNG), in 15 MB pieces: at most 8 files
# of 16 MiB come back from the machine.
if [ -d "$L/frames" ]; then
	python3 -c '
import sys, glob
from PIL import Image
for p in glob.glob(sys.argv[1] + "/*.png"):
    im = Image.open(p).convert("RGB")
    im.resize((im.width // 2, im.height // 2), Image.LANCZOS).save(p, optimize=True)
' "$L/frames"
	tar -cf /tmp/frames.tar -C "$L" frames && rm -rf "$L/frames"
	split -b 15000000 -d /tmp/frames.tar "$OUTDIR/frames.tar."
fi
tar -cf "$OUTDIR/check.tar" -C "$OUTDIR" check && rm -rf "$OUTDIR/check"
