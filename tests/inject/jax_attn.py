"""An attention block in JAX (jit), with no profiler code: for `attnprof record`.

JAX emits no NVTX range of its own here, so record's steps come from the period of the
kernel sequence (XLA's fusions and cuBLAS GEMMs repeat once per call)."""
import sys
import time

import jax
import jax.numpy as jnp


def block(x, wqkv, wo, heads):
    b, s, d = x.shape
    q, k, v = jnp.split(x @ wqkv, 3, axis=-1)
    q, k, v = (t.reshape(b, s, heads, d // heads) for t in (q, k, v))
    a = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    return x + a.reshape(b, s, d) @ wo


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    key = jax.random.PRNGKey(0)
    b, s, d, heads = 2, 1024, 1024, 8
    x = jax.random.normal(key, (b, s, d), jnp.bfloat16)
    wqkv = jax.random.normal(key, (d, 3 * d), jnp.bfloat16) * 0.02
    wo = jax.random.normal(key, (d, d), jnp.bfloat16) * 0.02
    f = jax.jit(block, static_argnums=3)
    f(x, wqkv, wo, heads).block_until_ready()
    t0 = time.time()
    for _ in range(steps):
        y = f(x, wqkv, wo, heads)
        y.block_until_ready()
        time.sleep(0.002)  # a host pause between steps, as a serving loop has
    print(f"jax_attn: {steps} steps, {(time.time() - t0) / steps * 1e3:.3f} ms per step, {jax.devices()[0]}")


if __name__ == "__main__":
    main()
