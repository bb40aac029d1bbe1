/* The tile order of the persistent sm_90a flash kernel (kernels/flash_tile_order.h):
 * every tile exactly once, heavy first within an L2 group, groups sized to half the
 * L2; and why the kernel takes tiles from a counter rather than round-robin. No GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "flash_tile_order.h"

#define H200_L2 (60LL << 20) /* cudaDevAttrL2CacheSize on the H200 */

typedef struct shape {
    int q_tiles, heads_total, hpg;
} shape;

static const shape shapes[] = {
    {8, 128, 120}, /* 8x16x1024x64 on the H200 */
    {32, 64, 15},  /* 4x16x4096x128 */
    {32, 32, 7},   /* 2x16x4096x256 */
    {1, 3, 3},     {3, 5, 2}, {7, 13, 4}, {5, 9, 1}, {129, 2, 2}, {4, 7, 7},
};

Test(tile_order, every_tile_exactly_once)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int causal = 0; causal < 2; causal++) {
            const shape s = shapes[i];
            const int total = s.q_tiles * s.heads_total;
            char *seen = calloc((size_t)total, 1);
            for (int t = 0; t < total; t++) {
                int bh, qt;
                flash_tile_at(t, s.q_tiles, s.heads_total, s.hpg, causal, &bh, &qt);
                cr_assert(bh >= 0 && bh < s.heads_total && qt >= 0 && qt < s.q_tiles, "tile %d -> (%d, %d)", t, bh,
                          qt);
                cr_assert(!seen[bh * s.q_tiles + qt], "(%d, %d) twice", bh, qt);
                seen[bh * s.q_tiles + qt] = 1;
            }
            free(seen);
        }
}

/* Causal: within a group the query tiles never get heavier again (the tile that
 * sees the most keys comes first); a new group starts where they do. Each group
 * is a run of neighbouring heads, whole (every query tile of each), of at most
 * heads_per_group heads, and the groups differ by one head at most. */
Test(tile_order, causal_heavy_first_within_even_groups_of_neighbouring_heads)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape s = shapes[i];
        const int total = s.q_tiles * s.heads_total;
        int prev_qt = -1, first_head = 0, last_head = -1, tiles_in_group = 0, min_size = 1 << 30, max_size = 0;
        for (int t = 0; t <= total; t++) {
            int bh = -1, qt = s.q_tiles;
            if (t < total)
                flash_tile_at(t, s.q_tiles, s.heads_total, s.hpg, 1, &bh, &qt);
            if (t == total || (t > 0 && qt > prev_qt)) { /* a group ended */
                const int size = last_head - first_head + 1;
                cr_assert_eq(tiles_in_group, size * s.q_tiles, "shape %zu: group at head %d not whole", i,
                             first_head);
                cr_assert(size <= s.hpg, "shape %zu: group of %d heads > %d", i, size, s.hpg);
                min_size = size < min_size ? size : min_size;
                max_size = size > max_size ? size : max_size;
                first_head = last_head + 1;
                tiles_in_group = 0;
            }
            if (t == total)
                break;
            cr_assert(bh >= first_head, "shape %zu tile %d: head %d before its group (%d)", i, t, bh, first_head);
            last_head = bh > last_head ? bh : last_head;
            tiles_in_group++;
            prev_qt = qt;
        }
        cr_assert(max_size - min_size <= 1, "shape %zu: groups of %d to %d heads", i, min_size, max_size);
        int bh, qt;
        flash_tile_at(0, s.q_tiles, s.heads_total, s.hpg, 1, &bh, &qt);
        cr_assert_eq(qt, s.q_tiles - 1);
        flash_tile_at(0, s.q_tiles, s.heads_total, s.hpg, 0, &bh, &qt);
        cr_assert_eq(qt, 0, "non-causal: plain order");
    }
}

Test(tile_order, groups_hold_half_the_l2_of_k_and_v)
{
    /* 4 * S * D bytes of K and V per head. */
    cr_assert_eq(flash_heads_per_group(H200_L2, 4096, 128, 64), 15);
    cr_assert_eq(flash_heads_per_group(H200_L2, 1024, 64, 128), 120);
    cr_assert_eq(flash_heads_per_group(H200_L2, 1024, 64, 16), 16, "at most every head");
    cr_assert_eq(flash_heads_per_group(H200_L2, 1 << 20, 256, 4), 1, "at least one head");
    for (int s = 64; s <= 16384; s *= 2) {
        const int g = flash_heads_per_group(H200_L2, s, 128, 1 << 20);
        cr_assert(4LL * s * 128 * g <= H200_L2 / 2 || g == 1);
        cr_assert(4LL * s * 128 * (g + 1) > H200_L2 / 2);
    }
}

/* The kernel's blocks take the next tile from an atomic counter: a list schedule.
 * Simulated with a tile's cost = its key tiles + one for the prologue, 132 blocks:
 * the busiest block within 2.5% of the mean at the goal shapes and D = 256, where
 * the static round-robin the kernel first used lands 10-20% over (and where
 * groups of heads_per_group heads plus a small last one put it 5-12% over). */
static double busiest_over_mean(const shape *s, int list_schedule)
{
    enum { BLOCKS = 132 };
    double load[BLOCKS] = {0}, sum = 0;
    const int total = s->q_tiles * s->heads_total;
    for (int t = 0; t < total; t++) {
        int bh, qt;
        flash_tile_at(t, s->q_tiles, s->heads_total, s->hpg, 1, &bh, &qt);
        const double cost = qt + 1 + 1;
        int b = t % BLOCKS;
        if (list_schedule) /* the block that is free first takes the next tile */
            for (int i = 0; i < BLOCKS; i++)
                if (load[i] < load[b])
                    b = i;
        load[b] += cost;
        sum += cost;
    }
    double max = 0;
    for (int i = 0; i < BLOCKS; i++)
        max = load[i] > max ? load[i] : max;
    return max / (sum / BLOCKS);
}

Test(tile_order, a_list_schedule_balances_the_causal_load)
{
    for (int i = 0; i < 3; i++) {
        const double list = busiest_over_mean(&shapes[i], 1), round_robin = busiest_over_mean(&shapes[i], 0);
        cr_assert(list <= 1.025, "shape %d: list schedule %.3f", i, list);
        cr_assert(round_robin >= 1.10, "shape %d: round-robin %.3f", i, round_robin);
    }
}
