/* findings.json: an archive's findings as data, written beside report.md each time
 * it is rendered, so that compare and other tools diff findings by id instead of by
 * sentence. One object per variant, in run.json's order; each finding carries its
 * id, severity, the numbers and correlation ids behind it, the archive facts it
 * needs, and its sentence as plain text (no Markdown). The reader takes the same
 * shape back and refuses anything else with one line naming the field.
 * Status convention: 0 / -1 with err set. */
#include "findings_json.h"
#include "alloc.h"
#include "err.h"

#include "escape.h"
#include "input.h"
#include "latex.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINDINGS_JSON_VERSION 1

static json_t *finding_json(const finding *fd, const char *text_md)
{
    json_t *numbers = json_object();
    for (int i = 0; i < fd->n_numbers; i++)
        json_object_set_new(numbers, fd->numbers[i].key,
                            json_pack("{s:f,s:s}", "value", fd->numbers[i].value, "unit", fd->numbers[i].unit));
    json_t *records = json_array();
    for (int i = 0; i < fd->n_records; i++)
        json_array_append_new(records, json_integer(fd->records[i]));
    json_t *needs = json_array();
    for (const char *p = fd->needs; *p;) {
        size_t len = strcspn(p, ",");
        if (len)
            json_array_append_new(needs, json_stringn(p, len));
        p += len + (p[len] == ',');
    }
    char plain[640];
    if (fd->text[0]) /* the sentence from the data */
        findings_plain(fd->text, plain, sizeof plain);
    else {
        char *p = md_to_plain(text_md);
        snprintf(plain, sizeof plain, "%s", p);
        esc_utf8_trim(plain);
        free(p);
    }
    json_t *o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:s}", "id", fd->id, "severity", findings_severity_name(fd->severity),
                          "numbers", numbers, "correlation_ids", records, "needs", needs, "text", plain);
    return o;
}

char *findings_json(const analysis *a)
{
    json_t *vars = json_array();
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        json_t *list = json_array();
        for (int k = 0; k < va->n_findings; k++)
            if (va->meta[k].id[0])
                json_array_append_new(list, finding_json(&va->meta[k], va->findings[k]));
        json_array_append_new(vars, json_pack("{s:s,s:o}", "variant", va->result->name, "findings", list));
    }
    json_t *root = json_pack("{s:i,s:s,s:s,s:o}", "findings_version", FINDINGS_JSON_VERSION, "tool_version",
                             a->run->tool_version, "producer", run_producer_name(a->run->producer), "variants", vars);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!s)
        attn_oom();
    size_t n = strlen(s);
    char *out = realloc(s, n + 2); /* a text file ends in a newline */
    if (!out)
        attn_oom();
    out[n] = '\n', out[n + 1] = '\0';
    return out;
}

/* EXIT_BAD_ARCHIVE, with the line saying what the field `where` should have held. */
static int expected(char *err, size_t errlen, const char *path, const char *where, const char *what)
{
    return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %s: expected %s; re-render the archive with `attnprof "
                   "report` to write it again", path, where, what);
}

int findings_read_json(const char *path, findings_doc *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    /* input.h's rule: no link followed, a FIFO or a device refused, the DOM size limit. */
    json_t *root = NULL;
    char why[ATTN_ERR_LEN];
    int rc = input_read_json(path, INPUT_MAX_DOM_BYTES, &root, why, sizeof why);
    if (rc != EXIT_OK)
        return err_set(err, errlen, rc, "%s; re-render the archive with `attnprof report`", why);
    json_t *ver = json_object_get(root, "findings_version"), *vars = json_object_get(root, "variants");
    const char *prod = json_string_value(json_object_get(root, "producer"));
    if (!json_is_integer(ver) || json_integer_value(ver) != FINDINGS_JSON_VERSION)
        rc = expected(err, errlen, path, "findings_version", "1");
    else if (!json_is_array(vars) || json_array_size(vars) > RUN_MAX_VARIANTS)
        rc = expected(err, errlen, path, "variants", "an array of at most 16 variants");
    if (!rc)
        snprintf(d->producer, sizeof d->producer, "%s", prod ? prod : "");
    size_t i;
    json_t *v;
    json_array_foreach(vars, i, v)
    {
        if (rc)
            break;
        findings_doc_variant *dv = &d->v[d->n++];
        const char *name = json_string_value(json_object_get(v, "variant"));
        json_t *list = json_object_get(v, "findings");
        char where[64];
        snprintf(where, sizeof where, "variants[%zu]", i);
        if (!name || strlen(name) >= sizeof dv->name || !json_is_array(list) || json_array_size(list) > MAX_FINDINGS) {
            rc = expected(err, errlen, path, where, "{variant, findings: [at most 12]}");
            break;
        }
        snprintf(dv->name, sizeof dv->name, "%s", name);
        size_t k;
        json_t *o;
        json_array_foreach(list, k, o)
        {
            finding *fd = &dv->f[dv->n];
            const char *id = json_string_value(json_object_get(o, "id"));
            const char *sev = json_string_value(json_object_get(o, "severity"));
            const char *text = json_string_value(json_object_get(o, "text"));
            json_t *nums = json_object_get(o, "numbers"), *recs = json_object_get(o, "correlation_ids");
            json_t *needs = json_object_get(o, "needs");
            snprintf(where, sizeof where, "variants[%zu].findings[%zu]", i, k);
            if (!id || !*id || strlen(id) >= sizeof fd->id || !sev || !text || !json_is_object(nums) ||
                !json_is_array(recs) || !json_is_array(needs)) {
                rc = expected(err, errlen, path, where, "{id, severity, numbers, correlation_ids, needs, text}");
                break;
            }
            snprintf(fd->id, sizeof fd->id, "%s", id);
            fd->severity = !strcmp(sev, "warning") ? FINDING_WARNING : !strcmp(sev, "notice") ? FINDING_NOTICE
                                                                                             : FINDING_INFO;
            snprintf(dv->text[dv->n], sizeof dv->text[0], "%s", text);
            const char *key;
            json_t *num;
            json_object_foreach(nums, key, num)
            {
                json_t *val = json_object_get(num, "value");
                if (!json_is_number(val)) {
                    rc = expected(err, errlen, path, where, "numbers of {value, unit}");
                    break;
                }
                findings_number(fd, key, json_number_value(val), json_string_value(json_object_get(num, "unit")));
            }
            size_t r;
            json_t *rec;
            json_array_foreach(recs, r, rec)
            {
                if (!json_is_integer(rec) || json_integer_value(rec) < 0 || json_integer_value(rec) > UINT32_MAX) {
                    rc = expected(err, errlen, path, where, "correlation ids (whole numbers)");
                    break;
                }
                if (fd->n_records < FINDING_MAX_RECORDS)
                    fd->records[fd->n_records++] = (uint32_t)json_integer_value(rec);
            }
            size_t q;
            json_t *need;
            json_array_foreach(needs, q, need)
            {
                const char *s = json_string_value(need);
                size_t len = strlen(fd->needs);
                if (s)
                    snprintf(fd->needs + len, sizeof fd->needs - len, "%s%s", len ? "," : "", s);
            }
            if (rc)
                break;
            dv->n++;
        }
    }
    json_decref(root);
    return rc;
}

const finding *findings_doc_find(const findings_doc *d, const char *variant, const char *id)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->v[i].name, variant))
            for (int k = 0; k < d->v[i].n; k++)
                if (!strcmp(d->v[i].f[k].id, id))
                    return &d->v[i].f[k];
    return NULL;
}
