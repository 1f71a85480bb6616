#!/bin/sh
# jobs: unwinding on worker threads (--jobs N) gives the output of one
# thread, whatever N and whatever the command. The capture: a shell running
# tests/programs/threads (four threads), inlining and shlib one after the
# other (fork+exec: address spaces that change during the capture), plus a
# CPython 3.12 -X perf run of pychains.py when pyenv has one (trampolines,
# a perf map). Checked:
#  - script, collapse, flamegraph and pprof with -j 1, 2, 4 and 7 (more
#    workers than blocks of some processes): the same bytes;
#  - the capture on standard input (read once: one thread) and from a
#    FIFO: the same bytes as from the file;
#  - a capture damaged half-way: the same output, exit status and error
#    with -j 1 and -j 3;
#  - a reader whose output pipe closes (| head) stops at once with -j 4;
#  - --jobs 0, 65 and x are refused with a usage error;
#  - without --jobs, this capture (not of every CPU) is not held to one
#    thread.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

data=$E2E_TMP/native.data
e2e_record "$data" -F 2999 --call-graph dwarf,8192 -- /bin/sh -c \
	"'$E2E_PROGRAMS/threads' 0.4 4; $(e2e_program_sequence 0.3 inlining shlib)"
captures=$data
if python=$(e2e_newest_python 12); then
	py=$E2E_TMP/python.data
	E2E_PY_DATA=$py
	e2e_record "$py" -F 1999 --call-graph dwarf,16384 -- \
		"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
	captures="$captures $py"
else
	e2e_say "$e2e_name: no CPython 3.12 under pyenv: the Python capture is left out"
	[ "${CI:-}" = true ] && e2e_fail "CI=true needs a CPython 3.12 under pyenv"
fi

# run OUT ARGS...: pystitch ARGS with the test's build-id cache into OUT
run() {
	out=$1
	shift
	cmd=$1
	shift
	e2e_run "$PYSTITCH" "$cmd" --buildid-dir "$E2E_TMP/buildid-cache" "$@" >"$out" \
		2>"$out.err" || {
		e2e_show "$out.err"
		e2e_fail "pystitch $cmd $* failed"
	}
}

for capture in $captures; do
	name=$(basename "$capture" .data)
	for jobs in 1 2 4 7; do
		run "$E2E_TMP/$name-script-$jobs.txt" script -j $jobs -i "$capture"
		run "$E2E_TMP/$name-collapse-$jobs.txt" collapse -j $jobs -i "$capture"
		run "$E2E_TMP/$name-flame-$jobs.log" flamegraph -j $jobs -i "$capture" \
			-o "$E2E_TMP/$name-$jobs.svg"
		run "$E2E_TMP/$name-pprof-$jobs.log" pprof -j $jobs -i "$capture" \
			-o "$E2E_TMP/$name-$jobs.pb.gz"
	done
	samples=$(grep -c '^[^ 	]' "$E2E_TMP/$name-script-1.txt")
	[ "$samples" -ge 500 ] || e2e_fail "$name: only $samples samples"
	for jobs in 2 4 7; do
		for out in script-JOBS.txt collapse-JOBS.txt JOBS.svg JOBS.pb.gz; do
			one=$E2E_TMP/$name-$(echo "$out" | sed 's/JOBS/1/')
			many=$E2E_TMP/$name-$(echo "$out" | sed "s/JOBS/$jobs/")
			cmp -s "$one" "$many" || {
				diff "$one" "$many" | head -n 10 >&2
				e2e_fail "$name: $(basename "$many") differs from -j 1"
			}
		done
	done
	e2e_say "$e2e_name: $name: $samples samples; script, collapse, flamegraph, pprof identical with -j 1, 2, 4, 7"
done

# standard input and a FIFO: read once, on one thread
"$PYSTITCH" script --buildid-dir "$E2E_TMP/buildid-cache" -j 4 -i - <"$data" \
	>"$E2E_TMP/stdin.txt" 2>"$E2E_TMP/stdin.err" || {
	e2e_show "$E2E_TMP/stdin.err"
	e2e_fail "pystitch script -j 4 -i - failed"
}
cmp -s "$E2E_TMP/native-script-1.txt" "$E2E_TMP/stdin.txt" ||
	e2e_fail "-j 4 on standard input differs from the file"
# a FIFO: a pipe-mode capture (what `perf record -o -` writes), read once
"$PERF" inject -i "$data" -o - >"$E2E_TMP/pipe.data" 2>"$E2E_TMP/inject.err" || {
	e2e_show "$E2E_TMP/inject.err"
	e2e_fail "perf inject -o - failed"
}
run "$E2E_TMP/pipe-1.txt" script -j 1 -i "$E2E_TMP/pipe.data"
mkfifo "$E2E_TMP/fifo" || e2e_fail "mkfifo failed"
cat "$E2E_TMP/pipe.data" >"$E2E_TMP/fifo" &
run "$E2E_TMP/fifo.txt" script -j 4 -i "$E2E_TMP/fifo"
wait
cmp -s "$E2E_TMP/pipe-1.txt" "$E2E_TMP/fifo.txt" ||
	e2e_fail "-j 4 on a FIFO differs from -j 1 on the file"
e2e_say "$e2e_name: standard input and a FIFO: identical"

# a capture damaged half-way: a sample record whose size field says 4
# (less than its header): what comes before it, then the same error
offset=$("$PYSTITCH" dump --no-hex -i "$data" 2>/dev/null |
	sed -n 's/^[0-9 ]*0x\([0-9a-f]*\) \[0x[0-9a-f]*\]: PERF_RECORD_SAMPLE.*/\1/p' |
	awk '{ line[NR] = $1 } END { if (NR) print line[int(NR / 2) + 1] }')
[ -n "$offset" ] || e2e_fail "no sample record found in the dump of $data"
cp "$data" "$E2E_TMP/cut.data"
printf '\004\000' | dd of="$E2E_TMP/cut.data" bs=1 seek=$((0x$offset + 6)) conv=notrunc 2>/dev/null ||
	e2e_fail "cannot damage the copy"
for jobs in 1 3; do
	e2e_run "$PYSTITCH" script --buildid-dir "$E2E_TMP/buildid-cache" -j $jobs \
		-i "$E2E_TMP/cut.data" >"$E2E_TMP/cut-$jobs.txt" 2>"$E2E_TMP/cut-$jobs.err"
	echo $? >"$E2E_TMP/cut-$jobs.status"
done
[ "$(cat "$E2E_TMP/cut-1.status")" -ne 0 ] || e2e_fail "a damaged capture did not fail"
for part in txt err status; do
	cmp -s "$E2E_TMP/cut-1.$part" "$E2E_TMP/cut-3.$part" || {
		diff "$E2E_TMP/cut-1.$part" "$E2E_TMP/cut-3.$part" | head -n 5 >&2
		e2e_fail "a damaged capture: -j 3 differs from -j 1 ($part)"
	}
done
e2e_say "$e2e_name: damaged capture: $(grep -c '^[^ 	]' "$E2E_TMP/cut-1.txt") samples, then: $(cat "$E2E_TMP/cut-1.err")"

# the reader of the output goes away: no hang, no error message
PS_E2E_TIMEOUT=20 e2e_run "$PYSTITCH" script --buildid-dir "$E2E_TMP/buildid-cache" -j 4 \
	-i "$data" 2>"$E2E_TMP/pipe.err" | head -n 1 >/dev/null
[ -s "$E2E_TMP/pipe.err" ] && {
	e2e_show "$E2E_TMP/pipe.err"
	e2e_fail "pystitch -j 4 | head printed messages"
}

# a capture of one command keeps the default threads (one only for a
# capture of every CPU: whole_machine.sh)
"$PYSTITCH" script -v -i "$data" >/dev/null 2>"$E2E_TMP/default.err" ||
	e2e_fail "pystitch script -v failed"
if grep -q "one thread" "$E2E_TMP/default.err"; then
	e2e_fail "a capture of one command is read by one thread by default"
fi

for bad in 0 65 x; do
	if "$PYSTITCH" script -j "$bad" -i "$data" >/dev/null 2>"$E2E_TMP/bad.err"; then
		e2e_fail "--jobs $bad was accepted"
	else
		status=$?
	fi
	[ "$status" -eq 1 ] || e2e_fail "--jobs $bad: exit status $status (1 expected)"
	grep -q -- '--jobs' "$E2E_TMP/bad.err" || e2e_fail "--jobs $bad: the message does not name --jobs"
done
exit 0
