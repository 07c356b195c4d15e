/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tp_pair.h - one tracepoint's two programs, tp_btf and raw_tp, written
 * once for both BPF objects (iolat.bpf.c, trace.bpf.c). User space loads
 * one form and falls back to the other (src/core/attach.h), so every hook
 * exists in both, with the same body.
 */
#ifndef IOLAT_TP_PAIR_H
#define IOLAT_TP_PAIR_H

/*
 * TP_PAIR(name, tracepoint, call) defines name_btf in section
 * "tp_btf/tracepoint" and name_raw in "raw_tp/tracepoint"; user space finds
 * them by those names. Each returns `call`, an expression that sees `ctx`
 * (the tracepoint's arguments, a word each) and `direct`: true in the
 * tp_btf program, whose typed pointers may be loaded without a probe read
 * (block.h), false in the raw_tp one.
 */
#define TP_PAIR(name, tracepoint, call)                                                            \
	SEC("tp_btf/" #tracepoint)                                                                 \
	int name##_btf(unsigned long long *ctx)                                                    \
	{                                                                                          \
		const bool direct __attribute__((unused)) = true;                                  \
                                                                                                   \
		return call;                                                                       \
	}                                                                                          \
                                                                                                   \
	SEC("raw_tp/" #tracepoint)                                                                 \
	int name##_raw(unsigned long long *ctx)                                                    \
	{                                                                                          \
		const bool direct __attribute__((unused)) = false;                                 \
                                                                                                   \
		return call;                                                                       \
	}

#endif /* IOLAT_TP_PAIR_H */
