# fold_script.awk: folds `pystitch script -F comm,pid,tid,period,ip,sym`
# (or ...,sym,dso) output into folded stacks, independently of `pystitch
# collapse`, for collapse.sh to compare with. Prints unsorted "stack
# count" lines.
#
# Variables (-v):
#   per=comm|pid|tid|none   what starts each stack (default comm)
#   weight=samples|period   count 1 per sample, or sum the periods (default,
#                           as stackcollapse-perf.pl)
#   dso=1                   frame lines end with " (DSO)" (-F ...,dso)
#   annotate=1              with dso=1, stackcollapse-perf.pl --all's marks:
#                           "_[k]" where the DSO is in brackets (but not
#                           [unknown]) or a vmlinux, "_[j]" where it is a
#                           perf map; inlined frames print "(inlined)" in
#                           place of the DSO and get none
# Only samples with call chains (header line, frame lines, blank line).

function flush(   key, i) {
	if (!have)
		return
	key = prefix
	for (i = nframes; i >= 1; i--)
		key = (key == "") ? frame[i] : (key ";" frame[i])
	if (key == "")
		key = "[unknown]"
	count[key] += w
	samples++
	have = 0
}

BEGIN {
	if (per == "")
		per = "comm"
	if (weight == "")
		weight = "period"
}

/^\t/ {
	name = $0
	sub(/^\t */, "", name)
	sub(/^[0-9a-f]+ /, "", name)
	module = ""
	if (dso && match(name, / \([^()]*\)$/)) {
		module = substr(name, RSTART + 2, RLENGTH - 3)
		name = substr(name, 1, RSTART - 1)
	} else
		sub(/ \(inlined\)$/, "", name)
	gsub(/;/, ":", name)
	if (annotate && module ~ /^\[|vmlinux$/ && module !~ /unknown/)
		name = name "_[k]"
	else if (annotate && module ~ /\/tmp\/perf-[0-9]+\.map/ && name !~ /_\[j\]/)
		name = name "_[j]"
	frame[++nframes] = name
	next
}

/^$/ {
	flush()
	next
}

{
	flush()
	# "COMM PID/TID PERIOD " (comm may hold spaces)
	head = $0
	sub(/ $/, "", head)
	period = head
	sub(/.* /, "", period)
	sub(/ +[0-9]+$/, "", head)
	ids = head
	sub(/.* /, "", ids)
	sub(/ +-?[0-9]+\/-?[0-9]+$/, "", head)
	comm = head
	gsub(/ /, "_", comm)
	gsub(/;/, ":", comm)
	split(ids, id, "/")
	if (per == "none")
		prefix = ""
	else if (per == "pid")
		prefix = comm "-" id[1]
	else if (per == "tid")
		prefix = comm "-" id[1] "/" id[2]
	else
		prefix = comm
	w = weight == "period" ? period + 0 : 1
	total_period += period
	nframes = 0
	have = 1
}

END {
	flush()
	for (key in count)
		printf "%s %.0f\n", key, count[key]
	if (totals != "")
		printf "%d %.0f\n", samples, total_period > totals
}
