/* Hopper-native flash attention forward (sm_90a): the tensor memory
 * accelerator (TMA) brings tiles into shared memory, wgmma multiplies them.
 * The production configurations (kernels/sm90a/configs.cuh), one per head
 * dim, and the API of flash_fwd_sm90a.h over them; the benchmark's other
 * configurations are in bench/flash_sm90a_experiments.cu.
 *
 * Persistent: one block per SM takes output tiles (64 query rows per consumer
 * warpgroup, of one head) from an atomic counter until none is left. A block
 * has three or four warpgroups:
 *   - warpgroup 0, the producer (kernels/sm90a/producer.cuh): one thread
 *     issues the TMA copies of each tile's Q and, for each key tile, of K and
 *     V into a ring of STAGES shared-memory stages; an mbarrier per stage and
 *     operand says "landed" (transaction bytes), one per stage and operand
 *     says "free again" (consumer arrivals: K as soon as its Q K^T is done, V
 *     after its P V; kernels/sm90a/layout.cuh). It loads the next tile's Q
 *     and K/V while the consumers finish the current one, hands them the
 *     tile's coordinates through shared memory (kernels/sm90a/tile_handoff.cuh),
 *     and gives its registers away (setmaxnreg).
 *   - warpgroups 1 and 2 (and 3 at D = 32, 64 and 96), the consumers
 *     (kernels/sm90a/mainloop.cuh): 64 query rows each; Q K^T, the online
 *     softmax and P V per key tile, ping-pong turns at D = 128; O goes to
 *     global memory straight from the accumulators (kernels/sm90a/epilogue.cuh).
 *   - What every lane of a warp computes alike (the warpgroup, the tile, its
 *     ring stages and barrier addresses) is made warp-uniform, so that it
 *     lives in uniform registers, off the vector pipes the softmax needs.
 * The kernel body is the dispatch of these roles (kernels/sm90a/kernel.cuh). */
#include "flash_fwd_sm90a.h"

#include "sm90a/configs.cuh"
#include "sm90a/kernel.cuh"
#include "sm90a/launch.cuh"

ATTNPROF_SM90A_DEFAULTS(ATTNPROF_SM90A_KERNEL)

namespace {

const Sm90aEntry sm90a_entries[] = {ATTNPROF_SM90A_DEFAULTS(ATTNPROF_SM90A_ENTRY)};
const int sm90a_entry_count = (int)(sizeof sm90a_entries / sizeof sm90a_entries[0]);

} // namespace
