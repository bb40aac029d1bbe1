/* The appendix of full kernel names (kernel_names.h). Every kernel of the trace is looked
 * at, not only the representative forwards': findings and figures may name any of them,
 * and a name listed once costs one table row. Distinct names are found by sorting
 * pointers, so an imported model trace with many thousand launches stays cheap. */
#include "kernel_names.h"
#include "alloc.h"

#include "escape.h"
#include "findings.h"
#include "hash_index.h"
#include "model_roles.h"

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

/* Where a name first runs in the representative forwards: the variant and the op's number. */
typedef struct first_run {
    const char *name;
    int variant, op;
} first_run;

typedef struct first_key {
    const first_run *runs;
    const char *name;
} first_key;

static int first_equal(int pos, const void *ctx)
{
    const first_key *k = ctx;
    return !strcmp(k->runs[pos].name, k->name);
}

/* Every distinct name of the representative forwards with its first run, indexed by hash in
 * *index (one pass; a scan of every forward for each name was quadratic). */
static first_run *first_runs(const analysis *a, hash_index *index)
{
    int cap = 0, n = 0;
    first_run *runs = NULL;
    hash_index_init(index);
    for (int v = 0; v < a->n; v++) {
        int r = analysis_median_forward(&a->v[v]);
        const forward *fw = r < 0 ? NULL : &a->v[v].forwards[r];
        for (int k = 0; fw && k < fw->n_ops; k++) {
            const char *name = fw->ops[k]->name;
            if (!name)
                continue;
            uint64_t hv = hash_str(HASH_SEED, name);
            first_key key = {runs, name};
            if (hash_index_find(index, hv, first_equal, &key) >= 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                runs = realloc(runs, sizeof *runs * (size_t)cap);
                if (!runs)
                    attn_oom();
            }
            runs[n] = (first_run){name, v, k};
            hash_index_add(index, hv, n++);
        }
    }
    return runs;
}

void kernel_names_appendix(FILE *f, const analysis *a)
{
    int n;
    const char **names = kernel_names_shortened(a, &n);
    if (n) {
        fprintf(f, "## Appendix: full kernel names\n\nThe report writes %d kernel name%s shorter than %s: "
                   "here %s in full, in the order of the trace, with the first operation of a variant's "
                   "representative %s that runs it (\"–\": in another %s only).\n\n"
                   "| Written as | First in | Full name |\n|---|---|---|\n",
                n, n == 1 ? "" : "s", n == 1 ? "it is" : "they are", n == 1 ? "it is" : "all of them are",
                model_unit_word_of_run(a), model_unit_word_of_run(a));
        hash_index index;
        first_run *runs = first_runs(a, &index);
        for (int i = 0; i < n; i++) {
            char s[FINDING_NAME_MAX + 8];
            findings_short_name(names[i], s, sizeof s);
            fputs("| ", f);
            esc_md_code(f, s, 1);
            fputs(" | ", f);
            /* the op tables' "#" of the variant's representative forward */
            first_key key = {runs, names[i]};
            int at = hash_index_find(&index, hash_str(HASH_SEED, names[i]), first_equal, &key);
            if (at >= 0) {
                esc_md_code(f, a->v[runs[at].variant].result->name, 1);
                fprintf(f, " op %d", runs[at].op + 1);
            }
            fputs(at >= 0 ? " | " : "– | ", f);
            esc_md_code(f, names[i], 1);
            fputs(" |\n", f);
        }
        fputc('\n', f);
        hash_index_free(&index);
        free(runs);
    }
    free(names);
}
