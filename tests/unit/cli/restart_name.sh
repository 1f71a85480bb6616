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
stop_pystitch() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	pid=
}
cleanup() {
	stop_pystitch
	rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/input" || exit 1

# start SETTING: pystitch info on the FIFO (it blocks opening it until a
# writer comes: time to look at it) with PYSTITCH_HUGEPAGES=SETTING, or
# without the variable when SETTING is empty; $environ is its environment
# once it restarted, or 2 s after the program itself runs (not libtool's
# wrapper script)
start() {
	if [ -n "$1" ]; then
		PYSTITCH_HUGEPAGES=$1 "$pystitch" info -i "$work/input" >/dev/null 2>&1 &
	else
		(unset PYSTITCH_HUGEPAGES; exec "$pystitch" info -i "$work/input" >/dev/null 2>&1) &
	fi
	pid=$!
	environ=
	waited=0
	total=0
	# at most 30 s in all
	while [ $waited -lt 20 ] && [ $total -lt 300 ]; do
		sleep 0.1
		waited=$((waited + 1))
		total=$((total + 1))
		environ=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ")
		case $environ in *PYSTITCH_HUGEPAGES_RESTARTED*) break ;; esac
		# the wrapper may take a while to exec the program: 2 s from then
		is_program || waited=0
		[ -d "/proc/$pid" ] || break
	done
}

# is_program: /proc/$pid is the pystitch program itself, alive (libtool's
# wrapper script runs .libs/pystitch or .libs/lt-pystitch)
is_program() {
	case $(readlink "/proc/$pid/exe" 2>/dev/null) in
	*/pystitch | */lt-pystitch) return 0 ;;
	*) return 1 ;;
	esac
}

# not asked for: no restart, seen in the program itself waiting on its input
start ""
case $environ in
*PYSTITCH_HUGEPAGES_RESTARTED*)
	echo "FAIL: pystitch restarted for huge pages without PYSTITCH_HUGEPAGES=1"
	exit 1
	;;
esac
if ! is_program || [ -z "$environ" ]; then
	echo "FAIL: no pystitch program waiting on its input to look at ($(readlink "/proc/$pid/exe" 2>/dev/null))"
	exit 1
fi
stop_pystitch

start 1
case $environ in
*PYSTITCH_HUGEPAGES_RESTARTED*) ;;
*)
	echo "SKIP: pystitch did not restart itself (glibc without the hugetlb tunable?)"
	exit 77
	;;
esac
comm=$(cat "/proc/$pid/comm" 2>/dev/null)
if is_program && { [ "$comm" = pystitch ] || [ "$comm" = lt-pystitch ]; }; then
	echo "PASS: restarted for huge pages only when asked, still named $comm"
else
	echo "FAIL: after the huge-page restart the process is named '$comm'"
	exit 1
fi
