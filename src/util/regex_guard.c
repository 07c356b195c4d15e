// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * regex_guard.c - estimates, without compiling it, how big glibc's regcomp
 * would make a POSIX extended regexp, so that callers can refuse patterns it
 * would take minutes or gigabytes on (regex_guard.h says why).
 */
#include "util/regex_guard.h"

#include <stdbool.h>
#include <string.h>

/* Groups nested deeper than this are refused, to bound the scan's stack. */
#define MAX_RE_DEPTH 32

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Saturates, so the estimates below never overflow. */
static uint64_t cap(uint64_t v)
{
	return v > REGEX_GUARD_MAX_NODES + 1 ? REGEX_GUARD_MAX_NODES + 1 : v;
}

/* A repetition: copies of the item glibc makes, and whether zero or unbounded. */
struct re_rep {
	uint64_t copies;
	bool zero, unbounded;
};

/* Reads "{m}", "{m,}", "{,n}" or "{m,n}" at p; NULL if it is none of them. */
static const char *re_bound(const char *p, struct re_rep *r)
{
	uint64_t m = 0, n = 0;
	bool comma = false, has_n = false;

	for (p++; is_digit(*p); p++)
		m = cap(m * 10 + (uint64_t)(*p - '0'));
	if (*p == ',') {
		comma = true;
		for (p++; is_digit(*p); p++, has_n = true)
			n = cap(n * 10 + (uint64_t)(*p - '0'));
	}
	if (*p != '}')
		return NULL;
	r->zero = !m;
	r->unbounded = comma && !has_n;
	/* {m,} is m copies and a loop; {m,n} is n copies. */
	r->copies = r->unbounded ? m + 1 : comma ? n : m;
	return p + 1;
}

/* Skips a bracket expression ("[]a]", "[^[:alpha:]]") that starts at p. */
static const char *re_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *close = strchr(p + 2, p[1]);

			while (close && close[1] != ']')
				close = strchr(close + 1, p[1]);
			p = close ? close + 2 : p + 2;
			continue;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

/* Reads a repetition (*, +, ?, {m,n}) at p; NULL if there is none. */
static const char *re_rep_at(const char *p, struct re_rep *r)
{
	if (*p == '{')
		return re_bound(p, r);
	if (*p != '*' && *p != '+' && *p != '?')
		return NULL;
	r->copies = *p == '+' ? 2 : 1;
	r->zero = *p != '+';
	r->unbounded = *p != '?';
	return p + 1;
}

/* One group level of the scan below: its nodes, and which parts match empty. */
struct re_level {
	uint64_t sum;	    /* nodes so far */
	uint64_t last;	    /* nodes of the last item, which a repetition copies */
	bool last_compound; /* the last item is a group or a repetition */
	bool last_null;	    /* it can match the empty string */
	bool before_null;   /* the branch before it can */
	bool branch_null;   /* the branch so far can */
	bool group_null;    /* an earlier branch of the group can */
};

static void re_start(struct re_level *l)
{
	memset(l, 0, sizeof(*l));
	l->before_null = l->branch_null = true;
}

static void re_item(struct re_level *l, uint64_t nodes, bool compound, bool null)
{
	l->sum = cap(l->sum + nodes);
	l->last = nodes;
	l->last_compound = compound;
	l->last_null = null;
	l->before_null = l->branch_null;
	l->branch_null = l->branch_null && null;
}

/*
 * False for more than one copy of a group or repetition that can match
 * empty (see regex_guard.h); ^* or $* are harmless.
 */
static bool re_repeat(struct re_level *l, const struct re_rep *r)
{
	if (l->last_compound && l->last_null && (r->unbounded || r->copies > 1))
		return false;
	l->sum = cap(l->sum + l->last * (r->copies ? r->copies - 1 : 0) + 1);
	l->last = cap(l->last * r->copies + 1);
	l->last_null = l->last_null || r->zero;
	l->last_compound = true;
	l->branch_null = l->before_null && l->last_null;
	return true;
}

/* Anchors, word boundaries and back-references can match the empty string. */
static bool re_zero_width(const char *p)
{
	return *p == '^' || *p == '$' || (*p == '\\' && p[1] && strchr("bB<>`'123456789", p[1]));
}

/*
 * Each atom and operator counts one, a group what it holds, and a bounded
 * repetition or a + (which glibc makes x x*) multiplies the item before it.
 */
uint64_t regex_guard_nodes(const char *p)
{
	struct re_level lv[MAX_RE_DEPTH];
	struct re_rep rep = { 0 };
	const char *next, *after;
	int d = 0;

	re_start(&lv[0]);
	for (; *p; p = next) {
		next = p + 1;
		if (*p == '(') {
			if (++d == MAX_RE_DEPTH)
				return REGEX_GUARD_MAX_NODES + 1;
			re_start(&lv[d]);
		} else if (*p == ')' && d > 0) {
			d--;
			re_item(&lv[d], cap(lv[d + 1].sum + 1), true,
				lv[d + 1].group_null || lv[d + 1].branch_null);
		} else if (*p == '|') {
			lv[d].group_null = lv[d].group_null || lv[d].branch_null;
			lv[d].sum = cap(lv[d].sum + 1);
			lv[d].last = 0;
			lv[d].last_compound = lv[d].last_null = false;
			lv[d].before_null = lv[d].branch_null = true;
		} else if ((after = re_rep_at(p, &rep))) {
			if (!re_repeat(&lv[d], &rep))
				return REGEX_GUARD_MAX_NODES + 1;
			next = after;
		} else {
			if (*p == '[')
				next = re_bracket(p);
			else if (*p == '\\' && p[1])
				next = p + 2;
			re_item(&lv[d], 1, false, re_zero_width(p));
		}
	}
	for (; d > 0; d--)
		lv[d - 1].sum = cap(lv[d - 1].sum + lv[d].sum);
	return lv[0].sum;
}
