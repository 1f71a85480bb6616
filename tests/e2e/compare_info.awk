# compare_info.awk: compares `perf report --header-only` with `pystitch info`.
#
#   awk -f compare_info.awk [-v name=TEST] PERF_OUTPUT PYSTITCH_OUTPUT
#
# Both files are read as "[# ]key : value" lines. Keys are compared without
# case, blanks, '_' and '-' ("os release" = "osrelease"); values without
# trailing blanks. "event" lines are reduced to the event name, the text
# between "name = " and the next ",", and compared as an ordered list.
#
# Fatal: a required item (hostname, os release, arch, nrcpus online/avail,
# cmdline, the event names) missing from pystitch's output or different;
# an optional item (perf version, cpudesc, cpuid, total memory) that pystitch
# prints with a different value.

function normalize_key(key)
{
	key = tolower(key)
	gsub(/[ _-]/, "", key)
	return key
}

function note(text)
{
	notes = notes "  " text "\n"
}

BEGIN {
	if (name == "")
		name = "compare_info"
	nr_required = split("hostname osrelease arch nrcpusonline nrcpusavail cmdline", required, " ")
	nr_optional = split("perfversion cpudesc cpuid totalmemory", optional, " ")
	label["hostname"] = "hostname"
	label["osrelease"] = "os release"
	label["arch"] = "arch"
	label["nrcpusonline"] = "nrcpus online"
	label["nrcpusavail"] = "nrcpus avail"
	label["cmdline"] = "cmdline"
	label["perfversion"] = "perf version"
	label["cpudesc"] = "cpudesc"
	label["cpuid"] = "cpuid"
	label["totalmemory"] = "total memory"
	if (ARGC != 3) {
		print name ": FAIL: usage: awk -f compare_info.awk PERF_OUTPUT PYSTITCH_OUTPUT"
		exit 2
	}
	file[1] = ARGV[1]
	file[2] = ARGV[2]
	side = 0
}

# An empty file has no first line; its side then just stays empty.
FNR == 1 {
	side = (side == 0 && FILENAME == ARGV[1]) ? 1 : 2
}

{
	line = $0
	sub(/\r$/, "", line)
	sub(/^# */, "", line)
	if (!match(line, /^[A-Za-z][A-Za-z0-9 _-]*[A-Za-z0-9] *: /))
		next
	key = normalize_key(substr(line, 1, RLENGTH))
	sub(/:$/, "", key)
	value = substr(line, RLENGTH + 1)
	sub(/[ \t]+$/, "", value)
	if (key == "event") {
		if (value !~ /^name = /)
			next
		value = substr(value, 8)
		comma = index(value, ",")
		if (comma)
			value = substr(value, 1, comma - 1)
		events[side] = events[side] (nr_events[side] ? ", " : "") value
		nr_events[side]++
		next
	}
	if (!((side, key) in item)) {
		item[side, key] = value
		lineno[side, key] = FNR
	}
}

END {
	if (ARGC != 3)
		exit 2
	failed = 0
	agreed = ""
	for (i = 1; i <= nr_required + nr_optional; i++) {
		key = i <= nr_required ? required[i] : optional[i - nr_required]
		if (!((1, key) in item)) {
			if (i <= nr_required)
				note("perf printed no \"" label[key] "\" (feature missing from the capture?)")
			continue
		}
		if (!((2, key) in item)) {
			if (i <= nr_required) {
				failed = 1
				note("pystitch printed no \"" label[key] "\"; perf " file[1] ":" lineno[1, key] ": " item[1, key])
			}
			continue
		}
		if (item[1, key] != item[2, key]) {
			failed = 1
			note(label[key] " differs\n    perf     " file[1] ":" lineno[1, key] ": " item[1, key] \
				"\n    pystitch " file[2] ":" lineno[2, key] ": " item[2, key])
			continue
		}
		agreed = agreed (agreed == "" ? "" : ", ") label[key]
	}
	if (events[1] != events[2]) {
		failed = 1
		note("event names differ\n    perf     " events[1] "\n    pystitch " events[2])
	} else
		agreed = agreed (agreed == "" ? "" : ", ") nr_events[1] " event names (" events[1] ")"
	print name ": agree: " (agreed == "" ? "nothing" : agreed)
	printf "%s", notes
	print name ": " (failed ? "FAIL" : "PASS")
	exit failed
}
