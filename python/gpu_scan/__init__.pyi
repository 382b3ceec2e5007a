from typing import Any, Optional, Tuple

Array = Any
DType = Any

class Error(RuntimeError):
    """The machine's failures: no CUDA driver or device, out of device memory, a driver error."""

def driver_present() -> bool: ...
def empty_cache() -> None: ...
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
) -> Array: ...
def cumsum(
    x: Array,
    dim: Optional[int] = None,
    *,
    axis: Optional[int] = None,
    exclusive: bool = False,
    dtype: DType = None,
    out: Optional[Array] = None,
    deterministic: bool = False,
) -> Array: ...
cumprod = cumsum
cummax = cumsum
cummin = cumsum
def segmented_scan(x: Array, heads: Array, op: str = "add", *, exclusive: bool = False) -> Array: ...
def scan_by_key(keys: Array, x: Array, op: str = "add", *, exclusive: bool = False) -> Array: ...
def linear_recurrence(a: Array, b: Array, x0: float = 0.0) -> Array: ...
def sort(x: Array, *, descending: bool = False) -> Array: ...
def argsort(x: Array, *, descending: bool = False) -> Array: ...
def compact(x: Array, mask: Array) -> Array: ...
def nonzero(mask: Array) -> Array: ...
def histogram(x: Array, bins: int, range: Tuple[float, float]) -> Array: ...
