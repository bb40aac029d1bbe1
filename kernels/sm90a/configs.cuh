/* The production configurations of the sm_90a flash kernel, one head dim
 * each, as a list of rows (D, BM, BN, WGS, stages, options, name suffix,
 * description note) that a file expands twice: into kernels with
 * ATTNPROF_SM90A_KERNEL (kernels/sm90a/kernel.cuh) and into the configuration
 * table with ATTNPROF_SM90A_ENTRY (kernels/sm90a/launch.cuh). The production
 * file (kernels/flash_fwd_sm90a.cu) expands this list alone; the bench's
 * (bench/flash_sm90a_experiments.cu) expands it before the experiments, so
 * that the defaults come first for each head dim there too.
 *
 * The defaults, chosen from measurements on the H200 (bench/RESULTS.md,
 * harness timings in one run each):
 *   - D = 32 and 64: three consumer warpgroups on 192-row tiles, causal ones
 *     aligned at the sequence end; no turns (the third warpgroup gives each
 *     scheduler a third warp to hide the softmax behind, and round-robin
 *     turns among three measured slower: 67.3 against 64.6 us). At
 *     8x16x1024x64 64.4 us against 65.6 aligned at 0 and 69.2 with two
 *     warpgroups and turns; at 4x16x4096x64 332 against 335 and 380; at
 *     4x16x4096x32 266 against 272 and 321 with two.
 *   - D = 96: three warpgroups on 192x96 tiles (O and 128-key scores leave
 *     too few registers for three: they spilled), 1-4% ahead of two with
 *     turns in five runs (438.7 against 458.0 us at 4x16x4096x96), causal
 *     ones end-aligned (437.0 against 443.4).
 *   - D = 128: two warpgroups with ping-pong turns (510 vs 528 us at
 *     4x16x4096x128); with three, 192x96 tiles spilled.
 *   - D = 256: two without turns (even, 535.6 vs 534.8 us at 2x16x4096x256,
 *     and turns cost the causal kernel a 4-byte spill).
 *   - D = 128 meets each warpgroup at a tile barrier of its own
 *     (SM90A_OPT_DECOUPLED): 1-3% faster, launched alternately with the
 *     block-wide barrier (1.012 at 4x16x4096x128, 1.025 at 8x16x1024x128, a
 *     tie non-causal); at D = 32 and 64, 3% slower. D = 96 and 256 gained 1%
 *     and 4% that way, but compute-sanitizer's racecheck reported the tile
 *     slot of those two (no turns between their warpgroups) as racing, and
 *     the D = 128 kernel, whose turns also order its warpgroups, as clean:
 *     they keep the block-wide barrier (bench/RESULTS.md, step 25).
 * Suffixes: _pp ping-pong turns, _ea end-aligned causal tiles; _wgN the
 * consumer warpgroups. */
#ifndef ATTNPROF_SM90A_CONFIGS_CUH
#define ATTNPROF_SM90A_CONFIGS_CUH

#define NOTE_PINGPONG ", ping-pong turns between the consumer warpgroups"
#define NOTE_END_ALIGNED ", causal tiles aligned at the sequence end"
#define NOTE_DECOUPLED ", a tile barrier per consumer warpgroup"

/* The first row for a head dim is its default (flash_sm90a_config_for_dim). */
#define ATTNPROF_SM90A_DEFAULTS(X)                                                                        \
    X(32, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED, _ea, NOTE_END_ALIGNED)                                  \
    X(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED, _ea, NOTE_END_ALIGNED)                                  \
    X(96, 192, 96, 3, 2, SM90A_OPT_END_ALIGNED, _ea, NOTE_END_ALIGNED)                                   \
    X(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_DECOUPLED, _pp, NOTE_PINGPONG NOTE_DECOUPLED)  \
    X(256, 128, 64, 2, 2, 0, , "")

#endif
