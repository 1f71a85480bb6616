#!/bin/sh
# The huge-page restart (src/cli/hugepages.c) happens only when
# PYSTITCH_HUGEPAGES=1 asks for it, and keeps the program's name: a
# pystitch waiting on its input is "pystitch" in /proc/PID/comm (what ps,
# top and perf show), not "exe". Skips where the restart does not happen
# (transparent huge pages not on "madvise", glibc before 2.35).
set -u
pystitch=${abs_top_builddir:-.}/pystitch
[ -x "$pystitch" ] || { echo "FAIL: no $pystitch"; exit 1; }
grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || {
	echo "SKIP: transparent huge pages are not on madvise: no restart"
	exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/restart_name.XXXXXX") || exit 1
pid=
stop() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	pid=
}
cleanup() {
	stop
	rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/input" || exit 1

# start SETTING: pystitch info on the FIFO (it blocks opening it until a
# writer comes: time to look at it) with PYSTITCH_HUGEPAGES=SETTING, or
# without the variable when SETTING is empty; $environ is its environment
# once it restarted, or after 2 s
start() {
	if [ -n "$1" ]; then
		PYSTITCH_HUGEPAGES=$1 "$pystitch" info -i "$work/input" >/dev/null 2>&1 &
	else
		(unset PYSTITCH_HUGEPAGES; exec "$pystitch" info -i "$work/input" >/dev/null 2>&1) &
	fi
	pid=$!
	environ=
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		sleep 0.1
		environ=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null)
		case $environ in *PYSTITCH_HUGEPAGES_RESTARTED*) break ;; esac
	done
}

# not asked for: no restart
start ""
case $environ in
*PYSTITCH_HUGEPAGES_RESTARTED*)
	echo "FAIL: pystitch restarted for huge pages without PYSTITCH_HUGEPAGES=1"
	exit 1
	;;
esac
stop

start 1
case $environ in
*PYSTITCH_HUGEPAGES_RESTARTED*) ;;
*)
	echo "SKIP: pystitch did not restart itself (glibc without the hugetlb tunable?)"
	exit 77
	;;
esac
comm=$(cat "/proc/$pid/comm")
# libtool's wrapper runs .libs/pystitch (or lt-pystitch)
case $comm in
pystitch | lt-pystitch) echo "PASS: restarted for huge pages only when asked, still named $comm" ;;
*)
	echo "FAIL: after the huge-page restart the process is named '$comm'"
	exit 1
	;;
esac
