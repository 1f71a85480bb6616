#!/bin/sh
# Seed corpora for the fuzz targets, made from the project's own fixtures,
# test programs and recordings; each target's seeds go to
# OUTDIR/corpus/<target>/.
#   usage: fuzz/make_corpus.sh BUILD_DIR OUTDIR
# BUILD_DIR is a build tree with pystitch and the test programs built
# (make -C BUILD_DIR check, or make check TESTS=). `fuzz/make_corpus.sh
# build/dev fuzz` remakes the committed corpora under fuzz/corpus/.
# As root with perf, it also records small captures of the test programs
# (and of CPython 3.12 -X perf when one is found) and writes OUTDIR/session/:
# the --symfs tree of the files they name, a kallsyms and the perf maps,
# which fuzz_session reads. Without perf, OUTDIR/session is left as it is
# and fuzz_session's seeds are its captures already there.
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
build=$(CDPATH='' cd -- "${1:?usage: $0 BUILD_DIR OUTDIR}" && pwd)
out=${2:?usage: $0 BUILD_DIR OUTDIR}
mkdir -p "$out"
out=$(CDPATH='' cd -- "$out" && pwd)
programs=$build/tests/programs
pystitch=$build/pystitch
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=$out/corpus

fresh() { # TARGET: an empty seed directory
	rm -rf "${corpus:?}/$1"
	mkdir -p "$corpus/$1"
}

cuts() { # FILE DIR NAME CUT...: FILE, and its first CUT bytes for each CUT
	file=$1 dir=$2 name=$3
	shift 3
	cp "$file" "$dir/$name"
	size=$(wc -c <"$file")
	for cut in "$@"; do
		[ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] && head -c "$cut" "$file" >"$dir/$name-cut$cut"
	done
	return 0
}

find_python() { # VERSION: an interpreter of that minor version, or nothing
	for p in "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/"$1".*/bin/python"$1" \
		"$(command -v "python$1" || true)"; do
		[ -x "$p" ] && "$p" -c 'import sys' 2>/dev/null && { echo "$p"; return; }
	done
	return 0
}

# ---- fuzz_reader: the fixtures, whole and cut ----------------------------
fresh fuzz_reader
for f in "$top"/fixtures/*.data; do
	size=$(wc -c <"$f")
	cuts "$f" "$corpus/fuzz_reader" "$(basename "$f" .data)" 16 104 300 $((size / 2)) $((size - 9))
done
# the features no fixture has (hybrid topology, PMU capabilities, BPF
# programs and their BTF): test_info's synthetic captures
mkdir "$work/info"
"$build/tests/unit/output/test_info" --write "$work/info"
for name in machine machine-pipe; do
	cp "$work/info/$name.data" "$corpus/fuzz_reader/info-$name"
done

# ---- fuzz_jit: perf maps, jitdumps, trampoline templates -----------------
fresh fuzz_jit
printf '\110\203\354\010\377\321\110\203\304\010\303' >"$corpus/fuzz_jit/trampoline-3.12"
printf '\363\017\036\372\125\110\211\345\377\321\135\303' >"$corpus/fuzz_jit/trampoline-3.14"
printf '7f0000001000 b py::f:/a.py\n7f000000100b b py::<module>:/b.py\n7f0000001016 zz bad\n' \
	>"$corpus/fuzz_jit/map-synthetic"
fib='def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
f(12)
import os; print(os.getpid())'
python=$(find_python 3.12)
if [ -n "$python" ]; then
	pid=$("$python" -X perf -c "$fib")
	head -c 2048 "/tmp/perf-$pid.map" >"$corpus/fuzz_jit/map-3.12"
	rm -f "/tmp/perf-$pid.map"
fi
python=$(find_python 3.13)
if [ -n "$python" ]; then
	pid=$("$python" -X perf_jit -c "$fib")
	cuts "/tmp/jit-$pid.dump" "$work" jitdump 4096
	cp "$work/jitdump-cut4096" "$corpus/fuzz_jit/jitdump-3.13"
	rm -f "/tmp/jit-$pid.dump" "/tmp/perf-$pid.map"
fi

# ---- fuzz_pylines: pystitch_perf's side files, whole and cut ------------
fresh fuzz_pylines
printf '%s\n' "$fib" >"$work/fib.py"
for minor in 8 10 12; do
	python=$(find_python "3.$minor")
	[ -n "$python" ] || continue
	env MAKEFLAGS= MAKELEVEL= make -s -f "$top/python/Makefile" PYTHON="$python" \
		BUILDDIR="$work/module" >/dev/null 2>&1 || continue
	pid=$(PYTHONPATH="$work/module/3.$minor" "$python" -X perf -m pystitch_perf "$work/fib.py")
	cuts "/tmp/perf-$pid.pylines" "$work" "pylines-3.$minor" 4096 8192
	cp "$work/pylines-3.$minor-cut4096" "$corpus/fuzz_pylines/3.$minor"
	cp "$work/pylines-3.$minor-cut8192" "$corpus/fuzz_pylines/3.$minor-long"
	rm -f "/tmp/perf-$pid.pylines" "/tmp/perf-$pid.map"
done
# a free-threaded 3.14's copies of bytecode (record type 4), made from the
# 3.12 seed's header and first code record: copies of that code object,
# one repeated, then its free
if [ -s "$corpus/fuzz_pylines/3.12" ]; then
	python3 - "$corpus/fuzz_pylines/3.12" "$corpus/fuzz_pylines/copies" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
size = struct.unpack_from("<I", data, 32 + 4)[0]
first = data[: 32 + size]
obj, bytecode = struct.unpack_from("<QQ", data, 32 + 16)
out = bytearray(first)
for copy in (bytecode + 0x100000, bytecode + 0x200000, bytecode + 0x100000):
    out += struct.pack("<HHIQQQ", 4, 0, 32, 1, obj, copy)
out += struct.pack("<HHIQQ", 3, 0, 24, 2, obj)
open(sys.argv[2], "wb").write(bytes(out))
PY
fi

# ---- fuzz_elf: the test programs, stripped and split, small stand-ins ----
fresh fuzz_elf
elf=$corpus/fuzz_elf
for p in loop inlining signals libpsworker.so; do
	cp "$programs/$p" "$elf/$p"
done
objcopy --strip-all "$programs/deep" "$elf/deep.stripped"
objcopy --strip-debug "$programs/deep_nofp" "$elf/deep_nofp.nodebug"
objcopy --only-keep-debug "$programs/shlib" "$elf/shlib.debug"
# debug sections compressed (zlib), as distributions' debug files are,
# and with zstd (binutils 2.40 and later)
objcopy --compress-debug-sections=zlib "$programs/inlining" "$elf/inlining.zdebug"
objcopy --compress-debug-sections=zstd "$programs/inlining" "$elf/inlining.zstd"
# one page each: no padding between the segments
small="-Wl,-z,noseparate-code -Wl,-z,norelro"
# shellcheck disable=SC2086 # $small is two words
"$cc" -g -O2 $small -o "$elf/inlining.small" "$top/tests/programs/inlining.c" -lm
# CFI in .debug_frame only, DWARF 4
# shellcheck disable=SC2086
"$cc" -gdwarf-4 -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables $small \
	-o "$elf/deep.debug_frame" "$top/tests/programs/deep.c" -lm
for variant in V312 V313 V314 V39; do
	# shellcheck disable=SC2086
	"$cc" -g -O2 -nostdlib -shared -fPIC -DVARIANT="$variant" $small \
		-o "$elf/libpython-$variant.so" "$top/fuzz/fake_python.c"
done
objcopy --strip-all "$elf/libpython-V312.so" "$elf/libpython-V312.stripped"

# ---- fuzz_tracing: the tracepoint fixture's TRACING_DATA ------------------
fresh fuzz_tracing
# the feature sections follow the data section, one {offset, size} per
# feature bit set in the header; TRACING_DATA (bit 1) comes first
python3 - "$top/fixtures/tracepoint.data" "$work/tracing" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
data_offset, data_size = struct.unpack_from("<QQ", data, 40)
assert struct.unpack_from("<Q", data, 72)[0] & 2, "no TRACING_DATA"
offset, size = struct.unpack_from("<QQ", data, data_offset + data_size)
open(sys.argv[2], "wb").write(data[offset:offset + size])
EOF
size=$(wc -c <"$work/tracing")
cuts "$work/tracing" "$corpus/fuzz_tracing" sched_switch 64 $((size / 2)) $((size - 40))

# ---- fuzz_session: captures of the test programs and their files ---------
session=$out/session
if [ "$(id -u)" -eq 0 ] && command -v perf >/dev/null 2>&1; then
	rm -rf "$session"
	run=/tmp/pystitch-fuzz
	rm -rf "$run"
	mkdir -p "$run" "$session/root$run" "$session/captures"
	cp "$programs/loop" "$programs/inlining" "$run/"
	# inlining's symbols in a separate debug file, found by its debuglink
	objcopy --only-keep-debug "$run/inlining" "$run/inlining.debug"
	objcopy --strip-debug --add-gnu-debuglink="$run/inlining.debug" "$run/inlining"
	record() { # NAME PERF_ARGS...
		name=$1
		shift
		if [ "$1" = pipe ]; then
			shift
			perf record -q -N -o - "$@" >"$session/captures/$name" 2>/dev/null
		else
			perf record -q -N -o "$session/captures/$name" "$@" >/dev/null 2>&1
		fi
	}
	record dwarf -F 199 --call-graph dwarf,512 -- "$run/loop" 0.03
	record fp -F 199 -g -- "$run/inlining" 0.03
	record pipe pipe -F 199 --call-graph dwarf,256 -- "$run/inlining" 0.03
	record compressed -z -F 199 -g -- "$run/loop" 0.03
	cp "$run/loop" "$run/inlining" "$run/inlining.debug" "$session/root$run/"
	python=$(find_python 3.12)
	if [ -n "$python" ]; then
		(cd "$work" && perf record -q -N -F 199 -g -o "$session/captures/python" -- \
			"$python" -X perf -c "$fib" >"$work/pid" 2>/dev/null)
		pid=$(cat "$work/pid")
		mv "/tmp/perf-$pid.map" "$session/perf-$pid.map"
	fi
	# the kernel symbols of the kernel frames the captures hold
	for f in "$session"/captures/*; do
		"$pystitch" script -q --kallsyms /proc/kallsyms -F ip,sym -i "$f" 2>/dev/null || true
	done | awk '$1 ~ /^ffffffff/ { print $2 }' | sort -u >"$work/kernel-symbols"
	awk 'NR == FNR { want[$1] = 1; next } $3 == "_text" || ($3 in want)' \
		"$work/kernel-symbols" /proc/kallsyms >"$session/kallsyms"
	rm -rf "$run"
fi
fresh fuzz_session
# each seed is a byte of options (the --python mode, +srcline) then a capture
seed() { # OPTIONS_BYTE_OCTAL CAPTURE NAME
	# shellcheck disable=SC2059 # the byte is an octal escape
	{ printf "\\$1"; cat "$2"; } >"$corpus/fuzz_session/$3"
}
for f in "$session"/captures/*; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	seed 004 "$f" "$name-merged-srcline"
	seed 001 "$f" "$name-all"
	seed 002 "$f" "$name-native"
	seed 003 "$f" "$name-only"
done
if [ -f "$session/captures/dwarf" ]; then
	size=$(wc -c <"$session/captures/dwarf")
	head -c $((size / 2)) "$session/captures/dwarf" >"$work/dwarf-half"
	seed 000 "$work/dwarf-half" dwarf-cut-merged
fi

# ---- fuzz_archive: archives of the fixtures and the session captures -----
fresh fuzz_archive
archive() { # NAME CAPTURE [ARCHIVE OPTIONS]
	name=$1 capture=$2
	shift 2
	"$pystitch" archive -q --buildid-dir /nonexistent/pystitch-fuzz "$@" -i "$capture" \
		-o "$corpus/fuzz_archive/$name" >/dev/null 2>&1
}
# the fixtures' files are not packed (an empty --symfs): only the captures
mkdir "$work/nothing"
printf '0000000000001000 T _text\n' >"$work/kallsyms"
archive fp "$top/fixtures/fp.data" --symfs "$work/nothing" --kallsyms "$work/kallsyms"
archive tracepoint "$top/fixtures/tracepoint.data" --symfs "$work/nothing" \
	--kallsyms "$work/kallsyms"
for name in dwarf fp python; do
	[ -f "$session/captures/$name" ] || continue
	archive "session-$name" "$session/captures/$name" --symfs "$session/root" \
		--kallsyms "$session/kallsyms" --perf-map-dir "$session"
done
a=$corpus/fuzz_archive/fp
cuts "$a" "$work" fp 100 $(($(wc -c <"$a") / 2))
cp "$work"/fp-cut* "$corpus/fuzz_archive/"

# ---- fuzz_text: manifests and symbol tables from the archives, kallsyms ---
fresh fuzz_text
for a in "$corpus"/fuzz_archive/*; do
	case $a in *-cut*) continue ;; esac
	name=$(basename "$a")
	zstd -qdc "$a" | tar -xOf - MANIFEST >"$corpus/fuzz_text/manifest-$name"
	# the members holding tables of symbol answers are named by digest
	awk '$1 == "file" && $2 == "names" { print $4 }' "$corpus/fuzz_text/manifest-$name" |
		sort -u | while read -r digest; do
		zstd -qdc "$a" | tar -xOf - "$digest" >"$corpus/fuzz_text/names-$name-$digest"
	done
done
# an archived folder (perf record --threads): its files in read order
cat >"$corpus/fuzz_text/manifest-folder" <<'EOF'
pystitch-archive 3
mtime 1796403304
perf-data-path =thr.data
symfs -
buildid-dir =/root/.debug
perf-map-dir -
file perf.data 5508 0c267a22ba10b3ac0b6c9b979196a98db8fa9cadcb3f8fcfa191e56fad3281d3 =thr.data/data
file perf.data 10200456 50cbc8083de5100b179a1018a11f94642aaee3b784a5bb22d082c09c891b318a =thr.data/data.1
file perf.data 10086152 e24f301e9fa5c815e8b89b27ebf25ddcbdc13c860af9999709d884ac7964b0ce =thr.data/data.0
file elf 23032 68a004e6aa4590128d47940e32cc69a37dad4081c1816229ca191c7917efd41f =/usr/bin/threads
end
EOF
cat >"$corpus/fuzz_text/kallsyms-synthetic" <<'EOF'
ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81001000 t early_idt_handler_common
ffffffff81002000 W weak_symbol
ffffffff81003000 T __x64_sys_read
ffffffff82000000 D _data
ffffffffc0001000 t xfs_fs_fill_super	[xfs]
ffffffffc0002000 T xfs_iread	[xfs]
ffffffffc0100000 t ext4_fill_super	[ext4]
EOF
# the kernel's own lines alone, as kallsyms_index.c reads perf record's
# copy: aliases, the entry trampoline, skipped types and names
cat >"$corpus/fuzz_text/kallsyms-kernel-lines" <<'EOF'
0000000000001000 A percpu_first
ffffffff81000000 T srso_alias_untrain_ret
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000040 t $x
ffffffff81000080 T func_a
ffffffff81000080 t local_alias
ffffffff810000c0 W weak_one
ffffffff810000c0 T strong_one
ffffffff81000140 T __entry_SYSCALL_64_trampoline
ffffffff81000180 r rodata_sym
ffffffff810001c0 T __entry_SYSCALL_64_trampoline
ffffffff810001c0 T tramp_alias
ffffffff81000200 D data_obj
ffffffff81000280 T last_one
EOF
[ -s "$session/kallsyms" ] && cp "$session/kallsyms" "$corpus/fuzz_text/kallsyms-session"

du -sh "$corpus"/* | sed "s|$corpus/||"
