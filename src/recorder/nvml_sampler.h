/* NVML, opened once for a run: a sample of the SM and memory clocks, the power draw and
 * the temperature after every recorded forward (outside its timed range), and the SM
 * clock lock of --lock-clocks. NVML is loaded at run time (libnvidia-ml.so.1 comes with
 * the driver, not the toolkit), so a machine without it still runs: every sample then
 * reads as not taken. This file and nvml_sampler.c are the only place NVML is loaded: the
 * driver's version, the clocks after each variant and the samples all come through here. */
#ifndef ATTNPROF_NVML_SAMPLER_H
#define ATTNPROF_NVML_SAMPLER_H

#include <stddef.h>

typedef struct nvml_reading {
    int ok;              /* 0: NVML is not there or refused the device */
    int sm_mhz, mem_mhz;
    double power_w;
    int temp_c;
} nvml_reading;

/* Opens NVML for the CUDA device `dev` (found by its PCI bus id). 0, or -1 with a reason. */
int nvml_open(int dev, char *why, int why_len);
/* One reading of the opened device; ok = 0 when nvml_open failed. */
nvml_reading nvml_read(void);
/* --lock-clocks: locks the SM clock at its maximum. 0 and what was done ("locked the SM
 * clock at 1980 MHz"), or -1 and why not ("refused: Insufficient Permissions"). */
int nvml_lock_sm_clock(char *what, int what_len);
/* The driver's version string ("580.159.04"), or "unknown" without NVML; open or not. */
void nvml_driver_version(char *out, size_t n);
/* The opened device's enforced power limit in W, or -1. */
int nvml_power_limit_w(void);
/* Undoes nvml_lock_sm_clock (when it locked), then closes NVML. */
void nvml_close(void);

#endif
