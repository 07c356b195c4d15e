// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uconfig_perf.c - the perf_events section of user-program configs (uconfig_perf.h). */
#include "uprog/uconfig_perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PERF_EVENTS 16
#define MAX_PROGRAM_NAME 128

static const struct {
	const char *name;
	uint64_t config;
} software[] =
    {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
},
  hardware[] = {
      {"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
      {"instructions", PERF_COUNT_HW_INSTRUCTIONS},
      {"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
      {"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
      {"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
      {"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
};

struct perf_state {
	struct uperf_conf *p;
	yaml_node_t *type, *name, *freq, *period, *program;
};

static int get_type(struct yamldoc *x, yaml_node_t *v, uint32_t *out)
{
	const char *s = yamldoc_scalar(v);

	if (s && !strcmp(s, "software"))
		*out = PERF_TYPE_SOFTWARE;
	else if (s && !strcmp(s, "hardware"))
		*out = PERF_TYPE_HARDWARE;
	else
		return yamldoc_fail(x, v, "perf event type is software or hardware");
	return 0;
}

/* The event by its perf(1) name, or by its number. */
static int get_event(struct yamldoc *x, yaml_node_t *v, uint32_t type, uint64_t *out)
{
	const char *s = yamldoc_scalar(v);
	size_t n = type == PERF_TYPE_SOFTWARE ? sizeof(software) / sizeof(software[0])
					      : sizeof(hardware) / sizeof(hardware[0]);
	int64_t num;

	for (size_t i = 0; s && i < n; i++) {
		const char *name = type == PERF_TYPE_SOFTWARE ? software[i].name : hardware[i].name;

		if (!strcmp(s, name)) {
			*out = type == PERF_TYPE_SOFTWARE ? software[i].config : hardware[i].config;
			return 0;
		}
	}
	if (s && s[0] >= '0' && s[0] <= '9') {
		if (yamldoc_get_int(x, v, 0, INT64_MAX, &num))
			return -EINVAL;
		*out = (uint64_t)num;
		return 0;
	}
	return yamldoc_fail(x, v, "unknown %s event '%s' (known: %s)",
			    type == PERF_TYPE_SOFTWARE ? "software" : "hardware", s ? s : "",
			    type == PERF_TYPE_SOFTWARE
				? "cpu-clock, task-clock, page-faults, context-switches, "
				  "cpu-migrations, minor-faults, major-faults, or a number"
				: "cpu-cycles, instructions, cache-references, cache-misses, "
				  "branch-instructions, branch-misses, or a number");
}

static int perf_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct perf_state *st = arg;
	int64_t n;

	if (!strcmp(k, "type"))
		return st->type = v, 0;
	if (!strcmp(k, "name"))
		return st->name = v, 0;
	if (!strcmp(k, "program"))
		return st->program = v,
		       yamldoc_get_text(x, v, "program", MAX_PROGRAM_NAME, &st->p->program);
	if (!strcmp(k, "sample_frequency") || !strcmp(k, "sample_period")) {
		if (yamldoc_get_int(x, v, 1, INT64_MAX, &n))
			return -EINVAL;
		if (k[7] == 'f')
			st->freq = v, st->p->sample_freq = (uint64_t)n;
		else
			st->period = v, st->p->sample_period = (uint64_t)n;
		return 0;
	}
	return 1;
}

static int parse_one(struct yamldoc *x, yaml_node_t *n, struct uperf_conf *p)
{
	struct perf_state st = { .p = p };

	p->line = (int)n->start_mark.line + 1;
	p->col = (int)n->start_mark.column + 1;
	if (yamldoc_each_key(x, n, "a perf event",
			     "type, name, sample_frequency, "
			     "sample_period, program",
			     perf_key, &st))
		return -EINVAL;
	if (!st.type || !st.name || !st.program)
		return yamldoc_fail(x, n, "a perf event needs type, name and program");
	if (!st.freq == !st.period)
		return yamldoc_fail(x, n,
				    "give a perf event either sample_frequency (per "
				    "second) or sample_period (events per sample)");
	if (get_type(x, st.type, &p->type))
		return -EINVAL;
	return get_event(x, st.name, p->type, &p->config);
}

int uconfig_parse_perf_events(struct yamldoc *x, yaml_node_t *n, struct uconfig *c)
{
	size_t len;

	if (yamldoc_list_len(x, n, "perf_events", 1, MAX_PERF_EVENTS, &len))
		return -EINVAL;
	c->perf = calloc(len, sizeof(*c->perf));
	if (!c->perf)
		return yamldoc_fail(x, n, "out of memory");
	for (; c->nperf < len; c->nperf++)
		if (parse_one(x, yamldoc_item(x, n, c->nperf), &c->perf[c->nperf])) {
			c->nperf++; /* freed with the rest */
			return -EINVAL;
		}
	return 0;
}
