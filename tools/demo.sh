#!/bin/sh
# demo.sh - `make demo`: render the default scene into out/demo/.
# With a usable GPU it renders scenes/galaxy-collision.yaml as written
# (about 1M bodies, 1080p). Without one it renders a smaller version (fewer
# bodies, lower resolution, fewer frames covering the same story) that
# finishes in a few minutes on 2 cores, and says so.
set -e
BIN=${1:-build/nbody-render}
SCENE=scenes/galaxy-collision.yaml
OUT=out/demo
mkdir -p "$OUT"
set -- --set output.video=$OUT/galaxy-collision.mp4 \
       --set output.png_dir=$OUT/frames \
       --set output.stats=$OUT/stats.csv \
       --set output.preview=$OUT/preview.jpg \
       --set output.initial_state= --set output.final_state=
if "$BIN" "$SCENE" --dry-run "$@" 2>/dev/null | grep -q '^# GPU memory: .* free on '; then
	echo "demo: GPU found: rendering $SCENE in full into $OUT/"
	exec "$BIN" "$SCENE" "$@"
fi
echo "demo: no usable GPU: rendering a smaller version of $SCENE on the CPU"
echo "demo: (2 x 7.5k bodies, 640x360, 120 frames of 15 Myr, camera smoothing 3 frames; the full 1M-body scene needs a GPU) into $OUT/"
# One argument per line of tools/demo-cpu.args (values may hold spaces).
while IFS= read -r arg; do
	[ -n "$arg" ] && set -- "$@" "$arg"
done < tools/demo-cpu.args
exec "$BIN" "$SCENE" "$@" --backend cpu
