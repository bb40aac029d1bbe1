/* findings_derive (findings.h): the series' findings, then a model trace's own. One
 * module above both, so findings.c and model_findings.c never call each other. */
#include "findings.h"
#include "model_findings.h"

void findings_derive(analysis *a)
{
    findings_derive_series(a);
    for (int i = 0; i < a->n; i++)
        model_findings_derive(a, &a->v[i]);
}
