/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * errors.h - the one place iolat's commands print errors: one line saying
 * what is wrong, and a hint saying what to do.
 */
#ifndef IOLAT_ERRORS_H
#define IOLAT_ERRORS_H

/* Prints "iolat: <message>" and, if hint is not NULL, " (<hint>)". */
void errorf(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
