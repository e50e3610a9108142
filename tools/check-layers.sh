#!/bin/sh
# check-layers.sh - folders are layers, and include arrows run one way.
#
# The table below is the layering (docs/DESIGN.md draws it). Each line is a
# folder and the folders its sources may include from. A folder may name only
# folders on lines above its own, so the table itself has no cycle, and
# neither can the code that passes the check.
#
# Every #include "..." in *.c *.h *.cu *.cuh of every folder is resolved to
# the folder of the file it names: "../X/f.h" and "X/f.h" (the build's -I.)
# name folder X; a plain "f.h" that exists beside the includer is its own
# folder. Each arrow between two folders must be in the table. A folder with
# sources that is not in the table, or an include that names no file, is a
# violation too. Prints each violation as FILE:LINE: ...; exits 1 if any.
#
# Usage: tools/check-layers.sh [ROOT]   (default: the repository root)

LAYERS='
scene:
sim:     scene
render:  scene sim
kernels: scene sim render
engine:  scene sim render kernels
output:  scene sim render
dist:    scene sim render kernels engine
app:     scene sim render kernels engine output dist
bench:   scene sim render kernels engine output dist
tests:   scene sim render kernels engine output dist app
fuzz:    scene sim render kernels engine output dist app
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

# Every top-level folder with sources must be a layer.
for dir in */; do
	dir=${dir%/}
	case $dir in build*|out) continue;; esac
	found=0
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu "$dir"/*.cuh; do [ -e "$f" ] && found=1; done
	[ $found = 1 ] || continue
	printf '%s\n' "$LAYERS" | grep -q "^$dir:" || fail "$dir/: a folder with sources that is not in the layer table (tools/check-layers.sh)"
done

for file in $(printf '%s\n' "$LAYERS" | sed -n 's/^\([a-z]*\):.*/\1/p' |
	      while read -r d; do ls "$d"/*.c "$d"/*.h "$d"/*.cu "$d"/*.cuh 2>/dev/null; done); do
	from=${file%%/*}
	may=" $from $(printf '%s\n' "$LAYERS" | sed -n "s/^$from://p") "
	# LINE PATH for each quoted include
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
	sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' > /tmp/check-layers.$$
	while read -r line inc; do
		case $inc in
		../*) rest=${inc#../}; to=${rest%%/*}; target=$rest ;;
		*) if [ -e "${file%/*}/$inc" ]; then to=$from; target=${file%/*}/$inc
		   else to=${inc%%/*}; target=$inc; fi ;;
		esac
		if [ ! -e "$target" ] || [ "$to" = "$target" ]; then
			fail "$file:$line: #include \"$inc\" names no file of the tree"
		elif case $may in *" $to "*) false;; *) true;; esac; then
			fail "$file:$line: $from/ may not include $to/ (#include \"$inc\"; see the table in tools/check-layers.sh)"
		fi
	done < /tmp/check-layers.$$
	rm -f /tmp/check-layers.$$
done

if [ $bad = 0 ]; then
	echo "check-layers: every include arrow follows the layers (scene <- sim <- render <- kernels <- engine <- dist; output; app)"
fi
exit $bad
