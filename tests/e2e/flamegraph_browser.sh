#!/bin/sh
# flamegraph_browser: a flame graph written by `pystitch flamegraph` opened
# in Debian's chromium, headless. The capture is tests/programs/pychains.py
# on the newest CPython 3.12 under pyenv with -X perf. Through the DOM
# chromium holds after the script ran (--dump-dom), opened as
# OUT.svg#search=stage_: the script ran to its end (data-ready-ms), the search control
# is there, Python frames are drawn with their names, the search
# highlighted the stage_* frames and printed their share; opened as
# OUT.svg#zoom=N on stage_a's frame: it fills the width, frames outside it
# are hidden, its callee's name appears, the reset control shows. Then a
# screenshot: a PNG of the SVG's size, with many colours and the green of
# Python frames (png_check.py). The screenshot is kept as
# tests/e2e/flamegraph_browser.png in the build tree (for the README's
# picture), or where PS_E2E_SCREENSHOT says. Without chromium the test is
# skipped (a failure under CI=true).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)} ||
	e2e_skip "chromium is not installed (Debian/Ubuntu: apt-get install chromium)"
[ -x "$chromium" ] || e2e_skip "chromium ($chromium) is not executable"
python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions)"
screenshot=${PS_E2E_SCREENSHOT:-$abs_top_builddir/tests/e2e/flamegraph_browser.png}

# browser ARGS... URL: headless chromium with a profile of its own (root
# needs --no-sandbox); its chatter about D-Bus and GPUs goes to a log.
browser() {
	e2e_run "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$E2E_TMP/chromium" --no-first-run "$@" 2>>"$E2E_TMP/chromium.err"
}

data=$E2E_TMP/python.data
E2E_PY_DATA=$data
e2e_record "$data" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$E2E_PY_DATA")
e2e_python_forget "$py_pid"

svg=$E2E_TMP/flame.svg
e2e_run "$PYSTITCH" flamegraph --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" -o "$svg" \
	2>"$E2E_TMP/flamegraph.err" || {
	e2e_show "$E2E_TMP/flamegraph.err"
	e2e_fail "pystitch flamegraph failed"
}
e2e_say "$e2e_name: $(grep -c '^<rect class' "$svg") frames, $(wc -c <"$svg") bytes"

# dump_dom URL OUT: the DOM after the script ran; a slow machine gets a
# second, longer try before the test gives up and shows what chromium said
dump_dom() {
	for budget in 3000 15000; do
		browser --virtual-time-budget=$budget --dump-dom "$1" >"$2" || {
			e2e_show "$E2E_TMP/chromium.err"
			e2e_fail "chromium --dump-dom failed"
		}
		grep -q 'data-ready-ms="[0-9]' "$2" && return 0
		e2e_say "$e2e_name: no data-ready-ms after a virtual-time budget of $budget ms"
	done
	e2e_show "$E2E_TMP/chromium.err"
	head -c 2000 "$2" >&2
	e2e_fail "the flame graph's script did not run to its end in chromium (no data-ready-ms)"
}

dump_dom "file://$svg#search=stage_" "$E2E_TMP/dom.html"
grep -q '<text id="search"[^>]*>Clear</text>' "$E2E_TMP/dom.html" ||
	e2e_fail "no search control showing an active search"
matched=$(sed -n 's/.*<text id="matched"[^>]*>Matched: \([0-9.]*\)%.*/\1/p' "$E2E_TMP/dom.html")
[ -n "$matched" ] || e2e_fail "the search printed no share"
"$AWK" -v m="$matched" 'BEGIN { exit !(m > 0 && m <= 100) }' ||
	e2e_fail "the search for stage_ matched $matched%"
highlighted=$(grep -c '<rect class="py match" data-n="py::[^"]*stage_' "$E2E_TMP/dom.html")
[ "$highlighted" -ge 3 ] || e2e_fail "$highlighted stage_* Python frames highlighted (3 expected)"
grep -q '<text [^>]*>py::[a-z_]' "$E2E_TMP/dom.html" || e2e_fail "no Python frame name drawn"
e2e_say "$e2e_name: DOM: search matched $matched%, $highlighted frames highlighted"

# zoom on stage_a (#zoom=N: the Nth frame), as a click does
zoom=$(grep '^<rect class' "$svg" | grep -n -m 1 'data-n="py::[^"]*stage_a' | cut -d: -f1)
[ -n "$zoom" ] || e2e_fail "no stage_a frame in the SVG"
zoom=$((zoom - 1))
dump_dom "file://$svg#zoom=$zoom" "$E2E_TMP/zoom.html"
graph_width=$(sed -n 's/^<svg [^>]* data-graph-width="\([0-9.]*\)".*/\1/p' "$svg")
grep -q "<rect class=\"py\" data-n=\"py::[^\"]*stage_a[^>]* x=\"10.0\" [^>]*width=\"$graph_width\"" \
	"$E2E_TMP/zoom.html" || e2e_fail "zoomed on stage_a, its frame does not fill the width"
hidden=$(grep -c '^<rect [^>]*style="display: none;"' "$E2E_TMP/zoom.html")
[ "$hidden" -gt 0 ] || e2e_fail "zoomed on stage_a, no frame was hidden"
grep -q '<text id="reset" class="button"' "$E2E_TMP/zoom.html" || e2e_fail "zoomed, but no reset control"
grep -q '<text [^>]*>py::stage_b:' "$E2E_TMP/zoom.html" ||
	e2e_fail "zoomed on stage_a, the name of its callee stage_b is not drawn"
e2e_say "$e2e_name: zoom on frame $zoom (stage_a): $hidden frames hidden"

width=$(sed -n 's/^<svg [^>]* width="\([0-9]*\)".*/\1/p' "$svg")
height=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$svg")
if [ -z "$width" ] || [ -z "$height" ]; then
	e2e_fail "no width and height on the SVG"
fi
rm -f "$screenshot"
browser --window-size="$width,$height" --screenshot="$screenshot" "file://$svg" >/dev/null || {
	e2e_show "$E2E_TMP/chromium.err"
	e2e_fail "chromium --screenshot failed"
}
[ -s "$screenshot" ] || e2e_fail "chromium wrote no screenshot"
png=$("$python" "$e2e_dir/png_check.py" "$screenshot") || e2e_fail "cannot read the screenshot"
# shellcheck disable=SC2086 # four numbers, split on purpose
set -- $png
e2e_say "$e2e_name: screenshot $screenshot: ${1}x$2, $3 colours, $4 green pixels, $(wc -c <"$screenshot") bytes"
if [ "$1" != "$width" ] || [ "$2" != "$height" ]; then
	e2e_fail "the screenshot is ${1}x$2, the SVG ${width}x$height"
fi
[ "$3" -ge 50 ] || e2e_fail "the screenshot has only $3 colours"
[ "$4" -ge 1000 ] || e2e_fail "the screenshot has only $4 pixels of Python green"
[ "$(wc -c <"$screenshot")" -ge 10000 ] || e2e_fail "the screenshot is under 10 KB"
exit 0
