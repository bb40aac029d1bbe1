/* The appendix of full kernel names (kernel_names.h). Every kernel of the trace is looked
 * at, not only the representative forwards': findings and figures may name any of them,
 * and a name listed once costs one table row. Distinct names are found by sorting
 * pointers, so an imported model trace with many thousand launches stays cheap. */
#include "kernel_names.h"
#include "alloc.h"

#include "escape.h"
#include "findings.h"

#include <stdlib.h>
#include <string.h>

int kernel_name_is_shortened(const char *name)
{
    char s[FINDING_NAME_MAX + 8], k[1024];
    findings_short_name(name, s, sizeof s);
    short_kernel_name(name, k, sizeof k);
    return strcmp(s, name) || (k[0] && strcmp(k, name));
}

typedef struct named { const char *name; size_t order; } named;

static int by_name(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int by_order(const void *x, const void *y)
{
    const named *a = x, *b = y;
    return (a->order > b->order) - (a->order < b->order);
}

const char **kernel_names_shortened(const analysis *a, int *n)
{
    *n = 0;
    const trace *t = a->trace;
    named *all = malloc(sizeof *all * (t->n_ops ? t->n_ops : 1));
    if (!all)
        attn_oom();
    size_t m = 0;
    for (size_t i = 0; i < t->n_ops; i++)
        if (t->ops[i].kind == GPU_KERNEL && t->ops[i].name && t->ops[i].name[0])
            all[m++] = (named){t->ops[i].name, i};
    qsort(all, m, sizeof *all, by_name);
    size_t d = 0; /* the first occurrence of each distinct shortened name */
    for (size_t i = 0; i < m; i++)
        if ((i == 0 || strcmp(all[i].name, all[i - 1].name)) && kernel_name_is_shortened(all[i].name))
            all[d++] = all[i];
    qsort(all, d, sizeof *all, by_order);
    const char **out = malloc(sizeof *out * (d ? d : 1));
    if (!out)
        attn_oom();
    for (size_t i = 0; i < d; i++)
        out[i] = all[i].name;
    free(all);
    *n = (int)d;
    return out;
}

void kernel_names_appendix(FILE *f, const analysis *a)
{
    int n;
    const char **names = kernel_names_shortened(a, &n);
    if (n) {
        fprintf(f, "## Appendix: full kernel names\n\nThe report writes %d kernel name%s shorter than %s: "
                   "here %s in full, in the order of the trace, with the first operation of a variant's "
                   "representative forward that runs it (\"–\": in another forward only).\n\n"
                   "| Written as | First in | Full name |\n|---|---|---|\n",
                n, n == 1 ? "" : "s", n == 1 ? "it is" : "they are", n == 1 ? "it is" : "all of them are");
        for (int i = 0; i < n; i++) {
            char s[FINDING_NAME_MAX + 8];
            findings_short_name(names[i], s, sizeof s);
            fputs("| ", f);
            esc_md_code(f, s, 1);
            fputs(" | ", f);
            int found = 0; /* the op tables' "#" of the variant's representative forward */
            for (int v = 0; v < a->n && !found; v++) {
                int r = analysis_median_forward(&a->v[v]);
                const forward *fw = r < 0 ? NULL : &a->v[v].forwards[r];
                for (int k = 0; fw && k < fw->n_ops && !found; k++)
                    if (fw->ops[k]->name && !strcmp(fw->ops[k]->name, names[i])) {
                        esc_md_code(f, a->v[v].result->name, 1);
                        fprintf(f, " op %d", k + 1);
                        found = 1;
                    }
            }
            fputs(found ? " | " : "– | ", f);
            esc_md_code(f, names[i], 1);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
    free(names);
}
