#!/bin/sh
# demo.sh - `make demo`: render the default scene into out/demo/.
# With a usable GPU it renders scenes/galaxy-collision.yaml as written
# (about 1M bodies, 1080p). Without one it renders the scene shrunk to fit
# six minutes of this machine (--preview 6m: fewer bodies with the masses
# kept, the draft accuracy, a smaller frame, fewer frames covering the same
# 1.8 Gyr, the camera keys rescaled), and prints what it changed.
set -e
BIN=${1:-build/nbody-render}
SCENE=scenes/galaxy-collision.yaml
OUT=out/demo
BUDGET=6m
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
echo "demo: no usable GPU: rendering $SCENE on the CPU, shrunk to fit $BUDGET of this machine"
echo "demo: (--preview $BUDGET: the full 1M-body scene needs a GPU) into $OUT/"
exec "$BIN" "$SCENE" "$@" --backend cpu --preview $BUDGET
