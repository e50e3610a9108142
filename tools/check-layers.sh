#!/bin/sh
# check-layers.sh - folders are layers, and include arrows run one way.
#
# The table below is the layering (docs/DESIGN.md draws it). Each line is a
# folder and the folders its sources may include from. A folder may name only
# folders on lines above its own, so the table itself has no cycle, and
# neither can the code that passes the check.
#
# A folder is a directory of sources, nested or not: sim/cuda/ is a layer of
# its own, above sim/ (the CUDA twin of the simulation) and below render/.
# Every #include "..." in *.c *.h *.cu *.cuh of every folder is resolved to
# the file it names, first beside the includer ("f.h", "../../scene/log.h"),
# else from the repository root (the build's -I.: "sim/cuda/gpu.h"); the
# file's directory is the folder the arrow points to. Each arrow between two folders must be in the table. A folder with
# sources that is not in the table, or an include that names no file, is a
# violation too. Prints each violation as FILE:LINE: ...; exits 1 if any.
#
# Usage: tools/check-layers.sh [ROOT]   (default: the repository root)

LAYERS='
scene:
sim:         scene
sim/cuda:    scene sim
render:      scene sim sim/cuda
render/cuda: scene sim sim/cuda render
engine:      scene sim sim/cuda render render/cuda
output:      scene sim render
dist:        scene sim sim/cuda render render/cuda engine
app:         scene sim sim/cuda render render/cuda engine output dist
bench:       scene sim sim/cuda render render/cuda engine output dist
tests:       scene sim sim/cuda render render/cuda engine output dist app
fuzz:        scene sim sim/cuda render render/cuda engine output dist app
'

cd "${1:-$(dirname "$0")/..}" || exit 2


bad=0
fail() { echo "$*"; bad=1; }

# The table names only folders above each line.
seen=''
printf '%s\n' "$LAYERS" | grep . > /tmp/check-layers.$$
while IFS=: read -r folder deps; do
	for t in $deps; do
		case " $seen " in *" $t "*) ;; *) fail "tools/check-layers.sh: $folder: '$t' is not a layer above it in the table";; esac
	done
	seen="$seen $folder"
done < /tmp/check-layers.$$
rm -f /tmp/check-layers.$$

# Every folder with sources (one or two deep) must be a layer.
for dir in $(find . -mindepth 1 -maxdepth 2 -type d ! -name '.*' | sed 's@^\./@@' | sort); do
	case $dir in build*|out|out/*|.*|*/.*) continue;; esac
	found=0
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu "$dir"/*.cuh; do [ -e "$f" ] && found=1; done
	[ $found = 1 ] || continue
	printf '%s\n' "$LAYERS" | grep -q "^$dir:" || fail "$dir/: a folder with sources that is not in the layer table (tools/check-layers.sh)"
done

for file in $(printf '%s\n' "$LAYERS" | sed -n 's@^\([a-z/]*\):.*@\1@p' |
	      while read -r d; do ls "$d"/*.c "$d"/*.h "$d"/*.cu "$d"/*.cuh 2>/dev/null; done); do
	from=${file%/*}
	may=" $from $(printf '%s\n' "$LAYERS" | sed -n "s@^$from:@@p") "
	# LINE PATH for each quoted include
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
	sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' > /tmp/check-layers.$$
	while read -r line inc; do
		target=$(realpath -m --relative-to=. "$from/$inc")
		[ -e "$target" ] || target=$(realpath -m --relative-to=. "$inc")
		to=${target%/*}
		if [ ! -e "$target" ] || [ "$to" = "$target" ] || case $target in ../*) true;; *) false;; esac; then
			fail "$file:$line: #include \"$inc\" names no file of the tree"
		elif case $may in *" $to "*) false;; *) true;; esac; then
			fail "$file:$line: $from/ may not include $to/ (#include \"$inc\"; see the table in tools/check-layers.sh)"
		fi
	done < /tmp/check-layers.$$
	rm -f /tmp/check-layers.$$
done

if [ $bad = 0 ]; then
	echo "check-layers: every include arrow follows the layers (scene <- sim <- sim/cuda <- render <- render/cuda <- engine <- dist; output; app)"
fi
exit $bad
