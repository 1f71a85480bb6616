/* What libtraceevent must not see: the checks an event format of a
 * capture's tracing data passes before tep_parse_event() gets it.
 *
 * libtraceevent (1.7.1, and 1.8 still) leaks what it was building when a
 * field line or a print format does not parse (read_expect_type() and
 * the print-argument parser return without freeing the token in hand),
 * and dereferences NULL when a __print_flags() or __print_symbolic() names
 * a field the event does not declare. Kernel formats do none of this: all
 * 2,323 of Linux 6.18 are printable ASCII, their field lines are of one
 * form, their print formats are C expressions (__print_flags() and
 * __print_symbolic() lists being of constant "{ value, name }" pairs) and
 * every REC->name is a declared field. So a format that fails these checks
 * is damaged and the capture is refused, in one line, instead of being
 * half parsed.
 */
#include "reader/tracing_check_priv.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/message.h"

/* deeper nesting than any kernel format; libtraceevent recurses on it */
#define MAX_DEPTH 64
/* libtraceevent builds an argument's operators into a tree as deep as
 * their chain and recurses on it as it parses, prints and frees: a
 * 100,000-long "+1+1..." overflows the stack. A kernel's longest
 * argument has a few dozen. */
#define MAX_OPERATORS 256

static bool is_identifier_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* ---- field lines --------------------------------------------------- */

/* Whether [p, end) is a field line as every kernel writes it:
 * "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" (signed: since 2.6.32),
 * DECL being words of identifier characters and '*' with bracketed sizes
 * ("char comm[16]", "__data_loc char[] name", "u8 addr[sizeof(x)]"). The
 * ftrace system's own formats may have a '.' in a name, which
 * libtraceevent allows there. p is just past "field:". */
static bool is_kernel_field_line(const char *p, const char *end, bool ftrace)
{
	static const char *const attributes[] = { "offset:", "size:", "signed:" };
	int depth = 0;
	unsigned words = 0; /* outside brackets: a type and a name at least */
	bool in_word = false;

	for (; p < end && *p != ';'; p++) {
		char c = *p;

		if (!depth && is_identifier_char(c) && !in_word)
			words++;
		in_word = is_identifier_char(c);
		if (c == '[' && depth == 0)
			depth = 1;
		else if (c == ']' && depth == 1)
			depth = 0;
		else if (is_identifier_char(c))
			continue;
		else if (!(c == ' ' || c == '*' || (depth && (c == '(' || c == ')' || c == '+')) ||
		           (ftrace && c == '.')))
			return false;
	}
	if (p == end || depth || words < 2)
		return false;
	p++; /* the ';' */
	for (size_t i = 0; i < sizeof(attributes) / sizeof(attributes[0]); i++) {
		size_t len = strlen(attributes[i]);
		const char *digits;

		while (p < end && (*p == '\t' || *p == ' '))
			p++;
		if (i == 2 && p == end)
			return true; /* no signed: before 2.6.32 */
		if ((size_t)(end - p) < len || memcmp(p, attributes[i], len) != 0)
			return false;
		for (digits = p += len; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == digits || p == end || *p != ';')
			return false;
		p++;
	}
	while (p < end && (*p == '\t' || *p == ' '))
		p++;
	return p == end;
}

size_t ps_tracing_odd_field_line(const char *text, size_t size, bool ftrace)
{
	const char *end = text + size;
	size_t number = 0;

	for (const char *line = text; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *p = line;

		if (!eol)
			eol = end;
		number++;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (eol - p >= 10 && memcmp(p, "print fmt:", 10) == 0)
			break;
		if (eol - p >= 6 && memcmp(p, "field:", 6) == 0 &&
		    !is_kernel_field_line(p + 6, eol, ftrace))
			return number;
		line = eol + 1;
	}
	return 0;
}

/* ---- the print format ---------------------------------------------- */

enum token_kind { TOK_END, TOK_STRING, TOK_CHAR, TOK_NUMBER, TOK_IDENT, TOK_OP, TOK_BAD };

struct token {
	enum token_kind kind;
	const char *p;
	size_t len;
};

struct print_parser {
	const char *p, *end;
	struct token tok; /* the current token, at p */
	unsigned depth;
	unsigned operators; /* of the current top-level argument */
	/* At the first operand of a conditional's last part, where
	 * libtraceevent 1.7.1 follows a NULL pointer on a postfix '[', '.'
	 * or '->' and on a sizeof() it does not parse (process_cond()). */
	bool in_else;
	const char *error; /* a static string, NULL while all is well */
	const char *error_at;
};

static const char *const two_char_ops[] = { "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||" };

static struct token scan(const char *p, const char *end)
{
	struct token t = { TOK_END, p, 0 };

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
		p++;
	t.p = p;
	if (p == end)
		return t;
	if (*p == '"' || *p == '\'') {
		char quote = *p;
		const char *q = p + 1;

		/* (a kernel string may span lines: ext4's fc_stats) */
		while (q < end && *q != quote)
			q += *q == '\\' && q + 1 < end ? 2 : 1;
		t.kind = q < end && *q == quote ? (quote == '"' ? TOK_STRING : TOK_CHAR) : TOK_BAD;
		t.len = (size_t)(q - p) + (q < end);
		return t;
	}
	if (is_identifier_char(*p)) {
		const char *q = p;

		t.kind = *p >= '0' && *p <= '9' ? TOK_NUMBER : TOK_IDENT;
		/* (libtraceevent reads "1.5" as 1 '.' 5, as the kernel
		 * has no floating point) */
		while (q < end && is_identifier_char(*q))
			q++;
		t.len = (size_t)(q - p);
		return t;
	}
	for (size_t i = 0; i < sizeof(two_char_ops) / sizeof(two_char_ops[0]); i++) {
		if (end - p >= 2 && memcmp(p, two_char_ops[i], 2) == 0) {
			t.kind = TOK_OP;
			t.len = 2;
			return t;
		}
	}
	/* '=' and ';' occur only in statement expressions */
	t.kind = strchr("()[]{},?:+-*/%&|^~!<>.=;", *p) ? TOK_OP : TOK_BAD;
	t.len = 1;
	return t;
}

static void advance(struct print_parser *pp)
{
	pp->p = pp->tok.p + pp->tok.len;
	pp->tok = scan(pp->p, pp->end);
}

static bool is_op(const struct print_parser *pp, const char *op)
{
	return pp->tok.kind == TOK_OP && pp->tok.len == strlen(op) &&
	       memcmp(pp->tok.p, op, pp->tok.len) == 0;
}

/* whether the current token is one of ops[0..n) */
static bool is_op_in(const struct print_parser *pp, const char *const *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_op(pp, ops[i]))
			return true;
	return false;
}

static bool is_word(const char *name, size_t len, const char *word)
{
	return name && len == strlen(word) && memcmp(name, word, len) == 0;
}

static bool fail_at(struct print_parser *pp, const char *what)
{
	if (!pp->error) {
		pp->error = what;
		pp->error_at = pp->tok.p;
	}
	return false;
}

static bool expect(struct print_parser *pp, const char *op, const char *what)
{
	if (!is_op(pp, op))
		return fail_at(pp, what);
	advance(pp);
	return true;
}

static bool is_binary_op(const struct print_parser *pp)
{
	static const char *const ops[] = { "+",  "-", "*", "/",  "%",  "&",  "|",  "^",  "<<",
		                           ">>", "<", ">", "<=", ">=", "==", "!=", "&&", "||" };

	return is_op_in(pp, ops, sizeof(ops) / sizeof(ops[0]));
}

static bool conditional(struct print_parser *pp);
static bool flag_list(struct print_parser *pp, bool flags);

/* One more operator in the current argument's tree (MAX_OPERATORS). */
static bool count_operator(struct print_parser *pp)
{
	if (++pp->operators > MAX_OPERATORS)
		return fail_at(pp, "more operators in one argument than any kernel writes");
	return true;
}

/* parse, a level of its own ("( ... )", "[ ... ]"), where a
 * conditional's last part around it does not reach. */
static bool nested(struct print_parser *pp, bool (*parse)(struct print_parser *))
{
	bool in_else = pp->in_else, ok;

	pp->in_else = false;
	ok = parse(pp);
	pp->in_else = in_else;
	return ok;
}

/* "unsigned long *": identifiers, then stars. Leaves pp after it and
 * returns true only when what follows is end. */
static bool type_name(struct print_parser *pp, const char *end_op)
{
	struct print_parser saved = *pp;

	if (pp->tok.kind != TOK_IDENT)
		return false;
	while (pp->tok.kind == TOK_IDENT)
		advance(pp);
	while (is_op(pp, "*"))
		advance(pp);
	if (is_op(pp, end_op))
		return true;
	*pp = saved;
	return false;
}

/* { a, "b", { c } ,} */
static bool initializer(struct print_parser *pp)
{
	if (!expect(pp, "{", "'{' expected"))
		return false;
	while (!is_op(pp, "}")) {
		if (is_op(pp, "{") ? !initializer(pp) : !conditional(pp))
			return false;
		if (!is_op(pp, ","))
			break;
		advance(pp);
	}
	return expect(pp, "}", "'}' expected");
}

/* A call's arguments (after its '('), types allowed: sizeof(u64). */
static bool arguments(struct print_parser *pp)
{
	while (!is_op(pp, ")")) {
		bool ok;

		if (is_op(pp, "{"))
			ok = initializer(pp);
		else
			ok = type_name(pp, ",") || type_name(pp, ")") || conditional(pp);
		if (!ok)
			return false;
		if (!is_op(pp, ","))
			break;
		advance(pp);
	}
	return expect(pp, ")", "')' expected");
}

static bool expression_list(struct print_parser *pp)
{
	if (!conditional(pp))
		return false;
	while (is_op(pp, ",")) {
		advance(pp);
		if (!conditional(pp))
			return false;
	}
	return true;
}

static bool starts_operand(const struct print_parser *pp)
{
	return pp->tok.kind == TOK_IDENT || pp->tok.kind == TOK_NUMBER ||
	       pp->tok.kind == TOK_STRING || pp->tok.kind == TOK_CHAR || is_op(pp, "(") ||
	       is_op(pp, "-") || is_op(pp, "!") || is_op(pp, "~") || is_op(pp, "*") ||
	       is_op(pp, "&") || is_op(pp, "+");
}

/* libtraceevent divides as it parses and prints, by whatever the divisor
 * evaluates to: a divisor of 0 (a word, "0x0", "08") stops the program
 * with SIGFPE. Every kernel divides by a number or a sizeof(TYPE) that
 * ends its operand ("/ 1000L,", "% 64)", "/ sizeof(u64)"), which is all
 * that is let through. pp is at the divisor and does not move. */
static bool constant_divisor(struct print_parser *pp)
{
	struct print_parser after = *pp;
	char digits[32];

	if (pp->tok.kind == TOK_NUMBER) {
		if (pp->tok.len >= sizeof(digits))
			return fail_at(pp, "a divisor other than a nonzero constant");
		memcpy(digits, pp->tok.p, pp->tok.len);
		digits[pp->tok.len] = 0;
		/* read as libtraceevent reads it */
		if (strtoull(digits, NULL, 0) == 0)
			return fail_at(pp, "a division by zero");
		advance(&after);
	} else if (pp->tok.kind == TOK_IDENT && is_word(pp->tok.p, pp->tok.len, "sizeof")) {
		/* sizeof(REC->field) would be the field's size, maybe 0 */
		advance(&after);
		if (!is_op(&after, "(") || (advance(&after), after.tok.kind != TOK_IDENT) ||
		    is_word(after.tok.p, after.tok.len, "REC") || !type_name(&after, ")"))
			return fail_at(pp, "a divisor other than a nonzero constant");
		advance(&after);
	} else {
		return fail_at(pp, "a divisor other than a nonzero constant");
	}
	if (is_binary_op(&after) || is_op(&after, "(") || is_op(&after, "[") ||
	    is_op(&after, "->") || is_op(&after, "."))
		return fail_at(pp, "a divisor that does not end its operand");
	return true;
}

static bool primary(struct print_parser *pp);

/* GNU C's "({ int x = (REC->a); x < 8 ? x : 8; })", which kernels write
 * for min() and the like and libtraceevent takes as it comes: checked
 * only for its brackets nesting, its strings ending and C's characters.
 * pp is at its '{'. */
static bool statement_expression(struct print_parser *pp)
{
	char open[MAX_DEPTH];
	size_t depth = 0;

	do {
		if (pp->tok.kind == TOK_END)
			return fail_at(pp, "the format ends inside a statement expression");
		if (pp->tok.kind == TOK_BAD)
			return primary(pp); /* says what is wrong with it */
		if (is_op(pp, "(") || is_op(pp, "[") || is_op(pp, "{")) {
			if (depth == MAX_DEPTH)
				return fail_at(pp, "nested too deeply");
			open[depth++] = *pp->tok.p;
		} else if (is_op(pp, ")") || is_op(pp, "]") || is_op(pp, "}")) {
			char want = *pp->tok.p == ')' ? '(' : *pp->tok.p == ']' ? '[' : '{';

			if (!depth || open[depth - 1] != want)
				return fail_at(pp, "a bracket that closes nothing open");
			depth--;
		}
		if (is_op(pp, "/") || is_op(pp, "%")) {
			advance(pp);
			if (!constant_divisor(pp))
				return false;
			continue;
		}
		advance(pp);
	} while (depth);
	return expect(pp, ")", "')' expected after a statement expression");
}

static bool unary(struct print_parser *pp);

static bool primary(struct print_parser *pp)
{
	switch (pp->tok.kind) {
	case TOK_IDENT:
	case TOK_NUMBER:
	case TOK_CHAR:
		advance(pp);
		return true;
	case TOK_STRING:
		while (pp->tok.kind == TOK_STRING)
			advance(pp);
		return true;
	case TOK_OP:
		if (is_op(pp, "{"))
			return nested(pp, initializer);
		if (is_op(pp, "(")) {
			advance(pp);
			if (is_op(pp, "{"))
				return statement_expression(pp);
			return nested(pp, expression_list) && expect(pp, ")", "')' expected");
		}
		return fail_at(pp, "an operand expected");
	case TOK_BAD:
		return fail_at(pp, pp->tok.p[0] == '"' || pp->tok.p[0] == '\''
		                           ? "a string or character that does not end"
		                           : "a character no C expression has");
	case TOK_END:
	default:
		return fail_at(pp, "the format ends inside an expression");
	}
}

/* What follows a postfix expression's part, as far as libtraceevent
 * tells them apart. */
enum postfix_part { PART_OTHER, PART_REC, PART_FIELD, PART_SUBSCRIPT };

static bool postfix(struct print_parser *pp)
{
	/* the name this postfix expression starts with, while it is one */
	const char *name = pp->tok.kind == TOK_IDENT ? pp->tok.p : NULL;
	size_t name_len = pp->tok.len;
	enum postfix_part last = is_word(name, name_len, "REC") ? PART_REC : PART_OTHER;

	if (!primary(pp))
		return false;
	for (;;) {
		bool dot = is_op(pp, ".");
		/* (an operator libtraceevent has not, but for REC's '->') */
		bool postfix_op = dot || is_op(pp, "[") || (is_op(pp, "->") && last != PART_REC);

		/* libtraceevent reads "x[i][j]", "x[i].f" and "x[i]->f" as
		 * an operator without a right side and follows its NULL */
		if (last == PART_SUBSCRIPT && postfix_op)
			return fail_at(pp, "a subscript followed by '[', '.' or '->'");
		if (pp->in_else && postfix_op)
			return fail_at(pp, "'[', '.' or '->' first in a conditional's last part");
		if (dot || is_op(pp, "->")) {
			/* a record's fields are all libtraceevent knows of:
			 * "REC->name"; the '.' of rxrpc's "REC->hdr.epoch",
			 * which libtraceevent cannot parse, is kept where it
			 * gives up on it cleanly */
			if (!dot && name && last != PART_REC)
				return fail_at(pp, "'->' after a name other than REC");
			if (dot && name)
				return fail_at(pp, "'.' after a name");
			if (dot && last != PART_FIELD)
				return fail_at(pp, "'.' after something other than a field");
			last = PART_FIELD;
			advance(pp);
			if (pp->tok.kind != TOK_IDENT)
				return fail_at(pp, "a field name expected");
			advance(pp);
		} else if (is_op(pp, "[")) {
			if (!count_operator(pp))
				return false;
			advance(pp);
			if (!nested(pp, expression_list) || !expect(pp, "]", "']' expected"))
				return false;
			last = PART_SUBSCRIPT;
		} else if (is_op(pp, "(")) {
			bool flags = is_word(name, name_len, "__print_flags");
			bool symbolic = is_word(name, name_len, "__print_symbolic");
			bool in_else = pp->in_else, ok;

			if (in_else && is_word(name, name_len, "sizeof"))
				return fail_at(pp, "sizeof() first in a conditional's last part");
			advance(pp);
			pp->in_else = false;
			ok = flags || symbolic ? flag_list(pp, flags) : arguments(pp);
			pp->in_else = in_else;
			if (!ok)
				return false;
			last = PART_OTHER;
		} else {
			return true;
		}
		name = NULL;
	}
}

static bool unary(struct print_parser *pp)
{
	bool ok;

	if (++pp->depth > MAX_DEPTH)
		return fail_at(pp, "nested too deeply");
	if (is_op(pp, "-") || is_op(pp, "!") || is_op(pp, "~") || is_op(pp, "*") ||
	    is_op(pp, "&") || is_op(pp, "+")) {
		if (!count_operator(pp))
			return false;
		advance(pp);
		ok = unary(pp);
	} else if (is_op(pp, "(")) {
		/* a cast, "(unsigned long)x", or a parenthesised expression */
		struct print_parser saved = *pp;

		advance(pp);
		if (type_name(pp, ")")) {
			advance(pp);
			if (starts_operand(pp)) {
				ok = unary(pp);
				pp->depth--;
				return ok;
			}
		}
		*pp = saved;
		ok = postfix(pp);
	} else {
		ok = postfix(pp);
	}
	pp->depth--;
	return ok;
}

static bool conditional(struct print_parser *pp)
{
	if (++pp->depth > MAX_DEPTH)
		return fail_at(pp, "nested too deeply");
	if (!unary(pp))
		return false;
	pp->in_else = false;
	while (is_binary_op(pp)) {
		bool divides = is_op(pp, "/") || is_op(pp, "%");

		if (!count_operator(pp))
			return false;
		advance(pp);
		if ((divides && !constant_divisor(pp)) || !unary(pp))
			return false;
	}
	if (is_op(pp, "?")) {
		if (!count_operator(pp))
			return false;
		advance(pp);
		/* (GNU C's "a ?: b" has no middle) */
		if ((!is_op(pp, ":") && !conditional(pp)) || !expect(pp, ":", "':' expected"))
			return false;
		pp->in_else = true;
		if (!conditional(pp))
			return false;
	}
	pp->depth--;
	return true;
}

/* "print fmt: STRING, ARG, ...": a string, then C expressions. */
static bool print_format(struct print_parser *pp)
{
	pp->tok = scan(pp->p, pp->end);
	if (pp->tok.kind != TOK_STRING)
		return fail_at(pp, "no format string");
	while (pp->tok.kind == TOK_STRING) {
		size_t at;
		const char *why = ps_tracing_check_conversions(pp->tok.p, pp->tok.len, &at);

		if (why) {
			pp->tok.p += at;
			return fail_at(pp, why);
		}
		advance(pp);
	}
	while (is_op(pp, ",")) {
		advance(pp);
		pp->operators = 0;
		if (!conditional(pp))
			return false;
	}
	if (pp->tok.kind == TOK_BAD)
		return primary(pp); /* says what is wrong with it */
	if (pp->tok.kind != TOK_END)
		return fail_at(pp, "something other than ',' after an argument");
	return true;
}

/* ---- __print_flags() and __print_symbolic() ------------------------ */

static bool constant_expression(struct print_parser *pp);

/* An operand of a flag's or symbol's value: a number, a name (an enum the
 * kernel left unnamed, which libtraceevent reads as 0), - + ~ before an
 * operand, a cast (libtraceevent takes "(TYPE)" for one only before a
 * name, a number or a '(') or a constant expression in parentheses. */
static bool constant_operand(struct print_parser *pp)
{
	bool ok = true;

	if (++pp->depth > MAX_DEPTH)
		return fail_at(pp, "nested too deeply");
	if (pp->tok.kind == TOK_NUMBER || pp->tok.kind == TOK_IDENT) {
		advance(pp);
		if (is_op(pp, "(") || is_op(pp, "[") || is_op(pp, "->") || is_op(pp, "."))
			ok = fail_at(pp, "a flag or symbol value other than a constant");
	} else if (is_op(pp, "-") || is_op(pp, "+") || is_op(pp, "~")) {
		advance(pp);
		ok = constant_operand(pp);
	} else if (is_op(pp, "(")) {
		struct print_parser saved = *pp;
		bool cast;

		advance(pp);
		cast = type_name(pp, ")");
		if (cast) {
			advance(pp);
			cast = pp->tok.kind == TOK_NUMBER || pp->tok.kind == TOK_IDENT ||
			       is_op(pp, "(");
		}
		if (cast) {
			ok = constant_operand(pp);
		} else {
			*pp = saved;
			advance(pp);
			ok = constant_expression(pp) && expect(pp, ")", "')' expected");
		}
	} else {
		ok = fail_at(pp, "a flag or symbol value other than a constant");
	}
	pp->depth--;
	return ok;
}

/* libtraceevent works a flag's or symbol's value out as it parses
 * (arg_num_eval()), and of C's binary operators it knows these alone. */
static bool constant_expression(struct print_parser *pp)
{
	static const char *const ops[] = { "|", "&",  "+",  "-",  "<<", ">>", "<",
		                           ">", "<=", ">=", "==", "!=", "&&", "||" };

	if (!constant_operand(pp))
		return false;
	while (is_op_in(pp, ops, sizeof(ops) / sizeof(ops[0]))) {
		if (!count_operator(pp))
			return false;
		advance(pp);
		if (!constant_operand(pp))
			return false;
	}
	return true;
}

/* "{ VALUE, NAME }", NAME being strings or one operand (NULL is
 * "((void *)0)"): libtraceevent reads one operand there, then wants the
 * '}' (process_fields()). "{ }" is a kernel's empty list (kvm's). */
static bool flag_entry(struct print_parser *pp)
{
	static const char shape[] = "a flag or symbol other than '{ value, name }'";

	if (!expect(pp, "{", shape))
		return false;
	if (is_op(pp, "}")) {
		advance(pp);
		return true;
	}
	/* (a tree of its own, worked out and freed at once) */
	unsigned operators = pp->operators;

	pp->operators = 0;
	if (!constant_expression(pp) || !expect(pp, ",", shape))
		return false;
	pp->operators = operators;
	if (is_op(pp, "-") || is_op(pp, "+") || is_op(pp, "~"))
		return fail_at(pp, "a flag or symbol name other than a string or an operand");
	if (pp->tok.kind != TOK_STRING)
		return constant_operand(pp) && expect(pp, "}", shape);
	while (pp->tok.kind == TOK_STRING)
		advance(pp);
	return expect(pp, "}", shape);
}

/* The arguments of __print_flags(FIELD, "DELIMITER", ENTRY, ...) or
 * __print_symbolic(FIELD, ENTRY, ...), pp past the '(': libtraceevent
 * parses them by hand, where a list of any other shape fails it. */
static bool flag_list(struct print_parser *pp, bool flags)
{
	if (!conditional(pp) || !expect(pp, ",", "',' expected"))
		return false;
	if (flags && pp->tok.kind != TOK_STRING)
		return fail_at(pp, "a __print_flags() delimiter other than a string");
	while (flags && pp->tok.kind == TOK_STRING)
		advance(pp);
	if (flags && !expect(pp, ",", "',' expected"))
		return false;
	for (;;) {
		if (!flag_entry(pp))
			return false;
		if (!is_op(pp, ","))
			break;
		advance(pp);
	}
	return expect(pp, ")", "')' expected");
}

/* ---- the whole format ------------------------------------------------ */

struct field_name {
	const char *name;
	size_t len;
};

static int compare_field_names(const void *a, const void *b)
{
	const struct field_name *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The name a "field:TYPE NAME[N];" declaration in [decl, end) declares. */
static struct field_name declared_name(const char *decl, const char *end)
{
	const char *q = end, *name;

	while (q > decl && q[-1] == ' ')
		q--;
	if (q > decl && q[-1] == ']') {
		while (q > decl && q[-1] != '[')
			q--;
		if (q > decl)
			q--;
	}
	while (q > decl && q[-1] == ' ')
		q--;
	name = q;
	while (name > decl && is_identifier_char(name[-1]))
		name--;
	return (struct field_name){ name, (size_t)(q - name) };
}

/* Every REC->name of the print format [print, end) is a declared field. */
static int check_references(const char *text, const char *print, const char *end, char *out,
                            size_t outsz)
{
	const char *line = text;
	struct field_name *fields = NULL;
	size_t nr_fields = 0, cap = 0;
	int err = 0;

	while (line < print) {
		const char *eol = memchr(line, '\n', (size_t)(print - line));
		const char *p = line, *semicolon;

		if (!eol)
			eol = print;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (eol - p >= 6 && memcmp(p, "field:", 6) == 0 &&
		    (semicolon = memchr(p, ';', (size_t)(eol - p)))) {
			if (!ps_array_reserve((void **)&fields, &cap, nr_fields + 1,
			                      sizeof(*fields), 32)) {
				free(fields);
				return ps_fail(out, outsz, -1, "out of memory");
			}
			fields[nr_fields++] = declared_name(p + 6, semicolon);
		}
		line = eol + 1;
	}
	if (nr_fields)
		qsort(fields, nr_fields, sizeof(*fields), compare_field_names);
	for (const char *p = print; end - p >= 5; p++) {
		struct field_name ref;

		if (memcmp(p, "REC->", 5) != 0)
			continue;
		ref.name = p + 5;
		for (ref.len = 0;
		     ref.name + ref.len < end && is_identifier_char(ref.name[ref.len]);)
			ref.len++;
		if (!nr_fields ||
		    !bsearch(&ref, fields, nr_fields, sizeof(*fields), compare_field_names)) {
			err = ps_fail(out, outsz, -1,
			              "print fmt uses field '%.*s' the event does not declare",
			              (int)(ref.len < 64 ? ref.len : 64), ref.name);
			break;
		}
	}
	free(fields);
	return err;
}

/* Whether [p, eol) (past its indentation) is one of the lines a kernel
 * writes before "print fmt:": empty, "name: ", "ID: ", "format:" or a field
 * line. libtraceevent reads a format as tokens, whatever the spacing, so
 * "print\tfmt :" or "field :" are the print format and a field to it
 * while the checks here, which go by line, would not see them. */
static bool is_kernel_header_line(const char *p, const char *eol)
{
	static const char *const starts[] = { "name: ", "ID: ", "format:", "field:" };

	if (p == eol)
		return true;
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		if ((size_t)(eol - p) >= strlen(starts[i]) &&
		    memcmp(p, starts[i], strlen(starts[i])) == 0)
			return true;
	return false;
}

int ps_tracing_check_format(const char *text, size_t size, bool ftrace, char *out, size_t outsz)
{
	const char *end = text + size, *print = NULL;
	size_t line_number;

	for (size_t i = 0; i < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if ((c < 0x20 && c != '\t' && c != '\n') || c > 0x7e)
			return ps_fail(out, outsz, -1, "byte %#x at %zu is not printable ASCII", c,
			               i);
	}
	line_number = ps_tracing_odd_field_line(text, size, ftrace);
	if (line_number)
		return ps_fail(out, outsz, -1,
		               "line %zu is not a field declaration of the kernel's form",
		               line_number);
	line_number = 0;
	for (const char *line = text; line < end && !print;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *p = line;

		if (!eol)
			eol = end;
		line_number++;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (eol - p >= 10 && memcmp(p, "print fmt:", 10) == 0)
			print = p + 10;
		else if (!is_kernel_header_line(p, eol))
			return ps_fail(out, outsz, -1,
			               "line %zu is not a line of a kernel event format",
			               line_number);
		line = eol + 1;
	}
	if (!print)
		return 0; /* libtraceevent takes a format without one */
	struct print_parser pp = { .p = print, .end = end };
	if (!print_format(&pp))
		return ps_fail(out, outsz, -1, "print fmt: %s at byte %zu", pp.error,
		               (size_t)(pp.error_at - text));
	return check_references(text, print, end, out, outsz);
}
