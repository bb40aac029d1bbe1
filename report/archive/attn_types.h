/* Plain types the recorder and the reader share: the attention shape, a variant's
 * error text and its facts. They travel in run.json, so they carry no CUDA type. */
#ifndef ATTNPROF_ATTN_TYPES_H
#define ATTNPROF_ATTN_TYPES_H

/* heads: the query heads; seq: the keys (and values) per head. Grouped-query attention has
 * fewer key/value heads (kv_heads, dividing heads; 1 is multi-query) and decode fewer new
 * queries (q_seq) than keys, the causal mask then aligned to the end of the keys (query i
 * sees keys 0 .. i + seq - q_seq, the bottom-right convention of PyTorch and FlashAttention).
 * 0 in kv_heads or q_seq means "as many as heads / seq": the layout of every archive recorded
 * before them. */
typedef struct attn_shape {
    int batch, heads, seq, dim;
    int kv_heads, q_seq;
} attn_shape;

static inline int attn_kv_heads(const attn_shape *s) { return s->kv_heads > 0 ? s->kv_heads : s->heads; }
static inline int attn_q_seq(const attn_shape *s) { return s->q_seq > 0 ? s->q_seq : s->seq; }
/* Query heads per key/value head (1: multi-head attention). */
static inline int attn_group(const attn_shape *s) { return s->heads / attn_kv_heads(s); }
/* Grouped-query or decode: a shape that takes more than B, H, S, D to say. */
static inline int attn_shape_is_gqa(const attn_shape *s) { return attn_kv_heads(s) != s->heads; }
static inline int attn_shape_is_decode(const attn_shape *s) { return attn_q_seq(s) != s->seq; }

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
