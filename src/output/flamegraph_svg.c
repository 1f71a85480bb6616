/* Drawing the call tree of flamegraph.c as one self-contained SVG: a
 * <rect> per frame wide enough to see (its data- attributes hold the name
 * and the exact weights the script and tests read), the controls, and the
 * script of flamegraph_script.c. The first picture is computed here, so
 * opening a big graph runs no script over its frames. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph_priv.h"
#include "output/sink.h"

#define FRAME_HEIGHT 16
#define FONT_SIZE 12
/* the advance of a monospace font at FONT_SIZE, for fitting names */
#define CHAR_WIDTH 7.2
#define PAD_X 10
#define PAD_TOP 64
#define PAD_BOTTOM 32

struct palette {
	const char *class_name, *legend;
	double hue, hue_span, saturation, lightness;
};

/* indexed by enum ps_flame_kind; hue in degrees */
static const struct palette palettes[PS_FLAME_KINDS] = {
	[PS_FLAME_ROOT] = { "root", NULL, 0, 0, 0, 0.74 },
	[PS_FLAME_PROCESS] = { "proc", NULL, 265, 30, 0.30, 0.72 },
	[PS_FLAME_PYTHON] = { "py", "Python", 95, 50, 0.55, 0.52 },
	[PS_FLAME_NATIVE] = { "nat", "native", 0, 28, 0.75, 0.62 },
	[PS_FLAME_INTERPRETER] = { "cpy", "CPython", 44, 16, 0.85, 0.55 },
	[PS_FLAME_KERNEL] = { "k", "kernel", 195, 30, 0.60, 0.65 },
	[PS_FLAME_OTHER] = { "oth", NULL, 0, 0, 0, 0.80 },
};

static uint32_t hash_name(const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

static double hue_to_channel(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

/* The same name always gets the same colour of its kind's palette, so two
 * graphs of the same program can be compared by eye. */
static void frame_colour(const struct flame_node *node, char out[8])
{
	const struct palette *palette = &palettes[node->kind & ~PS_FLAME_INLINED];
	uint32_t h = hash_name(node->name, node->name_len);
	double hue = palette->hue + palette->hue_span * (double)(h & 0xffff) / 65535.0;
	double lightness = palette->lightness + 0.08 * (double)((h >> 16) & 0xff) / 255.0;
	double s = palette->saturation, q, p, rgb[3];

	if (node->kind & PS_FLAME_INLINED)
		lightness += 0.12;
	if (lightness > 0.92)
		lightness = 0.92;
	hue = hue >= 360 ? hue - 360 : hue;
	q = lightness < 0.5 ? lightness * (1 + s) : lightness + s - lightness * s;
	p = 2 * lightness - q;
	rgb[0] = hue_to_channel(p, q, hue / 360 + 1.0 / 3);
	rgb[1] = hue_to_channel(p, q, hue / 360);
	rgb[2] = hue_to_channel(p, q, hue / 360 - 1.0 / 3);
	out[0] = '#';
	for (int i = 0; i < 3; i++) {
		static const char digits[] = "0123456789abcdef";
		unsigned v = (unsigned)(rgb[i] * 255 + 0.5);
		v = v > 255 ? 255 : v;
		out[1 + 2 * i] = digits[v >> 4];
		out[2 + 2 * i] = digits[v & 15];
	}
	out[7] = 0;
}

/* Length of the UTF-8 sequence at s (of len bytes) that XML accepts as
 * one character, or 0 when it is not one. */
static size_t xml_char_length(const unsigned char *s, size_t len)
{
	uint32_t c;
	size_t n;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] < 0xe0)
		n = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] < 0xf0)
		n = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] < 0xf5)
		n = 4, c = s[0] & 0x07u;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	/* overlong forms, surrogates, past Unicode, and the two non-characters
	 * XML excludes */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || (c >= 0xd800 && c < 0xe000) ||
	    c > 0x10ffff || c == 0xfffe || c == 0xffff)
		return 0;
	return n;
}

/* Names come from the capture's files: anything XML cannot carry becomes
 * '?', and the markup characters are escaped. At most max_chars
 * characters; a longer name ends in "..". */
static void add_xml_text(struct ps_strbuf *out, const char *text, size_t len, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t chars = 0, total = 0;

	for (size_t i = 0; i < len; total++) {
		size_t n = xml_char_length(s + i, len - i);
		i += n ? n : 1;
	}
	if (total > max_chars)
		max_chars = max_chars >= 2 ? max_chars - 2 : 0;
	for (size_t i = 0; i < len && chars < max_chars; chars++) {
		size_t n = xml_char_length(s + i, len - i);
		switch (n ? s[i] : '?') {
		case '&':
			ps_strbuf_add(out, "&amp;", 5);
			break;
		case '<':
			ps_strbuf_add(out, "&lt;", 4);
			break;
		case '>':
			ps_strbuf_add(out, "&gt;", 4);
			break;
		case '"':
			ps_strbuf_add(out, "&quot;", 6);
			break;
		case '\t':
			/* a parser reading an attribute makes a raw tab a space */
			ps_strbuf_add(out, "&#9;", 4);
			break;
		default:
			if (n)
				ps_strbuf_add(out, s + i, n);
			else
				ps_strbuf_addch(out, '?');
		}
		i += n ? n : 1;
	}
	if (total > chars && max_chars)
		ps_strbuf_add(out, "..", 2);
}

struct writer {
	struct ps_flamegraph *fg;
	struct ps_sink *sink;
	struct ps_strbuf *out; /* the sink's text */
	double graph_width; /* pixels */
	double scale; /* pixels per unit of weight */
	unsigned max_depth;
	unsigned image_height;
	const char *units;
	/* while writing: where the next frame drawn at each depth starts
	 * unless its data-o says otherwise (see write_frame) */
	uint64_t *next_offset;
};

struct visit {
	uint32_t node;
	unsigned depth;
	uint64_t offset; /* weight to the node's left */
};

static void drain_if_full(struct writer *w)
{
	ps_sink_maybe_drain(w->sink);
}

/* One element per frame, and a <text> only where the name fits: the
 * browser's XML parser takes most of the time a big graph needs to open,
 * so the script makes tooltips and the other names when they are wanted,
 * and a frame carries only what cannot be had otherwise. Its depth is its
 * row (y). Its offset (the weight to its left) is written (data-o) only
 * where it does not start where the frames before it in the document say:
 * at its caller's offset for the first frame drawn below a caller, else
 * where the previous frame drawn at its depth ends. Frames come depth
 * first, so that is known in order; only a frame after a gap left by
 * frames too narrow to draw needs it. */
static void write_frame(struct writer *w, const struct visit *v)
{
	const struct flame_node *node = &w->fg->nodes[v->node];
	const struct palette *palette = &palettes[node->kind & ~PS_FLAME_INLINED];
	struct ps_strbuf *out = w->out;
	double x = PAD_X + (double)v->offset * w->scale, width = (double)node->total * w->scale;
	double y = w->fg->opts.icicle
	                   ? PAD_TOP + (double)v->depth * FRAME_HEIGHT
	                   : w->image_height - PAD_BOTTOM - (double)(v->depth + 1) * FRAME_HEIGHT;
	double fit = (width - 6) / CHAR_WIDTH;
	char colour[8];

	frame_colour(node, colour);
	ps_strbuf_addf(out, "<rect class=\"%s%s\" data-n=\"", palette->class_name,
	               node->kind & PS_FLAME_INLINED ? " inl" : "");
	add_xml_text(out, node->name, node->name_len, SIZE_MAX);
	if (v->offset != w->next_offset[v->depth]) {
		ps_strbuf_add(out, "\" data-o=\"", 10);
		ps_strbuf_add_uint(out, v->offset, 0, false);
	}
	w->next_offset[v->depth] = v->offset + node->total;
	w->next_offset[v->depth + 1] = v->offset;
	ps_strbuf_add(out, "\" data-w=\"", 10);
	ps_strbuf_add_uint(out, node->total, 0, false);
	ps_strbuf_addf(out, "\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
	               x, y, width, FRAME_HEIGHT - 1, colour);
	if (fit >= 3) {
		ps_strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4.5);
		add_xml_text(out, node->name, node->name_len, (size_t)fit);
		ps_strbuf_add(out, "</text>", 7);
	}
	ps_strbuf_addch(out, '\n');
	drain_if_full(w);
}

/* Depth first, callees in name order, skipping frames narrower than the
 * minimum width with everything they called. Either finds the deepest
 * frame drawn (write false) or writes the frames. */
static int walk(struct writer *w, bool write)
{
	struct ps_flamegraph *fg = w->fg;
	struct visit *stack = calloc(fg->nr_nodes, sizeof(*stack));
	size_t nr_pending;

	if (!stack)
		return -ENOMEM;
	stack[0] = (struct visit){ .node = 0 };
	nr_pending = 1;
	while (nr_pending && !w->sink->error) {
		struct visit v = stack[--nr_pending];
		const struct flame_node *node = &fg->nodes[v.node];
		uint32_t first = fg->first_child[v.node], end = fg->first_child[v.node + 1];
		uint64_t offset = node->total - node->self;

		if (write)
			write_frame(w, &v);
		else if (v.depth > w->max_depth)
			w->max_depth = v.depth;
		/* pushed last first so they pop in order; their offsets count
		 * from the right end of the callees' part */
		for (uint32_t i = end; i-- > first;) {
			const struct flame_node *callee = &fg->nodes[fg->children[i]];
			offset -= callee->total;
			if ((double)callee->total * w->scale < fg->opts.min_width)
				continue;
			stack[nr_pending] = (struct visit){ .node = fg->children[i],
				                            .depth = v.depth + 1,
				                            .offset = v.offset + offset };
			nr_pending++;
		}
	}
	free(stack);
	return 0;
}

static const char style[] = "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
                            "#frames text { pointer-events: none; }\n"
                            "#frames rect { cursor: pointer; }\n"
                            "#frames rect:hover { stroke: #000; stroke-width: 0.5; }\n"
                            "#frames .match { fill: #e040e0; }\n"
                            "#frames .caller { opacity: 0.55; }\n"
                            "#title { font-size: 17px; text-anchor: middle; }\n"
                            ".button { cursor: pointer; fill: #225; text-decoration: underline; }\n"
                            ".hidden { display: none; }\n"
                            "#matched { text-anchor: end; }\n";

static void write_header(struct writer *w)
{
	const struct ps_flamegraph_opts *opts = &w->fg->opts;
	struct ps_strbuf *out = w->out;
	unsigned width = opts->width;
	const char *title = opts->title    ? opts->title
	                    : opts->icicle ? "Icicle Graph"
	                                   : "Flame Graph";
	double legend_x = PAD_X;

	ps_strbuf_addf(out,
	               "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	               "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
	               "height=\"%u\" viewBox=\"0 0 %u %u\" data-graph-width=\"%.1f\" "
	               "data-pad-x=\"%d\" data-row-height=\"%d\" data-min-width=\"%g\" "
	               "data-units=\"%s\">\n",
	               width, w->image_height, width, w->image_height, w->graph_width, PAD_X,
	               FRAME_HEIGHT, opts->min_width, w->units);
	ps_strbuf_addf(out, "<!-- written by pystitch %s flamegraph -->\n", PS_VERSION_STRING);
	ps_strbuf_addf(out, "<style>\n%s</style>\n", style);
	ps_strbuf_addf(out, "<rect width=\"%u\" height=\"%u\" fill=\"#f4f4ee\"/>\n", width,
	               w->image_height);
	ps_strbuf_addf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", width / 2.0);
	add_xml_text(out, title, strlen(title), SIZE_MAX);
	ps_strbuf_add(out, "</text>\n", 8);
	/* the colours of the frame kinds, top left */
	for (int kind = 0; kind < PS_FLAME_KINDS; kind++) {
		const struct palette *palette = &palettes[kind];
		char colour[8];
		struct flame_node sample = { .name = "", .kind = (unsigned)kind };
		if (!palette->legend)
			continue;
		frame_colour(&sample, colour);
		ps_strbuf_addf(out,
		               "<rect x=\"%.0f\" y=\"36\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		               "<text x=\"%.0f\" y=\"46\">%s</text>\n",
		               legend_x, colour, legend_x + 16, palette->legend);
		legend_x += 16 + CHAR_WIDTH * (double)strlen(palette->legend) + 14;
	}
	ps_strbuf_addf(out,
	               "<text id=\"reset\" class=\"button hidden\" x=\"%.0f\" y=\"46\">Reset zoom"
	               "</text>\n",
	               legend_x + 20);
	ps_strbuf_addf(out,
	               "<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\">Search</text>\n",
	               width - PAD_X - 6 * CHAR_WIDTH);
	ps_strbuf_addf(out, "<text id=\"matched\" x=\"%d\" y=\"46\"></text>\n", (int)width - PAD_X);
	ps_strbuf_addf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD_X,
	               w->image_height - 10);
}

/* The document, through the sink. 0 or the first failure. */
static int write_svg(struct ps_flamegraph *fg, struct ps_sink *sink)
{
	struct ps_strbuf *out = &sink->text;
	struct writer w = { .fg = fg, .sink = sink, .out = out };
	unsigned width = fg->opts.width ? fg->opts.width : 1200;
	uint64_t total;
	int ret;

	ret = ps_flamegraph_finish(fg);
	if (ret)
		return ret;
	if (width < 2 * PAD_X + 100)
		width = 2 * PAD_X + 100;
	fg->opts.width = width;
	total = fg->nodes[0].total;
	w.units = fg->opts.period ? "period" : "samples";
	w.graph_width = width - 2 * PAD_X;
	w.scale = total ? w.graph_width / (double)total : 0;
	if (total) {
		ret = walk(&w, false);
		if (ret)
			return ret;
	}
	w.image_height = PAD_TOP + (w.max_depth + 1) * FRAME_HEIGHT + PAD_BOTTOM;
	write_header(&w);
	if (!total)
		ps_strbuf_addf(out, "<text x=\"%d\" y=\"%d\">No samples</text>\n", PAD_X,
		               PAD_TOP + FRAME_HEIGHT);
	ps_strbuf_add(out, "<g id=\"frames\">\n", 16);
	if (total) {
		w.next_offset = calloc((size_t)w.max_depth + 2, sizeof(*w.next_offset));
		if (!w.next_offset)
			return -ENOMEM;
		ret = walk(&w, true);
		free(w.next_offset);
		if (ret)
			return ret;
	}
	/* last, so the elements it looks up exist when it runs */
	ps_strbuf_addf(out, "</g>\n<script><![CDATA[\n%s]]></script>\n</svg>\n",
	               ps_flamegraph_script);
	return ps_sink_drain(sink);
}

int ps_flamegraph_write(struct ps_flamegraph *fg, ps_write_fn write, void *ctx)
{
	struct ps_sink sink;
	int err;

	ps_sink_init(&sink, write, ctx);
	err = write_svg(fg, &sink);
	ps_sink_release(&sink);
	return err;
}
