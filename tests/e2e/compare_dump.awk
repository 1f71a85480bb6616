# compare_dump.awk: compares `perf report -D` output with `pystitch dump` output.
#
#   awk -f compare_dump.awk [-v name=TEST] [-v min_samples=N] \
#       [-v details_fatal="SAMPLE ..."] [-v max_show=N] PERF_OUTPUT PYSTITCH_OUTPUT
#
# Both files are parsed the same way. A summary line is
#   [<numbers> ]<0xOFFSET|0> [0xSIZE]: PERF_RECORD_<NAME><fields>
# (perf puts cpu and/or timestamp columns, or "-1 -1", in front; they are
# dropped). Lines after a summary line, up to a blank line or the next summary
# line, are its detail lines. "Aggregated stats:" starts perf's table of
# per-type counts; "<event> stats:" lines start the per-event tables.
#
# Records are matched by (type, offset, n-th occurrence of that type at that
# offset): plain offset matching for ordinary files, order of appearance for
# the records perf unpacks from one PERF_RECORD_COMPRESSED (they all carry
# the offset of that record).
#
# Checks (a failure of any marked [fatal] makes the exit status 1):
#  (a) [fatal] per-type record counts: perf's "Aggregated stats" equal
#      pystitch's, and the number of summary lines per type is equal;
#  (b) [fatal] every SAMPLE: offset, size, misc, pid/tid, ip, period, addr;
#  (c) every summary line, timestamp columns stripped, is identical;
#      [fatal] for SAMPLE MMAP MMAP2 COMM FORK EXIT, reported for the others;
#  (d) [fatal] SAMPLE MMAP MMAP2 COMM FORK EXIT come out in perf's order;
#  (e) detail lines, without perf's session lines (" ... thread:",
#      " ...... dso:", ": unhandled!"), are identical; fatal for the types
#      listed in details_fatal, reported for the others;
#  and the capture holds at least min_samples samples (default 1).

function parse_summary(line,    at, prefix, rest, nr, token)
{
	at = index(line, "PERF_RECORD_")
	if (at == 0)
		return 0
	prefix = substr(line, 1, at - 1)
	if (prefix !~ /^(-?[0-9]+ )*(0x[0-9a-f]+|0) \[0x[0-9a-f]+\]: $/)
		return 0
	nr = split(prefix, token, " ")
	P_offset = token[nr - 1]
	if (P_offset == "0")
		P_offset = "0x0"
	P_size = substr(token[nr], 2, length(token[nr]) - 3)
	rest = substr(line, at + 12)
	if (!match(rest, /^[A-Z0-9_]+/))
		return 0
	P_type = substr(rest, 1, RLENGTH)
	P_fields = substr(rest, RLENGTH + 1)
	return 1
}

function is_session_line(line)
{
	return line ~ /^ \.\.\. thread: / || line ~ /^ \.\.\.\.\.\. dso: / ||
	       line == ": unhandled!"
}

# "FILE:LINE" of record index_ of a side.
function where(side, index_)
{
	return file[side] ":" R_lineno[side, index_]
}

# Keeps a problem report for after the summary line, at most max_show a kind.
function fail_note(kind, text)
{
	shown[kind]++
	if (shown[kind] <= max_show)
		notes = notes "  " text "\n"
	else if (shown[kind] == max_show + 1)
		notes = notes "  ... (more " kind " problems not shown)\n"
}

# Splits a SAMPLE summary "(IP, 0xMISC): PID/TID: 0xIP period: N addr: 0xA"
# into S_misc, S_pidtid, S_ip, S_period, S_addr. Returns 0 if it does not fit.
function parse_sample(fields,    nr, part)
{
	nr = split(fields, part, " ")
	if (nr != 8 || part[1] != "(IP," || part[5] != "period:" || part[7] != "addr:")
		return 0
	S_misc = part[2]
	sub(/\):$/, "", S_misc)
	S_pidtid = part[3]
	sub(/:$/, "", S_pidtid)
	S_ip = part[4]
	S_period = part[6]
	S_addr = part[8]
	return 1
}

function sample_diff(left, right,    text, lmisc, lpidtid, lip, lperiod, laddr)
{
	if (!parse_sample(left))
		return "perf's sample line has an unexpected shape"
	lmisc = S_misc; lpidtid = S_pidtid; lip = S_ip; lperiod = S_period; laddr = S_addr
	if (!parse_sample(right))
		return "pystitch's sample line has an unexpected shape"
	text = ""
	if (lmisc != S_misc) text = text " misc(" lmisc "|" S_misc ")"
	if (lpidtid != S_pidtid) text = text " pid/tid(" lpidtid "|" S_pidtid ")"
	if (lip != S_ip) text = text " ip(" lip "|" S_ip ")"
	if (lperiod != S_period) text = text " period(" lperiod "|" S_period ")"
	if (laddr != S_addr) text = text " addr(" laddr "|" S_addr ")"
	return text == "" ? "" : "fields differ (perf|pystitch):" text
}

# "LEAD TYPE n, TYPE n" for the types counted in tally, in order of appearance.
function by_type(lead, tally,    n, text)
{
	text = ""
	for (n = 1; n <= nr_types; n++)
		if (type_order[n] in tally) {
			text = text lead type_order[n] " " tally[type_order[n]]
			lead = ", "
		}
	return text
}

BEGIN {
	if (name == "")
		name = "compare"
	if (max_show == "")
		max_show = 8
	if (min_samples == "")
		min_samples = 1
	split("SAMPLE MMAP MMAP2 COMM FORK EXIT", list, " ")
	for (i in list)
		key_type[list[i]] = 1
	split(details_fatal, list, " ")
	for (i in list)
		detail_fatal_type[list[i]] = 1
	if (ARGC != 3) {
		print name ": FAIL: usage: awk -f compare_dump.awk PERF_OUTPUT PYSTITCH_OUTPUT"
		exit 2
	}
	file[1] = ARGV[1]
	file[2] = ARGV[2]
	N[1] = N[2] = 0
	side = 0
	failed = 0
}

# An empty file has no first line; its side then just stays empty.
FNR == 1 {
	side = (side == 0 && FILENAME == ARGV[1]) ? 1 : 2
	current = 0
	stats_table = ""
	has_aggregated[side] = 0
}

{
	line = $0
	sub(/\r$/, "", line)
}

line ~ /^Aggregated stats:/ {
	stats_table = "Aggregated"
	has_aggregated[side] = 1
	current = 0
	next
}

stats_table != "" && line ~ /^[^ ].* stats:$/ {
	stats_table = substr(line, 1, length(line) - 7)
	if (!((side, stats_table) in has_table)) {
		has_table[side, stats_table] = 1
		tables[side] = tables[side] SUBSEP stats_table
	}
	next
}

stats_table != "" && line ~ /^ *[A-Za-z0-9_]+ events: +[0-9]+/ {
	split(line, part, " ")
	stat[side, stats_table, part[1]] = part[3] + 0
	if (!((stats_table, part[1]) in stat_name)) {
		stat_name[stats_table, part[1]] = 1
		stat_order[++nr_stats] = stats_table SUBSEP part[1]
	}
	next
}

parse_summary(line) {
	i = ++N[side]
	R_type[side, i] = P_type
	R_offset[side, i] = P_offset
	R_size[side, i] = P_size
	R_fields[side, i] = P_fields
	R_text[side, i] = P_offset " [" P_size "]: PERF_RECORD_" P_type P_fields
	R_lineno[side, i] = FNR
	R_details[side, i] = ""
	count[side, P_type]++
	if (!(P_type in types)) {
		types[P_type] = 1
		type_order[++nr_types] = P_type
	}
	key = P_type "|" P_offset
	seen = ++occurrence[side, key]
	index_of[side, key "|" seen] = i
	R_key[side, i] = key "|" seen
	current = i
	stats_table = ""
	next
}

line == "" || line ~ /^0x[0-9a-f]+@.* \[0x[0-9a-f]+\]: event: [0-9]+$/ || line ~ /^0@/ {
	current = 0
	next
}

current && !is_session_line(line) {
	R_details[side, current] = R_details[side, current] line "\n"
	next
}

END {
	if (ARGC != 3)
		exit 2

	# (a) per-type counts
	if (!has_aggregated[1]) {
		fail_note("stats", "perf printed no \"Aggregated stats:\" block")
		failed = 1
	}
	if (!has_aggregated[2]) {
		fail_note("stats", "pystitch printed no \"Aggregated stats:\" block")
		failed = 1
	}
	stats_bad = 0
	for (n = 1; n <= nr_stats; n++) {
		split(stat_order[n], part, SUBSEP)
		if (part[1] != "Aggregated")
			continue
		left = ((1, "Aggregated", part[2]) in stat) ? stat[1, "Aggregated", part[2]] : "none"
		right = ((2, "Aggregated", part[2]) in stat) ? stat[2, "Aggregated", part[2]] : "none"
		if (left != right) {
			fail_note("stats", "Aggregated stats: " part[2] " events: perf " left ", pystitch " right)
			stats_bad++
		}
	}
	# Per-event tables ("cpu-clock stats:") are compared when pystitch prints them.
	event_tables = 0
	if (tables[2] != "") {
		for (n = 1; n <= nr_stats; n++) {
			split(stat_order[n], part, SUBSEP)
			if (part[1] == "Aggregated")
				continue
			event_tables = 1
			left = ((1, part[1], part[2]) in stat) ? stat[1, part[1], part[2]] : "none"
			right = ((2, part[1], part[2]) in stat) ? stat[2, part[1], part[2]] : "none"
			if (left != right) {
				fail_note("stats", part[1] " stats: " part[2] " events: perf " left ", pystitch " right)
				stats_bad++
			}
		}
	}
	if (stats_bad)
		failed = 1
	lines_bad = 0
	for (n = 1; n <= nr_types; n++) {
		type = type_order[n]
		left = count[1, type] + 0
		right = count[2, type] + 0
		if (left != right) {
			fail_note("count", "PERF_RECORD_" type " summary lines: perf " left ", pystitch " right)
			lines_bad++
		}
	}
	if (lines_bad)
		failed = 1

	# (b), (c), (e): matched records
	equal = 0
	samples_equal = 0
	details_checked = 0
	details_equal = 0
	for (i = 1; i <= N[1]; i++) {
		type = R_type[1, i]
		fatal = (type in key_type)
		if (!((2, R_key[1, i]) in index_of)) {
			missing[type]++
			if (fatal) {
				failed = 1
				fail_note("missing", "missing in pystitch: " where(1, i) ": " R_text[1, i])
			}
			continue
		}
		j = index_of[2, R_key[1, i]]
		matched[j] = i
		if (R_text[1, i] == R_text[2, j]) {
			equal++
			if (type == "SAMPLE")
				samples_equal++
		} else {
			differ[type]++
			why = ""
			if (R_size[1, i] != R_size[2, j])
				why = "size " R_size[1, i] " vs " R_size[2, j] "; "
			if (type == "SAMPLE")
				why = why sample_diff(R_fields[1, i], R_fields[2, j])
			if (fatal)
				failed = 1
			fail_note(fatal ? "line" : "other-line", (fatal ? "" : "(not fatal) ") "PERF_RECORD_" type " differs" (why != "" ? ": " why : "") \
				"\n    perf     " where(1, i) ": " R_text[1, i] \
				"\n    pystitch " where(2, j) ": " R_text[2, j])
		}
		if (R_details[2, j] != "" || (type in detail_fatal_type)) {
			details_checked++
			if (R_details[1, i] == R_details[2, j])
				details_equal++
			else {
				detail_differ[type]++
				dfatal = (type in detail_fatal_type)
				if (dfatal)
					failed = 1
				nl = split(R_details[1, i], left_lines, "\n")
				nr = split(R_details[2, j], right_lines, "\n")
				for (k = 1; k <= nl || k <= nr; k++)
					if (left_lines[k] != right_lines[k])
						break
				fail_note(dfatal ? "detail" : "other-detail", (dfatal ? "" : "(not fatal) ") "detail line " k " of PERF_RECORD_" type " at " R_offset[1, i] " differs" \
					"\n    perf     " where(1, i) ": " (k <= nl - 1 ? "\"" left_lines[k] "\"" : "(no more lines)") \
					"\n    pystitch " where(2, j) ": " (k <= nr - 1 ? "\"" right_lines[k] "\"" : "(no more lines)"))
				delete left_lines
				delete right_lines
			}
		}
	}
	for (j = 1; j <= N[2]; j++) {
		if (j in matched)
			continue
		type = R_type[2, j]
		extra[type]++
		if (type in key_type) {
			failed = 1
			fail_note("extra", "not in perf's output: " where(2, j) ": " R_text[2, j])
		} else
			fail_note("other-extra", "(not fatal) not in perf's output: " where(2, j) ": " R_text[2, j])
	}

	# (d) order of the time-ordered kernel records
	order_bad = 0
	last = 0
	for (i = 1; i <= N[1]; i++) {
		if (!(R_type[1, i] in key_type) || !((2, R_key[1, i]) in index_of))
			continue
		j = index_of[2, R_key[1, i]]
		if (j < last) {
			order_bad++
			fail_note("order", "order differs: perf delivers " where(1, i) " (" R_type[1, i] " " R_offset[1, i] \
				") after " where(1, last_i) " (" R_type[1, last_i] " " R_offset[1, last_i] "), pystitch prints it before (" where(2, j) ")")
		} else {
			last = j
			last_i = i
		}
	}
	if (order_bad)
		failed = 1

	samples = count[1, "SAMPLE"] + 0
	if (samples < min_samples) {
		failed = 1
		fail_note("capture", "the capture holds " samples " samples, fewer than the " min_samples " this test needs")
	}

	# summary
	text = name ": " samples " samples, " N[1] " records"
	if (equal == N[1] && N[1] == N[2])
		text = text ", all summary lines equal"
	else {
		text = text ", " equal "/" N[1] " summary lines equal (pystitch printed " N[2] ")"
		text = text by_type("; differ: ", differ) by_type("; missing: ", missing) \
			by_type("; extra: ", extra)
	}
	if (details_checked)
		text = text ", detail lines equal for " details_equal "/" details_checked " records"
	else
		text = text ", no detail lines compared"
	if (!event_tables && tables[1] != "")
		text = text " (pystitch printed no per-event stats)"
	if (stats_bad)
		text = text ", " stats_bad " stats counts differ"
	if (order_bad)
		text = text ", " order_bad " records out of order"
	print text
	printf "%s", notes
	print name ": " (failed ? "FAIL" : "PASS")
	exit failed
}
