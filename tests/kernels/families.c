/* Runs in `make test` of a CUDA build, without a GPU: the kernel family table
 * (kernels/families.h) says of every family what the family's own functions say. Each
 * configuration's common fields are its own struct's, the default for every head dim from 1
 * to 264 on compute capability 7.5, 8.0, 8.6 and 9.0 is the family's own choice, and a row
 * has prepare and blocks_per_sm exactly where the family has them. No call reaches the GPU.
 * Exit 0 on success; prints each mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_bwd_tc.h"
#include "efficient_fwd.h"
#include "families.h"
#include "flash_decode.h"
#include "flash_fwd.h"

static int bad;

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            printf("kernel_families: " __VA_ARGS__);                                                         \
            printf("\n");                                                                                    \
            bad = 1;                                                                                         \
        }                                                                                                    \
    } while (0)

/* The common fields of configuration i in the family's own struct; 0 when i is out of range. */
static int own_desc(int id, int i, kernel_config_desc *d)
{
    memset(d, 0, sizeof *d);
    if (id == KERNEL_FAMILY_EFFICIENT_FWD) {
        const efficient_fwd_config *c = efficient_fwd_config_at(i);
        if (!c)
            return 0;
        *d = (kernel_config_desc){c->kernel_name, c->head_dim, c->block_m, c->block_n, c->warps, c->threads,
                                  c->smem_bytes, c->path};
    } else if (id == KERNEL_FAMILY_FLASH_FWD) {
        const flash_fwd_config *c = flash_fwd_config_at(i);
        if (!c)
            return 0;
        *d = (kernel_config_desc){c->kernel_name, c->head_dim, c->block_m, c->block_n, c->warps, c->threads,
                                  c->smem_bytes, c->path};
    } else if (id == KERNEL_FAMILY_FLASH_DECODE) {
        const flash_decode_config *c = flash_decode_config_at(i);
        if (!c)
            return 0;
        *d = (kernel_config_desc){c->kernel_name, c->head_dim, c->block_rows, c->chunk_keys, c->warps, c->threads,
                                  c->smem_bytes, c->path};
    } else {
        const attn_bwd_tc_config *c = attn_bwd_tc_config_at(i);
        if (!c)
            return 0;
        *d = (kernel_config_desc){c->name, c->head_dim, c->block_m, c->block_n, c->warps, c->warps * 32, 0, NULL};
    }
    return 1;
}

static int own_count(int id)
{
    return id == KERNEL_FAMILY_EFFICIENT_FWD ? efficient_fwd_config_count()
           : id == KERNEL_FAMILY_FLASH_FWD   ? flash_fwd_config_count()
           : id == KERNEL_FAMILY_FLASH_DECODE ? flash_decode_config_count()
                                              : attn_bwd_tc_config_count();
}

static int own_default(int id, int dim, int major, int minor)
{
    if (id == KERNEL_FAMILY_EFFICIENT_FWD)
        return efficient_fwd_default_config(dim, major, minor);
    if (id == KERNEL_FAMILY_FLASH_FWD)
        return flash_fwd_default_config(dim, major, minor);
    if (major < 8) /* decode and the tensor-core backward run mma.sync bf16: 8.0 and up */
        return -1;
    return id == KERNEL_FAMILY_FLASH_DECODE ? flash_decode_config_for_device(dim, major)
                                            : attn_bwd_tc_default_config(dim);
}

static void check_configs(int id, const kernel_family *f)
{
    EXPECT(f->count() == own_count(id) && f->count() > 0, "%s: %d configurations, its own API %d", f->name,
           f->count(), own_count(id));
    int max_dim = 0;
    for (int i = -1; i <= f->count(); i++) {
        kernel_config_desc got, want;
        const int in = own_desc(id, i, &want);
        const int rc = f->describe(i, &got);
        EXPECT((rc == 0) == in, "%s: describe(%d) = %d", f->name, i, rc);
        if (rc != 0 || !in)
            continue;
        if (want.head_dim > max_dim)
            max_dim = want.head_dim;
        EXPECT(got.name == want.name && got.head_dim == want.head_dim && got.block_m == want.block_m &&
                   got.block_n == want.block_n && got.warps == want.warps && got.threads == want.threads &&
                   got.smem_bytes == want.smem_bytes && (!want.path || got.path == want.path),
               "%s: configuration %d (%s) described as %s D=%d %dx%d w%d t%d smem %zu", f->name, i, want.name,
               got.name, got.head_dim, got.block_m, got.block_n, got.warps, got.threads, got.smem_bytes);
        EXPECT(got.path && got.path[0], "%s: configuration %d has no path", f->name, i);
    }
    EXPECT(kernel_family_max_head_dim(f) == max_dim, "%s: largest head dim %d, its configurations' %d", f->name,
           kernel_family_max_head_dim(f), max_dim);
}

static void check_defaults(int id, const kernel_family *f)
{
    const int caps[][2] = {{7, 5}, {8, 0}, {8, 6}, {9, 0}};
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++)
        for (int dim = 1; dim <= 264; dim++) {
            const int got = f->default_for(dim, caps[k][0], caps[k][1]);
            const int want = own_default(id, dim, caps[k][0], caps[k][1]);
            EXPECT(got == want, "%s: D=%d on %d.%d runs %d, its own API says %d", f->name, dim, caps[k][0],
                   caps[k][1], got, want);
            kernel_config_desc c;
            if (got >= 0 && f->describe(got, &c) == 0)
                EXPECT(c.head_dim == f->padded_dim(dim) && c.head_dim >= dim,
                       "%s: D=%d runs %s (D=%d), padded to %d", f->name, dim, c.name, c.head_dim, f->padded_dim(dim));
        }
}

/* The split-KV decode kernel's merge rule (flash_decode_merges_in_kernel): on sm_90's TMA ring the split kernel
 * merges its own splits where a key/value head has at most merge_rows_max query rows, never for one split, never
 * on the cp.async kernels; and the workspace holds a counter per row after the partials. */
static void check_decode_merge(void)
{
    const int tma = flash_decode_config_for_device(128, 9), portable = flash_decode_config_for_device(128, 8);
    EXPECT(tma >= 0 && flash_decode_tma_ring(tma) && flash_decode_config_at(tma)->merge_rows_max == 8,
           "decode: the sm_90 D=128 configuration %d is not the TMA ring merging up to 8 rows", tma);
    EXPECT(flash_decode_merges_in_kernel(tma, 32, 8, 1, 16), "decode: 4 rows of 16 splits not merged in the kernel");
    EXPECT(flash_decode_merges_in_kernel(tma, 32, 4, 1, 8), "decode: 8 rows of 8 splits not merged in the kernel");
    EXPECT(!flash_decode_merges_in_kernel(tma, 32, 8, 4, 8), "decode: 16-row tiles merged in the kernel");
    EXPECT(!flash_decode_merges_in_kernel(tma, 32, 8, 1, 1), "decode: one split 'merged'");
    EXPECT(!flash_decode_merges_in_kernel(tma, 32, 5, 1, 8), "decode: kv_heads not dividing heads accepted");
    EXPECT(!flash_decode_merges_in_kernel(portable, 32, 8, 1, 16), "decode: the cp.async kernel merges in the kernel");
    const size_t rows = 2 * 32 * 1, partials = (((size_t)16 * rows + 3) & ~(size_t)3) + 16 * rows * 128;
    EXPECT(flash_decode_workspace_bytes(2, 32, 1, 128, 16) == partials * sizeof(float) + rows * sizeof(unsigned),
           "decode: workspace %zu bytes, want the partials and a counter per row", flash_decode_workspace_bytes(2, 32, 1,
                                                                                                                128, 16));
    EXPECT(flash_decode_workspace_bytes(2, 32, 1, 128, 1) == 0, "decode: a workspace for one split");
}

int main(void)
{
    check_decode_merge();
    EXPECT(!kernel_family_at(-1) && !kernel_family_at(KERNEL_FAMILY_COUNT), "rows out of range are not NULL");
    for (int id = 0; id < KERNEL_FAMILY_COUNT; id++) {
        const kernel_family *f = kernel_family_at(id);
        if (!f || !f->name) {
            EXPECT(0, "family %d has no row", id);
            continue;
        }
        for (int j = 0; j < id; j++)
            EXPECT(strcmp(kernel_family_at(j)->name, f->name) != 0, "two rows named %s", f->name);
        check_configs(id, f);
        check_defaults(id, f);
        /* Only the tensor-core backward prepares inside its launch and hides its kernels. */
        const int own_prepare = id != KERNEL_FAMILY_ATTN_BWD_TC;
        EXPECT(!f->prepare == !own_prepare && !f->blocks_per_sm == !own_prepare,
               "%s: prepare/blocks_per_sm present where the family has none, or missing", f->name);
    }
    /* run.json build.arches is made of this list: comma-separated compute capabilities x10 */
    const char *arches = kernel_arch_list(), *p = arches;
    EXPECT(*arches, "kernel_arch_list() is empty: nvcc did not define __CUDA_ARCH_LIST__");
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        EXPECT(end != p && v >= 500 && v < 2000 && (*end == ',' || !*end), "kernel_arch_list() \"%s\" is not a list of "
               "compute capabilities", arches);
        if (end == p)
            break;
        p = *end ? end + 1 : end;
    }
    if (!bad)
        printf("kernel_families: %d families, each row as its own API says (configurations, defaults on 7.5 to 9.0)\n",
               KERNEL_FAMILY_COUNT);
    return bad;
}
