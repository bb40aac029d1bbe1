/* How an archive's forwards were measured, as plain-text sentences for every writer
 * (measurement_text.c). Each fills out (n bytes) and never fails. */
#ifndef ATTNPROF_MEASUREMENT_TEXT_H
#define ATTNPROF_MEASUREMENT_TEXT_H

#include "analysis.h"

#include <stddef.h>

/* The run's plan: L2 state, stop rule, passes, throttle rule, clock range, clock lock;
 * "… not recorded (this archive predates …)" without a plan. */
void measurement_plan_text(const analysis *a, char *out, size_t n);
/* 1 when the per-variant measurement table has anything to say. */
int measurement_variant_applies(const analysis *a);
/* "n = 40, noise 0.31%, 0.0203 s GPU time; stopped: the median's noise fell below the target". */
void measurement_stop_text(const analysis *a, const variant_analysis *va, char *out, size_t n);
/* "SM 1755-1980 MHz, memory 3201 MHz", or "not recorded". */
void measurement_clock_text(const variant_analysis *va, char *out, size_t n);
/* "2 of 40 forwards throttled (SM clock below 75% of 1980 MHz), left out of the medians". */
void measurement_throttle_text(const analysis *a, const variant_analysis *va, char *out, size_t n);

#endif
