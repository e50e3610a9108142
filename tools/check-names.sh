#!/bin/sh
# check-names.sh - every exported name carries its folder's prefix.
#
# Reads the objects of a build (make check-names builds a CPU-only one) with
# nm: each global symbol an object defines (functions, data) must start with
# one of its folder's prefixes below. Static functions are not exported and
# not checked. Prints each offender as OBJECT: NAME and exits 1 if any.
#
# The prefixes are the folder's modules: scene/ holds the scene loader
# (scene_), its YAML tree (yaml_tree_) and the log every layer uses (log_);
# app/ holds the program (app_), batch mode (batch_) and the renderer
# interface (renderer_), and main.
#
# Usage: tools/check-names.sh BUILD_DIR [OBJECT...]   (default: BUILD_DIR/*/*.o;
# make check-names passes the objects of the current source lists, so stale
# objects of moved files are not read)

PREFIXES='
scene:   scene_ yaml_tree_ log_
sim:     sim_
render:  render_
sim/cuda:    gpu_
render/cuda: gpu_render_ gpu_framing_
engine:  engine_
dist:    dist_
output:  out_
app:     app_ batch_ renderer_ main
'

build=${1:?usage: tools/check-names.sh BUILD_DIR [OBJECT...]}
shift
[ $# = 0 ] && set -- "$build"/*/*.o "$build"/*/cuda/*.o
NM=${NM:-nm}
bad=0
n=0
for obj in "$@"; do
	[ -e "$obj" ] || continue
	rel=${obj#"$build"/}
	folder=${rel%/*}
	prefixes=$(printf '%s\n' "$PREFIXES" | sed -n "s@^$folder:[[:space:]]*@@p")
	if [ -z "$prefixes" ]; then
		echo "$obj: $folder/ has no prefixes in tools/check-names.sh"
		bad=1
		continue
	fi
	for sym in $($NM -g --defined-only "$obj" | awk 'NF == 3 { print $3 }'); do
		n=$((n + 1))
		ok=0
		for p in $prefixes; do
			case $p in
			*_) case $sym in "$p"*) ok=1;; esac ;;
			*) [ "$sym" = "$p" ] && ok=1 ;;
			esac
		done
		if [ $ok = 0 ]; then
			echo "$obj: $sym: an exported name of $folder/ must start with one of: $prefixes"
			bad=1
		fi
	done
done
if [ $n = 0 ]; then
	echo "check-names: no exported names in the objects under $build/ (build them first)"
	exit 2
fi
[ $bad = 0 ] && echo "check-names: all $n exported names carry their folder's prefix"
exit $bad
