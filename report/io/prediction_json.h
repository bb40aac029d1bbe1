/* A variant's prediction and the run's ceilings in run.json (in memory: prediction.h):
 * tables of the field engine, read and written by it. */
#ifndef ATTNPROF_PREDICTION_JSON_H
#define ATTNPROF_PREDICTION_JSON_H

#include <jansson.h>

#include "json_fields.h"
#include "prediction.h"

/* New references: null for a prediction that declares nothing. */
json_t *prediction_to_json(const attn_prediction *p);
json_t *ceilings_to_json(const ceilings *c);
/* A missing or null object reads as "nothing declared" / "not measured"; a field of the
 * wrong type or out of its bounds is an error in rd, named under `where`. */
void prediction_from_json(json_reader *rd, json_t *o, const char *where, attn_prediction *p);
void ceilings_from_json(json_reader *rd, json_t *o, ceilings *c);

#endif
