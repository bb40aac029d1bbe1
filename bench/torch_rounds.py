"""Interleaved timing rounds, shared by the benchmarks that set our kernels beside PyTorch in
one process (bench/fused_bench.sh, bench/flash_sm90a_torch.py).

Each round times every implementation in turn: `warm` untimed launches, then `iters` launches
back to back with a device event after each, rotating among the input sets (enough of them to
exceed the L2). Clock or power drift during the run then spreads over all implementations
instead of favouring the ones timed first. An interval between two events is one launch plus
the gap to the next, in microseconds."""


def interleaved_rounds(impls, sets, rounds, iters, warm, event, synchronize):
    """impls: [(name, run(q, k, v))]; sets: [(q, k, v)]; event(): a new timing event with
    record() and elapsed_time(other) in ms; synchronize(): waits for the device.
    Returns ({name: every interval, µs}, {name: each round's median, µs})."""
    samples = {n: [] for n, _ in impls}
    round_medians = {n: [] for n, _ in impls}
    for _ in range(rounds):
        for name, run in impls:
            for i in range(warm):
                run(*sets[i % len(sets)])
            ev = [event() for _ in range(iters + 1)]
            ev[0].record()
            for i in range(iters):
                run(*sets[(i + 1) % len(sets)])
                ev[i + 1].record()
            synchronize()
            t = sorted(ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(iters))
            samples[name] += t
            round_medians[name].append(t[iters // 2])
    return samples, round_medians


def spread(samples):
    """Median, 10th and 90th percentile of one implementation's intervals, as the tables
    print them ("median | p10-p90")."""
    t = sorted(samples)
    return t[len(t) // 2], t[len(t) // 10], t[(len(t) * 9) // 10]


def print_table(impls, samples, flops, diff, round_medians=None):
    """The table both harnesses print, one row per implementation: median and
    p10-p90 of its intervals (and the range of its round medians, when given),
    TFLOP/s at that median, and diff(name, run), the text of the last column."""
    print("| implementation | median us | p10-p90 us |" + (" round medians us |" if round_medians else "") +
          " TFLOP/s | rel diff vs torch flash |")
    print("| --- | ---: | --- |" + (" --- |" if round_medians else "") + " ---: | ---: |")
    for name, run in impls:
        m, p10, p90 = spread(samples[name])
        cols = [name, f"{m:.1f}", f"{p10:.1f}-{p90:.1f}"]
        if round_medians:
            cols.append(f"{min(round_medians[name]):.1f}-{max(round_medians[name]):.1f}")
        cols += [f"{flops / (m * 1e-6) / 1e12:.1f}", diff(name, run)]
        print("| " + " | ".join(cols) + " |", flush=True)


def sdpa_impls(backends, probe, causal, shape_text):
    """[(name, run(q, k, v))] for PyTorch's SDPA on each (name, SDPBackend) of
    backends that runs on the inputs probe; one line for each that does not.
    (PyTorch is imported here, so that the rest of this module needs none.)"""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    impls = []
    for name, be in backends:
        def run(q, k, v, be=be):
            with sdpa_kernel(be):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        try:
            run(*probe)
            impls.append((name, run))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name} {shape_text}: unavailable: {e}")
    return impls
