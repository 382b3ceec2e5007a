"""Yardsticks of the streamed scan, measured in the run that measures it.

The bus: host-to-device alone, device-to-host alone, and both at once on two streams, over the
same bytes, from pinned and from pageable memory. What users do today: torch's round trip
(`x.cuda(); torch.cumsum; .cpu()`) from pinned and pageable memory, and numpy.cumsum on the host.
Prints one Markdown table; GB/s count the input's bytes (each way).

Usage: python3 streamed.py LOG2_N [REPEATS]
"""

import sys
import time

import numpy as np
import torch


def gbps(nbytes, seconds):
    return nbytes / seconds / 1e9


def median(f, repeats):
    f()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t = time.perf_counter()
        f()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def main():
    log2 = int(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    n = 1 << log2
    nbytes = 4 * n
    free, _ = torch.cuda.mem_get_info()
    rows = []
    dev = torch.empty(n, dtype=torch.int32, device="cuda")
    back = torch.empty(n, dtype=torch.int32, device="cuda")
    up, down = torch.cuda.Stream(), torch.cuda.Stream()
    for kind in ["pinned", "pageable"]:
        host = torch.randint(0, 1000, (n,), dtype=torch.int32, pin_memory=(kind == "pinned"))
        out = torch.empty(n, dtype=torch.int32, pin_memory=(kind == "pinned"))
        h2d = median(lambda: dev.copy_(host, non_blocking=True), repeats)
        d2h = median(lambda: out.copy_(dev, non_blocking=True), repeats)

        def both():
            with torch.cuda.stream(up):
                dev.copy_(host, non_blocking=True)
            with torch.cuda.stream(down):
                out.copy_(back, non_blocking=True)

        rt = median(both, repeats)
        rows.append((f"bus H2D alone, {kind}", h2d))
        rows.append((f"bus D2H alone, {kind}", d2h))
        rows.append((f"bus H2D and D2H at once, {kind}", rt))
        if 3 * nbytes < free:
            torch_rt = median(lambda: out.copy_(torch.cumsum(host.cuda(non_blocking=True), 0, dtype=torch.int32)), repeats)
            rows.append((f"torch x.cuda(); cumsum; .cpu(), {kind}", torch_rt))
        else:
            rows.append((f"torch x.cuda(); cumsum; .cpu(), {kind}: does not fit the device", float("nan")))
        if kind == "pageable":
            # Into the output array: a fresh result each time would hold a third copy of the input.
            a, b = host.numpy(), out.numpy()
            rows.append(("numpy.cumsum (host)", median(lambda: np.cumsum(a, dtype=np.int32, out=b), max(1, repeats // 2))))
        del host, out
    print(f"| 2^{log2} i32 ({nbytes / 2**30:.0f} GiB) | ms | GB/s each way |")
    print("|---|---:|---:|")
    for what, s in rows:
        print(f"| {what} | {s * 1e3:.1f} | {gbps(nbytes, s):.1f} |")


if __name__ == "__main__":
    main()
