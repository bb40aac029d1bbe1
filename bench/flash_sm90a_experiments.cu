/* The sm_90a flash kernel's benchmark library (build/bench/libflash_sm90a.so,
 * `make build/bench/libflash_sm90a.so`): the production configurations
 * (kernels/sm90a/configs.cuh) first, then the other choices, measured against
 * them in the same run by bench/flash_sm90a_torch.py (check, bench, timeline,
 * ab, sweep; see its top comment). The library exports the API of
 * kernels/flash_fwd_sm90a.h over this table. Results: bench/RESULTS.md,
 * "flash on Hopper".
 *
 * The versions (D, BM x BN tile, consumer warpgroups, stages, options):
 *   two warpgroups without turns, D = 32, 64, 128 (128x128) and 64 (128x192,
 *     128x64) - the step-6 and step-15 alternatives;
 *   three warpgroups aligned at 0 (no _ea), D = 32, 64, 96 - step 15;
 *   two warpgroups with turns (_pp), D = 64 and 96 - steps 11 and 18; D = 128
 *     with 3 stages (_pp_s3) and 176-key tiles - step 6 and 22;
 *   3 stages at D = 64 (_s3, two and three warpgroups) - step 6;
 *   three warpgroups at D = 128 on 192x64 tiles, end-aligned, 2 and 3 stages -
 *     step 26;
 *   the epilogue under the next tile's first Q K^T (SM90A_OPT_OVERLAP: _ea_ov at
 *     D = 32, 64, 96, _pp_ov at 128, _ov at 256) - step 27
 *     (bench/results/2026-12-03-flash-overlap.md);
 *   the timeline kernels (_tl) of the D = 64 and D = 128 defaults, for
 *     flash_sm90a_torch.py's `timeline` mode (kernels/sm90a/timeline.cuh).
 * Removed on 2026-12-01 (git keeps them; bench/RESULTS.md has their numbers):
 * the per-thread tile state (SM90A_OPT_PER_THREAD, _pt: step 23's "previous
 * way", A/B measured), the block-wide barrier at D = 128 (_pp_bw, _pp_bw_tl:
 * step 25's previous way, A/B measured), and the decoupled tile barrier
 * without turns (_ea_dc at D = 32, 64, 96, _ea_dc_tl, _ea_s3_dc at D = 128,
 * _dc at D = 256: slower at D = 32 and 64, and racecheck reported its tile
 * slot as racing; kernels/sm90a/layout.cuh now rejects it). */
#include "flash_fwd_sm90a.h"

#include "sm90a/configs.cuh"
#include "sm90a/kernel.cuh"
#include "sm90a/launch.cuh"

#define NOTE_TIMELINE ", timeline stamps"

#define NOTE_OVERLAP ", the epilogue under the next tile's first Q K^T"

#define SM90A_EXPERIMENTS(X)                                                                                     \
    X(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_OVERLAP, _ea_ov, NOTE_END_ALIGNED NOTE_OVERLAP)     \
    X(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_DECOUPLED | SM90A_OPT_OVERLAP, _pp_ov,               \
      NOTE_PINGPONG NOTE_DECOUPLED NOTE_OVERLAP)                                                                \
    X(32, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_OVERLAP, _ea_ov, NOTE_END_ALIGNED NOTE_OVERLAP)     \
    X(96, 192, 96, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_OVERLAP, _ea_ov, NOTE_END_ALIGNED NOTE_OVERLAP)      \
    X(256, 128, 64, 2, 2, SM90A_OPT_OVERLAP, _ov, NOTE_OVERLAP)                                                 \
    X(32, 128, 128, 2, 2, 0, , "")                                                                              \
    X(64, 192, 128, 3, 2, 0, , "")                                                                              \
    X(64, 128, 128, 2, 2, SM90A_OPT_PINGPONG, _pp, NOTE_PINGPONG)                                               \
    X(64, 128, 128, 2, 2, 0, , "")                                                                              \
    X(128, 128, 128, 2, 2, 0, , "")                                                                             \
    X(64, 128, 192, 2, 2, 0, , "")                                                                              \
    X(128, 128, 128, 2, 3, SM90A_OPT_PINGPONG, _pp_s3, NOTE_PINGPONG)                                           \
    X(128, 128, 176, 2, 2, SM90A_OPT_PINGPONG, _pp, NOTE_PINGPONG)                                              \
    X(128, 128, 176, 2, 2, 0, , "")                                                                             \
    X(64, 128, 128, 2, 3, 0, _s3, "")                                                                           \
    X(64, 128, 64, 2, 2, 0, , "")                                                                               \
    X(64, 192, 128, 3, 3, 0, _s3, "")                                                                           \
    X(32, 192, 128, 3, 2, 0, , "")                                                                              \
    X(96, 128, 128, 2, 2, SM90A_OPT_PINGPONG, _pp, NOTE_PINGPONG)                                               \
    X(96, 192, 96, 3, 2, 0, , "")                                                                               \
    X(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_TIMELINE, _ea_tl, NOTE_END_ALIGNED NOTE_TIMELINE)   \
    X(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_DECOUPLED | SM90A_OPT_TIMELINE, _pp_tl,               \
      NOTE_PINGPONG NOTE_DECOUPLED NOTE_TIMELINE)                                                               \
    X(128, 192, 64, 3, 2, SM90A_OPT_END_ALIGNED, _ea, NOTE_END_ALIGNED)                                         \
    X(128, 192, 64, 3, 3, SM90A_OPT_END_ALIGNED, _ea_s3, NOTE_END_ALIGNED)

ATTNPROF_SM90A_DEFAULTS(ATTNPROF_SM90A_KERNEL)
SM90A_EXPERIMENTS(ATTNPROF_SM90A_KERNEL)

namespace {

const Sm90aEntry sm90a_entries[] = {ATTNPROF_SM90A_DEFAULTS(ATTNPROF_SM90A_ENTRY)
                                        SM90A_EXPERIMENTS(ATTNPROF_SM90A_ENTRY)};
const int sm90a_entry_count = (int)(sizeof sm90a_entries / sizeof sm90a_entries[0]);

} // namespace
