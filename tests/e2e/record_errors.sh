#!/bin/sh
# record_errors: what `pystitch record` says when it cannot record. Each
# case is one line on stderr naming what is wrong, and a non-zero exit
# status, before anything is recorded (or, for a full disk, after perf
# stopped): perf missing (--perf to nowhere, a PATH without it), a
# command not found (127, as a shell), a pid that does not exist, a pid
# that does not run CPython, recording every CPU as a user that
# kernel.perf_event_paranoid does not allow to, an output the format of
# which cannot be told, an output directory that does not exist, nothing
# to record, and a disk that fills up while recording (a 256 KiB tmpfs):
# then the capture is kept and its path printed.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

python=$(e2e_newest_python 12) || python=$(e2e_newest_python 13) ||
	e2e_skip "no CPython 3.12+ under \$(pyenv root)/versions (or ~/.pyenv/versions)"

sleeper=
tmpfs=
# shellcheck disable=SC2317 # called by the trap
finish() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
	[ -n "$tmpfs" ] && umount "$tmpfs" 2>/dev/null
	e2e_cleanup
}
trap finish EXIT

# refuses NAME STATUS PATTERN -- ARGS...: pystitch record ARGS must exit
# with STATUS and print one line matching PATTERN (grep -E)
refuses() {
	rf_name=$1
	rf_want=$2
	rf_pattern=$3
	shift 4
	e2e_run "$PYSTITCH" record "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	rf_status=$?
	[ "$rf_status" = "$rf_want" ] ||
		e2e_fail "$rf_name: exit status $rf_status ($rf_want expected): $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" = 1 ] ||
		e2e_fail "$rf_name: $(wc -l <"$E2E_TMP/err") lines on stderr, 1 expected: $(cat "$E2E_TMP/err")"
	grep -q -E "$rf_pattern" "$E2E_TMP/err" ||
		e2e_fail "$rf_name: '$(cat "$E2E_TMP/err")' does not say /$rf_pattern/"
	e2e_say "$rf_name: $(cat "$E2E_TMP/err")"
}

cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
refuses "perf missing" 1 "cannot run --perf /nonexistent/perf" -- --perf /nonexistent/perf -- true
# perf looked for on PATH, by the name --perf gives (default perf)
refuses "perf not on PATH" 1 "no-perf-here not found on PATH: install perf" -- --perf no-perf-here -- true
refuses "command not found" 127 "no-such-command-here: command not found" -- -- no-such-command-here
refuses "no such pid" 1 "no process 2147483646" -- --pid 2147483646
sleep 60 &
sleeper=$!
refuses "not Python" 1 "pid $sleeper \(sleep\) does not run CPython" -- --pid "$sleeper"
refuses "no format" 1 "which format\?" -- -o out.weird -- true
refuses "no directory" 1 "cannot write /nonexistent/dir/out.svg" -- -o /nonexistent/dir/out.svg -- true
refuses "nothing to record" 1 "nothing to record" --
refuses "two things" 1 "give one of" -- -a -- true
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$paranoid" -gt 0 ] && command -v setpriv >/dev/null 2>&1; then
	# as nobody, with no capabilities: -a needs perf_event_paranoid <= 0
	e2e_run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		env HOME=/nonexistent "$PYSTITCH" record -a -o /dev/null --format svg \
		>/dev/null 2>"$E2E_TMP/err"
	status=$?
	# shellcheck disable=SC2015 # either failing is the same failure
	[ "$status" = 1 ] && grep -q "perf_event_paranoid is $paranoid: recording every CPU (-a) needs root" "$E2E_TMP/err" ||
		e2e_fail "-a as nobody: exit status $status: $(cat "$E2E_TMP/err")"
	e2e_say "paranoid: $(cat "$E2E_TMP/err")"
else
	e2e_say "paranoid: kernel.perf_event_paranoid is $paranoid: every user may record every CPU here"
fi

# a disk that fills while recording: the capture is kept, its path said
tmpfs=$E2E_TMP/small
# shellcheck disable=SC2015 # either failing is the same failure
mkdir "$tmpfs" && mount -t tmpfs -o size=256k none "$tmpfs" ||
	e2e_fail "cannot mount a tmpfs on $tmpfs"
# (the shell tells its pid, which the interpreter keeps: its map is ours)
# shellcheck disable=SC2016 # a shell program for sh -c
e2e_run "$PYSTITCH" record -o "$tmpfs/out.svg" -- sh -c 'echo $$ >"$1"; exec "$2" "$3" 1 "$4"' sh \
	"$E2E_TMP/full.pid" "$python" "$e2e_dir/../programs/pychains.py" "$E2E_TMP/full.expected" \
	>/dev/null 2>"$E2E_TMP/err"
status=$?
pid=$(cat "$E2E_TMP/full.pid")
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
[ "$status" != 0 ] || e2e_fail "a full disk: exit status 0"
grep -q "is full" "$E2E_TMP/err" || e2e_fail "a full disk is not named: $(cat "$E2E_TMP/err")"
grep -q "the capture is kept: pystitch script -i $tmpfs/.pystitch-record-.*/perf.data" "$E2E_TMP/err" ||
	e2e_fail "a full disk: the kept capture is not named: $(cat "$E2E_TMP/err")"
e2e_say "full disk: exit status $status; $(tr '\n' ' ' <"$E2E_TMP/err")"
