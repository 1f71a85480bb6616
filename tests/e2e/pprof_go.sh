#!/bin/sh
# pprof_go: what `go tool pprof` (Debian's golang-go) says of `pystitch
# pprof` profiles: the report names the profiled program and its build id
# (profile.proto: "the first mapping is the main binary"), not the kernel.
# The capture is a shell running tests/programs/loop (0.3 s) in the
# background and tests/programs/pychains.py on the newest CPython 3.12
# under pyenv with -X perf (about 1 s of CPU): the profile's first mapping
# is the executable most samples ran, the interpreter's (python3.12); with
# --pid of loop it is loop; with --python only, where no native frame is
# left, it is python3.12's without addresses. Every mapping of a file on
# this machine carries that file's build id (`readelf -n`), also the files
# perf record left out of the capture's build-id table because no sampled
# address fell in them (python3.12's main() is only ever found by
# unwinding).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

command -v go >/dev/null 2>&1 ||
	e2e_skip "go is not installed (Debian/Ubuntu: apt-get install golang-go): no go tool pprof"
command -v readelf >/dev/null 2>&1 || e2e_skip "readelf is not installed (binutils)"
python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions)"
# go keeps its caches in the test's directory, not in $HOME
GOCACHE=$E2E_TMP/go-cache GOPATH=$E2E_TMP/go GOFLAGS='' GOTOOLCHAIN=local
export GOCACHE GOPATH GOFLAGS GOTOOLCHAIN
interpreter=$(readlink -f "$python")
loop=$(readlink -f "$E2E_PROGRAMS/loop")

# build_id FILE: its GNU build id, in hexadecimal, as readelf prints it.
build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p' | head -n 1
}

# report NAME ARGS...: `pystitch pprof ARGS` into $E2E_TMP/NAME.pb.gz, then
# go tool pprof's -raw listing into NAME.raw and -top report into NAME.top.
report() {
	rp_name=$1
	shift
	e2e_run "$PYSTITCH" pprof --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" \
		-o "$E2E_TMP/$rp_name.pb.gz" "$@" 2>"$E2E_TMP/$rp_name.err" || {
		e2e_show "$E2E_TMP/$rp_name.err"
		e2e_fail "pystitch pprof $* failed"
	}
	for rp_mode in raw top; do
		go tool pprof -symbolize=none "-$rp_mode" "$E2E_TMP/$rp_name.pb.gz" \
			>"$E2E_TMP/$rp_name.$rp_mode" 2>"$E2E_TMP/$rp_name.$rp_mode.err" || {
			e2e_show "$E2E_TMP/$rp_name.$rp_mode.err"
			e2e_fail "go tool pprof -$rp_mode could not read $rp_name.pb.gz"
		}
	done
}

# expect_main NAME FILE: go tool pprof takes FILE, with its build id, for
# the main binary of NAME.pb.gz.
expect_main() {
	em_id=$(build_id "$2")
	[ -n "$em_id" ] || e2e_fail "$2 has no build id"
	em_first=$(sed -n '/^Mappings$/{n;p;q}' "$E2E_TMP/$1.raw")
	case $em_first in
	*" $2 $em_id"*) ;;
	*) e2e_fail "$1: the first mapping is '$em_first', not $2 with build id $em_id" ;;
	esac
	if ! grep -q "^File: $(basename "$2")\$" "$E2E_TMP/$1.top" ||
		! grep -q "^Build ID: $em_id\$" "$E2E_TMP/$1.top"; then
		e2e_fail "$1: go tool pprof -top is headed '$(head -n 2 "$E2E_TMP/$1.top" | tr '\n' ' ')', not File: $(basename "$2") and its build id"
	fi
	e2e_say "$e2e_name: $1: File: $(basename "$2"), Build ID: $em_id"
}

data=$E2E_TMP/mixed.data
E2E_PY_DATA=$data
e2e_record "$data" -F 999 --call-graph dwarf,16384 -- sh -c \
	"'$loop' 0.3 & '$python' -X perf '$e2e_dir/../programs/pychains.py' 1 '$E2E_TMP/python.expected'; wait"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || e2e_fail "pychains.py wrote no thread ids"
e2e_python_forget "$py_pid"
loop_pid=$("$PYSTITCH" script -F comm,pid -i "$data" 2>/dev/null | sed -n 's/^ *loop *\([0-9]*\) *$/\1/p' | head -n 1)
[ -n "$loop_pid" ] || e2e_fail "no sample of loop in the capture"

# the whole capture: python3.12 ran most samples
report all
expect_main all "$interpreter"
# every mapping of a file here has that file's build id, those the
# capture's table lacks included
"$PERF" buildid-list -i "$data" >"$E2E_TMP/buildid-list.txt" 2>/dev/null
filled=0
sed -n '/^Mappings$/,$p' "$E2E_TMP/all.raw" | sed 1d >"$E2E_TMP/mappings.txt"
while read -r _ _ file id _; do
	case $file in
	/*) ;;
	*) continue ;;
	esac
	[ -f "$file" ] || continue
	want=$(build_id "$file")
	[ -n "$want" ] || continue
	[ "$id" = "$want" ] || e2e_fail "mapping of $file: build id '$id', its ELF file has $want"
	grep -q "^$want " "$E2E_TMP/buildid-list.txt" || filled=$((filled + 1))
done <"$E2E_TMP/mappings.txt"
e2e_say "$e2e_name: all: $(wc -l <"$E2E_TMP/mappings.txt") mappings, $filled build ids read from ELF files the capture's table lacks"
grep -q "libpython3.12[^ ]* [0-9a-f]\{40\}" "$E2E_TMP/mappings.txt" ||
	e2e_fail "the interpreter's libpython mapping has no build id"

# one process: the program it ran
report loop --pid "$loop_pid"
expect_main loop "$loop"

# no native frame left: the program's mapping, without addresses
report only --python only
expect_main only "$interpreter"
sed -n '/^Mappings$/{n;p;q}' "$E2E_TMP/only.raw" | grep -q '^1: 0x0/0x0/0x0 ' ||
	e2e_fail "--python only: the main binary's mapping has addresses: $(sed -n '/^Mappings$/{n;p;q}' "$E2E_TMP/only.raw")"
exit 0
