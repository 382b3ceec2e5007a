"""What the package does before any GPU work: argument checks, and the no-driver error. These run
everywhere; the no-driver test only where no driver is."""

import pytest

import gpu_scan


class Interface:
    """A minimal `__cuda_array_interface__` producer (no framework needed)."""

    def __init__(self, shape=(10,), typestr="<u4"):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (0x7F0000000000, False), "version": 3, "strides": None,
        }


def test_error_is_a_runtime_error_of_the_package():
    assert issubclass(gpu_scan.Error, RuntimeError)
    assert gpu_scan.Error.__module__ == "gpu_scan"


@pytest.mark.skipif(gpu_scan.driver_present(), reason="a CUDA driver is present")
@pytest.mark.parametrize("call", [
    lambda: gpu_scan.cumsum(Interface()),
    lambda: gpu_scan.sort(Interface()),
    lambda: gpu_scan.scan(Interface(), "max", exclusive=True),
])
def test_without_a_driver_the_library_says_so(call):
    with pytest.raises(gpu_scan.Error, match="no CUDA driver found"):
        call()


def test_host_data_is_refused_with_the_reason():
    with pytest.raises(TypeError, match="must be a CUDA array"):
        gpu_scan.cumsum([1, 2, 3])


def test_unknown_operators_are_refused_before_the_gpu():
    with pytest.raises(ValueError, match="unknown operator 'sum'"):
        gpu_scan.scan(Interface(), "sum")


def test_bins_must_be_positive():
    with pytest.raises(ValueError, match="bins must be a positive integer"):
        gpu_scan.histogram(Interface(), 0, (0.0, 1.0))


class HostDLPack:
    """A host array offering DLPack, as NumPy's does: device type 1 (kDLCPU)."""

    def __init__(self, device=(1, 0)):
        self.device = device

    def __dlpack__(self, stream=None):
        raise AssertionError("a host array must be refused before it is exchanged")

    def __dlpack_device__(self):
        return self.device


def test_host_dlpack_arrays_are_refused_before_the_gpu():
    with pytest.raises(TypeError, match="must be a CUDA array .* on DLPack device type 1"):
        gpu_scan.cumsum(HostDLPack())
    with pytest.raises(TypeError, match="must be a CUDA array"):
        gpu_scan.sort(HostDLPack((3, 0)))  # pinned host memory (kDLCUDAHost) is not a CUDA array either


def test_numpy_arrays_are_refused_as_host_arrays():
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match="must be a CUDA array .* not ndarray"):
        gpu_scan.cumsum(np.arange(10))


@pytest.mark.skipif(gpu_scan.driver_present(), reason="a CUDA driver is present")
@pytest.mark.parametrize("device", [(2, 0), (13, 0)])
def test_cuda_dlpack_arrays_go_on_to_the_gpu(device):
    with pytest.raises(gpu_scan.Error, match="no CUDA driver found"):
        gpu_scan.cumsum(HostDLPack(device))


@pytest.mark.parametrize("call,message", [
    (lambda: gpu_scan.linear_recurrence(Interface((4, 8), "<f4"), Interface((4, 8), "<f4")),
     r"linear_recurrence takes 1-D arrays, but a has shape \(4, 8\)"),
    (lambda: gpu_scan.linear_recurrence(Interface((32,), "<f4"), Interface((4, 8), "<f4")),
     r"but b has shape \(4, 8\)"),
    (lambda: gpu_scan.segmented_scan(Interface((2, 5)), Interface((10,), "|u1")),
     r"segmented_scan takes 1-D arrays, but x has shape \(2, 5\)"),
    (lambda: gpu_scan.segmented_scan(Interface((10,)), Interface((2, 5), "|u1")), r"but heads has shape \(2, 5\)"),
    (lambda: gpu_scan.scan_by_key(Interface((2, 5), "<i4"), Interface((10,))),
     r"scan_by_key takes 1-D arrays, but keys has shape \(2, 5\)"),
    (lambda: gpu_scan.scan_by_key(Interface((10,), "<i4"), Interface(())), r"but x has shape \(\)"),
])
def test_batches_are_refused_not_flattened_before_the_gpu(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("dtype,short", [
    ("float", "f64"), ("int", "i64"), ("double", "f64"), ("half", "f16"), ("long", "i64"), ("bool_", "bool"),
    ("float32", "f32"), ("uint8", "u8"), ("bfloat16", "bf16"), ("u32", "u32"),
    (int, "i64"), (float, "f64"), (bool, "bool"),
    (type("float32", (), {}), "f32"), (type("int16", (), {}), "i16"), (type("bool_", (), {}), "bool"),
])
def test_dtypes_as_numpy_reads_them(dtype, short):
    assert gpu_scan._arrays.short_dtype(dtype) == short


@pytest.mark.parametrize("dtype", [None, complex, str, "complex64", "float128", type("longlong", (), {}), 3])
def test_other_dtypes_are_refused(dtype):
    with pytest.raises(TypeError):
        gpu_scan._arrays.short_dtype(dtype)


def test_numpy_dtypes_and_scalar_types():
    np = pytest.importorskip("numpy")
    for dtype, short in ((np.float32, "f32"), (np.dtype("float16"), "f16"), (np.bool_, "bool"), (np.uint64, "u64"),
                         (np.dtype(int), "i64"), (np.dtype("float"), "f64"), (np.int8, "i8")):
        assert gpu_scan._arrays.short_dtype(dtype) == short, dtype


@pytest.mark.parametrize("dtype,result", [
    ("bool", "i64"), ("u8", "i64"), ("i8", "i64"), ("u16", "i64"), ("i16", "i64"), ("u32", "i64"), ("i32", "i64"),
    ("i64", "i64"), ("u64", "u64"), ("f16", "f16"), ("bf16", "bf16"), ("f32", "f32"), ("f64", "f64"),
])
def test_default_sum_and_product_types_are_torchs(dtype, result):
    assert gpu_scan._result_dtype("add", dtype) == result
    assert gpu_scan._result_dtype("mul", dtype) == result
    assert gpu_scan._result_dtype("max", dtype) == dtype


@pytest.mark.skipif(gpu_scan.driver_present(), reason="a CUDA driver is present")
def test_empty_cache_without_a_device_has_nothing_to_free():
    assert gpu_scan.empty_cache() is None
    assert gpu_scan._native._temp_storage() == (0, 0, 0)


def test_the_stubs_document_every_public_name_with_its_signature():
    import ast
    import inspect
    import pathlib

    stub = ast.parse(pathlib.Path(gpu_scan.__file__).with_suffix(".pyi").read_text())
    defined = {node.name: node for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for name in gpu_scan.__all__:
        assert name in defined, f"{name} has no stub"
        assert ast.get_docstring(defined[name]), f"the stub of {name} has no docstring"
        real = getattr(gpu_scan, name)
        assert inspect.getdoc(real), f"{name} has no docstring"
        if isinstance(defined[name], ast.FunctionDef):
            args = defined[name].args
            stub_params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            assert stub_params == list(inspect.signature(real).parameters), name


class FakeArray:
    """An array of a made-up framework: an address, a shape and a dtype, and no memory behind them."""

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), dtype


class FakeFramework(gpu_scan._arrays.Adapter):
    """A framework the package uses directly, as it does torch, on stream 0x5000 of device 0."""

    name = "fake"
    STREAM = 0x5000
    TYPESTR = {"<u4": "u32", "<i4": "i32"}

    def __init__(self):
        self.free = 0x100000000

    def owns(self, x):
        return isinstance(x, FakeArray)

    def describe(self, x):
        return x.ptr, x.shape, x.dtype, 0, True

    def stream(self, device):
        return self.STREAM

    def address(self, x):
        return x.ptr

    def empty(self, shape, dtype, device):
        x = FakeArray(self.free, shape, dtype)
        self.free += 1 << 30
        return x

    def view_interface(self, x):
        """How a foreign array is viewed when the helper is not CuPy (`Foreign.view`)."""
        interface = x.__cuda_array_interface__
        return FakeArray(interface["data"][0], interface["shape"], self.TYPESTR[interface["typestr"]])


@pytest.fixture
def fake(monkeypatch):
    """The fake framework as the only one installed, and the native calls recorded, not made."""
    monkeypatch.setattr(gpu_scan._arrays, "_ADAPTERS", [FakeFramework()])
    monkeypatch.setattr(gpu_scan, "_open", lambda device: None)
    calls = []
    for name in ("scan", "widening_sum", "batched_scan", "synchronize"):
        monkeypatch.setattr(gpu_scan._native, name, lambda *args, name=name: calls.append((name, args)))
    return calls


def test_calls_with_a_foreign_array_wait_for_their_stream_and_others_do_not(fake, monkeypatch):
    gpu_scan.cumsum(FakeArray(0x1000, (10,), "u32"), dtype="uint32")
    assert [name for name, _ in fake] == ["scan"]
    fake.clear()
    gpu_scan.cumsum(Interface((10,), "<u4"), dtype="uint32")
    assert [name for name, _ in fake] == ["scan", "synchronize"]
    assert fake[-1][1] == (0, FakeFramework.STREAM)
    fake.clear()
    gpu_scan.cumsum(FakeArray(0x1000, (10,), "u32"), dtype="uint32", out=Interface((10,), "<u4"))
    assert [name for name, _ in fake] == ["scan", "synchronize"], "a foreign out= is waited for too"

    def fail(*args):
        fake.append(("scan", args))
        raise gpu_scan.Error("a driver error")

    fake.clear()
    monkeypatch.setattr(gpu_scan._native, "scan", fail)
    with pytest.raises(gpu_scan.Error, match="a driver error"):
        gpu_scan.cumsum(Interface((10,), "<u4"), dtype="uint32")
    assert [name for name, _ in fake] == ["scan", "synchronize"], "work queued before an error is waited for"


def test_out_sharing_memory_with_x_along_a_dim_is_refused(fake):
    x = FakeArray(0x1000, (4, 8), "i32")
    for dim in (0, 1):
        with pytest.raises(ValueError, match="out is x"):
            gpu_scan.cumsum(x, dim, dtype="int32", out=FakeArray(0x1000, (4, 8), "i32"))
        for at in (0x1000 - 4, 0x1000 + 4, 0x1000 + 124):
            with pytest.raises(ValueError, match="without being x itself"):
                gpu_scan.cumsum(x, dim, dtype="int32", out=FakeArray(at, (4, 8), "i32"))
    assert fake == []
    for at in (0x1000 - 128, 0x1000 + 128):  # next to x, not in it
        gpu_scan.cumsum(x, 0, dtype="int32", out=FakeArray(at, (4, 8), "i32"))
    assert [name for name, _ in fake] == ["batched_scan", "batched_scan"]


def test_out_of_one_line_may_be_x_itself_but_not_part_of_it(fake):
    x = FakeArray(0x1000, (32,), "i32")
    gpu_scan.cumsum(x, dtype="int32", out=x)
    (name, args), = fake
    assert name == "scan" and args[5] == args[6] == 0x1000, "in place: input and output the same address"
    for at in (0x1000 - 4, 0x1000 + 64):
        with pytest.raises(ValueError, match="without being x itself"):
            gpu_scan.cumsum(x, dtype="int32", out=FakeArray(at, (32,), "i32"))
    narrow = FakeArray(0x1000, (32,), "u8")
    with pytest.raises(ValueError, match="wider dtype"):
        gpu_scan.cumsum(narrow, out=FakeArray(0x1000, (32,), "i64"))  # the same first byte, 8 times the bytes
    assert len(fake) == 1
