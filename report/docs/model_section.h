/* The writers of a model trace's view (model_roles.h): roles.csv and the report's
 * "Model" section. */
#ifndef ATTNPROF_MODEL_SECTION_H
#define ATTNPROF_MODEL_SECTION_H

#include "analysis.h"

#include <stdio.h>

/* roles.csv of an analysis (malloc'd): one row per variant, phase and role that ran. */
char *model_roles_csv(const analysis *a);
/* The report's "Model" section (imported runs whose traces hold CPU ops); nothing otherwise. */
void model_section_md(FILE *f, const analysis *a);

#endif
