#!/bin/bash
# same-frames.sh - two builds of the program make the same bytes.
#
# Usage: tools/same-frames.sh [--backend cpu|cuda] [--only NAME] [--keep DIR]
#                             OLD_BIN NEW_BIN
#
# For a refactoring that must not change behaviour (issue 28): every case
# below is run with both binaries, each into its own directory, and every
# file the runs write is compared byte for byte: PNG frames, MP4 (its
# spherical tag included), FITS maps, HDF5 snapshots, statistics and state
# CSVs, previews. The resolved scene is compared too, less its version line.
# Exit status and the lines the runs print (timings and rates removed) are
# compared as well. Prints one line per case (same / DIFFERENT: what) and
# exits 1 if any case differs, 2 on bad usage.
#
# OpenMP runs on one thread here, so that a sum's order does not vary.
# The cases are small (a few thousand bodies, 4 frames of 192x108) so that the
# whole list runs in a few minutes on a 2-core CPU. --backend cuda runs the
# same list on a GPU (tools/device-check.sh step same). Cases can be added
# as lines of the CASES list: NAME|SCENE|ARGS..., ARGS one per --set word.
# NB_SAME_SKIP="NAME ...": cases left out (e.g. gadget2-galaxy where
# ../shared/data is not there).

set -u
backend=cpu
only=''
keep=''
while [ $# -gt 2 ]; do
	case $1 in
	--backend) backend=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $# != 2 ]; then
	sed -n '4,5p' "$0" | sed 's/^# //'
	exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
cd "$(dirname "$0")/.." || exit 2
for b in "$old" "$new"; do [ -x "$b" ] || { echo "same-frames: $b: not an executable"; exit 2; }; done

small_galaxy() { # the two disk galaxies of the collision scenes, small (one line)
	for g in 0 1; do
		printf -- '--set=bodies.%s.disk.count=1500 --set=bodies.%s.bulge.count=300 --set=bodies.%s.halo.count=1500 ' $g $g $g
	done
}
SMALL="--set=render.width=192 --set=render.height=108 --set=output.frames=4"

# NAME|SCENE|ARGS (each case writes every kind of output it can)
CASES="
plummer|scenes/plummer.yaml|--set=bodies.0.count=3000 $SMALL --set=output.snapshots.every=2 --set=output.final_state=F/final.csv --set=output.initial_state=F/initial.csv
plummer-direct-smooth|scenes/plummer.yaml|--set=bodies.0.count=2000 $SMALL --set=simulation.solver=direct --set=render.style=smooth
plummer-exposure-number|scenes/plummer.yaml|--set=bodies.0.count=2000 $SMALL --set=render.exposure=0.7 --set=render.glow=0
plummer-exposure-keys|scenes/plummer.yaml|--set=bodies.0.count=2000 $SMALL --set=camera.keys.0.exposure=0.3
two-clusters|scenes/two-clusters.yaml|--set=bodies.0.count=2000 --set=bodies.1.count=1000 $SMALL
collision|scenes/galaxy-collision.yaml|$(small_galaxy) $SMALL --set=output.fits_dir=F/fits
collision-velocity|scenes/galaxy-collision.yaml|$(small_galaxy) $SMALL --set=render.color_by=los_velocity
collision-density|scenes/galaxy-collision.yaml|$(small_galaxy) $SMALL --set=render.style=smooth --set=render.smoothing=adaptive --set=render.mode=density --set=render.colormap=magma --set=render.tonemap=asinh --set=render.exposure=1 --set=render.glow=0 --set=output.fits_dir=F/fits
collision-smooth|scenes/galaxy-collision.yaml|$(small_galaxy) $SMALL --set=render.style=smooth --set=render.smoothing=adaptive --set=render.tonemap=asinh --set=render.exposure=1 --set=render.glow=0
antennae|scenes/antennae.yaml|$(small_galaxy) $SMALL
mice|scenes/mice.yaml|$(small_galaxy) $SMALL
minor-merger|scenes/minor-merger.yaml|$(small_galaxy) $SMALL
isolated-disk|scenes/isolated-disk.yaml|--set=bodies.0.disk.count=3000 --set=bodies.0.bulge.count=500 --set=bodies.0.halo.count=2000 $SMALL
dusty-disk|scenes/dusty-disk.yaml|--set=bodies.0.disk.count=3000 --set=bodies.0.bulge.count=500 --set=bodies.0.halo.count=2000 $SMALL
dome-fisheye|scenes/dome-collision.yaml|$(small_galaxy) --set=render.width=128 --set=render.height=128 --set=output.frames=4 --set=output.fits_dir=F/fits
vr-equirect-stereo|scenes/vr-collision.yaml|$(small_galaxy) --set=render.width=256 --set=render.height=256 --set=output.frames=4
equirect-mono|scenes/vr-collision.yaml|$(small_galaxy) --set=render.width=256 --set=render.height=128 --set=output.frames=4 --set=camera.stereo.mode=none --set=output.fits_dir=F/fits
plummer-exposure-keys-ease-glow|scenes/plummer.yaml|--set=bodies.0.count=2000 $SMALL --set=camera.keys.0.frame=1 --set=camera.keys.0.exposure=0.5 --set=camera.keys.0.ease=in --set=camera.keys.1.frame=3 --set=camera.keys.1.exposure=4 --set=render.glow=0.5
collision-speed-number-glow|scenes/galaxy-collision.yaml|$(small_galaxy) $SMALL --set=render.color_by=speed --set=render.exposure=2 --set=render.glow=0.4
sbs-perspective|scenes/galaxy-collision.yaml|$(small_galaxy) --set=render.width=256 --set=render.height=96 --set=output.frames=4 --set=camera.stereo.mode=side-by-side
fisheye-tilt-fits|scenes/dome-collision.yaml|$(small_galaxy) --set=render.width=128 --set=render.height=128 --set=output.frames=4 --set=camera.dome_tilt=30 --set=camera.fisheye_aperture=200 --set=render.glow=0.5 --set=output.fits_dir=F/fits
gadget2-galaxy|scenes/gadget2-galaxy.yaml|$SMALL --set=output.snapshots.every=2
"

# Output keys of a run, pointed into its own directory D (the scene's own
# names are replaced; F/ in a case's arguments means D/ too).
outputs() {
	echo "--set=output.video=$1/video.mp4 --set=output.png_dir=$1/frames --set=output.stats=$1/stats.csv --set=output.preview=$1/preview.jpg --set=output.resolved_scene=$1/resolved.scene.yaml --set=output.snapshots.dir=$1/snap"
}

# The lines a run prints, less what changes from run to run (times, rates,
# the version).
quiet_log() {
	sed -E 's/[0-9]+(\.[0-9]+)?( ?(s|ms|us|min|h|%|fps|steps\/s|frames\/s|Mbody-steps\/s|GB\/s|MiB\/s|bodies\/s))\b/T\2/g; s/ETA [^ ]*/ETA T/g; s/(nbody-render )[^ ]+/\1V/g; s/[0-9]+:[0-9]+:[0-9]+/T/g' "$1" |
		grep -v -E '^\s*$|took|elapsed|wall|throughput|rate|frame [0-9]+/[0-9]+'
}

# An HDF5 file's groups, attributes and datasets (names, types, shapes and
# the raw bytes as hex), without the times HDF5 stamps on object headers and
# without Header/Code (the writing program's version).
h5_content() {
	/usr/bin/python3 - "$1" <<'PY'
import sys, h5py, hashlib
def show(name, obj):
    for k in sorted(obj.attrs):
        if k == "Code":  # the writing program's version
            continue
        v = obj.attrs[k]
        print(name, "@", k, repr(v))
    if isinstance(obj, h5py.Dataset):
        a = obj[()]
        b = a.tobytes() if hasattr(a, "tobytes") else repr(a).encode()
        print(name, obj.dtype, obj.shape, hashlib.sha256(b).hexdigest())
with h5py.File(sys.argv[1], "r") as f:
    show("/", f)
    f.visititems(show)
PY
}

have_h5py=$(/usr/bin/python3 -c 'import h5py' 2>/dev/null && echo y)

# One thread: OpenMP's reductions (the momentum sums of the statistics)
# add in an order that varies from run to run.
export OMP_NUM_THREADS=1

work=${keep:-$(mktemp -d /tmp/same-frames.XXXXXX)}
mkdir -p "$work"
bad=0
n=0
while IFS='|' read -r name scene args; do
	[ -n "$name" ] || continue
	case $name in -*|*' '*) echo "same-frames: a case line is broken: $name"; exit 2 ;; esac
	[ -z "$only" ] || [ "$only" = "$name" ] || continue
	case " ${NB_SAME_SKIP:-} " in *" $name "*) echo "skipped    $name (NB_SAME_SKIP)"; continue ;; esac
	n=$((n + 1))
	why=''
	for side in old new; do
		bin=$old; [ $side = new ] && bin=$new
		# both runs write under the same path (paths are written into
		# the resolved scene and the snapshots), then move aside
		d=$work/$name/run
		rm -rf "$d" "$work/$name/$side"; mkdir -p "$d"
		# shellcheck disable=SC2086
		"$bin" "$scene" --backend "$backend" $(outputs "$d") ${args//F\//$d/} \
			> "$work/$name/$side.log" 2>&1
		echo $? > "$work/$name/$side.rc"
		mv "$d" "$work/$name/$side"
	done
	o=$work/$name/old; w=$work/$name/new
	cmp -s "$o.rc" "$w.rc" || why="$why exit $(cat "$o.rc") vs $(cat "$w.rc");"
	if [ "$(cat "$o.rc")" != 0 ]; then
		why="$why the old run failed (exit $(cat "$o.rc"): $(tail -1 "$o.log"));"
	fi
	(cd "$o" && find . -type f | sort) > "$work/$name/old.files"
	(cd "$w" && find . -type f | sort) > "$work/$name/new.files"
	cmp -s "$work/$name/old.files" "$work/$name/new.files" || why="$why different file lists;"
	nf=0
	while read -r f; do
		[ -f "$w/$f" ] || continue
		nf=$((nf + 1))
		case $f in
		*.scene.yaml) cmp -s <(grep -v -i 'version' "$o/$f") <(grep -v -i 'version' "$w/$f") || why="$why $f;" ;;
		*.hdf5) # HDF5 object headers carry their creation times: compare
			# every attribute and dataset, byte for byte, instead
			if [ -z "$have_h5py" ]; then
				why="$why $f (not compared: no h5py here);"
			else
				cmp -s <(h5_content "$o/$f") <(h5_content "$w/$f") || why="$why $f;"
			fi ;;
		*) cmp -s "$o/$f" "$w/$f" || why="$why $f;" ;;
		esac
	done < "$work/$name/old.files"
	cmp -s <(quiet_log "$o.log") <(quiet_log "$w.log") || why="$why printed lines;"
	if [ -z "$why" ]; then
		echo "same       $name ($nf files)"
	else
		echo "DIFFERENT  $name:$why"
		bad=1
	fi
done <<< "$CASES"
[ $n -gt 0 ] || { echo "same-frames: no case named $only"; exit 2; }
if [ $bad = 0 ]; then
	echo "same-frames: $n cases, every output byte-identical ($backend)"
	[ -n "$keep" ] || rm -rf "$work"
else
	echo "same-frames: outputs differ (kept in $work)"
fi
exit $bad
