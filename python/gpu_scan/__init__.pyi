"""Device-wide scans and their applications on CUDA arrays, zero copy; see the module's docs."""

from typing import Any, Literal, Optional, Tuple, overload

Array = Any
DType = Any

class Error(RuntimeError):
    """The machine's failures: no CUDA driver or device, a GPU too old for the kernels, out of
    device memory, a driver error."""

def driver_present() -> bool:
    """Whether the CUDA driver can be loaded here."""

def empty_cache() -> None:
    """Frees the temporary storage kept per device and stream, after waiting for those devices'
    work."""

def scan(
    x: Array,
    op: str = "add",
    *,
    dim: Optional[int] = None,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    init: Any = None,
    deterministic: bool = False,
    out: Optional[Array] = None,
) -> Array:
    """The scan of ``x`` by ``op`` (``add mul min max and or xor``) along ``dim``, or of the
    flattened array; ``dtype`` names the result's type, ``deterministic`` and ``init`` are for
    one line, and so is ``out=x`` (in place); otherwise ``out`` must not overlap ``x``."""

def cumsum(
    x: Array,
    dim: Optional[int] = None,
    *,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    out: Optional[Array] = None,
    deterministic: bool = False,
) -> Array:
    """Cumulative sum; without ``dtype``, bool and integers sum into int64 (uint64 stays uint64)."""

def cumprod(
    x: Array,
    dim: Optional[int] = None,
    *,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    out: Optional[Array] = None,
    deterministic: bool = False,
) -> Array:
    """Cumulative product; result types as :func:`cumsum`."""

def cummax(
    x: Array,
    dim: Optional[int] = None,
    *,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    out: Optional[Array] = None,
    deterministic: bool = False,
) -> Array:
    """Running maximum (floats ignore NaN operands)."""

def cummin(
    x: Array,
    dim: Optional[int] = None,
    *,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    out: Optional[Array] = None,
    deterministic: bool = False,
) -> Array:
    """Running minimum (floats ignore NaN operands)."""

def segmented_scan(x: Array, heads: Array, op: str = "add", *, exclusive: bool = False) -> Array:
    """The scan of 1-D ``x`` restarted where the ``heads`` flag is set."""

def scan_by_key(keys: Array, x: Array, op: str = "add", *, exclusive: bool = False) -> Array:
    """The scan of 1-D ``x`` restarted wherever ``keys`` changes."""

def linear_recurrence(a: Array, b: Array, x0: float = 0.0) -> Array:
    """``y[t] = a[t] * y[t-1] + b[t]`` from ``y[-1] = x0``, for 1-D float32 or float64 ``a``, ``b``."""

@overload
def sort(x: Array, *, descending: bool = False, return_indices: Literal[False] = False) -> Array:
    """The keys of 1-D ``x`` sorted (stable radix sort)."""

@overload
def sort(x: Array, *, descending: bool = False, return_indices: Literal[True]) -> Tuple[Array, Array]:
    """The keys of 1-D ``x`` sorted (stable radix sort), and their int64 positions."""

def argsort(x: Array, *, descending: bool = False) -> Array:
    """The stable argsort of 1-D ``x`` as int64 positions."""

def compact(x: Array, mask: Array) -> Array:
    """The elements of 1-D ``x`` whose ``mask`` entry is set, in order; waits for the count."""

def nonzero(mask: Array) -> Array:
    """The positions of the set entries of ``mask`` as int64; waits for the count."""

def histogram(x: Array, bins: int, range: Tuple[float, float]) -> Array:
    """The int64 counts of 1-D ``x`` in ``bins`` equal bins over ``[lo, hi)``."""
