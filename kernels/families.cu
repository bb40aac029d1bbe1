/* The kernel families' configuration API as one table (families.h): one row per family, each
 * field the family's own function or a describe() that copies its configuration struct into
 * the common fields. No kernel lives here, so no machine code of a family changes with it. */
#include "families.h"

#include "attn_bwd_tc.h"
#include "efficient_fwd.h"
#include "flash_decode.h"
#include "flash_fwd.h"

namespace {

int efficient_describe(int i, kernel_config_desc *out)
{
    const efficient_fwd_config *c = efficient_fwd_config_at(i);
    if (!c)
        return -1;
    *out = {c->kernel_name, c->head_dim, c->block_m, c->block_n, c->warps, c->threads, c->smem_bytes, c->path};
    return 0;
}

int flash_describe(int i, kernel_config_desc *out)
{
    const flash_fwd_config *c = flash_fwd_config_at(i);
    if (!c)
        return -1;
    *out = {c->kernel_name, c->head_dim, c->block_m, c->block_n, c->warps, c->threads, c->smem_bytes, c->path};
    return 0;
}

int decode_describe(int i, kernel_config_desc *out)
{
    const flash_decode_config *c = flash_decode_config_at(i);
    if (!c)
        return -1;
    *out = {c->kernel_name, c->head_dim, c->block_rows, c->chunk_keys, c->warps, c->threads, c->smem_bytes, c->path};
    return 0;
}

/* The fixed grid's configuration of the head dim; decode's balanced grid is chosen per shape. */
int decode_default(int head_dim, int cc_major, int cc_minor)
{
    (void)cc_minor;
    return cc_major >= 8 ? flash_decode_config_for_device(head_dim, cc_major) : -1;
}

int decode_padded_dim(int head_dim)
{
    const flash_decode_config *c = flash_decode_config_at(flash_decode_config_for_dim(head_dim));
    return c ? c->head_dim : -1;
}

int bwd_tc_describe(int i, kernel_config_desc *out)
{
    const attn_bwd_tc_config *c = attn_bwd_tc_config_at(i);
    if (!c)
        return -1;
    *out = {c->name, c->head_dim, c->block_m, c->block_n, c->warps, c->warps * 32, 0, "mma.sync m16n8k16 (sm_80+)"};
    return 0;
}

int bwd_tc_default(int head_dim, int cc_major, int cc_minor)
{
    (void)cc_minor;
    return cc_major >= 8 ? attn_bwd_tc_default_config(head_dim) : -1;
}

/* The tensor-core backward runs its own head dims only (64, 128): no padding. */
int bwd_tc_padded_dim(int head_dim) { return attn_bwd_tc_supports(head_dim) ? head_dim : -1; }

const kernel_family families[KERNEL_FAMILY_COUNT] = {
    {"efficient_fwd", efficient_fwd_config_count, efficient_describe, efficient_fwd_default_config,
     efficient_fwd_padded_dim, efficient_fwd_prepare, efficient_fwd_blocks_per_sm},
    {"flash_fwd", flash_fwd_config_count, flash_describe, flash_fwd_default_config, flash_fwd_padded_dim,
     flash_fwd_prepare, flash_fwd_blocks_per_sm},
    {"flash_decode", flash_decode_config_count, decode_describe, decode_default, decode_padded_dim,
     flash_decode_prepare, flash_decode_blocks_per_sm},
    {"attn_bwd_tc", attn_bwd_tc_config_count, bwd_tc_describe, bwd_tc_default, bwd_tc_padded_dim, nullptr, nullptr},
};

} // namespace

extern "C" const kernel_family *kernel_family_at(int id)
{
    return id >= 0 && id < KERNEL_FAMILY_COUNT ? &families[id] : nullptr;
}

extern "C" int kernel_family_max_head_dim(const kernel_family *f)
{
    int d = 0;
    kernel_config_desc c;
    for (int i = 0; f && i < f->count(); i++)
        if (f->describe(i, &c) == 0 && c.head_dim > d)
            d = c.head_dim;
    return d;
}

#define ARCH_TEXT(...) #__VA_ARGS__
#define ARCH_STRING(...) ARCH_TEXT(__VA_ARGS__)
extern "C" const char *kernel_arch_list(void)
{
#ifdef __CUDA_ARCH_LIST__
    return ARCH_STRING(__CUDA_ARCH_LIST__);
#else
    return "";
#endif
}
