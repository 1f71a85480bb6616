#!/bin/sh
# Seed corpus for fuzz/fuzz_reader: the committed fixtures, plus each one cut
# at a few places so the fuzzer starts from truncated inputs as well.
#   usage: fuzz/make_corpus.sh OUTDIR
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
for f in "$top"/fixtures/*.data; do
	name=$(basename "$f" .data)
	cp "$f" "$out/$name"
	size=$(wc -c <"$f")
	for cut in 16 104 300 $((size / 2)) $((size - 9)); do
		[ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] && head -c "$cut" "$f" >"$out/$name-cut$cut"
	done
done
ls "$out" | wc -l
