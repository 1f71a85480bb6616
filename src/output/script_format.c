/* `perf script -F`: the field lists, perf's per-type defaults, and its
 * checks of the fields against what the capture's events record
 * (parse_output_fields() and evsel__check_attr() of perf 6.1). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"

/* every name perf 6.1 takes, in the order of its all_output_options[] */
static const struct {
	const char *name;
	uint64_t field;
} field_names[] = {
	{ "comm", PS_FIELD_COMM },
	{ "tid", PS_FIELD_TID },
	{ "pid", PS_FIELD_PID },
	{ "time", PS_FIELD_TIME },
	{ "cpu", PS_FIELD_CPU },
	{ "event", PS_FIELD_EVENT },
	{ "trace", PS_FIELD_TRACE },
	{ "ip", PS_FIELD_IP },
	{ "sym", PS_FIELD_SYM },
	{ "dso", PS_FIELD_DSO },
	{ "addr", PS_FIELD_ADDR },
	{ "symoff", PS_FIELD_SYMOFF },
	{ "srcline", PS_FIELD_SRCLINE },
	{ "period", PS_FIELD_PERIOD },
	{ "iregs", PS_FIELD_IREGS },
	{ "uregs", PS_FIELD_UREGS },
	{ "brstack", PS_FIELD_BRSTACK },
	{ "brstacksym", PS_FIELD_BRSTACKSYM },
	{ "data_src", PS_FIELD_DATA_SRC },
	{ "weight", PS_FIELD_WEIGHT },
	{ "bpf-output", PS_FIELD_BPF_OUTPUT },
	{ "callindent", PS_FIELD_CALLINDENT },
	{ "insn", PS_FIELD_INSN },
	{ "insnlen", PS_FIELD_INSNLEN },
	{ "brstackinsn", PS_FIELD_BRSTACKINSN },
	{ "brstackoff", PS_FIELD_BRSTACKOFF },
	{ "synth", PS_FIELD_SYNTH },
	{ "phys_addr", PS_FIELD_PHYS_ADDR },
	{ "metric", PS_FIELD_METRIC },
	{ "misc", PS_FIELD_MISC },
	{ "srccode", PS_FIELD_SRCCODE },
	{ "ipc", PS_FIELD_IPC },
	{ "tod", PS_FIELD_TOD },
	{ "data_page_size", PS_FIELD_DATA_PAGE_SIZE },
	{ "code_page_size", PS_FIELD_CODE_PAGE_SIZE },
	{ "ins_lat", PS_FIELD_INS_LAT },
	{ "brstackinsnlen", PS_FIELD_BRSTACKINSNLEN },
	{ "machine_pid", PS_FIELD_MACHINE_PID },
	{ "vcpu", PS_FIELD_VCPU },
};

static const char *const type_prefixes[PS_OUTPUT_TYPES] = {
	[PS_OUTPUT_HW] = "hw",       [PS_OUTPUT_SW] = "sw",       [PS_OUTPUT_TRACE] = "trace",
	[PS_OUTPUT_HW_CACHE] = NULL, [PS_OUTPUT_RAW] = "raw",     [PS_OUTPUT_BREAK] = "break",
	[PS_OUTPUT_OTHER] = NULL,    [PS_OUTPUT_SYNTH] = "synth",
};

#define DEFAULT_FIELDS                                                                             \
	(PS_FIELD_COMM | PS_FIELD_TID | PS_FIELD_CPU | PS_FIELD_TIME | PS_FIELD_EVENT |            \
	 PS_FIELD_IP | PS_FIELD_SYM | PS_FIELD_SYMOFF | PS_FIELD_DSO | PS_FIELD_PERIOD)

static const uint64_t default_fields[PS_OUTPUT_TYPES] = {
	[PS_OUTPUT_HW] = DEFAULT_FIELDS,
	[PS_OUTPUT_SW] = DEFAULT_FIELDS | PS_FIELD_BPF_OUTPUT,
	[PS_OUTPUT_TRACE] = PS_FIELD_COMM | PS_FIELD_TID | PS_FIELD_CPU | PS_FIELD_TIME |
	                    PS_FIELD_EVENT | PS_FIELD_TRACE,
	[PS_OUTPUT_HW_CACHE] = DEFAULT_FIELDS,
	[PS_OUTPUT_RAW] = DEFAULT_FIELDS | PS_FIELD_ADDR | PS_FIELD_DATA_SRC | PS_FIELD_WEIGHT |
	                  PS_FIELD_PHYS_ADDR | PS_FIELD_DATA_PAGE_SIZE | PS_FIELD_CODE_PAGE_SIZE |
	                  PS_FIELD_INS_LAT,
	[PS_OUTPUT_BREAK] = DEFAULT_FIELDS,
	[PS_OUTPUT_OTHER] = DEFAULT_FIELDS,
	[PS_OUTPUT_SYNTH] = PS_FIELD_COMM | PS_FIELD_TID | PS_FIELD_CPU | PS_FIELD_TIME |
	                    PS_FIELD_EVENT | PS_FIELD_IP | PS_FIELD_SYM | PS_FIELD_SYMOFF |
	                    PS_FIELD_DSO | PS_FIELD_SYNTH,
};

/* 'trace' only exists for tracepoints, 'bpf-output' for software events
 * and tracepoints */
static uint64_t invalid_fields(int type)
{
	switch (type) {
	case PS_OUTPUT_TRACE:
		return 0;
	case PS_OUTPUT_SW:
		return PS_FIELD_TRACE;
	default:
		return PS_FIELD_TRACE | PS_FIELD_BPF_OUTPUT;
	}
}

int ps_output_type(uint32_t attr_type)
{
	switch (attr_type) {
	case PERF_TYPE_HARDWARE:
		return PS_OUTPUT_HW;
	case PERF_TYPE_SOFTWARE:
		return PS_OUTPUT_SW;
	case PERF_TYPE_TRACEPOINT:
		return PS_OUTPUT_TRACE;
	case PERF_TYPE_HW_CACHE:
		return PS_OUTPUT_HW_CACHE;
	case PERF_TYPE_RAW:
		return PS_OUTPUT_RAW;
	case PERF_TYPE_BREAKPOINT:
		return PS_OUTPUT_BREAK;
	case 0x80000000u: /* perf's PERF_TYPE_SYNTH */
		return PS_OUTPUT_SYNTH;
	default:
		return PS_OUTPUT_OTHER;
	}
}

static int parse_fields(struct ps_script_format *fmt, const char *spec, char *err, size_t errsz)
{
	char buf[512];
	char *tok, *save = NULL, *list;
	int type = -1;
	enum { CHANGE_DEFAULT, CHANGE_SET, CHANGE_ADD, CHANGE_REMOVE } change = CHANGE_DEFAULT;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errsz, "-F: field list too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	list = strchr(buf, ':');
	if (list) {
		*list++ = 0;
		for (int t = 0; t < PS_OUTPUT_TYPES; t++)
			if (type_prefixes[t] && strcmp(buf, type_prefixes[t]) == 0)
				type = t;
		if (type < 0) {
			snprintf(err, errsz,
			         "-F: invalid event type '%s' (hw, sw, trace, raw, break)", buf);
			return -EINVAL;
		}
		if (!strchr(list, '+') && !strchr(list, '-')) {
			fmt->fields[type] = 0;
			fmt->user_set[type] = true;
		}
	} else {
		list = buf;
		if (!*list) {
			snprintf(err, errsz, "-F: cannot set fields to 'none' for all event types");
			return -EINVAL;
		}
		if (!strchr(list, '+') && !strchr(list, '-'))
			for (int t = 0; t < PS_OUTPUT_TYPES; t++) {
				fmt->fields[t] = 0;
				fmt->user_set[t] = true;
			}
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t field = 0;
		if (*tok == '+' || *tok == '-') {
			if (change == CHANGE_SET)
				goto badmix;
			change = *tok == '+' ? CHANGE_ADD : CHANGE_REMOVE;
			tok++;
		} else {
			if (change != CHANGE_SET && change != CHANGE_DEFAULT)
				goto badmix;
			change = CHANGE_SET;
		}
		for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strcmp(tok, field_names[i].name) == 0)
				field = field_names[i].field;
		if (!field && strcmp(tok, "flags") == 0) {
			/* not a field of a type: one switch for all */
			fmt->print_flags = change != CHANGE_REMOVE;
			continue;
		}
		if (!field) {
			/* perf says "Invalid field requested." and its whole
			 * help; the name is what the user needs */
			snprintf(err, errsz, "-F: invalid field '%s' (see perf script's -F)", tok);
			return -EINVAL;
		}
		for (int t = 0; t < PS_OUTPUT_TYPES; t++) {
			if (type >= 0 && t != type)
				continue;
			if (invalid_fields(t) & field) {
				if (type >= 0) {
					snprintf(err, errsz, "-F: '%s' not valid for %s events",
					         tok, type_prefixes[t]);
					return -EINVAL;
				}
				continue;
			}
			if (change == CHANGE_REMOVE) {
				fmt->fields[t] &= ~field;
				fmt->user_fields[t] &= ~field;
			} else {
				fmt->fields[t] |= field;
				fmt->user_fields[t] |= field;
			}
			fmt->user_set[t] = true;
		}
	}
	return 0;
badmix:
	snprintf(err, errsz, "-F: cannot mix +-field with overridden fields");
	return -EINVAL;
}

/* What perf's evsel__check_attr() checks of the fields script prints. */
static const struct {
	uint64_t field;
	uint64_t sample_bits;
	const char *what;
	const char *field_name;
} needs[] = {
	{ PS_FIELD_IP, PERF_SAMPLE_IP, "IP", "ip" },
	{ PS_FIELD_ADDR, PERF_SAMPLE_ADDR, "ADDR", "addr" },
	{ PS_FIELD_TID | PS_FIELD_PID, PERF_SAMPLE_TID, "TID", "tid" },
	{ PS_FIELD_TIME, PERF_SAMPLE_TIME, "TIME", "time" },
	{ PS_FIELD_CPU, PERF_SAMPLE_CPU, "CPU", "cpu" },
	{ PS_FIELD_DATA_SRC, PERF_SAMPLE_DATA_SRC, "DATA_SRC", "data_src" },
	{ PS_FIELD_WEIGHT, PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT", "weight" },
	{ PS_FIELD_IREGS, PERF_SAMPLE_REGS_INTR, "IREGS", "iregs" },
	{ PS_FIELD_UREGS, PERF_SAMPLE_REGS_USER, "UREGS", "uregs" },
	{ PS_FIELD_PHYS_ADDR, PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR", "phys_addr" },
	{ PS_FIELD_DATA_PAGE_SIZE, PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE", "data_page_size" },
	{ PS_FIELD_CODE_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE", "code_page_size" },
	{ PS_FIELD_INS_LAT, PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT", "ins_lat" },
};

/* Whether a field the type prints lacks its sample bit: perf names the
 * event in a message then (evsel__do_check_stype). */
static bool lacks_field(const struct ps_script_format *fmt, const struct ps_attr *attr)
{
	int t = ps_output_type(attr->type);

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if ((fmt->fields[t] & needs[i].field) &&
		    !(attr->sample_type & needs[i].sample_bits))
			return true;
	return false;
}

const char *ps_script_event_name(const struct ps_script_format *fmt, const struct ps_attr *attr)
{
	if (attr->fallback_name && fmt->fallback[ps_output_type(attr->type)] == attr->index + 1)
		return attr->fallback_name;
	return attr->name;
}

static uint64_t combined_branch_type(const struct ps_reader *reader)
{
	uint64_t type = 0;

	for (size_t i = 0; i < ps_reader_nr_attrs(reader); i++)
		type |= ps_reader_attr(reader, i)->branch_sample_type;
	return type;
}

/* perf drops default fields a capture cannot supply, and refuses the ones
 * the user asked for by name. */
static int check_attr(struct ps_script_format *fmt, const struct ps_attr *attr,
                      uint64_t branch_type, char *err, size_t errsz)
{
	int t = ps_output_type(attr->type);

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (!(fmt->fields[t] & needs[i].field) ||
		    (attr->sample_type & needs[i].sample_bits))
			continue;
		if (fmt->user_fields[t] & needs[i].field) {
			snprintf(
			        err, errsz,
			        "Samples for '%s' event do not have %s attribute set. Cannot print "
			        "'%s' field.",
			        ps_script_event_name(fmt, attr), needs[i].what,
			        needs[i].field_name);
			return -EINVAL;
		}
		fmt->fields[t] &= ~needs[i].field;
	}
	if ((fmt->fields[t] & PS_FIELD_SYMOFF) && !(fmt->fields[t] & PS_FIELD_SYM)) {
		snprintf(err, errsz, "Display of offsets requested but symbol is not selected.");
		return -EINVAL;
	}
	if ((fmt->fields[t] & (PS_FIELD_SRCLINE | PS_FIELD_SRCCODE)) &&
	    !(fmt->fields[t] & PS_FIELD_IP)) {
		snprintf(err, errsz,
		         "Display of source line number requested but sample IP is not selected.");
		return -EINVAL;
	}
	if ((fmt->fields[t] & (PS_FIELD_BRSTACKINSN | PS_FIELD_BRSTACKINSNLEN)) &&
	    !(branch_type & PERF_SAMPLE_BRANCH_ANY)) {
		snprintf(err, errsz,
		         "Display of branch stack assembler requested, but non all-branch filter "
		         "set (hint: perf record -b)");
		return -EINVAL;
	}
	return 0;
}

int ps_script_format_init(struct ps_script_format *fmt, const struct ps_reader *reader,
                          const char *spec, bool use_callchain, bool ns, char *err, size_t errsz)
{
	size_t nr = ps_reader_nr_attrs(reader);

	memset(fmt, 0, sizeof(*fmt));
	memcpy(fmt->fields, default_fields, sizeof(fmt->fields));
	fmt->ns = ns;
	fmt->tep = ps_reader_tep(reader);
	fmt->features = ps_reader_features(reader);
	if (spec && parse_fields(fmt, spec, err, errsz))
		return -EINVAL;
	fmt->use_callchain = false;
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		/* checked as its HEADER_ATTR arrived, with the fields then */
		if (attr->fallback_name && lacks_field(fmt, attr))
			fmt->fallback[ps_output_type(attr->type)] = attr->index + 1;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		if (use_callchain && (attr->sample_type & PERF_SAMPLE_CALLCHAIN))
			fmt->use_callchain = true;
		size_t len = strlen(ps_script_event_name(fmt, attr));
		if (len > fmt->name_width)
			fmt->name_width = len;
	}
	/* tracepoints with callchains show where they fired */
	if (fmt->use_callchain && !fmt->user_set[PS_OUTPUT_TRACE])
		for (size_t i = 0; i < nr; i++) {
			const struct ps_attr *attr = ps_reader_attr(reader, i);
			if (attr->type == PERF_TYPE_TRACEPOINT &&
			    (attr->sample_type & PERF_SAMPLE_CALLCHAIN)) {
				fmt->fields[PS_OUTPUT_TRACE] |=
				        PS_FIELD_IP | PS_FIELD_SYM | PS_FIELD_SYMOFF | PS_FIELD_DSO;
				break;
			}
		}
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		if (strncmp(attr->name, "dummy", 5) == 0)
			continue; /* perf does not check its dummy event */
		if (check_attr(fmt, attr, combined_branch_type(reader), err, errsz))
			return -EINVAL;
		if ((fmt->fields[ps_output_type(attr->type)] & PS_FIELD_TOD) &&
		    !(fmt->features && fmt->features->has_clock_data)) {
			snprintf(err, errsz,
			         "Can't provide 'tod' time, missing clock data. Please record with "
			         "-k/--clockid option.");
			return -EINVAL;
		}
	}
	return 0;
}

bool ps_script_wants_srcline(const struct ps_script_format *fmt)
{
	for (int t = 0; t < PS_OUTPUT_TYPES; t++)
		if (fmt->fields[t] & (PS_FIELD_SRCLINE | PS_FIELD_SRCCODE))
			return true;
	return false;
}
