# compare_script.awk: compares `perf script` output with `pystitch script`
# output, sample by sample.
#
#   awk -f compare_script.awk [-v name=LABEL] [-v min_identical=PERCENT] \
#       [-v min_samples=N] [-v max_show=N] [-v by_comm=1] [-v libdw_quirks=1] \
#       PERF_OUTPUT PYSTITCH_OUTPUT
#
# Both files are split into samples the same way. A sample is a header line
# followed by its frame lines (they start with a tab) and their srcline
# lines (they start with two spaces and follow a frame line); a blank line
# ends it. Any other line starts the next sample, so outputs without call
# chains (-G, tracepoints without -g) are one sample per line. A blank line
# while no sample is open is the (empty) header line of the next sample, as
# `-F ip,sym` prints it.
#
# Samples are paired in order: the n-th of perf with the n-th of pystitch.
# A pair counts as identical when the whole text of both samples is the
# same, byte for byte. A sample without a partner counts as different.
# Prints one summary line,
#   LABEL: N samples, P% identical
# (both counts when they differ), then the first max_show (default 3)
# differing samples with file:line, line by line: equal lines once behind
# "  = ", differing lines as a "perf" line and a "pystitch" line.
# by_comm=1 adds the same line per command name (the first word of perf's
# header line), for captures of several programs:
#   LABEL: COMM: N samples, P% identical
# Exit status 1 when fewer than min_identical percent (default 100) of the
# samples are identical (with by_comm=1, also of one command's samples), or
# there are fewer than min_samples (default 1).
#
# libdw_quirks=1: the one normalisation allowed, used only to compare
# `pystitch script --libdw-unwind` with Debian's perf 6.1 (libunwind). At a
# stack cut off by the stack-copy limit, that perf prints a bogus last
# frame and loses the last real one, where perf built with libdw prints no
# bogus frame and may print one more real frame. So, per pair, and only
# when the last line of perf's sample (before the blank line) is exactly
#   \tffffffffffffffff [unknown] ([unknown])
# that line is dropped from perf's sample, and the pair is identical if
# pystitch's sample then equals perf's, or equals it followed by exactly
# one extra frame: the lines of one address (one frame line, or the lines
# of its inline chain), of which only the last may end in a dso rather
# than " (inlined)", placed before the blank line. (Two frames at one
# address, self-recursion, are told apart by their dso lines; when perf
# prints both as " (inlined)" only, text cannot tell them from one.) Nothing else is normalised; samples without that
# bogus line must be identical as they are.

BEGIN {
	if (name == "")
		name = "compare_script"
	if (min_identical == "")
		min_identical = 100
	if (min_samples == "")
		min_samples = 1
	if (max_show == "")
		max_show = 3
	bogus = "\tffffffffffffffff [unknown] ([unknown])"
	if (ARGC != 3) {
		printf "%s: usage: awk -f compare_script.awk PERF_OUTPUT PYSTITCH_OUTPUT\n", name
		exit 2
	}
	for (f = 1; f <= 2; f++) {
		fname[f] = ARGV[f]
		read_samples(f, ARGV[f])
		ARGV[f] = ""
	}
	compare()
	exit status
}

# ---- splitting into samples ---------------------------------------------

function open_sample(f, line_nr, line,    n)
{
	n = ++nr[f]
	start[f, n] = line_nr
	nlines[f, n] = 1
	text[f, n, 1] = line
}

function add_line(f, line,    n)
{
	n = nr[f]
	text[f, n, ++nlines[f, n]] = line
}

function read_samples(f, path,    line, line_nr, open, status, previous)
{
	nr[f] = 0
	open = 0
	line_nr = 0
	while ((status = (getline line < path)) > 0) {
		line_nr++
		if (line == "") {
			if (open) {
				add_line(f, line)
				open = 0
			} else {
				open_sample(f, line_nr, line)
				open = 1
			}
		} else if (open && (line ~ /^\t/ || (line ~ /^  / && previous ~ /^\t/))) {
			add_line(f, line)
		} else {
			open_sample(f, line_nr, line)
			open = 1
		}
		previous = line
	}
	if (status < 0) {
		printf "%s: cannot read %s\n", name, path
		exit 2
	}
	close(path)
}

# ---- comparing ------------------------------------------------------------

# Copies sample i of file f into the array cmp[f, 1..ncmp[f]].
function load(f, i,    k)
{
	ncmp[f] = nlines[f, i]
	for (k = 1; k <= ncmp[f]; k++) {
		cmp[f, k] = text[f, i, k]
		line_of[f, k] = start[f, i] + k - 1
	}
}

function frame_address(line)
{
	if (match(line, /^\t *[0-9a-f]+ /))
		return substr(line, 1, RLENGTH)
	return ""
}

# The libdw normalisation of the pair in cmp[] (see the header).
function normalise(    last, k, extra, addr)
{
	last = ncmp[1]
	if (cmp[1, last] == "")
		last--
	if (last < 2 || cmp[1, last] != bogus)
		return
	nr_bogus++
	for (k = last; k < ncmp[1]; k++) {
		cmp[1, k] = cmp[1, k + 1]
		line_of[1, k] = line_of[1, k + 1]
	}
	ncmp[1]--
	last--
	# pystitch may hold one extra frame right after perf's last line
	extra = ncmp[2] - ncmp[1]
	if (extra < 1)
		return
	for (k = 1; k <= last; k++)
		if (cmp[1, k] != cmp[2, k])
			return
	addr = frame_address(cmp[2, last + 1])
	if (addr == "")
		return
	for (k = last + 1; k <= last + extra; k++) {
		if (frame_address(cmp[2, k]) != addr)
			return
		# a line with a dso ends a frame: only the last may have one
		if (k < last + extra && cmp[2, k] !~ / \(inlined\)$/)
			return
	}
	for (k = last + extra + 1; k <= ncmp[2]; k++)
		if (cmp[2, k] != cmp[1, k - extra])
			return
	nr_extra++
	ncmp[2] = ncmp[1]
	for (k = last + 1; k <= ncmp[2]; k++) {
		cmp[2, k] = cmp[2, k + extra]
		line_of[2, k] = line_of[2, k + extra]
	}
}

function same(    k)
{
	if (ncmp[1] != ncmp[2])
		return 0
	for (k = 1; k <= ncmp[1]; k++)
		if (cmp[1, k] != cmp[2, k])
			return 0
	return 1
}

function show_line(k)
{
	if (k <= ncmp[1] && k <= ncmp[2] && cmp[1, k] == cmp[2, k]) {
		printf "  =        %s\n", cmp[1, k]
		return
	}
	if (k <= ncmp[1])
		printf "  perf     %s:%d: %s\n", fname[1], line_of[1, k], cmp[1, k]
	else
		printf "  perf     (no line %d)\n", k
	if (k <= ncmp[2])
		printf "  pystitch %s:%d: %s\n", fname[2], line_of[2, k], cmp[2, k]
	else
		printf "  pystitch (no line %d)\n", k
}

# Shows sample i of each file; -1 = no such sample.
function show(i,    k, max, first_diff, from, to)
{
	printf "sample %d differs: %s:%s vs %s:%s\n", i,
		fname[1], (i <= nr[1] ? start[1, i] : "(none)"),
		fname[2], (i <= nr[2] ? start[2, i] : "(none)")
	max = ncmp[1] > ncmp[2] ? ncmp[1] : ncmp[2]
	first_diff = 0
	for (k = 1; k <= max; k++)
		if (!(k <= ncmp[1] && k <= ncmp[2] && cmp[1, k] == cmp[2, k])) {
			first_diff = k
			break
		}
	# the header, then from two lines before the first difference on
	from = first_diff > 4 ? first_diff - 2 : 2
	to = max
	if (to > first_diff + 12)
		to = first_diff + 12
	show_line(1)
	if (from > 2)
		printf "  ...      (%d equal lines)\n", from - 2
	for (k = from; k <= to; k++)
		show_line(k)
	if (to < max)
		printf "  ...      (%d more lines)\n", max - to
}

# Loads pair i into cmp[] (normalised when asked); returns 1 if identical.
function pair(i)
{
	ncmp[1] = ncmp[2] = 0
	if (i <= nr[1])
		load(1, i)
	if (i <= nr[2])
		load(2, i)
	if (libdw_quirks && i <= nr[1] && i <= nr[2])
		normalise()
	return i <= nr[1] && i <= nr[2] && same()
}

# The share of identical samples as printed: two decimals, and never
# rounded up to 100.00 when it is not all.
function share(identical, total,    percent)
{
	if (total == 0)
		return "0.00"
	percent = sprintf("%.2f", identical * 100 / total)
	if (identical < total && percent == "100.00")
		percent = "99.99"
	return percent
}

# The command name of sample i (first word of its header line, perf's
# when perf has the sample); for the by_comm breakdown.
function comm_of(i,    f, words)
{
	f = i <= nr[1] ? 1 : 2
	if (split(text[f, i, 1], words, " ") == 0)
		return "(no comm)"
	return words[1]
}

function compare(    total, identical, i, counts, note, comm, nr_comms)
{
	total = nr[1] > nr[2] ? nr[1] : nr[2]
	identical = 0
	nr_bogus = 0
	nr_extra = 0
	nr_diff = 0
	nr_comms = 0
	for (i = 1; i <= total; i++) {
		if (by_comm) {
			comm = comm_of(i)
			if (!(comm in comm_total)) {
				comm_order[++nr_comms] = comm
				comm_same[comm] = 0
			}
			comm_total[comm]++
		}
		if (pair(i)) {
			identical++
			if (by_comm)
				comm_same[comm]++
		} else if (nr_diff < max_show) {
			diff_at[++nr_diff] = i
		}
	}
	counts = nr[1] == nr[2] ? nr[1] " samples" : \
		"perf " nr[1] " samples, pystitch " nr[2] " samples"
	note = ""
	if (libdw_quirks)
		note = sprintf(" (libdw normalisation: %d bogus last frames dropped, %d extra last frames allowed)",
			nr_bogus, nr_extra)
	status = 0
	if (identical * 100 < min_identical * total) {
		note = note sprintf("; FAIL: below %s%%", min_identical)
		status = 1
	}
	if (total < min_samples) {
		note = note sprintf("; FAIL: fewer than the %d samples this test needs", min_samples)
		status = 1
	}
	printf "%s: %s, %s%% identical%s\n", name, counts, share(identical, total), note
	# by_comm=1: the same per command name (the threshold applies to each)
	for (i = 1; i <= nr_comms; i++) {
		comm = comm_order[i]
		note = ""
		if (comm_same[comm] * 100 < min_identical * comm_total[comm]) {
			note = sprintf("; FAIL: below %s%%", min_identical)
			status = 1
		}
		printf "%s: %s: %d samples, %s%% identical%s\n", name, comm, comm_total[comm],
			share(comm_same[comm], comm_total[comm]), note
	}
	for (i = 1; i <= nr_diff; i++) {
		pair(diff_at[i])
		show(diff_at[i])
	}
	if (total > identical + nr_diff)
		printf "(%d more differing samples not shown)\n", total - identical - nr_diff
}
