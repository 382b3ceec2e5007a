"""gpu_scan on the GPU, against torch and NumPy on the CPU.

Integer results and float results of integer-valued inputs are compared exactly (any summation
order gives them bit for bit); random float inputs within a bound a dropped or doubled tile
would break. Sizes cover 0, 1, 31, 33, tile edges, primes and one array above 2^31 elements.
"""

import pytest

import gpu_scan

pytestmark = pytest.mark.gpu

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

SIZES = [0, 1, 31, 33, 4095, 4097, 65537, 100003, (1 << 20) + 7]
SAME_TYPE = ["uint8", "uint16", "uint32", "int32", "uint64", "int64", "float32", "float64"]


def small_values(n, dtype, seed=0, high=4):
    """Values in [0, high), as a CUDA tensor of `dtype`: their sums and running extrema are exact."""
    g = np.random.default_rng(seed)
    host = g.integers(0, high, n).astype(np.dtype(dtype))
    return torch.from_numpy(host).cuda(), host


def numpy_scan(host, op, exclusive, out_dtype):
    x = host.astype(out_dtype)
    ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
             "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    inc = ufunc.accumulate(x, dtype=x.dtype) if x.size else x.copy()  # NumPy widens small integers otherwise
    if not exclusive:
        return inc
    identity = {"add": 0, "mul": 1, "and": ~np.array(0, dtype=x.dtype) if x.dtype.kind in "iu" else 0, "or": 0, "xor": 0,
                "max": np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf,
                "min": np.iinfo(x.dtype).max if x.dtype.kind in "iu" else np.inf}[op]
    return np.concatenate([np.array([identity], dtype=x.dtype), inc[:-1]]) if x.size else inc


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", SAME_TYPE)
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum_same_type_is_exact(n, dtype, exclusive):
    x, host = small_values(n, dtype)
    y = gpu_scan.cumsum(x, dtype=x.dtype, exclusive=exclusive)
    assert y.dtype == x.dtype and y.shape == x.shape and y.device == x.device
    np.testing.assert_array_equal(y.cpu().numpy(), numpy_scan(host, "add", exclusive, host.dtype))


@pytest.mark.parametrize("op", ["max", "min", "and", "or", "xor", "mul"])
@pytest.mark.parametrize("dtype", ["uint32", "int64", "float32"])
@pytest.mark.parametrize("n", [1, 33, 100003])
def test_every_operator(op, dtype, n):
    if op in ("and", "or", "xor") and dtype == "float32":
        pytest.skip("bitwise operators are for integers")
    high = 2 if op == "mul" else 1000
    x, host = small_values(n, dtype, seed=1, high=high)
    if op == "mul":
        host = host + 1  # ones and twos: products wrap exactly for integers
        x = torch.from_numpy(host).cuda()  # torch has no CUDA add for uint32
        if dtype == "float32":
            x, host = torch.ones_like(x), np.ones_like(host)
    for exclusive in (False, True):
        y = gpu_scan.scan(x, op, exclusive=exclusive)
        np.testing.assert_array_equal(y.cpu().numpy(), numpy_scan(host, op, exclusive, host.dtype))


def test_defaults_follow_torch():
    x = torch.arange(10, device="cuda", dtype=torch.int32)
    assert gpu_scan.cumsum(x).dtype == torch.cumsum(x, 0).dtype == torch.int64
    for dtype in (torch.bool, torch.int8, torch.int16, torch.int64, torch.float64):
        y = torch.ones(10, device="cuda", dtype=dtype)
        assert gpu_scan.cumsum(y).dtype == torch.cumsum(y, 0).dtype, dtype
    u32 = torch.from_numpy(np.ones(10, dtype=np.uint32)).cuda()  # torch may lack this cumsum; its rule: int64
    assert gpu_scan.cumsum(u32).dtype == torch.int64 and gpu_scan.cumsum(u32).tolist() == list(range(1, 11))
    u = torch.ones(100, device="cuda", dtype=torch.uint8)
    assert gpu_scan.cumsum(u).dtype == torch.int64
    assert torch.equal(gpu_scan.cumsum(u), torch.cumsum(u, 0))
    f = torch.ones(5, device="cuda")
    assert gpu_scan.cummax(f).dtype == torch.float32


@pytest.mark.parametrize("src,dst", [
    ("uint8", "int64"), ("uint8", "uint32"), ("int8", "int64"), ("bool", "int64"), ("int16", "int64"),
    ("uint16", "uint32"), ("int32", "int64"), ("uint32", "uint64"), ("float16", "float32"), ("bfloat16", "float32"),
])
@pytest.mark.parametrize("n", [1, 4097, 1000003])
def test_widening_sums_read_each_element_at_its_width(src, dst, n):
    g = torch.Generator(device="cpu").manual_seed(3)
    if src == "bool":
        host = torch.randint(0, 2, (n,), generator=g).bool()
    elif src in ("float16", "bfloat16"):
        host = torch.randint(0, 3, (n,), generator=g).to(getattr(torch, src))
    else:
        host = torch.randint(0, 100, (n,), generator=g).to(getattr(torch, src))
    y = gpu_scan.cumsum(host.cuda(), dtype=getattr(torch, dst))
    assert y.dtype == getattr(torch, dst)
    want = torch.cumsum(host.to(torch.float64 if dst == "float32" else torch.int64), 0)
    assert torch.equal(y.cpu().to(want.dtype), want)


@pytest.mark.parametrize("shape,dim", [
    ((1 << 20, 8), 0), ((1 << 20, 8), 1), ((8, 1 << 20), 0), ((8, 1 << 20), 1), ((33, 31), 0), ((33, 31), 1),
    ((0, 8), 0), ((8, 0), 1), ((5, 7, 9), 1), ((5, 7, 9), 0), ((5, 7, 9), -1), ((1, 1000), 0),
])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_along_a_dimension_matches_torch(shape, dim, dtype):
    x = torch.randint(0, 4, shape, device="cuda").to(getattr(torch, dtype))
    for exclusive in (False, True):
        y = gpu_scan.cumsum(x, dim, dtype=x.dtype, exclusive=exclusive)
        want = torch.cumsum(x.cpu().double(), dim)
        if exclusive:
            want = want - x.cpu().double()
        assert y.shape == x.shape
        assert torch.equal(y.cpu().double(), want)


def test_flattened_without_dim_as_numpy_does():
    x = torch.arange(12, device="cuda", dtype=torch.int64).reshape(3, 4)
    np.testing.assert_array_equal(gpu_scan.cumsum(x).cpu().numpy(), np.cumsum(x.cpu().numpy()))


def test_out_is_written_and_checked():
    x = torch.ones(1000, device="cuda", dtype=torch.int32)
    out = torch.empty_like(x)
    assert gpu_scan.cumsum(x, dtype=torch.int32, out=out) is out
    assert torch.equal(out.cpu(), torch.arange(1, 1001, dtype=torch.int32))
    with pytest.raises(ValueError, match="out has shape"):
        gpu_scan.cumsum(x, dtype=torch.int32, out=torch.empty(999, device="cuda", dtype=torch.int32))


def test_random_floats_within_a_bound_a_dropped_tile_would_break():
    n = 1 << 20
    g = torch.Generator(device="cpu").manual_seed(5)
    host = torch.rand(n, generator=g, dtype=torch.float64) + 0.5
    # Every element is at least 0.5, so a lost or doubled tile (256 elements or more) moves a
    # prefix by 128 or more; rounding moves none by more than 16 (f32: an ulp of 1/8 at most per
    # step of a chain of at most 256 tiles) or by 1e-6 (f64).
    for dtype, bound in ((torch.float32, 32.0), (torch.float64, 1e-6)):
        x = host.to(dtype)
        y = gpu_scan.cumsum(x.cuda(), dtype=dtype).cpu().double()
        err = (y - torch.cumsum(x.double(), 0)).abs().max().item()
        assert err <= bound, f"{dtype}: error {err} above {bound}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_deterministic_floats_are_identical_run_after_run(dtype):
    x = torch.randn(1 << 22, device="cuda", dtype=dtype)
    first = gpu_scan.cumsum(x, deterministic=True)
    for _ in range(3):
        assert torch.equal(gpu_scan.cumsum(x, deterministic=True), first)


def test_init_and_exclusive():
    x = torch.arange(1, 6, device="cuda", dtype=torch.int64)
    assert gpu_scan.scan(x, "add", init=10).tolist() == [11, 13, 16, 20, 25]
    assert gpu_scan.scan(x, "add", init=10, exclusive=True).tolist() == [10, 11, 13, 16, 20]


def test_above_2_31_elements():
    n = (1 << 31) + 5
    free, _ = torch.cuda.mem_get_info()
    if free < n * 10:
        pytest.skip("not enough device memory")
    x = torch.ones(n, device="cuda", dtype=torch.uint8)
    y = gpu_scan.cumsum(x)
    assert y.dtype == torch.int64 and y.shape == (n,)
    at = torch.tensor([0, 1 << 31, (1 << 31) - 1, n - 1], device="cuda")
    assert (y[at].cpu() == at.cpu() + 1).all()
    step = y[:: 1 << 20].cpu()
    assert torch.equal(step, torch.arange(0, n, 1 << 20) + 1)
    del y
    z = gpu_scan.cumsum(x, dtype=torch.uint8)
    assert int(z[-1]) == n % 256


# torch.cuda._sleep spins this many GPU clock cycles: about half a second at the 1.6-2 GHz of an
# H100 or H200, far longer than any call here takes to return once its kernels are loaded.
SLEEP_CYCLES = 1 << 30


def test_runs_on_the_callers_stream():
    n = 1 << 24
    x = torch.ones(n, device="cuda", dtype=torch.int32)
    gpu_scan.cumsum(x, dtype=torch.int32)  # loads the kernels now, not while the stream sleeps
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.mul_(3)  # runs on s after the sleep: work on any other stream would read ones
        y = gpu_scan.cumsum(x, dtype=torch.int32)
        assert not s.query(), "the call waited for the stream"
        y.add_(0)
    s.synchronize()
    assert int(y[-1]) == 3 * n
    assert int(y[12345]) == 3 * 12346


@pytest.mark.parametrize("function", ["sort", "compact", "nonzero"])
def test_sort_compact_and_nonzero_run_on_the_callers_stream(function):
    n = 1 << 22
    g = torch.Generator(device="cpu").manual_seed(23)
    host = torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32)
    values = host.cuda()
    x = torch.zeros_like(values)
    call = {
        "sort": lambda: gpu_scan.sort(x),
        "compact": lambda: gpu_scan.compact(x, x > 0),
        "nonzero": lambda: gpu_scan.nonzero(x > 0),
    }[function]
    call()  # loads the kernels now, not while the stream sleeps
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(values)  # on s after the sleep: work on any other stream would read zeros
        y = call()
        if function == "sort":  # compact and nonzero read their count back, so they wait
            assert not s.query(), "sort waited for the stream"
    s.synchronize()
    want = {
        "sort": torch.sort(host, stable=True).values,
        "compact": host[host > 0],
        "nonzero": torch.nonzero(host > 0).reshape(-1),
    }[function]
    assert torch.equal(y.cpu(), want)


def test_calls_on_foreign_arrays_wait_for_their_work_and_on_torch_arrays_do_not():
    class Interface:
        """An array of no framework the package knows, so it is viewed through CuPy or torch."""

        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    helper = gpu_scan._arrays.adapters()[0]
    if helper.stream(0) != torch.cuda.current_stream(0).cuda_stream:
        pytest.skip(f"{helper.name}'s current stream is not torch's, so a sleep on torch's does not hold it up")
    n = 1 << 20
    x = torch.ones(n, device="cuda:0", dtype=torch.int32)
    gpu_scan.cumsum(x, dtype=torch.int32)  # loads the kernels now
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    y = gpu_scan.cumsum(x, dtype=torch.int32)
    assert not torch.cuda.current_stream().query(), "a call on a torch tensor waited for its work"
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    z = gpu_scan.cumsum(Interface(x), dtype="int32")
    assert torch.cuda.current_stream().query(), "a call on a foreign array returned before its work was done"
    assert int(y[-1]) == n and int(z[-1]) == n


def test_calls_leave_the_threads_current_context_as_they_found_it():
    import ctypes
    import threading

    cuda = ctypes.CDLL("libcuda.so.1")

    def current():
        ctx = ctypes.c_void_p()
        assert cuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
        return ctx.value

    seen = []

    def fresh_thread():  # a new thread starts with no current context
        seen.append(current())
        gpu_scan._native.open_device(0)
        gpu_scan._native.synchronize(0, 0)
        gpu_scan.empty_cache()
        seen.append(current())

    t = threading.Thread(target=fresh_thread)
    t.start()
    t.join()
    assert seen == [None, None]
    if torch.cuda.device_count() < 2:
        return
    with torch.cuda.device(0):
        x = torch.arange(1000, device="cuda:1")
        before = current()
        y = gpu_scan.cumsum(x)
        assert current() == before and torch.cuda.current_device() == 0
        assert torch.equal(y.cpu(), torch.cumsum(x.cpu(), 0))


def test_out_of_device_memory_is_the_packages_error():
    # Every public function allocates its outputs with the framework, whose own error would come
    # first, so the native scan by key is called directly: with one-byte keys it takes a byte of
    # temporary storage per element before it launches anything, here 2^39 (512 GiB), more than
    # any GPU has. Its addresses are real but short; nothing reads them, as the allocation fails.
    n = 1 << 39
    keys = torch.zeros(16, device="cuda", dtype=torch.uint8)
    x = torch.ones(16, device="cuda", dtype=torch.int32)
    y = torch.empty_like(x)
    stream = torch.cuda.current_stream(x.device).cuda_stream
    with pytest.raises(gpu_scan.Error, match="out of device memory"):
        gpu_scan._native.scan_by_key("u8", "i32", "add", False, keys.data_ptr(), x.data_ptr(), y.data_ptr(), n,
                                     x.device.index, stream)
    assert gpu_scan.scan_by_key(keys, x).tolist() == list(range(1, 17)), "the stream's storage still works"


def test_repeated_calls_allocate_nothing():
    x = torch.ones(1 << 24, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    gpu_scan.cumsum(x, out=out)
    torch.cuda.synchronize()
    # (streams, bytes, allocations) of the package's temporary storage: a free and a new
    # allocation of the same size would leave the free memory as it was, not the count.
    kept = gpu_scan._native._temp_storage()
    assert kept[1] > 0 and kept[2] > 0, "the first call kept its temporary storage"
    free = torch.cuda.mem_get_info()[0]
    for _ in range(10):
        gpu_scan.cumsum(x, out=out)
    torch.cuda.synchronize()
    assert gpu_scan._native._temp_storage() == kept
    assert torch.cuda.mem_get_info()[0] == free


def test_empty_cache_waits_for_queued_work_then_frees():
    x = torch.ones(1 << 26, device="cuda", dtype=torch.int32)
    gpu_scan.cumsum(x, dtype=x.dtype)
    assert gpu_scan._native._temp_storage()[1] > 0
    y = gpu_scan.cumsum(x, dtype=x.dtype)  # queued, not waited for
    gpu_scan.empty_cache()
    assert gpu_scan._native._temp_storage() == (0, 0, 0)
    assert int(y[-1]) == 1 << 26
    assert int(gpu_scan.cumsum(x, dtype=x.dtype)[-1]) == 1 << 26
    assert gpu_scan._native._temp_storage()[0] == 1


def test_streams_that_come_and_go_keep_a_bounded_cache_and_correct_results():
    cupy = pytest.importorskip("cupy")
    n = 100003
    x = cupy.ones(n, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    results = []
    for _ in range(150):
        # Each stream is destroyed with its work still queued; a new one may get its handle back.
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            results.append(gpu_scan.cumsum(x, dtype=x.dtype))
        del s
    cupy.cuda.Device().synchronize()
    assert gpu_scan._native._temp_storage()[0] <= 64
    assert all(int(y[-1]) == n for y in results)


def test_per_thread_default_streams_of_two_threads():
    cupy = pytest.importorskip("cupy")
    import threading

    n = 1 << 22
    x = cupy.ones(n, dtype=cupy.int32)
    cupy.cuda.Device().synchronize()
    wrong = []

    def work():
        with cupy.cuda.Stream.ptds:  # handle 2: another stream in each thread
            ys = [gpu_scan.cumsum(x, dtype=x.dtype) for _ in range(50)]
            cupy.cuda.get_current_stream().synchronize()
            wrong.extend(int(y[-1]) for y in ys if int(y[-1]) != n)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_interface_arrays_are_viewed_on_their_own_device():
    class Interface:
        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    last = torch.cuda.device_count() - 1
    t = torch.arange(1000, device=f"cuda:{last}")
    with torch.cuda.device(0):
        v = gpu_scan._arrays.Torch().view_interface(Interface(t))
    assert v.device == t.device and v.data_ptr() == t.data_ptr()


def test_errors_are_python_exceptions_with_the_librarys_words():
    x = torch.ones(10, device="cuda")
    with pytest.raises(ValueError, match="not contiguous"):
        gpu_scan.cumsum(torch.ones(10, 10, device="cuda").t(), 0)
    with pytest.raises(ValueError, match="not on a CUDA device"):
        gpu_scan.cumsum(torch.ones(10))
    with pytest.raises(TypeError):
        gpu_scan.scan(x, "xor")
    with pytest.raises(TypeError):
        gpu_scan.cumsum(torch.ones(10, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match="as many"):
        gpu_scan.segmented_scan(x, torch.ones(9, device="cuda", dtype=torch.bool))
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match="device"):
            gpu_scan.scan_by_key(torch.ones(10, device="cuda:1", dtype=torch.int32), x)


@pytest.mark.parametrize("n", [1, 33, 4097, 100003, 1 << 22])
@pytest.mark.parametrize("exclusive", [False, True])
def test_segmented_scan_and_scan_by_key(n, exclusive):
    g = np.random.default_rng(7)
    values = g.integers(0, 100, n).astype(np.int64)
    keys = np.cumsum(g.random(n) < 1 / 16).astype(np.int32)
    heads = np.r_[True, keys[1:] != keys[:-1]]
    totals = np.cumsum(values)
    segment = np.cumsum(heads) - 1
    before = (totals - values)[np.flatnonzero(heads)]  # the sum before each segment
    want = totals - before[segment] - (values if exclusive else 0)
    v = torch.from_numpy(values).cuda()
    by_heads = gpu_scan.segmented_scan(v, torch.from_numpy(heads).cuda(), exclusive=exclusive)
    by_keys = gpu_scan.scan_by_key(torch.from_numpy(keys).cuda(), v, exclusive=exclusive)
    np.testing.assert_array_equal(by_heads.cpu().numpy(), want)
    np.testing.assert_array_equal(by_keys.cpu().numpy(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [0, 1, 33, 100003])
def test_linear_recurrence(dtype, n):
    g = torch.Generator(device="cpu").manual_seed(9)
    a = torch.rand(n, generator=g, dtype=torch.float64) * 0.5 + 0.25
    b = torch.rand(n, generator=g, dtype=torch.float64)
    y = gpu_scan.linear_recurrence(a.to(dtype).cuda(), b.to(dtype).cuda(), x0=2.0).cpu().double()
    want, x = torch.empty(n, dtype=torch.float64), 2.0
    for t in range(n):
        x = float(a[t]) * x + float(b[t])
        want[t] = x
    assert y.shape == (n,)
    assert torch.allclose(y, want, rtol=1e-4 if dtype == torch.float32 else 1e-12, atol=0)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float64])
@pytest.mark.parametrize("n", [0, 1, 33, 100003, 1 << 22])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_stable_argsort(dtype, n, descending):
    g = torch.Generator(device="cpu").manual_seed(11)
    host = torch.randint(-50, 50, (n,), generator=g).to(dtype)  # many equal keys
    x = host.cuda()
    s = gpu_scan.sort(x, descending=descending)
    p = gpu_scan.argsort(x, descending=descending)
    want_s, want_p = torch.sort(host, descending=descending, stable=True)
    assert torch.equal(s.cpu(), want_s)
    assert p.dtype == torch.int64 and torch.equal(p.cpu(), want_p)
    both_s, both_p = gpu_scan.sort(x, descending=descending, return_indices=True)
    assert torch.equal(both_s.cpu(), want_s) and both_p.dtype == torch.int64 and torch.equal(both_p.cpu(), want_p)
    assert torch.equal(x.cpu(), host), "the input is left as it was"


def test_float_sort_order_of_signed_zeros_and_nans():
    x = torch.tensor([float("nan"), 0.0, -0.0, -1.0, 1.0], device="cuda")
    s = gpu_scan.sort(x).cpu()
    assert s[:4].tolist() == [-1.0, 0.0, 0.0, 1.0] and torch.signbit(s[1]) and not torch.signbit(s[2])
    assert torch.isnan(s[4])


@pytest.mark.parametrize("n", [0, 1, 33, 100003, 1 << 22])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.float64])
def test_compact_and_nonzero(n, dtype):
    g = torch.Generator(device="cpu").manual_seed(13)
    host = torch.randint(0, 10, (n,), generator=g).to(dtype)
    mask = host > 4
    kept = gpu_scan.compact(host.cuda(), mask.cuda())
    at = gpu_scan.nonzero(mask.cuda())
    assert torch.equal(kept.cpu(), host[mask])
    assert at.dtype == torch.int64 and torch.equal(at.cpu(), torch.nonzero(mask).reshape(-1))


@pytest.mark.parametrize("n", [0, 1, 4097, 1 << 22])
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32])
def test_histogram(n, dtype):
    g = torch.Generator(device="cpu").manual_seed(17)
    host = (torch.rand(n, generator=g, dtype=torch.float64) * 12 - 1).to(dtype)
    counts = gpu_scan.histogram(host.cuda(), 10, (0.0, 10.0)).cpu()
    want, _ = np.histogram(host.double().numpy(), bins=10, range=(0.0, 10.0))
    inside = (host.double() >= 0) & (host.double() < 10)
    want[-1] -= int(((host.double() == 10.0)).sum())  # NumPy's last bin is closed; ours is half-open
    assert counts.dtype == torch.int64 and int(counts.sum()) == int(inside.sum())
    np.testing.assert_array_equal(counts.numpy(), want)


def test_cupy_arrays_stay_cupy():
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(100003, dtype=cupy.int32)
    y = gpu_scan.cumsum(x, dtype=x.dtype)
    assert isinstance(y, cupy.ndarray) and y.dtype == cupy.int32
    np.testing.assert_array_equal(y.get(), np.cumsum(np.arange(100003, dtype=np.int32), dtype=np.int32))
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        z = cupy.ones(1 << 24, dtype=cupy.float32) * 2
        w = gpu_scan.cumsum(z, out=cupy.empty_like(z))
    s.synchronize()
    assert float(w[-1]) == 2 * (1 << 24)
    m = cupy.arange(12, dtype=cupy.int64).reshape(3, 4)
    np.testing.assert_array_equal(gpu_scan.cumsum(m, axis=0).get(), np.cumsum(m.get(), axis=0))


def test_jax_arrays_stay_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    x = jnp.arange(100003, dtype=jnp.int32)
    y = gpu_scan.cumsum(x, dtype="int32")
    assert isinstance(y, jax.Array)
    np.testing.assert_array_equal(np.asarray(y), np.cumsum(np.arange(100003, dtype=np.int32), dtype=np.int32))
    s = gpu_scan.sort(jnp.array([3.0, 1.0, 2.0], dtype=jnp.float32))
    assert isinstance(s, jax.Array) and np.asarray(s).tolist() == [1.0, 2.0, 3.0]


def test_numba_arrays_through_the_interface():
    numba_cuda = pytest.importorskip("numba.cuda")
    x = numba_cuda.to_device(np.arange(1000, dtype=np.int64))
    y = gpu_scan.cumsum(x)
    np.testing.assert_array_equal(y.copy_to_host(), np.cumsum(np.arange(1000)))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 33, 4097, 100003])
def test_cumprod_and_cummin_by_name(dtype, n):
    g = np.random.default_rng(19)
    factors = g.choice(np.array([-1, 1]), n)
    factors[g.choice(n, min(n, 40), replace=False)] = 2  # products up to 2^40 in size: exact in every type
    t = torch.from_numpy(factors.astype(dtype))
    p = gpu_scan.cumprod(t.cuda())
    want = torch.cumprod(t, 0)  # int32 into int64, as torch's rule
    assert p.dtype == want.dtype and torch.equal(p.cpu(), want)
    v = torch.from_numpy(g.integers(-1000, 1000, n).astype(dtype))
    m = gpu_scan.cummin(v.cuda())
    assert m.dtype == v.dtype and torch.equal(m.cpu(), torch.cummin(v, 0).values)


def narrow_values(shape, dtype, seed):
    """Values that fill a narrow integer type, signs included, as a CPU tensor of `dtype`."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=g).to(dtype)
    return torch.randint(-128, 128, shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.bool, torch.uint8, torch.int32])
@pytest.mark.parametrize("n", [1, 4097, 1000003])
def test_narrow_integers_sum_into_int64_by_default(dtype, n):
    host = narrow_values((n,), dtype, 29)
    want = torch.cumsum(host, 0)
    for exclusive in (False, True):
        y = gpu_scan.cumsum(host.cuda(), exclusive=exclusive)
        assert y.dtype == want.dtype == torch.int64
        assert torch.equal(y.cpu(), want - host.to(torch.int64) if exclusive else want)


def test_float16_sums_are_refused_by_default_with_the_way_out():
    x = torch.ones(10, device="cuda", dtype=torch.float16)
    with pytest.raises(TypeError, match="dtype='float32'"):
        gpu_scan.cumsum(x)
    y = gpu_scan.cumsum(x, dtype=torch.float32)
    assert y.dtype == torch.float32 and y.tolist() == list(range(1, 11))


DIM_CASES = [((4097, 8), 0), ((8, 4097), 1), ((5, 7, 9), 1), ((5, 7, 9), 0), ((33, 31), 0), ((1 << 16, 4), 0)]


@pytest.mark.parametrize("shape,dim", DIM_CASES)
@pytest.mark.parametrize("name", ["cumprod", "cummin", "cummax"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float64])
def test_dim_scans_of_other_operators_match_torch(shape, dim, name, dtype):
    g = torch.Generator(device="cpu").manual_seed(31)
    if name == "cumprod":
        # ±1, and a 2 for about one element in 4096: each line's products stay exact.
        host = (torch.randint(0, 2, shape, generator=g) * 2 - 1).to(dtype)
        host[torch.rand(shape, generator=g) < 1 / 4096] = 2
        want = torch.cumprod(host, dim)
    else:
        host = torch.randint(-1000, 1000, shape, generator=g).to(dtype)
        want = getattr(torch, name)(host, dim).values
    y = getattr(gpu_scan, name)(host.cuda(), dim)
    assert y.dtype == want.dtype and y.shape == want.shape
    assert torch.equal(y.cpu(), want)


@pytest.mark.parametrize("shape,dim", DIM_CASES)
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.bool, torch.int32])
def test_dim_sums_of_narrow_integers_into_int64_by_default(shape, dim, dtype):
    host = narrow_values(shape, dtype, 37)
    y = gpu_scan.cumsum(host.cuda(), dim)
    want = torch.cumsum(host, dim)
    assert y.dtype == want.dtype == torch.int64 and torch.equal(y.cpu(), want)


@pytest.mark.parametrize("shape,dim", DIM_CASES)
def test_out_along_a_dimension(shape, dim):
    g = torch.Generator(device="cpu").manual_seed(41)
    host = torch.randint(-100, 100, shape, generator=g, dtype=torch.int32)
    x = host.cuda()
    out = torch.empty(shape, device="cuda", dtype=torch.int64)
    assert gpu_scan.cumsum(x, dim, out=out) is out  # int32 sums into int64 by default
    assert torch.equal(out.cpu(), torch.cumsum(host, dim))
    same = torch.empty_like(x)
    assert gpu_scan.cummax(x, dim, out=same) is same
    assert torch.equal(same.cpu(), torch.cummax(host, dim).values)
    with pytest.raises(ValueError, match="out has shape"):
        gpu_scan.cumsum(x, dim, out=torch.empty_like(x))  # the default result is int64


def test_out_sharing_memory_with_x_is_refused_unless_it_is_x_for_one_line():
    x = torch.arange(64, device="cuda", dtype=torch.int64).reshape(8, 8)
    for dim in (0, 1):
        with pytest.raises(ValueError, match="out is x"):
            gpu_scan.cumsum(x, dim, out=x)
    buf = torch.arange(72, device="cuda", dtype=torch.int64)
    for dim in (0, 1):
        with pytest.raises(ValueError, match="without being x itself"):
            gpu_scan.cumsum(buf[:64].view(8, 8), dim, out=buf[8:].view(8, 8))
    assert torch.equal(x.cpu(), torch.arange(64).reshape(8, 8)) and torch.equal(buf.cpu(), torch.arange(72))

    v = torch.arange(100003, device="cuda", dtype=torch.int64)
    want = torch.cumsum(v.cpu(), 0)
    assert gpu_scan.cumsum(v, out=v) is v and torch.equal(v.cpu(), want)
    w = torch.arange(1001, device="cuda", dtype=torch.int64)
    for x1, out in ((w[1:], w[:-1]), (w[:-1], w[1:])):
        with pytest.raises(ValueError, match="without being x itself"):
            gpu_scan.cumsum(x1, out=out)
    assert torch.equal(w.cpu(), torch.arange(1001))

    b = torch.ones(800, device="cuda", dtype=torch.uint8)
    with pytest.raises(ValueError, match="wider dtype"):
        gpu_scan.cumsum(b[:100], out=b.view(torch.int64))  # the same first byte, eight times the bytes


UNSIGNED_KEYS = {
    "uint32": [0, 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1],
    "uint64": [0, 1, 2**32, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1],
}


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("n", [1, 33, 100003])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_of_unsigned_keys_matches_numpy(dtype, n, descending):
    g = np.random.default_rng(43)
    levels = np.array(UNSIGNED_KEYS[dtype], dtype=dtype)  # many equal keys, top bits set and not
    host = levels[g.integers(0, len(levels), n)]
    x = torch.from_numpy(host).cuda()
    s = gpu_scan.sort(x, descending=descending)
    p = gpu_scan.argsort(x, descending=descending)
    order = np.argsort(~host if descending else host, kind="stable")  # ~ reverses unsigned order
    np.testing.assert_array_equal(s.cpu().numpy(), host[order])
    np.testing.assert_array_equal(p.cpu().numpy(), order)


def segment_sums(values, heads, exclusive):
    """The sums of each segment's values up to each element (before it when `exclusive`)."""
    totals = np.cumsum(values)
    segment = np.cumsum(heads) - 1
    before = (totals - values)[np.flatnonzero(heads)]
    return totals - before[segment] - (values if exclusive else 0)


@pytest.mark.parametrize("key_dtype", [np.int64, np.uint8, np.int8, np.int16])
@pytest.mark.parametrize("n", [1, 4097, 100003])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_by_key_with_keys_of_other_widths(key_dtype, n, exclusive):
    g = np.random.default_rng(47)
    values = g.integers(0, 100, n).astype(np.int64)
    runs = np.cumsum(g.random(n) < 1 / 16)
    if key_dtype == np.int64:
        keys = (runs << 33) - (1 << 40)  # negative and positive, apart only above the low 32 bits
    else:
        # Neighbouring runs differ by one, wrapping at the type's width (negative for the signed).
        bits = np.iinfo(key_dtype).bits
        keys = (runs % (1 << bits)).astype(np.uint64).astype(key_dtype)
    heads = np.r_[True, keys[1:] != keys[:-1]]
    y = gpu_scan.scan_by_key(torch.from_numpy(keys).cuda(), torch.from_numpy(values).cuda(), exclusive=exclusive)
    np.testing.assert_array_equal(y.cpu().numpy(), segment_sums(values, heads, exclusive))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("n", [1, 33, 4097, 100003])
@pytest.mark.parametrize("exclusive", [False, True])
def test_segmented_scan_with_max(dtype, n, exclusive):
    g = np.random.default_rng(53)
    values = g.integers(-1000, 1000, n).astype(dtype)
    heads = g.random(n) < 1 / 16
    heads[0] = True
    identity = -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
    want = np.empty_like(values)
    starts = np.flatnonzero(heads)
    for a, b in zip(starts, np.r_[starts[1:], n]):
        run = np.maximum.accumulate(values[a:b])
        want[a:b] = np.r_[identity, run[:-1]] if exclusive else run
    y = gpu_scan.segmented_scan(torch.from_numpy(values).cuda(), torch.from_numpy(heads).cuda(), "max",
                                exclusive=exclusive)
    np.testing.assert_array_equal(y.cpu().numpy(), want)
