#!/bin/sh
# check-keys.sh - docs/scenes.md's key reference is the schema's.
#
# The tables of docs/scenes.md between the two markers below are the output
# of `nbody-render --list-keys --markdown`, which prints every key of the
# schema table (scene/scene_schema.c) with its type, default and meaning.
# The schema is the one source: a help string is changed there, and the
# docs follow with --write. Then every link the tables hold to a section
# (FILE.md#anchor or #anchor) must name a heading of that docs/ file, so a
# renamed section shows too. Prints what differs and exits 1 if anything
# does.
#
# Usage: tools/check-keys.sh NBODY_RENDER [--write]
#   (make check-keys builds the program and runs this; --write replaces the
#   section with the program's output instead of comparing)

bin=${1:?usage: tools/check-keys.sh NBODY_RENDER [--write]}
mode=${2:-check}
cd "$(dirname "$0")/.." || exit 2
doc=docs/scenes.md
begin='<!-- BEGIN generated: nbody-render --list-keys --markdown (tools/check-keys.sh --write); edit scene/scene_schema.c, not this table -->'
end='<!-- END generated -->'

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
if ! "$bin" --list-keys --markdown >"$tmp/gen.md"; then
	echo "check-keys: $bin --list-keys --markdown failed" >&2
	exit 2
fi
if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ]; then
	echo "check-keys: $doc needs one line each of:" >&2
	printf '  %s\n  %s\n' "$begin" "$end" >&2
	exit 1
fi
# the section between the markers, and the file around it
awk -v b="$begin" -v e="$end" '$0 == e { p = 0 } p { print } $0 == b { p = 1 }' "$doc" >"$tmp/doc.md"

if [ "$mode" = --write ]; then
	awk -v b="$begin" -v e="$end" -v gen="$tmp/gen.md" '
		$0 == e { while ((getline l < gen) > 0) print l; skip = 0 }
		!skip { print }
		$0 == b { skip = 1 }' "$doc" >"$tmp/new.md" && cat "$tmp/new.md" >"$doc"
	echo "check-keys: $doc: key reference written from $bin"
	exit 0
fi

status=0
if ! diff -u --label "$doc (between the markers)" --label "$bin --list-keys --markdown" \
	"$tmp/doc.md" "$tmp/gen.md"; then
	echo "check-keys: $doc's key reference differs from the schema's; edit scene/scene_schema.c," >&2
	echo "  build, then: tools/check-keys.sh $bin --write" >&2
	status=1
fi

# links to sections: each anchor must be a heading's (GitHub's rule: lower
# case; letters, digits, '_' and '-' kept; spaces to '-'; the rest dropped)
grep -o '](\([A-Za-z_-]*\.md\)\{0,1\}#[^)]*)' "$tmp/gen.md" | sort -u |
	sed 's/^](\(.*\)#\(.*\))$/\1|\2/' >"$tmp/links"
while IFS='|' read -r file anchor; do
	target=docs/${file:-scenes.md}
	if [ ! -f "$target" ] ||
	   ! grep '^#' "$target" | sed 's/^#* *//' | tr 'A-Z' 'a-z' | tr ' ' '-' |
		tr -cd 'a-z0-9_\n-' | grep -qxF "$anchor"; then
		echo "check-keys: link to $target#$anchor: no such heading" >&2
		status=1
	fi
done <"$tmp/links"
[ "$status" = 0 ] && echo "check-keys: $doc's key reference is the schema's"
exit $status
