#!/bin/sh
# script_jit_runtimes: captures of other runtimes' JIT code, in pystitch's
# default (merged) mode and --python=all, against `perf script` on the
# same file. A JVM or Node.js process is no CPython process: its stacks
# get no Python marker ("[truncated]"), and its frames in JIT code (named
# from its perf map) are shown as perf shows them.
#  - a JVM (tests/programs/JitLoop.java, -XX:+DumpPerfMapAtExit), DWARF:
#    every sample as perf prints it, or deeper (pystitch's own walk of a
#    process with JIT code goes past registers a leaf's epilogue popped),
#    but for Debian perf's bogus ffffffffffffffff frame at the end of a
#    stack its libunwind gave up on (the own walk prints none);
#    --python=native byte for byte;
#  - the same JVM with -XX:+PreserveFramePointer, recorded with -g: byte
#    for byte;
#  - Node.js with --perf-basic-prof, -g: byte for byte; DWARF: no marker,
#    and every sample perf's, or perf's and more frames (pystitch's walk
#    goes past registers a leaf's epilogue popped, into more JIT callers;
#    code without CFI, V8's builtins, gets libunwind's guess as in perf);
#  - Node.js with --perf-prof (a jitdump), DWARF, through `perf inject
#    --jit`: the jitted ELF files of V8's builtins lie inside node's own
#    text; byte for byte, in --python=native and the default mode;
#  - a JIT of our own (tests/programs/tinyjit), through `perf inject
#    --jit`, with and without unwinding information (below).
# (-XX:-UsePerfData: the JVMs write nothing into /tmp/hsperfdata_USER.)
# Java (default-jdk-headless) and Node.js are installed by
# scripts/deps.sh; without them their captures are skipped, loudly.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0

# default LABEL FILE COMPARE_ARGS...: `perf script` against `pystitch
# script` in the default mode and in --python=all (--no-inline: perf runs
# addr2line on node's 100 MB of DWARF otherwise).
default() {
	dm_label=$1
	dm_data=$2
	shift 2
	dm_tag=$(printf '%s' "$dm_label" | tr -c 'A-Za-z0-9_.-' '_')
	E2E_PERF_OUT=perf-$dm_tag.txt
	e2e_perf_script "$E2E_PERF_OUT" -i "$dm_data" --no-inline
	for dm_mode in merged all; do
		e2e_pystitch_script "pystitch-$dm_tag-$dm_mode.txt" -i "$dm_data" --no-inline \
			--python=$dm_mode
		e2e_compare_script "$dm_label, --python=$dm_mode" "$E2E_PERF_OUT" \
			"pystitch-$dm_tag-$dm_mode.txt" -v min_samples=200 "$@" || failed=1
		if grep -q '\[truncated\]' "$E2E_TMP/pystitch-$dm_tag-$dm_mode.txt"; then
			e2e_say "$e2e_name: $dm_label, --python=$dm_mode: a Python marker in a process without CPython"
			failed=1
		fi
	done
}

# perf_or_deeper LABEL TAG [LEAF]: each sample of pystitch-TAG-MODE.txt
# (the default and all modes of default()) is perf's, or perf's with more
# frames after them (pystitch's walk of a process with JIT code goes past
# registers a leaf's epilogue popped), perf's bogus last frame at a cut
# stack left out (as compare_script.awk's libdw_quirks does); with LEAF
# (an awk regex), a deeper sample's first frame must match it
perf_or_deeper() {
	pd_leaf=${3:-}
	for pd_mode in merged all; do
		# shellcheck disable=SC2016 # an awk program
		pd_shares=$("$AWK" -v leaf="$pd_leaf" 'BEGIN { RS = "" } FNR == NR {
				sub(/\n\tffffffffffffffff \[unknown\] \(\[unknown\]\)$/, "")
				perf[FNR] = $0; next }
			{ n++; split($0, line, "\n")
			  if ($0 == perf[FNR]) same++
			  else if (index($0, perf[FNR] "\n") == 1 && (leaf == "" || line[2] ~ leaf)) deeper++
			  else other++ }
			END { printf "%d %d %d %d\n", n, same, deeper, other }' \
			"$E2E_TMP/perf-$2.txt" "$E2E_TMP/pystitch-$2-$pd_mode.txt")
		# shellcheck disable=SC2086 # four numbers
		set -- "$1" "$2" $pd_shares
		e2e_say "$e2e_name: $1, --python=$pd_mode: of $3 samples $4 identical, $5 deeper than perf's, $6 otherwise"
		[ "$6" = 0 ] || failed=1
	done
}

# jit_frames FILE: the frames named from a perf map in FILE
jit_frames() {
	grep -c '(/tmp/perf-[0-9]*\.map)$' "$E2E_TMP/$1"
}

ran=
# A JIT of our own (tests/programs/tinyjit, x86-64 code): its jitdump
# through `perf inject --jit`. The jitted files have their code at offset
# and address 0x80; tinyjit's functions are short, or call out of their
# last 0x80 bytes, which libdwfl, given start - pgoff for such a file,
# leaves out of its module (where perf's libunwind unwinds on):
#  - eh: with unwinding information, its jitdump in the work directory
#    and in /tmp (perf's libdw path places files named /tmp/jitted-*
#    apart): byte for byte in --python=native, and in the default mode
#    but for a sample at a function's ret: its CFI, as gcc's, still has
#    rbp saved below the stack pointer there, which perf cannot read and
#    pystitch's walk recovers from the register (a caller whose CFA is
#    rbp-based, long_hop or main, then ends perf's stack and not
#    pystitch's: 2 samples of 60,000);
#  - eh-unmapped: the same information, but the jitdump adds none of it
#    to the code's mapping; perf's libunwind reads the tables where memory
#    holds none of them and guesses with frame pointers for a sample
#    before hop's push: --python=native byte for byte (the default mode
#    unwinds those samples with the file's CFI, where perf skips a
#    caller);
#  - none: no unwinding information: --python=native byte for byte, and
#    in the default mode perf's stacks or deeper (pystitch's own walk goes
#    on past a frame without CFI with frame pointers, where perf's
#    libunwind stops).
# tinyjit_run NAME INFO DIR: record tinyjit INFO with its jitdump in DIR
# and inject it into tinyjit-NAME-injected.data; TJ_PID is its pid. What
# it leaves in /tmp, the files of that pid, goes when the test ends.
tj_tmp_files=
# shellcheck disable=SC2317 # called by the trap
tinyjit_cleanup() {
	for tj_file in $tj_tmp_files; do
		rm -f "$tj_file"
	done
	e2e_cleanup
}
trap tinyjit_cleanup EXIT
tinyjit_run() {
	mkdir "$E2E_TMP/tinyjit-$1" || e2e_fail "cannot make $E2E_TMP/tinyjit-$1"
	cd "$E2E_TMP/tinyjit-$1" || e2e_fail "cannot enter $E2E_TMP/tinyjit-$1"
	e2e_record "$E2E_TMP/tinyjit-$1.data" -k 1 -F 999 --call-graph dwarf -- \
		"$E2E_PROGRAMS/tinyjit" 1 "$2" "$3"
	TJ_PID=$(e2e_perf script -i "$E2E_TMP/tinyjit-$1.data" -F pid --comms tinyjit 2>/dev/null |
		head -n 1 | tr -d ' ')
	[ "$3" = /tmp ] && [ -n "$TJ_PID" ] &&
		tj_tmp_files="/tmp/jit-$TJ_PID.dump /tmp/jitted-$TJ_PID-0.so /tmp/jitted-$TJ_PID-1.so"
	e2e_perf inject --jit -i "$E2E_TMP/tinyjit-$1.data" -o "$E2E_TMP/tinyjit-$1-injected.data" \
		>"$E2E_TMP/inject.err" 2>&1 || {
		e2e_show "$E2E_TMP/inject.err"
		e2e_fail "perf inject --jit failed on tinyjit's capture ($1)"
	}
	cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
	e2e_perf_script "perf-tinyjit-$1-native.txt" -i "$E2E_TMP/tinyjit-$1-injected.data" \
		--no-inline
	e2e_pystitch_script "pystitch-tinyjit-$1-native.txt" \
		-i "$E2E_TMP/tinyjit-$1-injected.data" --no-inline --python=native
	e2e_compare_script "tinyjit, $1, --python=native" "perf-tinyjit-$1-native.txt" \
		"pystitch-tinyjit-$1-native.txt" -v min_samples=300 || failed=1
}

# tinyjit_frames NAME PATTERN: the lines of perf's text matching PATTERN
tinyjit_frames() {
	grep -c "$2" "$E2E_TMP/perf-tinyjit-$1-native.txt"
}

if [ "$(uname -m)" = x86_64 ]; then
	# the ret of hop (0x10) and of long_hop (0x107)
	tj_ret='^\t *[0-9a-f]+ tinyjit::(hop[+]0x10|long_hop[+]0x107) '
	tinyjit_run eh eh "$E2E_TMP/tinyjit-eh"
	default "tinyjit, eh" "$E2E_TMP/tinyjit-eh-injected.data" -v min_identical=99
	perf_or_deeper "tinyjit, eh" "tinyjit__eh" "$tj_ret"
	tj_through=$(tinyjit_frames eh ' tinyjit::long_hop+0x105 (.*/jitted-[0-9]*-1\.so)$')
	e2e_say "$e2e_name: tinyjit, eh: perf unwound $tj_through samples through long_hop's call"
	[ "$tj_through" -gt 100 ] || failed=1

	# files in /tmp (those of this tinyjit's pid go when the test ends)
	tinyjit_run tmp eh /tmp
	tj_tmp=$(tinyjit_frames tmp " tinyjit::hop+0x[0-9a-f]* (/tmp/jitted-$TJ_PID-0\.so)$")
	e2e_say "$e2e_name: tinyjit, eh, /tmp: perf printed $tj_tmp frames of /tmp/jitted-$TJ_PID-0.so"
	[ "$tj_tmp" -gt 100 ] || failed=1
	default "tinyjit, eh, /tmp" "$E2E_TMP/tinyjit-tmp-injected.data" -v min_identical=99
	perf_or_deeper "tinyjit, eh, /tmp" "tinyjit__eh___tmp" "$tj_ret"

	tinyjit_run unmapped eh-unmapped "$E2E_TMP/tinyjit-unmapped"
	tj_spin=$(tinyjit_frames unmapped ' tinyjit::hop+0x[5-8] (.*/jitted-[0-9]*-0\.so)$')
	e2e_say "$e2e_name: tinyjit, eh-unmapped: $tj_spin samples before hop's push"
	[ "$tj_spin" -gt 10 ] || failed=1

	tinyjit_run none none "$E2E_TMP/tinyjit-none"
	tj_none=$(tinyjit_frames none ' tinyjit::hop+0x[0-9a-f]* (.*/jitted-[0-9]*-0\.so)$')
	e2e_say "$e2e_name: tinyjit, none: perf printed $tj_none frames of hop"
	[ "$tj_none" -gt 100 ] || failed=1
	default "tinyjit, none" "$E2E_TMP/tinyjit-none-injected.data" -v min_identical=0
	perf_or_deeper "tinyjit, none" "tinyjit__none"
	ran=1
else
	e2e_say "$e2e_name: tinyjit writes x86-64 code: left out on $(uname -m)"
fi

if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
	e2e_run javac -J-XX:-UsePerfData -d "$E2E_TMP/classes" "$e2e_dir/../programs/JitLoop.java" \
		2>"$E2E_TMP/javac.err" || {
		e2e_show "$E2E_TMP/javac.err"
		e2e_fail "javac could not build JitLoop"
	}
	e2e_record "$E2E_TMP/java.data" -F 999 --call-graph dwarf -- \
		java -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$E2E_TMP/classes" \
		JitLoop 1.5
	default "java, DWARF" "$E2E_TMP/java.data" -v min_identical=0 -v libdw_quirks=1
	perf_or_deeper "java, DWARF" java__DWARF
	jit=$(jit_frames "$E2E_PERF_OUT")
	e2e_say "$e2e_name: java, DWARF: perf printed $jit frames in JIT code"
	[ "$jit" -gt 0 ] || { e2e_say "$e2e_name: java: perf printed no JIT frame"; failed=1; }
	e2e_perf_script perf-java-native.txt -i "$E2E_TMP/java.data" --no-inline
	e2e_pystitch_script pystitch-java-native.txt -i "$E2E_TMP/java.data" --no-inline \
		--python=native
	e2e_compare_script "java, DWARF, --python=native" perf-java-native.txt \
		pystitch-java-native.txt -v min_samples=200 || failed=1

	e2e_record "$E2E_TMP/java-fp.data" -F 999 -g -- \
		java -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
		-XX:+PreserveFramePointer -cp "$E2E_TMP/classes" JitLoop 1.5
	default "java, -g" "$E2E_TMP/java-fp.data"
	ran=1
else
	e2e_say "$e2e_name: no java and javac here (Debian: apt-get install default-jdk-headless): the JVM's captures are left out"
fi

if command -v node >/dev/null 2>&1; then
	e2e_record "$E2E_TMP/node-fp.data" -F 999 -g -- \
		node --perf-basic-prof --no-logfile-per-isolate --logfile="$E2E_TMP/v8.log" \
		"$e2e_dir/../programs/jitloop.js" 1
	default "node, -g" "$E2E_TMP/node-fp.data"

	e2e_record "$E2E_TMP/node.data" -F 999 --call-graph dwarf -- \
		node --perf-basic-prof --no-logfile-per-isolate --logfile="$E2E_TMP/v8.log" \
		"$e2e_dir/../programs/jitloop.js" 1
	# (not identical: deeper stacks)
	default "node, DWARF" "$E2E_TMP/node.data" -v min_identical=0
	jit=$(jit_frames "$E2E_PERF_OUT")
	e2e_say "$e2e_name: node, DWARF: perf printed $jit frames in JIT code"
	[ "$jit" -gt 0 ] || { e2e_say "$e2e_name: node: perf printed no JIT frame"; failed=1; }
	perf_or_deeper "node, DWARF" node__DWARF

	# perf inject --jit: V8's jitdump (--perf-prof, written into the
	# working directory) turned into ELF files next to it, those of V8's
	# builtins inside node's own text (perf's maps split node's mapping
	# around them; perf's libunwind finds no unwinding information there
	# and guesses with frame pointers)
	cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
	e2e_record "$E2E_TMP/node-jitdump.data" -k 1 -F 999 --call-graph dwarf -- \
		node --perf-prof --perf-prof-unwinding-info --no-logfile-per-isolate \
		--logfile="$E2E_TMP/v8.log" "$e2e_dir/../programs/jitloop.js" 1
	e2e_perf inject --jit -i "$E2E_TMP/node-jitdump.data" -o "$E2E_TMP/node-injected.data" \
		>"$E2E_TMP/inject.err" 2>&1 || {
		e2e_show "$E2E_TMP/inject.err"
		e2e_fail "perf inject --jit failed"
	}
	e2e_perf_script perf-injected.txt -i "$E2E_TMP/node-injected.data" --no-inline
	for mode in native merged; do
		e2e_pystitch_script "pystitch-injected-$mode.txt" -i "$E2E_TMP/node-injected.data" \
			--no-inline --python=$mode
		e2e_compare_script "node, perf inject --jit, --python=$mode" perf-injected.txt \
			"pystitch-injected-$mode.txt" -v min_samples=200 || failed=1
	done
	injected=$(grep -c '/jitted-[0-9]*-[0-9]*\.so)$' "$E2E_TMP/perf-injected.txt")
	builtins=$(grep -c ' Builtin:.*/jitted-[0-9]*-[0-9]*\.so)$' "$E2E_TMP/perf-injected.txt")
	e2e_say "$e2e_name: node, perf inject --jit: perf printed $injected frames in jitted files, $builtins of builtins"
	[ "$builtins" -gt 0 ] || { e2e_say "$e2e_name: no frame of a builtin's jitted file"; failed=1; }
	ran=1
else
	e2e_say "$e2e_name: no node (Node.js) here: its captures are left out"
fi
[ -n "$ran" ] || e2e_skip "neither java nor node is installed, and tinyjit cannot run here"
exit $failed
