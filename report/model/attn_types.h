/* Plain types the recorder and the reader share: the attention shape, a variant's
 * error text and its facts. They travel in run.json, so they carry no CUDA type. */
#ifndef ATTNPROF_ATTN_TYPES_H
#define ATTNPROF_ATTN_TYPES_H

typedef struct attn_shape {
    int batch, heads, seq, dim;
} attn_shape;

#define ATTN_ERR_LEN 512
typedef struct attn_error {
    char msg[ATTN_ERR_LEN];
} attn_error;

/* Facts a variant wants in run.json and the report (engine chosen, workspace
 * bytes, one-off plan cost, library version...). Values are text; `number`
 * carries the numeric value when there is one (NAN otherwise). */
#define ATTN_MAX_FACTS 16
typedef struct attn_fact {
    char key[48];
    char value[200];
    double number;
} attn_fact;
typedef struct attn_facts {
    int n;
    attn_fact item[ATTN_MAX_FACTS];
} attn_facts;

#endif
