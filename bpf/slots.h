/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * slots.h - which histogram slot a value falls in, without a search.
 *
 * A histogram is a sorted table of inclusive upper bounds (iolat.h); the
 * slot of v is the number of bounds below v. A halving search finds it in
 * nine dependent, unpredictable compares. Instead the value's bit length
 * and the IOLAT_CELL_BITS bits below its top bit name a cell (32 to an
 * octave, each at most 1/32 of its lower end wide), and a table built once
 * in user space (buckets_cells, IOLAT_CELL_TABLE entries) says, for each
 * cell, the slot of its lowest value and how many bounds lie inside it.
 * The latency tables put at most two bounds in a cell (native buckets are
 * 1/16 of an octave apart), so the slot is at most two compares away; a
 * cell with more (a user's closely spaced bounds) falls back to the
 * search, so any table stays exact.
 *
 * Compiled by clang for BPF and by the host compiler, so the unit tests run
 * the very code the kernel runs (tests/unit/test_buckets.c).
 */
#ifndef IOLAT_SLOTS_H
#define IOLAT_SLOTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define IOLAT_CELL_BITS 5
#define IOLAT_CELLS_PER_OCTAVE (1u << IOLAT_CELL_BITS)
/* Values below 2^IOLAT_CELL_BITS have a cell each; then 32 to an octave up
 * to bit length 64. */
#define IOLAT_CELLS (IOLAT_CELLS_PER_OCTAVE * (64 - IOLAT_CELL_BITS + 1))
/* A cell table's length: a power of two, so the verifier sees the index
 * masked into it (it does not follow a modulo). */
#define IOLAT_CELL_TABLE 2048
_Static_assert(IOLAT_CELL_TABLE >= IOLAT_CELLS, "IOLAT_CELL_TABLE must hold every cell");

/* A cell's entry: its first slot (low 16 bits) and the bounds inside it. */
#define IOLAT_CELL_FIRST(e) ((e)&0xffffu)
#define IOLAT_CELL_INSIDE(e) ((e) >> 16)
#define IOLAT_CELL_ENTRY(first, inside) ((__u32)(first) | (__u32)(inside) << 16)
/* Bounds a cell may hold and still be looked up by compares. */
#define IOLAT_CELL_MAX_INSIDE 2

/*
 * Where each bit length n (1..64) lands among the 64 values
 * ((2^n - 1) * IOLAT_DEBRUIJN) >> 58: the multiplier is a de Bruijn
 * sequence, whose every 6-bit window differs, so no two n share an index.
 */
#define IOLAT_DEBRUIJN 0x03f79d71b4cb0a89ULL
static const __u8 iolat_bit_length_at[64] = {
	1,  48, 2,  57, 49, 28, 3,  61, 58, 50, 42, 38, 29, 17, 4,  62, 55, 59, 36, 53, 51, 43,
	22, 45, 39, 33, 30, 24, 18, 12, 5,  63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44,
	32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,	6,  64,
};

/*
 * Number of significant bits of v (0 for 0), without branches, as BPF has
 * no count-leading-zeros instruction: smear the top bit down, making
 * 2^n - 1, and look n up by its de Bruijn index (0, smeared, is 0, which
 * the table takes for 1: hence the last factor). Three of these run per
 * completion (its slot in each view and its size's): 43 instructions fewer
 * in all than the population count they replaced, ~13 ns of ~325 a
 * completion here (bench/together.sh --rotate, 9 runs, every one lower).
 */
static __always_inline __u32 iolat_bit_length(__u64 v)
{
	__u32 nonzero = (__u32)((v | -v) >> 63);

	v |= v >> 1;
	v |= v >> 2;
	v |= v >> 4;
	v |= v >> 8;
	v |= v >> 16;
	v |= v >> 32;
	return iolat_bit_length_at[(v * IOLAT_DEBRUIJN) >> 58] * nonzero;
}

/*
 * The cell v lies in: v itself below 2^IOLAT_CELL_BITS, else its octave's
 * (bit length) and the IOLAT_CELL_BITS bits under the top one. One formula
 * for both, without a branch: 5.10's verifier follows a branch it has
 * proven dead with impossible bounds, and a pointer those bounds reach is
 * refused ("invalid mem access 'inv'", seen in the 5.10 guest).
 */
static __always_inline __u32 iolat_cell_of(__u64 v)
{
	/* 0 below 2^(IOLAT_CELL_BITS + 1): v | 2^IOLAT_CELL_BITS has that length. */
	__u32 shift = iolat_bit_length(v | IOLAT_CELLS_PER_OCTAVE) - 1 - IOLAT_CELL_BITS;

	/* v >> shift keeps the top bit and IOLAT_CELL_BITS more: 32..63 from
	 * 32 on, so the cells of one shift follow those of the one before. */
	return IOLAT_CELLS_PER_OCTAVE * shift + (__u32)(v >> shift);
}

/* The lowest value of cell c (the inverse of iolat_cell_of at a cell's start). */
static __always_inline __u64 iolat_cell_low(__u32 c)
{
	__u32 shift;

	if (c < IOLAT_CELLS_PER_OCTAVE)
		return c;
	shift = c / IOLAT_CELLS_PER_OCTAVE - 1;
	return ((__u64)IOLAT_CELLS_PER_OCTAVE + c % IOLAT_CELLS_PER_OCTAVE) << shift;
}

/*
 * Index of the slot holding v in a table of 2^log2n inclusive upper bounds:
 * the number of bounds below v. A fixed number of halvings, unrolled: the
 * fallback, and what the cells are checked against.
 */
static __always_inline __u32 iolat_slot_search(const volatile __u64 *bounds, int log2n, __u64 v)
{
	__u32 i = 0;

#ifdef __clang__
#pragma unroll
#endif
	for (int s = log2n - 1; s >= 0; s--) {
		__u32 step = 1u << s;

		if (bounds[i + step - 1] < v)
			i += step;
	}
	return i;
}

/* The slot of v, from its cell's entry and at most two compares. */
static __always_inline __u32 iolat_slot_of(const volatile __u32 *cells,
					   const volatile __u64 *bounds, int log2n, __u64 v)
{
	__u32 e = cells[iolat_cell_of(v) & (IOLAT_CELL_TABLE - 1)];
	__u32 first = IOLAT_CELL_FIRST(e), inside = IOLAT_CELL_INSIDE(e);
	__u32 mask = (1u << log2n) - 1;

	if (inside > IOLAT_CELL_MAX_INSIDE)
		return iolat_slot_search(bounds, log2n, v);
	if (inside && bounds[first & mask] < v) {
		first++;
		if (inside > 1 && bounds[first & mask] < v)
			first++;
	}
	return first;
}

#endif /* IOLAT_SLOTS_H */
