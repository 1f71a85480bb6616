#!/bin/sh
# The program is a client of the public API (include/pystitch/) and of
# nothing else of the library: src/cli includes only system headers, the
# public headers and its own headers (cli.h, and the *_priv.h of its
# files, which must live in src/cli), and the program links libpystitch's
# exported functions, so every library function it calls is one the
# shared library exports.
set -u
top=${abs_top_srcdir:-.}
build=${abs_top_builddir:-.}
failed=0
for file in "$top"/src/cli/*.c "$top"/src/cli/*.h; do
	bad=$(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" |
		grep -v -e '<[a-z0-9_/.-]*\.h>' -e '"cli\.h"' -e '"[a-z_]*_priv\.h"' | grep -v '<pystitch/')
	for own in $(grep -o '"[a-z_]*_priv\.h"' "$file" | tr -d '"'); do
		[ -f "$top/src/cli/$own" ] || { echo "FAIL: $file includes $own, which is not src/cli's"; failed=1; }
	done
	if [ -n "$bad" ]; then
		echo "FAIL: $file includes more than the public API:"
		echo "$bad" | sed 's/^/    /'
		failed=1
	fi
	if grep -q '"pystitch/' "$file" || grep -n '<pystitch/' "$file" | grep -qv -e 'pystitch/pystitch\.h' -e 'pystitch/output\.h'; then
		echo "FAIL: $file: public headers are included as <pystitch/NAME.h>"
		failed=1
	fi
done
# libtool keeps the real program under .libs when it links the shared
# library; a build without shared libraries has nothing more to check
program=$build/.libs/pystitch
[ -x "$program" ] || program=$build/.libs/lt-pystitch
library=$build/.libs/libpystitch.so
if [ -x "$program" ] && [ -f "$library" ] && command -v nm >/dev/null; then
	nm -D --defined-only "$library" | awk '{ print $NF }' | sort -u >"${TMPDIR:-/tmp}/public_only.$$"
	missing=$(nm -D --undefined-only "$program" | awk '$NF ~ /^ps_/ { print $NF }' | sort -u |
		comm -23 - "${TMPDIR:-/tmp}/public_only.$$")
	rm -f "${TMPDIR:-/tmp}/public_only.$$"
	if [ -n "$missing" ]; then
		echo "FAIL: the program calls library functions libpystitch does not export: $missing"
		failed=1
	fi
	own=$(nm --defined-only "$program" | awk '$2 ~ /^[Tt]$/ && $3 ~ /^ps_/ { print $3 }' |
		grep -v -e '^ps_cli_' -e '^ps_cmd_' -e '^ps_progress_')
	if [ -n "$own" ]; then
		echo "FAIL: library code linked into the program: $own"
		failed=1
	fi
fi
[ $failed = 0 ] && echo "PASS: src/cli uses the public API only"
exit $failed
