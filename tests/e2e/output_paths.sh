#!/bin/sh
# output_paths: what `-o PATH` does to what PATH names, for every command
# that writes a file (pprof, flamegraph, archive). In a private mount
# namespace with its own tmpfs (never the machine's /dev/null):
#  - a character device made there (the null device, 1:3) and a FIFO are
#    written through and stay what they were, with nothing left beside;
#  - a symbolic link is followed: the file it leads to is replaced (a
#    dangling link's target is made) and the link stays a link;
#  - a replaced regular file keeps its mode; a directory is refused with
#    one line and a non-zero status;
#  - a run that fails (a damaged capture) or is killed half way (kill -9
#    while it waits on its input) leaves the old file as it was and no
#    temporary file in the directory.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
[ "$(id -u)" = 0 ] || e2e_skip "a private mount namespace (unshare --mount) needs root"
command -v unshare >/dev/null 2>&1 || e2e_skip "unshare(1) from util-linux is not installed"
e2e_record "$E2E_TMP/fp.data" -F 999 -g -- "$E2E_PROGRAMS/loop" 0.3
data=$E2E_TMP/fp.data

# the outputs as written to an ordinary new file, to compare with
for cmd in pprof flamegraph; do
	"$PYSTITCH" "$cmd" -q -i "$data" -o "$E2E_TMP/expected.$cmd" ||
		e2e_fail "$cmd -o FILE failed"
done

# Everything else runs inside the namespace, in one shell script that
# prints "FAIL: ..." for each broken promise and "ok: ..." for each kept.
cat >"$E2E_TMP/inside.sh" <<'EOF'
set -u
P=$1 data=$2 expected=$3
cd /mnt || exit 1
bad() { echo "FAIL: $*"; }
ok() { echo "checked: $*"; }
listing() { ls -A /mnt | LC_ALL=C sort | tr '\n' ' '; }

mknod null c 1 3 || { bad "mknod failed"; exit 0; }
mkfifo fifo
echo old >regular
chmod 640 regular
ln -s regular link
ln -s made-by-link dangling
mkdir directory
mkfifo input
before=$(listing)

for cmd in pprof flamegraph archive; do
	"$P" "$cmd" -q -i "$data" -o null >/dev/null 2>err.txt || bad "$cmd -o null: exit $? ($(head -n 1 err.txt))"
	rm -f err.txt
	[ -c null ] && [ "$(stat -c %t:%T null)" = 1:3 ] || bad "$cmd -o null: null is no longer the character device 1:3 ($(stat -c %F null))"
	[ "$(listing)" = "$before" ] || bad "$cmd -o null left files behind: $(listing)"
done
ok "a character device is written through"

for cmd in pprof flamegraph; do
	cat fifo >fifo.out &
	reader=$!
	"$P" "$cmd" -q -i "$data" -o fifo || bad "$cmd -o fifo: exit $?"
	# a FIFO renamed over would keep its reader waiting for ever
	[ -p fifo ] || kill $reader 2>/dev/null
	wait $reader
	[ -p fifo ] || bad "$cmd -o fifo: fifo is no longer a FIFO ($(stat -c %F fifo))"
	cmp -s fifo.out "$expected.$cmd" || bad "$cmd -o fifo: what came through the FIFO differs from -o FILE"
	rm -f fifo.out
	[ "$(listing)" = "$before" ] || bad "$cmd -o fifo left files behind: $(listing)"
done
ok "a FIFO is written through"

"$P" flamegraph -q -i "$data" -o link || bad "flamegraph -o link: exit $?"
[ -L link ] && [ "$(readlink link)" = regular ] || bad "-o link: the link was replaced"
cmp -s regular "$expected.flamegraph" || bad "-o link: the file the link leads to does not hold the output"
[ "$(stat -c %a regular)" = 640 ] || bad "-o link: the replaced file's mode is $(stat -c %a regular), not 640"
"$P" pprof -q -i "$data" -o dangling || bad "pprof -o dangling: exit $?"
[ -L dangling ] && cmp -s made-by-link "$expected.pprof" || bad "-o dangling: the link's target was not made with the output"
rm -f made-by-link
ok "links are followed, the file they lead to replaced with its mode"

"$P" pprof -q -i "$data" -o directory 2>err.txt && bad "-o directory succeeded"
[ "$(wc -l <err.txt)" = 1 ] || bad "-o directory: $(wc -l <err.txt) lines on stderr, not one"
grep -q 'directory' err.txt || bad "-o directory: the message does not say why: $(cat err.txt)"
rm -f err.txt
[ -d directory ] && [ -z "$(ls -A directory)" ] || bad "-o directory changed the directory"
ok "a directory is refused in one line"

# a damaged capture: the old file stays
echo old >regular
head -c 3000 "$data" >cut.data
"$P" flamegraph -q -i cut.data -o regular 2>/dev/null && bad "flamegraph of a cut capture succeeded"
[ "$(cat regular)" = old ] || bad "a failed run changed the old output"
rm -f cut.data

# killed while it waits for its input (a FIFO nobody writes to): the old
# file stays, nothing beside it
for cmd in pprof flamegraph archive; do
	"$P" "$cmd" -q -i input -o regular &
	pid=$!
	# until it holds its output open (archive opens it only at the end)
	tries=0
	while [ $tries -lt 50 ] && ! ls -l /proc/$pid/fd 2>/dev/null | grep -q -- '-> /mnt/'; do
		[ "$cmd" = archive ] && [ $tries -ge 10 ] && break
		sleep 0.1
		tries=$((tries + 1))
	done
	[ "$cmd" = archive ] || [ $tries -lt 50 ] || bad "$cmd never opened its output"
	kill -KILL $pid || bad "$cmd: no run to kill"
	wait $pid 2>/dev/null
	[ "$(cat regular)" = old ] || bad "$cmd killed half way changed the old output"
	[ "$(listing)" = "$before" ] || bad "$cmd killed half way left files behind: $(listing)"
done
ok "failed and killed runs leave the old file and no temporary"
EOF

# shellcheck disable=SC2016 # a shell program for sh -c
unshare --mount --propagation private sh -c 'mount -t tmpfs pystitch-output-paths /mnt && exec sh "$0" "$@"' \
	"$E2E_TMP/inside.sh" "$PYSTITCH" "$data" "$E2E_TMP/expected" >"$E2E_TMP/inside.log" 2>&1 ||
	{ e2e_show "$E2E_TMP/inside.log"; e2e_fail "the namespace could not be set up"; }
cat "$E2E_TMP/inside.log"
grep -q '^FAIL' "$E2E_TMP/inside.log" && e2e_fail "$(grep -c '^FAIL' "$E2E_TMP/inside.log") broken promises above"
[ "$(grep -c '^checked:' "$E2E_TMP/inside.log")" = 5 ] || e2e_fail "not every case ran"
e2e_say "PASS: devices and FIFOs written through, links followed, modes kept, no temporary left"
exit 0
