#!/bin/sh
# speedscope_browser: `pystitch speedscope` on a capture of
# tests/programs/pychains.py run by the newest CPython 3.12 under pyenv with
# -X perf, loaded into the real speedscope (npm package speedscope, its
# own page and bundle) in Debian's chromium, headless, as `speedscope
# FILE` loads a file (#localProfilePath=), in its sandwich view.
# speedscope_check.py checks the file first: speedscope's schema, units
# (nanoseconds for the default period weights of this cpu-clock capture,
# none for --weight samples), each thread's samples folded equal to
# `pystitch collapse --per tid` with the same weight, and in the order
# `pystitch script` prints that thread's stacks. Then, through the DOM
# chromium holds once speedscope has drawn (--dump-dom): the window title
# is the capture's name, the profile list names every thread of the file
# with its total weight, and the sandwich table of the thread speedscope
# opened (the heaviest) has one row per frame, Python frames in
# pychains.py, with the self and total weights collapse gives. Also --per
# pid, -o -, and errors.
# The package is installed once into PS_NPM_SPEEDSCOPE (default
# $abs_top_builddir/.npm-speedscope, removed by make clean). Without
# chromium, Node.js or npm the test is skipped (a failure under CI=true).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)} ||
	e2e_skip "chromium is not installed (Debian/Ubuntu: apt-get install chromium)"
[ -x "$chromium" ] || e2e_skip "chromium ($chromium) is not executable"
command -v node >/dev/null 2>&1 ||
	e2e_skip "Node.js is not installed (Debian/Ubuntu: apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 ||
	e2e_skip "npm is not installed (Debian/Ubuntu: apt-get install npm): cannot install speedscope"
npm_dir=${PS_NPM_SPEEDSCOPE:-$abs_top_builddir/.npm-speedscope}
speedscope_page=$npm_dir/node_modules/speedscope/dist/release/index.html
if [ ! -f "$speedscope_page" ]; then
	e2e_run npm install --prefix "$npm_dir" --no-audit --no-fund --no-save speedscope@1.25.0 \
		>"$E2E_TMP/npm.log" 2>&1 || {
		e2e_show "$E2E_TMP/npm.log"
		e2e_skip "npm could not install speedscope@1.25.0 into $npm_dir (no access to the npm registry?)"
	}
	[ -f "$speedscope_page" ] || e2e_fail "speedscope installed, but without $speedscope_page"
fi
python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions)"
check() {
	"$python" "$e2e_dir/speedscope_check.py" "$@"
}

# pystitch_to OUT COMMAND ARGS...: `pystitch COMMAND ARGS` into $E2E_TMP/OUT.
pystitch_to() {
	pt_out=$1
	shift
	e2e_run "$PYSTITCH" "$@" --buildid-dir "$E2E_TMP/buildid-cache" >"$E2E_TMP/$pt_out" \
		2>"$E2E_TMP/$pt_out.err" || {
		pt_status=$?
		e2e_show "$E2E_TMP/$pt_out.err"
		e2e_fail "pystitch $* failed (exit status $pt_status)"
	}
}

data=$E2E_TMP/python.data
E2E_PY_DATA=$data
e2e_record "$data" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$E2E_PY_DATA")
e2e_python_forget "$py_pid"

# ---- the files, against collapse and script -----------------------------
pystitch_to period.json speedscope -i "$data" -o -
pystitch_to samples.json speedscope -i "$data" -o - --weight samples
pystitch_to collapse-period.txt collapse --per tid -i "$data"
pystitch_to collapse-samples.txt collapse --per tid --weight samples -i "$data"
pystitch_to script.txt script -F comm,tid,ip,sym -i "$data"
result=$(check json "$E2E_TMP/period.json" "$E2E_TMP/collapse-period.txt" \
	"$E2E_TMP/script.txt" nanoseconds) || e2e_fail "the default (period) file is wrong"
e2e_say "$e2e_name: period: $result"
result=$(check json "$E2E_TMP/samples.json" "$E2E_TMP/collapse-samples.txt" \
	"$E2E_TMP/script.txt" none) || e2e_fail "the --weight samples file is wrong"
e2e_say "$e2e_name: samples: $result"
for function in stage_a stage_b stage_c leaf_loop worker_outer worker_leaf Shape.area; do
	grep -q "^{\"name\":\"$function\",\"file\":\"[^\"]*/pychains.py\"}" "$E2E_TMP/samples.json" ||
		e2e_fail "no Python frame $function in pychains.py"
done

# ---- what speedscope shows --------------------------------------------
# show JSON OUT MODE: speedscope's page loading JSON, its DOM once drawn in
# OUT, checked in MODE (exact or time). The script speedscope's CLI would
# write, the window as tall as the sandwich table of the opened profile
# (speedscope draws only the rows in view), and a slow machine gets a
# second, longer try before the test gives up.
show() {
	node -e '
		const fs = require("fs");
		const [json, js] = process.argv.slice(1);
		const text = fs.readFileSync(json);
		fs.writeFileSync(js, "speedscope.loadFileFromBase64(" + JSON.stringify(require("path").basename(json)) +
			", " + JSON.stringify(text.toString("base64")) + ")");
		const doc = JSON.parse(text);
		const frames = new Set(doc.profiles[doc.activeProfileIndex].samples.flat());
		console.log(20 * frames.size + 800);
	' "$E2E_TMP/$1" "$E2E_TMP/$1.js" >"$E2E_TMP/$1.height" || e2e_fail "cannot make the loader of $1"
	for budget in 5000 20000; do
		e2e_run "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
			--user-data-dir="$E2E_TMP/chromium" --no-first-run --lang=en-US \
			--window-size="1200,$(cat "$E2E_TMP/$1.height")" --virtual-time-budget=$budget \
			--dump-dom "file://$speedscope_page#localProfilePath=$E2E_TMP/$1.js&view=sandwich" \
			>"$E2E_TMP/$2" 2>>"$E2E_TMP/chromium.err" || {
			e2e_show "$E2E_TMP/chromium.err"
			e2e_fail "chromium --dump-dom failed"
		}
		grep -q '<title>python.data - speedscope</title>' "$E2E_TMP/$2" &&
			grep -q '%)<div' "$E2E_TMP/$2" && break
		e2e_say "$e2e_name: speedscope had not drawn $1 after a virtual-time budget of $budget ms"
	done
	result=$(check dom "$E2E_TMP/$2" "$E2E_TMP/$1" "$E2E_TMP/collapse-$3.txt" "$4") || {
		e2e_show "$E2E_TMP/chromium.err"
		head -c 3000 "$E2E_TMP/$2" >&2
		e2e_fail "speedscope does not show what $1 holds"
	}
	e2e_say "$e2e_name: $1: $result"
}
show samples.json samples-dom.html samples exact
show period.json period-dom.html period time
# a Python function of the opened profile (the heaviest thread: the main
# thread's stage_a, or a worker's on a machine that ran the workers more)
shown=$(node -e '
	const doc = JSON.parse(require("fs").readFileSync(process.argv[1]));
	const frames = new Set(doc.profiles[doc.activeProfileIndex].samples.flat());
	const names = ["stage_a", "worker_outer", "stage_b", "worker_leaf", "stage_c", "Shape.area"];
	const found = names.find((name) => doc.shared.frames.some((frame, i) =>
		frames.has(i) && frame.name === name && /\/pychains\.py$/.test(frame.file || "")));
	console.log(found || "");
' "$E2E_TMP/samples.json") || e2e_fail "cannot read samples.json's opened profile"
[ -n "$shown" ] || e2e_fail "the opened profile of samples.json has no Python function of pychains.py"
grep -q "title=\"[^\"]*/pychains.py\" class=\"[^\"]*\"><span [^>]*></span>$shown</td>" \
	"$E2E_TMP/samples-dom.html" || e2e_fail "speedscope shows no Python frame $shown in pychains.py"
e2e_say "$e2e_name: speedscope shows the Python frame $shown of pychains.py"

# ---- options and errors -----------------------------------------------
pystitch_to pid.json speedscope -i "$data" -o "$E2E_TMP/pid-file.json" --per pid
cmp -s "$E2E_TMP/pid-file.json" "$E2E_TMP/period.json" &&
	e2e_fail "--per pid wrote the same file as --per tid"
grep -q "\"name\":\"python3[^\"]* pid: $py_pid\",\"unit\":\"nanoseconds\"" "$E2E_TMP/pid-file.json" ||
	e2e_fail "--per pid: no profile of process $py_pid"
[ "$(grep -c '"type":"sampled"' "$E2E_TMP/pid-file.json")" = 1 ] ||
	e2e_fail "--per pid: not one profile for the one process"
pystitch_to file.json speedscope -i "$data" -o "$E2E_TMP/period-file.json"
[ -s "$E2E_TMP/file.json" ] && e2e_fail "-o FILE also wrote to stdout"
cmp -s "$E2E_TMP/period-file.json" "$E2E_TMP/period.json" || e2e_fail "-o FILE differs from -o -"
e2e_refuses_terminal 'speedscope: not writing JSON to a terminal' "'$PYSTITCH' speedscope -i '$data'"
for bad in "--per thread" "--weight time" "--python nope"; do
	# shellcheck disable=SC2086 # the option and its value, split on purpose
	e2e_run "$PYSTITCH" speedscope $bad -i "$data" -o "$E2E_TMP/bad.json" 2>"$E2E_TMP/bad.err"
	status=$?
	if [ $status != 1 ] || ! grep -q 'bad value' "$E2E_TMP/bad.err"; then
		e2e_show "$E2E_TMP/bad.err"
		e2e_fail "speedscope $bad: exit status $status (1 and a message expected)"
	fi
done
e2e_run "$PYSTITCH" speedscope -o "$E2E_TMP/no/such/dir.json" -i "$data" 2>"$E2E_TMP/nodir.err"
status=$?
if [ $status != 1 ] || ! grep -q 'cannot create .*no/such/dir.json' "$E2E_TMP/nodir.err"; then
	e2e_fail "speedscope -o into a missing directory: exit status $status, $(cat "$E2E_TMP/nodir.err")"
fi
head -c 5000 "$data" >"$E2E_TMP/cut.data"
e2e_run "$PYSTITCH" speedscope -o "$E2E_TMP/cut.json" -i "$E2E_TMP/cut.data" 2>"$E2E_TMP/cut.err"
status=$?
[ $status = 2 ] || e2e_fail "speedscope of a truncated capture: exit status $status (2 expected)"
grep -q 'cut.data: offset' "$E2E_TMP/cut.err" ||
	e2e_fail "speedscope of a truncated capture: no message naming the file and offset"
[ ! -e "$E2E_TMP/cut.json" ] || e2e_fail "speedscope wrote a profile of a capture it could not open"
"$PYSTITCH" speedscope --help | grep -q -- '--weight' || e2e_fail "speedscope --help does not list --weight"
exit 0
