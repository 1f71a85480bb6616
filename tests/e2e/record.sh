#!/bin/sh
# record: `pystitch record -- COMMAND` end to end, as a user runs it with
# no flag of their own.
#  - CPython 3.12+ (the newest 3.13 or 3.12 found) running
#    tests/programs/pychains.py: with -o FILE.txt, at least 99% of the
#    samples carry exactly the chain the interpreter reported
#    (pychains_check.py);
#  - CPython 3.8-3.11 (the newest found) through pystitch_perf, built on
#    first use into a fresh cache: without -o, an archive named after the
#    script and the time, a table of the hottest Python functions and the
#    commands that convert the archive on stderr; the archive's chains as
#    above;
#  - tests/programs/pyworkers.py under 3.12+: workers forked by
#    multiprocessing and a second interpreter started by subprocess, which
#    forks a worker of its own: each one's function is named;
#  - the outputs, each read by a reader of its own: .svg by
#    flamegraph_check.py (an XML parser), .pb.gz by the npm package
#    pprof-format, .json by Python's json module (speedscope's own
#    reader is speedscope_browser.sh's), .folded line by line;
#  - Ctrl-C half way (SIGINT to record alone): exit status 130, and the
#    output written with the samples until then;
#  - after each, no perf map or jitdump of a recorded process is left in
#    /tmp.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

chains_workload=$e2e_dir/../programs/pychains.py
workers_workload=$e2e_dir/../programs/pyworkers.py
min_samples=400
failed=0
summary=
# the module is built into this cache, as on a user's first run
XDG_CACHE_HOME=$E2E_TMP/cache
export XDG_CACHE_HOME

python=$(e2e_newest_python 13) || python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12+ under \$(pyenv root)/versions (or ~/.pyenv/versions)"
old_python=
for minor in 11 10 9 8; do
	old_python=$(e2e_newest_python "$minor") && break
done
[ -n "$old_python" ] || e2e_skip "no CPython 3.8-3.11 under \$(pyenv root)/versions"
e2e_say "$e2e_name: python: $python; pystitch_perf: $old_python"

# the pids of the processes an output shows, so that what record left in
# /tmp can be looked for (and, should the test fail, removed)
recorded_pids=
note_pids() {
	recorded_pids="$recorded_pids $("$PYSTITCH" script -q -i "$1" -F pid --python native | sort -u | tr '\n' ' ')"
}
# shellcheck disable=SC2317 # called by the trap
remove_leftovers() {
	for pid in $recorded_pids; do
		rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" "/tmp/perf-$pid.pylines"
	done
	e2e_cleanup
}
trap remove_leftovers EXIT
no_maps_left() {
	for pid in $recorded_pids; do
		for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" "/tmp/perf-$pid.pylines"; do
			[ ! -e "$file" ] || e2e_fail "$1: record left $file behind"
		done
	done
}

# record LOG ARGS...: pystitch record ARGS, stderr into $E2E_TMP/LOG; fails
# the test unless it exits 0
record() {
	rc_log=$1
	shift
	e2e_run "$PYSTITCH" record "$@" 2>"$E2E_TMP/$rc_log" || {
		rc_status=$?
		e2e_show "$E2E_TMP/$rc_log"
		e2e_fail "pystitch record $* failed (exit status $rc_status)"
	}
}

# ---- a CPython 3.12+ program, no flags --------------------------------
record py.log -o "$E2E_TMP/py.txt" -- "$python" "$chains_workload" 2 "$E2E_TMP/py.expected"
grep -q 'wrote .*py.txt' "$E2E_TMP/py.log" || e2e_fail "record did not say where it wrote: $(cat "$E2E_TMP/py.log")"
# the text shows threads, not processes: the workload names its own pid
recorded_pids="$recorded_pids $(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/py.expected")"
e2e_chains "record, $(basename "$python")" "$E2E_TMP/py.expected" py.txt
no_maps_left "3.12+ program"

# ---- 3.8-3.11 through pystitch_perf, the default output ----------------
mkdir "$E2E_TMP/default"
(cd "$E2E_TMP/default" && e2e_run "$PYSTITCH" record -- "$old_python" "$chains_workload" 1 \
	"$E2E_TMP/old.expected") 2>"$E2E_TMP/old.log" || {
	e2e_show "$E2E_TMP/old.log"
	e2e_fail "pystitch record -- $old_python failed"
}
archive=$(find "$E2E_TMP/default" -name 'pychains-*.pst')
[ "$(printf '%s\n' "$archive" | grep -c .)" = 1 ] ||
	e2e_fail "no (or more than one) archive named after the script: $(ls -a "$E2E_TMP/default")"
case $(basename "$archive") in
pychains-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9].pst) ;;
*) e2e_fail "the archive's name is not SCRIPT-DATE-TIME.pst: $archive" ;;
esac
grep -q '^    self   total  Python function (file)$' "$E2E_TMP/old.log" ||
	e2e_fail "no table of the hottest Python functions: $(cat "$E2E_TMP/old.log")"
grep -q '^ *[0-9.]*%  *[0-9.]*%  leaf_loop (.*pychains.py)$' "$E2E_TMP/old.log" ||
	e2e_fail "the table does not name leaf_loop: $(cat "$E2E_TMP/old.log")"
grep -q "pystitch flamegraph -i $(basename "$archive") -o pychains-.*\.svg" "$E2E_TMP/old.log" ||
	e2e_fail "no conversion commands: $(cat "$E2E_TMP/old.log")"
ls "$XDG_CACHE_HOME"/pystitch/record-*/build/3.*/_pystitch_perf*.so >/dev/null 2>&1 ||
	e2e_fail "pystitch_perf was not built into the cache"
"$PYSTITCH" script -i "$archive" >"$E2E_TMP/old.txt" 2>"$E2E_TMP/old.err" ||
	e2e_fail "pystitch script -i $archive failed: $(cat "$E2E_TMP/old.err")"
note_pids "$archive"
python_checker=$python
python=$old_python
e2e_chains "record, $(basename "$old_python") (pystitch_perf)" "$E2E_TMP/old.expected" old.txt
python=$python_checker
no_maps_left "3.8-3.11 program"

# ---- workers: fork, subprocess, a forked grandchild --------------------
record workers.log -o "$E2E_TMP/workers.pst" -- "$python" "$workers_workload" 0.6
"$PYSTITCH" collapse -i "$E2E_TMP/workers.pst" --per pid >"$E2E_TMP/workers.folded" ||
	e2e_fail "collapse of the workers' archive failed"
note_pids "$E2E_TMP/workers.pst"
for function in forked_worker grandchild_worker; do
	processes=$(grep "py::$function:" "$E2E_TMP/workers.folded" | cut -d';' -f1 | sort -u | wc -l)
	want=1
	[ "$function" = forked_worker ] && want=2
	[ "$processes" -ge "$want" ] ||
		e2e_fail "workers: $function named in $processes processes, $want expected"
done
e2e_say "workers: forked_worker and grandchild_worker named in every worker"
no_maps_left "workers"

# ---- each output format, read by its own reader ------------------------
record svg.log -o "$E2E_TMP/out.svg" -- "$python" "$chains_workload" 0.5 "$E2E_TMP/svg.expected"
python3 "$e2e_dir/flamegraph_check.py" --python "$E2E_TMP/out.svg" >"$E2E_TMP/svg.folded" ||
	e2e_fail "the SVG does not hold a flame graph with Python frames"
record folded.log -o "$E2E_TMP/out.folded" -- "$python" "$chains_workload" 0.5 "$E2E_TMP/f.expected"
# with lines: pystitch_perf's side file, written by every interpreter record starts
grep -q 'py::leaf_loop:[^;]*pychains\.py:[0-9][0-9]*[; ]' "$E2E_TMP/out.folded" ||
	e2e_fail "no Python frames with their lines in the folded stacks: $(grep -o 'py::leaf_loop:[^;]*' "$E2E_TMP/out.folded" | head -n 1)"
grep -v -q -E '^[^ ]+( [^ ]+)* [0-9]+$' "$E2E_TMP/out.folded" &&
	e2e_fail "a line of the folded stacks is not 'frames count': $(grep -v -E ' [0-9]+$' "$E2E_TMP/out.folded" | head -n 1)"
record pprof.log -o "$E2E_TMP/out.pb.gz" -- "$python" "$chains_workload" 0.5 "$E2E_TMP/p.expected"
npm_dir=${PS_NPM_CACHE:-$abs_top_builddir/.npm-pprof}
if [ ! -f "$npm_dir/node_modules/pprof-format/package.json" ]; then
	e2e_run npm install --prefix "$npm_dir" --no-audit --no-fund --no-save pprof-format@2 \
		>"$E2E_TMP/npm.log" 2>&1 || e2e_skip "npm could not install pprof-format@2"
fi
node "$e2e_dir/pprof_decode.js" "$npm_dir" "$E2E_TMP/out.pb.gz" python >"$E2E_TMP/pprof.python" ||
	e2e_fail "pprof-format could not read the profile"
grep -q 'py::leaf_loop:' "$E2E_TMP/pprof.python" || e2e_fail "no Python frames in the pprof profile"
record json.log -o "$E2E_TMP/out.json" -- "$python" "$chains_workload" 0.5 "$E2E_TMP/j.expected"
python3 - "$E2E_TMP/out.json" "$python $chains_workload 0.5 $E2E_TMP/j.expected" <<'PY' || e2e_fail "the speedscope file does not hold Python frames"
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
frames = doc["shared"]["frames"]
leaf = [i for i, f in enumerate(frames) if f["name"] == "leaf_loop" and f.get("file", "").endswith("pychains.py")]
assert leaf, "no leaf_loop frame"
assert any(leaf[0] in s for p in doc["profiles"] for s in p["samples"]), "no sample in leaf_loop"
# named after the command, cut short ("...") when it is long
name = doc["name"]
assert name and sys.argv[2].startswith(name[:-3] if name.endswith("...") else name), name
PY
e2e_say "formats: .svg, .folded, .pb.gz and .json read back with Python frames"

# ---- Ctrl-C half way --------------------------------------------------
"$PYSTITCH" record -o "$E2E_TMP/int.pst" -- "$python" "$chains_workload" 30 \
	"$E2E_TMP/int.expected" 2>"$E2E_TMP/int.log" &
recorder=$!
sleep 2
kill -INT "$recorder"
wait "$recorder"
status=$?
[ "$status" = 130 ] || { e2e_show "$E2E_TMP/int.log"; e2e_fail "after Ctrl-C, exit status $status (130 expected)"; }
grep -q 'stopped after' "$E2E_TMP/int.log" || e2e_fail "record did not say it stopped: $(cat "$E2E_TMP/int.log")"
"$PYSTITCH" script -i "$E2E_TMP/int.pst" >"$E2E_TMP/int.txt" || e2e_fail "after Ctrl-C, the archive cannot be read"
samples=$(grep -c '^[^[:space:]]' "$E2E_TMP/int.txt")
[ "$samples" -ge 200 ] || e2e_fail "after Ctrl-C, $samples samples written"
grep -q 'py::leaf_loop:' "$E2E_TMP/int.txt" || e2e_fail "after Ctrl-C, no Python frames"
note_pids "$E2E_TMP/int.pst"
no_maps_left "Ctrl-C"
e2e_say "Ctrl-C: exit status 130, $samples samples written"

[ "$failed" = 0 ] || e2e_fail "chains below 99%:$summary"
e2e_say "$e2e_name: all passed$summary"
