/* The driver calls the recorder traces: those whose names start with a word that launches
 * GPU work (cupti_driver_cbid.h's names). */
#include "driver_apis.h"

#include <string.h>

static const char *const DRIVER_LAUNCH_WORDS[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset"};

int cupti_driver_api_traced(const char *name)
{
    for (size_t i = 0; name && i < sizeof DRIVER_LAUNCH_WORDS / sizeof *DRIVER_LAUNCH_WORDS; i++)
        if (!strncmp(name, DRIVER_LAUNCH_WORDS[i], strlen(DRIVER_LAUNCH_WORDS[i])))
            return 1;
    return 0;
}
