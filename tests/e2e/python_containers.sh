#!/bin/sh
# python_containers: two CPython -X perf processes, each in a container of
# its own (a new pid namespace with `unshare --pid --fork --mount-proc`,
# a private tmpfs on /tmp), running at once and recorded from outside with
# `perf record --call-graph dwarf,16384 -k CLOCK_MONOTONIC -- sh -c` that
# starts both. Each writes its perf map under its namespace pid, and both
# have the same one (the same commands run before it in each container),
# in its own /tmp; the test copies each out into a folder of its own, as
# `docker cp` would, and gives both folders with --perf-map-dir. Both run
# tests/programs/pychains.py, under different names (/tmp/workload_c1.py,
# /tmp/workload_c2.py), so that a frame named from the other container's
# map has the wrong file name. pychains_check.py must find at least 99% of
# each container's samples with exactly the right chain, in merged mode,
# with --python=all and with --python=only, and -v must say once which
# file each pid took, with no file refused or left over. Without the
# folders no Python frame is named. The matching also protects a capture's
# own maps: c2's map put beside the capture as perf-HOSTPID1.map (a file
# of c1's host pid that is another process's) is refused with one warning
# and c1 still gets its own map from its folder, with the same chains; c2,
# whose folder is not given then, gets the "stay unnamed" warning. A
# third folder whose map fits no process is said once ("matches no
# process") and changes no stack.
#
# Interpreter: the newest 3.12.N or 3.13.N under `pyenv root`, or the first
# of PS_E2E_PYTHONS. Needs root (namespaces, mounts).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
checker=$e2e_dir/pychains_check.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500

[ "$(id -u)" = 0 ] || e2e_skip "not root: cannot make namespaces and mounts"
command -v unshare >/dev/null 2>&1 || e2e_skip "no unshare(1)"
unshare --pid --fork --mount-proc true 2>/dev/null ||
	e2e_skip "unshare --pid --fork --mount-proc fails here"

python=
for candidate in ${PS_E2E_PYTHONS:-} $(e2e_newest_python 12) $(e2e_newest_python 13); do
	if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
		python=$candidate
		break
	fi
done
[ -n "$python" ] || e2e_skip "no CPython 3.12+ found under \$(pyenv root)/versions (set PS_E2E_PYTHONS)"
e2e_say "$e2e_name: $python"
# the interpreter's comm (python3, python3.14, ...: its file name, 15 bytes)
comm=$(basename "$python" | cut -c1-15)

# box.sh DIR NAME WORKLOAD PYTHON SECONDS: a container. Its /tmp is a tmpfs
# of its own mount namespace (gone when it ends, which hides DIR, under
# /tmp too), so the workload is copied in through an open descriptor and
# its perf map out as a tar stream, as `docker cp` gives it.
cat >"$E2E_TMP/box.sh" <<'EOF'
#!/bin/sh
exec unshare --pid --fork --mount-proc sh -c '
exec 3<"$3" 4>"$1/maps.tar" 5>"$1/expected"
mount -t tmpfs tmpfs /tmp || exit 1
cat <&3 >"/tmp/workload_$2.py"
"$4" -X perf "/tmp/workload_$2.py" "$5" /dev/fd/5 || exit 1
cd /tmp && tar -cf - perf-*.map >&4
' sh "$@"
EOF
chmod +x "$E2E_TMP/box.sh"

# (the tmpfs goes with the containers' mount namespaces, the maps with it:
# nothing is left in the machine's /tmp)
data=$E2E_TMP/containers.data
mkdir "$E2E_TMP/c1" "$E2E_TMP/c2"
# shellcheck disable=SC2016 # expanded by that sh
e2e_record "$data" -k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 -- sh -c '
"$1" "$2/c1" c1 "$3" "$4" "$5" & echo $! >"$2/c1/unshare.pid"
"$1" "$2/c2" c2 "$3" "$4" "$5" & echo $! >"$2/c2/unshare.pid"
wait' sh "$E2E_TMP/box.sh" "$E2E_TMP" "$workload" "$python" "$seconds"
for c in c1 c2; do
	mkdir "$E2E_TMP/$c/maps"
	tar -C "$E2E_TMP/$c/maps" -xf "$E2E_TMP/$c/maps.tar" ||
		e2e_fail "$c: no perf map came out of the container"
done

# The processes as the capture knows them: parent of each new process
# (FORK) and those that became the interpreter (COMM exec).
"$PERF" script -i "$data" --show-task-events 2>/dev/null |
	grep -E 'PERF_RECORD_(FORK|COMM exec)' >"$E2E_TMP/tasks.txt"

failed=0
summary=
names=
for c in c1 c2; do
	unshare_pid=$(cat "$E2E_TMP/$c/unshare.pid")
	# the interpreter below this container's unshare
	# shellcheck disable=SC2016 # awk's
	host_pid=$("$AWK" -v top="$unshare_pid" -v comm="$comm" '
		/PERF_RECORD_FORK/ {
			match($0, /FORK\([0-9]+:[0-9]+\):\([0-9]+:/)
			split(substr($0, RSTART + 5, RLENGTH - 6), f, /[:()]+/)
			if (f[1] == f[2]) parent[f[1]] = f[3]
		}
		index($0, "PERF_RECORD_COMM exec: " comm ":") { split($NF, w, "/"); sub(/.*:/, "", w[1]); py[w[1]] = 1 }
		END {
			for (p in py)
				for (q = p; q in parent; q = parent[q])
					if (parent[q] == top) print p
		}' "$E2E_TMP/tasks.txt")
	[ -n "$host_pid" ] || e2e_fail "$c: no $comm under unshare pid $unshare_pid in the capture"
	map=$(ls "$E2E_TMP/$c/maps" 2>/dev/null)
	if [ -z "$map" ] || [ ! -s "$E2E_TMP/$c/maps/$map" ]; then
		e2e_fail "$c: the workload wrote no perf map in its /tmp"
	fi
	[ "$map" != "perf-$host_pid.map" ] ||
		e2e_fail "$c: the workload ran in the host's pid namespace ($map)"
	names="$names $map"
	# the workload's thread ids are its namespace's: the host's from
	# the samples of its process
	# shellcheck disable=SC2016 # awk's
	tids=$("$PERF" script -i "$data" -F pid,tid 2>/dev/null |
		"$AWK" -v pid="$host_pid" '{ split($1, t, "/"); if (t[1] == pid) print t[2] }' | sort -u)
	# shellcheck disable=SC2086 # one per line, joined
	tids=$(printf '%s ' $tids)
	sed "s/^threads .*/threads $tids/" "$E2E_TMP/$c/expected" >"$E2E_TMP/$c/expected.host"
	case $c in
	c1) pid_c1=$host_pid ;;
	*) pid_c2=$host_pid ;;
	esac
	e2e_say "$e2e_name: $c: host pid $host_pid, $map, threads $tids"
done
# shellcheck disable=SC2086 # two names
set -- $names
[ "$1" = "$2" ] || e2e_fail "the containers' maps have different names ($1, $2): not the case tested"
same_name=$1

# check LABEL CONTAINER OUTPUT [ARGS...]: the checker on one container's
# samples.
check() {
	ck_label=$1
	ck_c=$2
	ck_output=$3
	shift 3
	ck_line=$("$python" "$checker" --label "$ck_label" --min 99 --min-samples "$min_samples" \
		"$@" "$E2E_TMP/$ck_c/expected.host" "$E2E_TMP/$ck_output" \
		2>"$E2E_TMP/$ck_output.$ck_c.check") || {
		failed=1
		ck_line="$ck_line; FAIL"
	}
	e2e_say "$ck_line"
	e2e_show "$E2E_TMP/$ck_output.$ck_c.check" 40
	summary="$summary
$ck_line"
}

# the default unwinding: Debian's perf (libunwind) cuts about 10% of these
# containers' samples right after ld.so's __tls_get_addr (perf script
# stops there too); the Python modes unwind these processes, which ran
# JIT code, as elfutils does, and must not
dirs="--perf-map-dir $E2E_TMP/c1/maps --perf-map-dir $E2E_TMP/c2/maps"
for mode in merged all only; do
	out=pystitch-$mode.txt
	# shellcheck disable=SC2086 # two options
	e2e_pystitch_script "$out" --python=$mode $dirs -i "$data"
	for c in c1 c2; do
		if [ $mode = only ]; then
			check "$c $mode" $c "$out" --only
		else
			check "$c $mode" $c "$out"
		fi
	done
done
# one line per pid saying which file it took, nothing refused or unmatched
# shellcheck disable=SC2086
e2e_pystitch_script pystitch-verbose.txt -v $dirs -i "$data"
for c in c1 c2; do
	pid=$pid_c1
	[ $c = c1 ] || pid=$pid_c2
	[ "$(grep -c "$E2E_TMP/$c/maps/$same_name: taken for pid $pid:" "$E2E_TMP/pystitch-verbose.txt.err")" = 1 ] || {
		e2e_show "$E2E_TMP/pystitch-verbose.txt.err"
		e2e_fail "$c: not one line saying that pid $pid took $c/maps/$same_name"
	}
done
! grep -q -E 'refused|matches no process|both account' "$E2E_TMP/pystitch-merged.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-merged.txt.err"
	e2e_fail "a map was refused or left over with one folder per container"
}

# Without the folders: no Python frame named, one warning per pid.
e2e_pystitch_script pystitch-nomaps.txt -i "$data"
! grep -q ' py::' "$E2E_TMP/pystitch-nomaps.txt" ||
	e2e_fail "Python frames named without the containers' maps"

# A map of the right name (the host pid's) that is another process's: c2's
# map as perf-PID1.map beside the capture, c1's in its folder. The file by
# name is refused (one warning) and c1 gets its own map.
mkdir "$E2E_TMP/wrong"
cp "$data" "$E2E_TMP/wrong/"
cp "$E2E_TMP/c2/maps/$same_name" "$E2E_TMP/wrong/perf-$pid_c1.map"
e2e_pystitch_script pystitch-wrong.txt --libdw-unwind --perf-map-dir "$E2E_TMP/c1/maps" \
	-i "$E2E_TMP/wrong/containers.data"
check "c1 merged, a wrong perf-$pid_c1.map by name" c1 pystitch-wrong.txt
[ "$(grep -c "wrong/perf-$pid_c1.map: refused for pid $pid_c1" "$E2E_TMP/pystitch-wrong.txt.err")" = 1 ] || {
	e2e_show "$E2E_TMP/pystitch-wrong.txt.err"
	e2e_fail "not one warning refusing the wrong perf-$pid_c1.map"
}
# c2's folder was not given: its map is not there, c2 stays unnamed
grep -q "no perf-$pid_c2.map or jit-$pid_c2.dump in .*: JIT frames of pid $pid_c2 (Python.s included) stay unnamed" \
	"$E2E_TMP/pystitch-wrong.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-wrong.txt.err"
	e2e_fail "no warning that pid $pid_c2 stays unnamed"
}
# a folder whose map fits no process is said once
mkdir "$E2E_TMP/stray"
printf '1000 10 py::stray:nowhere.py\n' >"$E2E_TMP/stray/$same_name"
# shellcheck disable=SC2086
e2e_pystitch_script pystitch-stray.txt $dirs --perf-map-dir "$E2E_TMP/stray" -i "$data"
[ "$(grep -c "stray/$same_name: matches no process" "$E2E_TMP/pystitch-stray.txt.err")" = 1 ] || {
	e2e_show "$E2E_TMP/pystitch-stray.txt.err"
	e2e_fail "not one warning that stray/$same_name matches no process"
}
cmp -s "$E2E_TMP/pystitch-merged.txt" "$E2E_TMP/pystitch-stray.txt" ||
	e2e_fail "a stray map changed the stacks"

# A container still running when the capture is read: its map is read
# where perf reads it, /proc/PID/root/tmp/perf-NSPID.map, with no folder
# given; `archive` packs it from there, and the archive, read once the
# container is gone, prints the same stacks.
mkdir "$E2E_TMP/live"
# 20 s of CPU time: the container must outlive the reading of its capture,
# under the sanitizers and on a loaded machine too (the check below)
"$E2E_TMP/box.sh" "$E2E_TMP/live" live "$workload" "$python" 20 &
live_unshare=$!
live_pid=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	sleep 1
	# the interpreter below the unshare, two levels down (pids, one word each)
	# shellcheck disable=SC2013
	for child in $(cat "/proc/$live_unshare/task/$live_unshare/children" 2>/dev/null); do
		# shellcheck disable=SC2013
		for grandchild in $(cat "/proc/$child/task/$child/children" 2>/dev/null); do
			[ "$(cat "/proc/$grandchild/comm" 2>/dev/null)" = "$comm" ] && live_pid=$grandchild
		done
	done
	[ -n "$live_pid" ] && break
done
[ -n "$live_pid" ] || e2e_fail "live: no $comm under unshare pid $live_unshare"
live_nspid=$(sed -n 's/^NStgid:.*[[:space:]]\([0-9]*\)$/\1/p' "/proc/$live_pid/status")
sleep 1 # past its first round
# (the -j comparison of e2e_record waits for the next capture's reading)
E2E_NO_STACK_CHECK=1 e2e_record "$E2E_TMP/live/live.data" -k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 \
	-p "$live_pid" -- sleep 2
e2e_pystitch_script pystitch-live.txt -v --libdw-unwind -i "$E2E_TMP/live/live.data"
[ -d "/proc/$live_pid" ] || e2e_fail "live: the container ended before its capture was read (a slow machine?)"
grep -q "/proc/$live_pid/root/tmp/perf-$live_nspid.map: [0-9]* named code ranges" \
	"$E2E_TMP/pystitch-live.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-live.txt.err"
	e2e_fail "live: the map was not read from /proc/$live_pid/root/tmp/perf-$live_nspid.map"
}
e2e_run "$PYSTITCH" archive -i "$E2E_TMP/live/live.data" -o "$E2E_TMP/live/live.pst" \
	>"$E2E_TMP/live/archive.out" 2>&1 || e2e_fail "live: pystitch archive failed"
wait "$live_unshare" || e2e_fail "live: the container failed"
tids=$("$PERF" script -i "$E2E_TMP/live/live.data" -F tid 2>/dev/null | sort -u)
# shellcheck disable=SC2086 # one per line, joined
tids=$(printf '%s ' $tids)
sed "s/^threads .*/threads $tids/" "$E2E_TMP/live/expected" >"$E2E_TMP/live/expected.host"
check "live, attached with -p" live pystitch-live.txt --min-samples 200
e2e_pystitch_script pystitch-live-archive.txt --libdw-unwind -i "$E2E_TMP/live/live.pst"
cmp -s "$E2E_TMP/pystitch-live.txt" "$E2E_TMP/pystitch-live-archive.txt" ||
	e2e_fail "live: the archive, read after the container ended, prints other stacks"

e2e_say "$e2e_name: figures (chains: correct/samples in the window):$summary"
[ "${PS_E2E_KEEP:-}" = 1 ] ||
	rm -f "$data" "$E2E_TMP/wrong/containers.data" "$E2E_TMP/live/live.data" "$E2E_TMP/live/live.pst"
exit $failed
