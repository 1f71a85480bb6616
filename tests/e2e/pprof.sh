#!/bin/sh
# pprof: `pystitch pprof` on a capture of tests/programs/pychains.py run by
# the newest CPython 3.12 under pyenv with -X perf, decoded by an
# independent reader, the npm package pprof-format under Node.js
# (pprof_decode.js, which also checks that every id the profile refers to
# exists and that string 0 is ""). The decoded samples, folded, must equal
# `pystitch collapse --per tid` for both values (sample counts and
# periods); the number of samples and the sum of periods must be those of
# `pystitch script`; the Python frames must be functions named by their
# qualified names in pychains.py, on the call chains the interpreter
# itself reported; inline chains must be lines of one location. Also
# --python only, -o - and errors.
# The package is installed once into PS_NPM_CACHE (default
# $abs_top_builddir/.npm-pprof, removed by make clean).
# shellcheck disable=SC2016 # awk programs in single quotes
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

command -v node >/dev/null 2>&1 ||
	e2e_skip "Node.js is not installed (Debian/Ubuntu: apt-get install nodejs npm): cannot decode the profile"
command -v npm >/dev/null 2>&1 ||
	e2e_skip "npm is not installed (Debian/Ubuntu: apt-get install npm): cannot install pprof-format"
npm_dir=${PS_NPM_CACHE:-$abs_top_builddir/.npm-pprof}
if [ ! -f "$npm_dir/node_modules/pprof-format/package.json" ]; then
	e2e_run npm install --prefix "$npm_dir" --no-audit --no-fund --no-save pprof-format@2 \
		>"$E2E_TMP/npm.log" 2>&1 || {
		e2e_show "$E2E_TMP/npm.log"
		e2e_skip "npm could not install pprof-format@2 into $npm_dir (no access to the npm registry?)"
	}
fi
python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions)"
e2e_say "$e2e_name: python: $python"

failed=0

# pprof OUTPUT ARGS...: `pystitch pprof -o $E2E_TMP/OUTPUT ARGS`.
pprof() {
	pp_out=$1
	shift
	e2e_run "$PYSTITCH" pprof --buildid-dir "$E2E_TMP/buildid-cache" -o "$E2E_TMP/$pp_out" "$@" \
		2>"$E2E_TMP/$pp_out.err" || {
		pp_status=$?
		e2e_show "$E2E_TMP/$pp_out.err"
		e2e_fail "pystitch pprof $* failed (exit status $pp_status)"
	}
}

# decode PROFILE MODE OUTPUT: pprof_decode.js's MODE output into $E2E_TMP/OUTPUT.
decode() {
	node "$e2e_dir/pprof_decode.js" "$npm_dir" "$E2E_TMP/$1" "$2" >"$E2E_TMP/$3" \
		2>"$E2E_TMP/$3.err" || {
		e2e_show "$E2E_TMP/$3.err"
		e2e_fail "pprof-format could not decode $1 ($2)"
	}
}

# collapse OUTPUT ARGS...: `pystitch collapse ARGS`, sorted, into $E2E_TMP/OUTPUT.
collapse() {
	co_out=$1
	shift
	e2e_run "$PYSTITCH" collapse --buildid-dir "$E2E_TMP/buildid-cache" "$@" \
		2>"$E2E_TMP/$co_out.err" | LC_ALL=C sort >"$E2E_TMP/$co_out" ||
		e2e_fail "pystitch collapse $* failed"
}

# check_folds LABEL PROFILE WEIGHTS ARGS...: the profile's samples, folded,
# against collapse --per tid with the same ARGS, for each of WEIGHTS.
check_folds() {
	cf_label=$1
	cf_profile=$2
	cf_weights=$3
	shift 3
	for cf_weight in $cf_weights; do
		decode "$cf_profile" "fold-$cf_weight" "fold-$cf_label-$cf_weight.unsorted"
		LC_ALL=C sort "$E2E_TMP/fold-$cf_label-$cf_weight.unsorted" >"$E2E_TMP/fold-$cf_label-$cf_weight"
		collapse "collapse-$cf_label-$cf_weight" --per tid --weight "$cf_weight" "$@"
		if cmp -s "$E2E_TMP/collapse-$cf_label-$cf_weight" "$E2E_TMP/fold-$cf_label-$cf_weight"; then
			e2e_say "$e2e_name: $cf_label --weight $cf_weight: $(wc -l <"$E2E_TMP/fold-$cf_label-$cf_weight") stacks identical to collapse"
		else
			e2e_say "$e2e_name: $cf_label --weight $cf_weight: the profile's stacks differ from collapse (< collapse, > profile):"
			diff "$E2E_TMP/collapse-$cf_label-$cf_weight" "$E2E_TMP/fold-$cf_label-$cf_weight" |
				cut -c 1-200 | head -n 10 | sed 's/^/    /'
			failed=1
		fi
	done
}

# ---- capture ----------------------------------------------------------
data=$E2E_TMP/python.data
E2E_PY_DATA=$data
e2e_record "$data" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$E2E_PY_DATA")
e2e_python_forget "$py_pid"

pprof python.pb.gz -i "$data"
gzip -t "$E2E_TMP/python.pb.gz" || e2e_fail "the profile is not gzipped"
decode python.pb.gz json python.json
check_folds merged python.pb.gz "samples period" -i "$data"

# totals: every sample of script, every period
e2e_pystitch_script period.txt -F period -i "$data"
samples=$(grep -c . "$E2E_TMP/period.txt")
period=$("$AWK" '{ sum += $1 } END { printf "%.0f\n", sum }' "$E2E_TMP/period.txt")
[ "$samples" -ge 100 ] || e2e_fail "only $samples samples"
for weight in samples period; do
	total=$("$AWK" '{ sum += $NF } END { printf "%.0f\n", sum }' "$E2E_TMP/fold-merged-$weight")
	case $weight in
	samples) want=$samples ;;
	*) want=$period ;;
	esac
	[ "$total" = "$want" ] || {
		e2e_say "$e2e_name: total of the $weight values $total, script has $want"
		failed=1
	}
done
e2e_say "$e2e_name: $samples samples, period $period"

# header: sample types of a cpu-clock capture, labels, mappings
header=$(head -n 1 "$E2E_TMP/python.json")
for want in '"sampleTypes":[["samples","count"],["cpu","nanoseconds"]]' \
	'"periodType":["cpu","nanoseconds"]' '"defaultSampleType":"cpu"' \
	'"filename":"[kernel.kallsyms]"' 'libpython3.12'; do
	case $header in
	*"$want"*) ;;
	*) e2e_fail "the profile's header lacks $want: $(printf '%s' "$header" | cut -c 1-300)" ;;
	esac
done
printf '%s\n' "$header" | grep -q '"buildId":"[0-9a-f]\{40\}"' || e2e_fail "no mapping has a build id"
printf '%s\n' "$header" | grep -q '"timeNanos":"1[0-9]\{18\}"' || e2e_fail "no start time"
grep -q "\"labels\":{\"pid\":$py_pid,\"tid\":$py_pid,\"comm\":\"python3[^\"]*\"}" "$E2E_TMP/python.json" ||
	e2e_fail "no sample labelled pid $py_pid, tid $py_pid, comm python3"

# Python frames: functions named by their qualified names, in pychains.py
for function in stage_a stage_b stage_c leaf_loop worker_outer worker_leaf Shape.area; do
	grep -q "{\"name\":\"$function\",\"system\":\"py::$function:[^\"]*/pychains.py\",\"file\":\"[^\"]*/pychains.py\",\"mapping\":0}" \
		"$E2E_TMP/python.json" || e2e_fail "no Python function $function in pychains.py"
done

# inline chains: several lines in one location where script has inlined frames
e2e_pystitch_script script.txt -F ip,sym -i "$data"
if grep -q '(inlined)' "$E2E_TMP/script.txt"; then
	node -e '
		const { Profile } = require(process.argv[1] + "/node_modules/pprof-format");
		const p = Profile.decode(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[2])));
		process.exit(p.location.some((l) => l.line.length > 1 && Number(l.mappingId) > 0) ? 0 : 1);
	' "$npm_dir" "$E2E_TMP/python.pb.gz" || e2e_fail "script has inlined frames, no location has several lines"
fi

# --python only: Python stacks as the interpreter reported its chains
pprof only.pb.gz --python only -i "$data"
check_folds only only.pb.gz samples --python only -i "$data"
decode only.pb.gz python only-python.txt
for function in leaf_loop worker_leaf; do
	chain=$(grep "py::$function:[^;]*\$" "$E2E_TMP/python.expected" | head -n 1)
	[ -n "$chain" ] || e2e_fail "pychains.py recorded no chain for $function"
	grep -q -x -F "$chain" "$E2E_TMP/only-python.txt" ||
		e2e_fail "--python only: no sample with the chain of $function ($chain)"
done
e2e_say "$e2e_name: python chains of leaf_loop and worker_leaf found"

# -o - writes the same bytes to stdout
e2e_run "$PYSTITCH" pprof --buildid-dir "$E2E_TMP/buildid-cache" -o - -i "$data" \
	>"$E2E_TMP/stdout.pb.gz" 2>"$E2E_TMP/stdout.err" || e2e_fail "pprof -o - failed"
cmp -s "$E2E_TMP/stdout.pb.gz" "$E2E_TMP/python.pb.gz" || e2e_fail "-o - differs from -o FILE"

# without -o: ./profile.pb.gz, and one line on stderr says so (not with -q)
(cd "$E2E_TMP" && e2e_run "$PYSTITCH" pprof --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" \
	2>"$E2E_TMP/default.err") || e2e_fail "pprof without -o failed"
cmp -s "$E2E_TMP/profile.pb.gz" "$E2E_TMP/python.pb.gz" || e2e_fail "the default profile.pb.gz differs from -o FILE"
grep -q '^pystitch: pprof: wrote profile.pb.gz ([0-9]* samples, [0-9]* bytes)$' "$E2E_TMP/default.err" ||
	e2e_fail "pprof without -o did not say what it wrote: $(cat "$E2E_TMP/default.err")"
rm -f "$E2E_TMP/profile.pb.gz"
(cd "$E2E_TMP" && e2e_run "$PYSTITCH" pprof -q --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" \
	2>"$E2E_TMP/quiet.err") || e2e_fail "pprof -q without -o failed"
[ -s "$E2E_TMP/quiet.err" ] && e2e_fail "pprof -q printed: $(cat "$E2E_TMP/quiet.err")"
rm -f "$E2E_TMP/profile.pb.gz"
e2e_say "$e2e_name: without -o: profile.pb.gz, named on stderr"

# a terminal as standard output is refused, with one line (script(1)
# gives the command a terminal)
e2e_refuses_terminal 'pprof: not writing a gzipped profile to a terminal' "'$PYSTITCH' pprof -o - -i '$data'"

# errors: bad values, an output that cannot be created, a damaged capture
for bad in "--python nope" "--pid x" "-o ''"; do
	eval "set -- $bad"
	e2e_run "$PYSTITCH" pprof "$@" -i "$data" >"$E2E_TMP/bad.txt" 2>"$E2E_TMP/bad.err"
	status=$?
	if [ $status != 1 ] || ! grep -q 'bad value' "$E2E_TMP/bad.err"; then
		e2e_show "$E2E_TMP/bad.err"
		e2e_fail "pprof $bad: exit status $status (1 and a message expected)"
	fi
done
e2e_run "$PYSTITCH" pprof -o "$E2E_TMP/no/such/dir.pb.gz" -i "$data" 2>"$E2E_TMP/nodir.err"
status=$?
if [ $status != 1 ] || ! grep -q 'cannot create .*no/such/dir.pb.gz' "$E2E_TMP/nodir.err"; then
	e2e_fail "pprof -o into a missing directory: exit status $status, $(cat "$E2E_TMP/nodir.err")"
fi
head -c 5000 "$data" >"$E2E_TMP/cut.data"
e2e_run "$PYSTITCH" pprof -o "$E2E_TMP/cut.pb.gz" -i "$E2E_TMP/cut.data" 2>"$E2E_TMP/cut.err"
status=$?
[ $status = 2 ] || e2e_fail "pprof of a truncated capture: exit status $status (2 expected)"
grep -q 'cut.data: offset' "$E2E_TMP/cut.err" || e2e_fail "pprof of a truncated capture: no message naming the file and offset"
[ ! -e "$E2E_TMP/cut.pb.gz" ] || e2e_fail "pprof wrote a profile of a capture it could not open"
"$PYSTITCH" pprof --help | grep -q -- '--output' || e2e_fail "pprof --help does not list --output"
exit $failed
