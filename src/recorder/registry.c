/* The variants, in the series' order. A new variant is one file under
 * src/variants/ and one line here. */
#include "variant.h"

#include <string.h>

extern const attn_variant variant_naive;
extern const attn_variant variant_naive_inplace;
extern const attn_variant variant_math;
extern const attn_variant variant_efficient;
extern const attn_variant variant_flash;
extern const attn_variant variant_cudnn;

const attn_variant *const attn_registry[] = {
    &variant_naive,
    &variant_naive_inplace,
    &variant_math,
    &variant_efficient,
    &variant_flash,
    &variant_cudnn,
};
const int attn_registry_count = (int)(sizeof attn_registry / sizeof attn_registry[0]);

const attn_variant *attn_find_variant(const char *name)
{
    for (int i = 0; i < attn_registry_count; i++)
        if (strcmp(attn_registry[i]->name, name) == 0)
            return attn_registry[i];
    return NULL;
}
