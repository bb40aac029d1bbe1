/* Which CUDA driver API calls the recorder traces (src/recorder/cupti_tracing.c). */
#ifndef ATTNPROF_DRIVER_APIS_H
#define ATTNPROF_DRIVER_APIS_H

/* 1 when a driver API of this name (as cuptiGetCallbackName gives it) is traced: a launch,
 * copy or memset, the driver calls that can launch GPU work and so the only driver records
 * cupti_flush keeps. */
int cupti_driver_api_traced(const char *name);

#endif
