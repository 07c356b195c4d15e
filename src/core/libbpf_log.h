/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libbpf_log.h - libbpf's messages: every one is noted for the verifier-log
 * reason (util/verifier_log.h), so a refused program is explained in one
 * line; they are printed to stderr only when a command's -v asked.
 */
#ifndef IOLAT_LIBBPF_LOG_H
#define IOLAT_LIBBPF_LOG_H

#include <stdbool.h>

/* Makes this module libbpf's print callback; once, before any BPF call. */
void libbpf_log_install(void);

/* Whether libbpf's messages are also printed (-v). */
void libbpf_log_verbose(bool on);

#endif
