"""Device-wide parallel scans and their applications on NVIDIA GPUs, zero copy on torch and CuPy
arrays (and JAX, numba, or any ``__dlpack__`` / ``__cuda_array_interface__`` array, through
one of them).

Every function runs on the current stream of the array's framework on the array's device, so
it orders with the caller's own work, and returns arrays of the input's framework, allocated by
that framework. The GIL is released while the work is enqueued. Calls on torch and CuPy arrays
return as soon as the work is queued; a call with any other framework's array (JAX, numba, ...)
blocks until its work is done, since that framework's allocator could otherwise reuse the
array's memory while the work still reads it. Temporary storage is kept per device and stream
and reused (:func:`empty_cache` frees it). Mistakes raise ``ValueError`` or ``TypeError``; the
machine's failures (no driver, no device, a GPU too old for the kernels, out of memory, a driver
error) raise :class:`Error`.
"""

from __future__ import annotations

import contextvars
import functools
from typing import Any, Callable, List, Optional, Tuple

from . import _arrays
from ._arrays import ITEM_SIZE, short_dtype
from ._native import ELEMENT_TYPES, Error

__all__ = [
    "Error", "cumsum", "cumprod", "cummax", "cummin", "scan", "segmented_scan", "scan_by_key",
    "linear_recurrence", "sort", "argsort", "compact", "nonzero", "histogram", "driver_present", "empty_cache",
]

from . import _native

OPS = ("add", "mul", "min", "max", "and", "or", "xor")


def driver_present() -> bool:
    """Whether the CUDA driver can be loaded here."""
    return _native.driver_present()


def empty_cache() -> None:
    """Frees the temporary device storage the package keeps per device and stream.

    It first waits for every device the package has used to finish all its work (as
    ``torch.cuda.synchronize()`` does), so storage that calls still queued on any stream use is
    never freed under them; the next call on a stream allocates its storage afresh. The package
    keeps storage for at most 64 streams of a device, and does the same when one more comes, so
    streams that no longer exist cannot make it grow without bound.
    """
    _native.empty_cache()


# Devices the native module has opened: each is opened (and checked) once per process.
_OPEN: set = set()


def _open(device: int) -> None:
    if device not in _OPEN:
        _native.open_device(device)
        _OPEN.add(device)


# (device, stream, foreign) of every array the running public call has described (see _settled).
_DESCRIBED: contextvars.ContextVar = contextvars.ContextVar("gpu_scan_described")


def _settled(f: Callable) -> Callable:
    """``f``, made to wait, before it returns or raises, for every stream its arrays were on
    when any of them is foreign (viewed through a helper framework).

    The helper's view of a foreign array goes when the call returns, and the producer's
    allocator (JAX's, numba's) does not order its frees with the stream our work, and the
    helper's casts and copies, read the array on. With no other reference left
    (``cumsum(jnp.arange(n))``), the memory could be freed and handed out again while they still
    read it, or, for ``out=``, write it. torch's and CuPy's caching allocators free in the order
    of their current stream, the one the work is queued on, so their arrays need no wait."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        described: List[Tuple[int, int, bool]] = []
        token = _DESCRIBED.set(described)
        try:
            return f(*args, **kwargs)
        finally:
            _DESCRIBED.reset(token)
            if any(foreign for _, _, foreign in described):
                for device, stream in dict.fromkeys((d, s) for d, s, _ in described):
                    _native.synchronize(device, stream)

    return call


def _one_d(function: str, **arrays: Any) -> None:
    """A ValueError unless every array (or described input) is 1-D, where its shape is known.
    Called before any device work too, on the arrays as given."""
    for what, x in arrays.items():
        shape = x.shape if isinstance(x, _In) else _arrays.shape_of(x)
        if shape is not None and len(shape) != 1:
            raise ValueError(f"{function} takes 1-D arrays, but {what} has shape {tuple(shape)}: pass one "
                             f"sequence at a time")


class _In:
    """One input: its framework's adapter, what the native module needs, and how results go back."""

    def __init__(self, x: Any, what: str, device: Optional[int] = None) -> None:
        adapter = _arrays.adapter_of(x)
        self.foreign = None
        if adapter is None:
            if not _arrays.is_cuda_array(x):
                kind = _arrays.dlpack_device_type(x)
                where = f" on DLPack device type {kind} (CUDA is 2, CUDA managed 13)" if kind is not None else ""
                raise TypeError(
                    f"{what} must be a CUDA array (torch, CuPy, JAX, numba, or anything with __dlpack__ or "
                    f"__cuda_array_interface__), not {type(x).__name__}{where}"
                )
            # The driver is checked first, so a machine without a GPU says so.
            _open(0 if device is None else device)
            self.foreign = _arrays.Foreign(x)
            adapter = self.foreign.helper
            x = self.foreign.view(x)
        self.adapter = adapter
        self.array = x
        self.ptr, self.shape, self.dtype, self.device, contiguous = adapter.describe(x)
        if device is not None and self.device != device:
            raise ValueError(f"{what} is on device {self.device}, the other inputs on device {device}")
        if not contiguous:
            raise ValueError(f"{what} is not contiguous (C order): make a contiguous copy first")
        _open(self.device)
        self.stream = adapter.stream(self.device)
        described = _DESCRIBED.get(None)
        if described is not None:
            described.append((self.device, self.stream, self.foreign is not None))

    @property
    def n(self) -> int:
        return _arrays.elements(self.shape)

    def empty(self, shape: Tuple[int, ...], dtype: str) -> Any:
        return self.adapter.empty(shape, dtype, self.device)

    def new(self, shape: Tuple[int, ...], dtype: str) -> "_In":
        """A new contiguous array of this one's framework, device and stream: nothing to look up
        but its address."""
        o = _In.__new__(_In)
        o.adapter, o.foreign, o.array = self.adapter, None, self.empty(shape, dtype)
        o.ptr, o.shape, o.dtype = self.adapter.address(o.array), tuple(shape), dtype
        o.device, o.stream = self.device, self.stream
        return o

    def back(self, y: Any) -> Any:
        return y if self.foreign is None else self.foreign.back(y)

    def out(self, out: Any, shape: Tuple[int, ...], dtype: str) -> "_In":
        """`out=` checked against the result's shape and dtype, or a new array."""
        if out is None:
            return self.new(shape, dtype)
        o = _In(out, "out", self.device)
        if o.shape != tuple(shape) or o.dtype != dtype:
            raise ValueError(f"out has shape {o.shape} and dtype {o.dtype}; the result has {tuple(shape)} and {dtype}")
        return o


def _same_length(a: _In, b: _In, what: str) -> None:
    if a.n != b.n:
        raise ValueError(f"{what} have {a.n} and {b.n} elements: they must have as many")


def _check_op(op: str) -> str:
    if op not in OPS:
        raise ValueError(f"unknown operator {op!r}: one of {', '.join(OPS)}")
    return op


def _result_dtype(op: str, dtype: str) -> str:
    """The result dtype when none is asked for, torch's rule: sums and products of bool and
    integers in int64, except uint64, which stays uint64 (int64 cannot hold its range; torch
    has no uint64 cumsum); floats, and the other operators, keep the input's dtype."""
    if op in ("add", "mul") and dtype in ("bool", "u8", "i8", "u16", "i16", "u32", "i32"):
        return "i64"
    return dtype


def _can_widen(src: str, dst: str) -> bool:
    if src in ("u8", "i8", "bool", "u16", "i16"):
        return dst in ("u32", "u64", "i64")
    if src in ("u32", "i32"):
        return dst in ("u64", "i64")
    if src in ("f16", "bf16"):
        return dst == "f32"
    return False


def _overlap(x: _In, o: _In) -> Optional[str]:
    """How ``o`` shares device memory with ``x``, by their addresses and byte extents: ``"same"``
    (the very same bytes), ``"partial"``, or None."""
    x_end = x.ptr + x.n * ITEM_SIZE[x.dtype]
    o_end = o.ptr + o.n * ITEM_SIZE[o.dtype]
    if o.ptr >= x_end or x.ptr >= o_end:
        return None
    return "same" if (o.ptr, o_end) == (x.ptr, x_end) else "partial"


def _norm_dim(dim: Optional[int], axis: Optional[int], ndim: int) -> Optional[int]:
    if dim is not None and axis is not None and dim != axis:
        raise ValueError(f"dim={dim} and axis={axis} disagree")
    d = dim if dim is not None else axis
    if d is None:
        return None
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise ValueError(f"dim {d} is out of range for an array of {ndim} dimensions")
    return d % max(ndim, 1)


@_settled
def scan(
    x: Any,
    op: str = "add",
    *,
    dim: Optional[int] = None,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: Any = None,
    init: Any = None,
    deterministic: bool = False,
    out: Any = None,
) -> Any:
    """The scan of ``x`` by ``op`` (``add mul min max and or xor``).

    Along ``dim`` (or ``axis``) of an N-D array, each line scanned on its own; with neither, the
    flattened array, as NumPy does. ``exclusive`` starts every line from the operator's identity
    (or ``init``). ``dtype`` names the result's type: a sum of ``uint8 int8 uint16 int16 bool``
    into ``uint32 uint64 int64``, of ``int32 uint32`` into ``int64 uint64``, or of ``float16
    bfloat16`` into ``float32`` reads each element at its own width; other conversions cast the
    input first. ``deterministic`` gives float results that are identical run after run (a 1-D
    scan). ``init`` (a 1-D scan) is combined in front of the first element. ``out`` may be ``x``
    itself for a scan of one line in ``x``'s dtype, which then runs in place; otherwise it must
    not share memory with ``x``.
    """
    _check_op(op)
    return _scan(_In(x, "x"), op, dim, axis, exclusive, dtype, init, deterministic, out)


def _scan(a: _In, op: str, dim: Optional[int], axis: Optional[int], exclusive: bool, dtype: Any, init: Any,
          deterministic: bool, out: Any) -> Any:
    """:func:`scan` of an input already described (the cumulative functions look at it first)."""
    want = short_dtype(dtype) if dtype is not None else a.dtype
    d = _norm_dim(dim, axis, len(a.shape))
    shape = a.shape if d is not None else (a.n,)
    o = a.out(out, shape, want)
    n = a.n
    if n == 0:
        return a.back(o.array)
    # The line structure: `outer` blocks of `length` × `inner` elements.
    if d is None or len(a.shape) <= 1:
        outer, length, inner = 1, n, 1
    else:
        outer = _arrays.elements(a.shape[:d])
        length = a.shape[d]
        inner = _arrays.elements(a.shape[d + 1:])
    one_line = outer == 1 and inner == 1 or length == n
    if not one_line and (deterministic or init is not None):
        raise ValueError("deterministic=True and init= are for a scan of one line (a 1-D array, or dim=None)")
    if one_line and op == "add" and want != a.dtype and _can_widen(a.dtype, want) and init is None:
        if _overlap(a, o) is not None:
            raise ValueError("out shares memory with x: a sum into a wider dtype reads x as it writes out, so it "
                             "cannot run in place; pass a separate out")
        _native.widening_sum(a.dtype, want, exclusive, deterministic, a.ptr, o.ptr, n, a.device, a.stream)
        return a.back(o.array)
    src = a
    if want != a.dtype:
        if want not in ELEMENT_TYPES:
            raise TypeError(f"scans are not built for dtype {_arrays.NUMPY_NAMES[want]}")
        src = _In(a.adapter.cast(a.array, want), "x", a.device)
    elif want not in ELEMENT_TYPES:
        hint = " (pass dtype='float32' for a float32 sum)" if want in ("f16", "bf16") else ""
        raise TypeError(f"scans are not built for dtype {_arrays.NUMPY_NAMES[want]}{hint}")
    overlap = _overlap(src, o) if src is a else None
    if overlap == "partial":
        raise ValueError("out overlaps x without being x itself: a scan would overwrite elements it has yet to read; "
                         "pass out=x to scan in place, or a separate out")
    if overlap == "same" and not one_line:
        raise ValueError("out is x: a scan along a dimension of an N-D array does not run in place; pass a separate "
                         "out")
    if one_line:
        _native.scan(want, op, exclusive, deterministic, init, src.ptr, o.ptr, n, a.device, a.stream)
    elif inner == 1:
        _native.batched_scan(want, op, exclusive, True, src.ptr, o.ptr, outer, length, a.device, a.stream)
    else:
        block = length * inner * ITEM_SIZE[want]
        for b in range(outer):
            _native.batched_scan(
                want, op, exclusive, False, src.ptr + b * block, o.ptr + b * block, length, inner, a.device, a.stream
            )
    return a.back(o.array)


def _cum(op: str):
    def f(x: Any, dim: Optional[int] = None, *, axis: Optional[int] = None, exclusive: bool = False,
          dtype: Any = None, out: Any = None, deterministic: bool = False) -> Any:
        a = _In(x, "x")
        if dtype is None:
            dtype = _result_dtype(op, a.dtype)
        return _scan(a, op, dim, axis, exclusive, dtype, None, deterministic, out)

    return _settled(f)


cumsum = _cum("add")
cumsum.__name__ = "cumsum"
cumsum.__doc__ = """Cumulative sum along ``dim`` (or ``axis``; the flattened array when neither is
given). Without ``dtype``, torch's rule: bool and integer inputs sum into int64, except uint64,
which stays uint64; floats keep their dtype (NumPy differs for unsigned inputs: uint64).
``dtype=x.dtype`` keeps the input's type. See :func:`scan`."""
cumprod = _cum("mul")
cumprod.__name__ = "cumprod"
cumprod.__doc__ = """Cumulative product; types as :func:`cumsum`. See :func:`scan`."""
cummax = _cum("max")
cummax.__name__ = "cummax"
cummax.__doc__ = """Running maximum (the values; floats ignore NaN operands, IEEE maxNum). See :func:`scan`."""
cummin = _cum("min")
cummin.__name__ = "cummin"
cummin.__doc__ = """Running minimum (the values; floats ignore NaN operands, IEEE minNum). See :func:`scan`."""


def _flags(m: Any, like: _In, what: str) -> _In:
    """A mask (bool or uint8; other types: nonzero) as one byte per element."""
    f = _In(m, what, like.device)
    if f.dtype not in ("bool", "u8"):
        f = _In(f.adapter.cast(f.array != 0, "u8"), what, like.device)
    return f


@_settled
def segmented_scan(x: Any, heads: Any, op: str = "add", *, exclusive: bool = False) -> Any:
    """The scan of 1-D ``x`` restarted at every element whose ``heads`` flag is set (bool or
    uint8, as many as ``x``). Other shapes are refused: there is no batched form."""
    _check_op(op)
    _one_d("segmented_scan", x=x, heads=heads)
    a = _In(x, "x")
    h = _flags(heads, a, "heads")
    _one_d("segmented_scan", x=a, heads=h)
    _same_length(a, h, "x and heads")
    o = a.out(None, (a.n,), a.dtype)
    if a.n:
        _native.segmented_scan(a.dtype, op, exclusive, a.ptr, h.ptr, o.ptr, a.n, a.device, a.stream)
    return a.back(o.array)


@_settled
def scan_by_key(keys: Any, x: Any, op: str = "add", *, exclusive: bool = False) -> Any:
    """The scan of 1-D ``x`` restarted wherever ``keys`` (integers of any width, signed or not, as
    many as ``x``) changes. Other shapes are refused: there is no batched form."""
    _check_op(op)
    _one_d("scan_by_key", keys=keys, x=x)
    a = _In(x, "x")
    k = _In(keys, "keys", a.device)
    _one_d("scan_by_key", keys=k, x=a)
    _same_length(a, k, "keys and x")
    o = a.out(None, (a.n,), a.dtype)
    if a.n:
        _native.scan_by_key(k.dtype, a.dtype, op, exclusive, k.ptr, a.ptr, o.ptr, a.n, a.device, a.stream)
    return a.back(o.array)


@_settled
def linear_recurrence(a: Any, b: Any, x0: float = 0.0) -> Any:
    """``y[t] = a[t] * y[t-1] + b[t]`` from ``y[-1] = x0``, for 1-D float32 or float64 ``a`` and
    ``b``: one scan of affine maps (the recurrence of linear RNN and state-space layers). The
    pairs are packed with the framework first (one copy of ``a`` and ``b``). A batch of
    sequences, (B, T), is refused rather than run as one sequence: call it once per row."""
    _one_d("linear_recurrence", a=a, b=b)
    fa = _In(a, "a")
    fb = _In(b, "b", fa.device)
    _one_d("linear_recurrence", a=fa, b=fb)
    _same_length(fa, fb, "a and b")
    if fa.dtype != fb.dtype or fa.dtype not in ("f32", "f64"):
        raise TypeError(f"a and b must both be float32 or float64, not {fa.dtype} and {fb.dtype}")
    n = fa.n
    if n == 0:
        return fa.back(fa.empty((0,), fa.dtype))
    maps = _In(fa.adapter.stack_pairs(fa.array, fb.array), "the maps", fa.device)
    o = fa.new((n, 2), fa.dtype)
    _native.recurrence(fa.dtype, float(x0), maps.ptr, o.ptr, n, fa.device, fa.stream)
    return fa.back(fa.adapter.column(o.array, 1))


def _sorted(x: Any, descending: bool, positions: bool) -> Tuple[_In, Any, Optional[Any]]:
    a = _In(x, "x")
    if len(a.shape) > 1:
        raise ValueError(f"sort takes a 1-D array, not shape {a.shape}")
    keys = _In(a.adapter.copy(a.array), "the keys", a.device)
    p = a.new((a.n,), "u32") if positions else None
    if a.n:
        _native.sort(a.dtype, descending, keys.ptr, p.ptr if p else 0, a.n, a.device, a.stream)
    return a, keys.array, p.array if p else None


@_settled
def sort(x: Any, *, descending: bool = False, return_indices: bool = False) -> Any:
    """The keys of 1-D ``x`` (4- and 8-byte types) sorted by a stable radix sort. Floats order
    ``-0.0`` before ``+0.0`` and NaNs last (in both orders). With ``return_indices``, the pair
    ``(keys, positions)`` as ``torch.sort`` returns it, positions int64 as :func:`argsort`'s, from
    the one sort (no gather)."""
    a, keys, p = _sorted(x, descending, return_indices)
    if return_indices:
        return a.back(keys), a.back(a.adapter.cast(p, "i64"))
    return a.back(keys)


@_settled
def argsort(x: Any, *, descending: bool = False) -> Any:
    """The stable argsort of 1-D ``x`` as int64 positions: ``x[argsort(x)]`` is sorted and equal
    keys keep their order."""
    a, _, p = _sorted(x, descending, True)
    return a.back(a.adapter.cast(p, "i64"))


@_settled
def compact(x: Any, mask: Any) -> Any:
    """The elements of 1-D ``x`` whose ``mask`` entry is set, in order (``x[mask]``). Reads the
    count back, so it waits for the work queued before it."""
    a = _In(x, "x")
    f = _flags(mask, a, "mask")
    _same_length(a, f, "x and mask")
    o = a.out(None, (a.n,), a.dtype)
    count = a.new((1,), "i64")
    if a.n == 0:
        return a.back(o.array)
    _native.compact(a.dtype, a.ptr, f.ptr, o.ptr, count.ptr, a.n, a.device, a.stream)
    return a.back(o.array[: a.adapter.item(count.array)])


@_settled
def nonzero(mask: Any) -> Any:
    """The positions of the set entries of 1-D ``mask`` as int64 (NumPy's ``flatnonzero``).
    Reads the count back, so it waits for the work queued before it."""
    f0 = _In(mask, "mask")
    f = _flags(mask, f0, "mask")
    o = f.out(None, (f.n,), "i64")
    count = f.new((1,), "i64")
    if f.n == 0:
        return f0.back(o.array)
    _native.nonzero(f.ptr, o.ptr, count.ptr, f.n, f.device, f.stream)
    return f0.back(o.array[: f.adapter.item(count.array)])


@_settled
def histogram(x: Any, bins: int, range: Tuple[float, float]) -> Any:
    """The counts (int64) of 1-D ``x`` in ``bins`` equal bins over ``[lo, hi)``; elements outside
    are not counted."""
    lo, hi = range
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins must be a positive integer, not {bins!r}")
    a = _In(x, "x")
    counts = a.new((bins + 1,), "u32")
    _native.histogram_counts(a.dtype, int(bins), float(lo), float(hi), a.ptr, counts.ptr, a.n, a.device, a.stream)
    return a.back(a.adapter.cast(counts.array[:bins], "i64"))
