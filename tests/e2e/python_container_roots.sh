#!/bin/sh
# python_container_roots: containers with root file systems of their own.
# Two CPython -X perf processes run tests/programs/pychains.py at once,
# each in a new pid and mount namespace (`unshare --pid --fork
# --mount-proc`) with a private tmpfs on /tmp, recorded from outside with
# `perf record --namespaces --buildid-mmap --call-graph dwarf,16384`:
#  - c1 runs the interpreter from a bind mount of its tree at /opt/python,
#    a path the host does not have;
#  - c2 runs it from its usual path, over whose libpython a copy with
#    another build-id is bind-mounted: the host's file at that path is
#    not the one c2 ran.
# Their files are read as perf reads them, inside their mount namespaces:
#  1. while the Python processes run (held after their work): each file
#     under /proc/PID/root of the process that mapped it, each perf map
#     at /proc/PID/root/tmp/perf-NSPID.map; `pystitch script
#     --python=native` must print what `perf script` prints (99.5% of the
#     samples identical), merged and only modes at least 99% of each
#     container's samples with exactly the right chain; `pystitch archive`
#     packs the files from there;
#  2. once the Python processes have ended but their containers run on:
#     through another process of the mount namespace the capture recorded
#     (PERF_RECORD_NAMESPACES), its root for the files and every perf map
#     in its /tmp, matched by content; the same chains;
#  3. once the containers are gone: the archive made in 1 prints the same
#     stacks; without it, c2's libpython is refused for its build-id and
#     c1's is missing; with one --symfs tree per container (each the
#     container's root file system, exported) and one --perf-map-dir per
#     container, each file is read from the tree whose copy has its
#     recorded build-id, and the chains are right again; an archive made
#     so prints the same stacks.
#
# Interpreter: the newest shared-library CPython 3.12.N or 3.13.N under
# `pyenv root`, or the first of PS_E2E_PYTHONS. Needs root, unshare(1)
# and objcopy(1).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
checker=$e2e_dir/pychains_check.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500

[ "$(id -u)" = 0 ] || e2e_skip "not root: cannot make namespaces and mounts"
command -v unshare >/dev/null 2>&1 || e2e_skip "no unshare(1)"
command -v objcopy >/dev/null 2>&1 || e2e_skip "no objcopy(1)"
unshare --pid --fork --mount-proc true 2>/dev/null ||
	e2e_skip "unshare --pid --fork --mount-proc fails here"

python=
libpython=
for candidate in ${PS_E2E_PYTHONS:-} $(e2e_newest_python 12) $(e2e_newest_python 13); do
	"$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null || continue
	libpython=$("$candidate" -c 'import sysconfig, os
print(os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME") or ""))')
	if [ -f "$libpython" ]; then
		python=$candidate
		break
	fi
done
[ -n "$python" ] || e2e_skip "no shared-library CPython 3.12+ found (set PS_E2E_PYTHONS)"
# the interpreter's tree: what c1 mounts at /opt/python
prefix=$("$python" -c 'import sys; print(sys.base_prefix)')
executable=$(readlink -f "$python")
case $executable in
"$prefix"/*) ;;
*) e2e_skip "$python is not under its prefix $prefix" ;;
esac
e2e_say "$e2e_name: $python ($libpython)"

# c2's libpython: the same code with another build-id
copy=$E2E_TMP/libpython-copy.so
cp "$libpython" "$copy" || e2e_fail "cannot copy $libpython"
objcopy --dump-section .note.gnu.build-id="$E2E_TMP/note" "$copy" ||
	e2e_fail "cannot read the build-id note of $libpython"
"$python" -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-1] ^= 0xff
open(sys.argv[1], "wb").write(b)' "$E2E_TMP/note"
objcopy --update-section .note.gnu.build-id="$E2E_TMP/note" "$copy" ||
	e2e_fail "cannot give $copy another build-id"

# box.sh KIND DIR: a container. Its /tmp is a tmpfs of its own, so the
# workload comes in and its perf map goes out through descriptors opened
# before (DIR/maps.tar, as `docker cp` gives it). The Python process waits
# for a byte on DIR/hold once done; the container then waits for a line.
cat >"$E2E_TMP/box.sh" <<'EOF'
#!/bin/sh
exec unshare --pid --fork --mount-proc sh -c '
kind=$1 dir=$2 workload=$3 seconds=$4 prefix=$5 executable=$6 libpython=$7 copy=$8
exec 3<"$workload" 4<>"$dir/hold" 5>"$dir/expected" 6>"$dir/maps.tar"
if [ "$kind" = c1 ]; then
	# through a bind made first: the tree may be under /opt
	mkdir "$dir/stage" && mount --bind "$prefix" "$dir/stage" && mount -t tmpfs tmpfs /opt &&
		mkdir /opt/python && mount --bind "$dir/stage" /opt/python || exit 1
	python=/opt/python${executable#"$prefix"}
	LD_LIBRARY_PATH=/opt/python/${libpython#"$prefix"/}
	export LD_LIBRARY_PATH=${LD_LIBRARY_PATH%/*}
else
	mount --bind "$copy" "$libpython" || exit 1
	python=$executable
fi
mount -t tmpfs tmpfs /tmp || exit 1
cat <&3 >/tmp/workload.py
"$python" -X perf /tmp/workload.py "$seconds" /dev/fd/5 4 || exit 1
read -r _ <&4
cd /tmp && tar -cf - perf-*.map >&6
' sh "$@"
EOF
chmod +x "$E2E_TMP/box.sh"

boxes=
release() { # release LINE: to both containers
	for rc_c in c1 c2; do
		[ -p "$E2E_TMP/$rc_c/hold" ] && printf '%s' "$1" >"$E2E_TMP/$rc_c/hold"
	done
}
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$boxes" ]; then
		release x
		release '
'
	fi
	e2e_cleanup
}
trap cleanup EXIT

for c in c1 c2; do
	mkdir "$E2E_TMP/$c"
	mkfifo "$E2E_TMP/$c/hold"
done
data=$E2E_TMP/containers.data
# the recording ends when both workloads have written their chains
# (the stacks are checked below, while the containers run)
E2E_NO_STACK_CHECK="checked below"
# shellcheck disable=SC2016 # expanded by that sh
e2e_record "$data" --namespaces --buildid-mmap -k CLOCK_MONOTONIC -F 999 \
	--call-graph dwarf,16384 -- sh -c '
box=$1 tmp=$2
shift 2
"$box" c1 "$tmp/c1" "$@" & c1=$!
echo $c1 >"$tmp/c1/unshare.pid"
"$box" c2 "$tmp/c2" "$@" & c2=$!
echo $c2 >"$tmp/c2/unshare.pid"
until grep -q "^window" "$tmp/c1/expected" && grep -q "^window" "$tmp/c2/expected"; do
	kill -0 $c1 && kill -0 $c2 || exit 1
	sleep 0.1
done' sh "$E2E_TMP/box.sh" "$E2E_TMP" "$workload" "$seconds" "$prefix" "$executable" \
	"$libpython" "$copy"
boxes="$(cat "$E2E_TMP/c1/unshare.pid") $(cat "$E2E_TMP/c2/unshare.pid")"
E2E_NO_STACK_CHECK=

# each container's Python process (the grandchild of its unshare), its
# host threads (the sample's tids) for the checker
failed=0
summary=
for c in c1 c2; do
	unshare_pid=$(cat "$E2E_TMP/$c/unshare.pid")
	host_pid=
	# shellcheck disable=SC2013 # pids, one word each
	for child in $(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null); do
		for grandchild in $(cat "/proc/$child/task/$child/children" 2>/dev/null); do
			host_pid=$grandchild
		done
	done
	[ -n "$host_pid" ] || e2e_fail "$c: no Python process under unshare pid $unshare_pid"
	# shellcheck disable=SC2016 # awk's
	tids=$("$PERF" script -i "$data" -F pid,tid 2>/dev/null |
		"$AWK" -v pid="$host_pid" '{ split($1, t, "/"); if (t[1] == pid) print t[2] }' | sort -u)
	# shellcheck disable=SC2086 # one per line, joined
	tids=$(printf '%s ' $tids)
	sed "s/^threads .*/threads $tids/" "$E2E_TMP/$c/expected" >"$E2E_TMP/$c/expected.host"
	e2e_say "$e2e_name: $c: host pid $host_pid, threads $tids"
	case $c in
	c1) pid_c1=$host_pid ;;
	*) pid_c2=$host_pid ;;
	esac
done

# check LABEL OUTPUT [ARGS...]: both containers' samples
check() {
	ck_label=$1
	ck_output=$2
	shift 2
	for ck_c in c1 c2; do
		ck_line=$("$python" "$checker" --label "$ck_c $ck_label" --min 99 \
			--min-samples "$min_samples" "$@" "$E2E_TMP/$ck_c/expected.host" \
			"$E2E_TMP/$ck_output" 2>"$E2E_TMP/$ck_output.$ck_c.check") || {
			failed=1
			ck_line="$ck_line; FAIL"
		}
		e2e_say "$ck_line"
		e2e_show "$E2E_TMP/$ck_output.$ck_c.check" 40
		summary="$summary
$ck_line"
	done
}

# 1. the Python processes run: their roots
e2e_check_stacks "$data" --call-graph dwarf
# (without inline frames: perf runs addr2line on the recorded path, which
# is not there outside the container, and dies of SIGPIPE)
e2e_perf_script perf-live.txt --no-inline -i "$data"
e2e_pystitch_script pystitch-live-native.txt --no-inline --python=native -i "$data"
e2e_compare_script "native, while the containers run" perf-live.txt pystitch-live-native.txt \
	-v min_identical=99.5 -v min_samples="$min_samples" || failed=1
e2e_pystitch_script pystitch-live.txt -i "$data"
check "merged, running" pystitch-live.txt
e2e_pystitch_script pystitch-live-only.txt --python=only -i "$data"
check "only, running" pystitch-live-only.txt --only
! grep -q 'build-id mismatch\|stay unnamed' "$E2E_TMP/pystitch-live.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-live.txt.err"
	e2e_fail "a file was not read from its container while it ran"
}
e2e_run "$PYSTITCH" archive -i "$data" -o "$E2E_TMP/containers.pst" \
	>"$E2E_TMP/archive.out" 2>&1 || {
	e2e_show "$E2E_TMP/archive.out"
	e2e_fail "pystitch archive failed"
}

# 2. the Python processes end, the containers run on
release x
for c in c1 c2; do
	pid=$pid_c1
	[ $c = c1 ] || pid=$pid_c2
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -d "/proc/$pid" ] || break
		sleep 0.25
	done
	[ ! -d "/proc/$pid" ] || e2e_fail "$c: the Python process did not end"
done
e2e_pystitch_script pystitch-ended.txt -v -i "$data"
check "merged, its process ended, its container running" pystitch-ended.txt
grep -q "root/tmp/perf-[0-9]*\.map: taken for pid $pid_c1" "$E2E_TMP/pystitch-ended.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-ended.txt.err"
	e2e_fail "c1's map was not taken from its container's /tmp"
}

# 3. the containers are gone
release '
'
# (children of the recorded shell, not of this one)
for box in $boxes; do
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -d "/proc/$box" ] || break
		sleep 0.25
	done
	[ ! -d "/proc/$box" ] || e2e_fail "the container of unshare pid $box did not end"
done
boxes=
for c in c1 c2; do
	mkdir "$E2E_TMP/$c/maps"
	tar -C "$E2E_TMP/$c/maps" -xf "$E2E_TMP/$c/maps.tar" || e2e_fail "$c: no perf map came out"
done
e2e_pystitch_script pystitch-archive.txt -i "$E2E_TMP/containers.pst"
cmp -s "$E2E_TMP/pystitch-live.txt" "$E2E_TMP/pystitch-archive.txt" ||
	e2e_fail "the archive, read once the containers are gone, prints other stacks"
dirs="--perf-map-dir $E2E_TMP/c1/maps --perf-map-dir $E2E_TMP/c2/maps"
# shellcheck disable=SC2086 # two options
e2e_pystitch_script pystitch-gone.txt $dirs -i "$data"
grep -q "$libpython: build-id mismatch" "$E2E_TMP/pystitch-gone.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-gone.txt.err"
	e2e_fail "c2's libpython was not refused for its build-id without its tree"
}
# one tree per container: its root file system as `docker export` leaves
# it, here links to the host's system directories and to what the
# container had: c1 the interpreter's tree at /opt/python, c2 its usual
# tree but for its libpython
for c in c1 c2; do
	tree=$E2E_TMP/$c/tree
	mkdir -p "$tree"
	for d in /bin /lib /lib64 /usr /etc; do
		[ -e "$d" ] && ln -s "$d" "$tree$d"
	done
done
mkdir -p "$E2E_TMP/c1/tree/opt"
ln -s "$prefix" "$E2E_TMP/c1/tree/opt/python"
lib_dir=${libpython%/*}
mkdir -p "$E2E_TMP/c2/tree$lib_dir"
for entry in "$prefix"/* "$lib_dir"/*; do
	[ "$entry" = "$lib_dir" ] || [ "$entry" = "$libpython" ] || [ -e "$E2E_TMP/c2/tree$entry" ] ||
		ln -s "$entry" "$E2E_TMP/c2/tree$entry"
done
cp "$copy" "$E2E_TMP/c2/tree$libpython"
# shellcheck disable=SC2086 # options
e2e_pystitch_script pystitch-trees.txt $dirs --symfs "$E2E_TMP/c1/tree" \
	--symfs "$E2E_TMP/c2/tree" --kallsyms /proc/kallsyms -i "$data"
check "merged, the containers gone, one --symfs tree each" pystitch-trees.txt
! grep -q 'build-id mismatch' "$E2E_TMP/pystitch-trees.txt.err" || {
	e2e_show "$E2E_TMP/pystitch-trees.txt.err"
	e2e_fail "a file of the wrong tree"
}
# an archive of them finds each file under its tree
# shellcheck disable=SC2086 # options
e2e_run "$PYSTITCH" archive $dirs --symfs "$E2E_TMP/c1/tree" --symfs "$E2E_TMP/c2/tree" \
	--kallsyms /proc/kallsyms -i "$data" -o "$E2E_TMP/trees.pst" >"$E2E_TMP/archive.out" 2>&1 || {
	e2e_show "$E2E_TMP/archive.out"
	e2e_fail "pystitch archive with one --symfs tree per container failed"
}
e2e_pystitch_script pystitch-trees-archive.txt -i "$E2E_TMP/trees.pst"
cmp -s "$E2E_TMP/pystitch-trees.txt" "$E2E_TMP/pystitch-trees-archive.txt" ||
	e2e_fail "the archive made with one --symfs tree per container prints other stacks"

e2e_say "$e2e_name: figures (chains: correct/samples in the window):$summary"
[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$data" "$E2E_TMP/containers.pst" "$E2E_TMP/trees.pst"
exit $failed
