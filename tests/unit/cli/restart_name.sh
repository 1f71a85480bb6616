#!/bin/sh
# The huge-page restart (src/cli/hugepages.c) keeps the program's name: a
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
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/input" || exit 1
# blocks opening the FIFO until a writer comes: time to look at it
"$pystitch" info -i "$work/input" >/dev/null 2>&1 &
pid=$!
environ=
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	sleep 0.1
	environ=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null)
	case $environ in *PYSTITCH_HUGEPAGES_RESTARTED*) break ;; esac
done
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
pystitch | lt-pystitch) echo "PASS: restarted for huge pages, still named $comm" ;;
*)
	echo "FAIL: after the huge-page restart the process is named '$comm'"
	exit 1
	;;
esac
