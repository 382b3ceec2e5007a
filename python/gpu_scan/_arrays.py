"""The arrays of each framework, as the native module needs them.

An adapter tells a framework's arrays apart, reads an array's address, shape, dtype, device and
contiguity, names the framework's current stream on a device (the stream every call enqueues
on, so it orders with the caller's own work), and allocates outputs with the framework's
allocator, on that stream, so its memory pool and stream semantics hold.

torch and CuPy arrays are used directly. Arrays of other frameworks (JAX, numba, anything
exporting ``__dlpack__`` or ``__cuda_array_interface__``) are viewed, zero copy, as an array of
a framework that is installed (CuPy first, then torch) through DLPack or the interface, which
also orders them with their producer's stream; results go back the same way. Their producer's
allocator does not order its frees with our stream, so a call with such an array waits for its
work before it returns (``gpu_scan._settled``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

from ._native import pointer_device

# Short dtype names shared with the native module, and their NumPy-style spellings.
NUMPY_NAMES = {
    "bool": "bool",
    "u8": "uint8",
    "i8": "int8",
    "u16": "uint16",
    "i16": "int16",
    "u32": "uint32",
    "i32": "int32",
    "u64": "uint64",
    "i64": "int64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
}
SHORT_NAMES = {v: k for k, v in NUMPY_NAMES.items()}
ITEM_SIZE = {
    "bool": 1, "u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4,
    "u64": 8, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8,
}


# short_dtype's answers by the dtype asked about (framework dtypes are few and hashable).
_SHORT: dict = {}


def short_dtype(dtype: Any) -> str:
    """The short name of a dtype given as a framework dtype, a NumPy dtype or a string."""
    try:
        return _SHORT[dtype]
    except (KeyError, TypeError):
        pass
    short = _short_dtype(dtype)
    try:
        _SHORT[dtype] = short
    except TypeError:
        pass
    return short


# Python's own types, as NumPy reads them.
_PYTHON_TYPES = {bool: "bool", int: "i64", float: "f64"}

# Spellings beyond the NumPy names: NumPy's own ("float" and "double" are float64, "int" is
# int64, as np.dtype reads them) and torch's that mean the same width everywhere.
_ALIASES = {"float": "float64", "int": "int64", "double": "float64", "half": "float16", "long": "int64",
            "short": "int16", "bool_": "bool"}


def _short_dtype(dtype: Any) -> str:
    if dtype is None:
        raise TypeError("no dtype given")
    if isinstance(dtype, type):
        if dtype in _PYTHON_TYPES:
            return _PYTHON_TYPES[dtype]
        # A scalar type (NumPy's np.float32, JAX's jnp.int32, ml_dtypes' bfloat16), by its name
        # where the name gives the width; platform-sized C names (np.intc, np.longlong) do not.
        text = dtype.__name__
        text = "bool" if text == "bool_" else text
    else:
        text = str(dtype)
        for prefix in ("torch.", "dtype('"):
            if text.startswith(prefix):
                text = text[len(prefix):]
        text = _ALIASES.get(text.rstrip("')"), text.rstrip("')"))
    if text in SHORT_NAMES:
        return SHORT_NAMES[text]
    if text in NUMPY_NAMES:
        return text
    raise TypeError(f"unsupported dtype {dtype!r}: name it by width, e.g. 'int32' or 'float64'")


class Adapter:
    """One framework's arrays. Subclasses fill in what differs."""

    name = ""

    def owns(self, x: Any) -> bool:
        raise NotImplementedError

    def describe(self, x: Any) -> Tuple[int, Tuple[int, ...], str, int, bool]:
        """(address, shape, short dtype, device ordinal, C-contiguous)."""
        raise NotImplementedError

    def stream(self, device: int) -> int:
        raise NotImplementedError

    def address(self, x: Any) -> int:
        """The device address of a contiguous array of this framework."""
        raise NotImplementedError

    def empty(self, shape: Tuple[int, ...], dtype: str, device: int) -> Any:
        raise NotImplementedError

    def cast(self, x: Any, dtype: str) -> Any:
        raise NotImplementedError

    def copy(self, x: Any) -> Any:
        raise NotImplementedError

    def stack_pairs(self, a: Any, b: Any) -> Any:
        """The (n, 2) array of rows (a[i], b[i])."""
        raise NotImplementedError

    def column(self, m: Any, j: int) -> Any:
        """Column j of an (n, 2) array, contiguous."""
        raise NotImplementedError

    def item(self, x: Any) -> int:
        """The one element of x, read after the work queued before it."""
        raise NotImplementedError

    def reshape(self, x: Any, shape: Tuple[int, ...]) -> Any:
        return x.reshape(shape)


class Torch(Adapter):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch

    def owns(self, x: Any) -> bool:
        return isinstance(x, self.torch.Tensor)

    def dtype(self, short: str) -> Any:
        t = getattr(self.torch, NUMPY_NAMES[short], None)
        if t is None:
            raise TypeError(f"this torch has no dtype {NUMPY_NAMES[short]}")
        return t

    def describe(self, x: Any) -> Tuple[int, Tuple[int, ...], str, int, bool]:
        if x.device.type != "cuda":
            raise ValueError(f"the tensor is on {x.device}, not on a CUDA device")
        return x.data_ptr(), tuple(x.shape), short_dtype(x.dtype), x.device.index, x.is_contiguous()

    def stream(self, device: int) -> int:
        return self.torch.cuda.current_stream(device).cuda_stream

    def address(self, x: Any) -> int:
        return x.data_ptr()

    def empty(self, shape: Tuple[int, ...], dtype: str, device: int) -> Any:
        return self.torch.empty(shape, dtype=self.dtype(dtype), device=f"cuda:{device}")

    def cast(self, x: Any, dtype: str) -> Any:
        return x.to(self.dtype(dtype)).contiguous()

    def copy(self, x: Any) -> Any:
        return x.clone(memory_format=self.torch.contiguous_format)

    def stack_pairs(self, a: Any, b: Any) -> Any:
        return self.torch.stack((a, b), dim=-1).contiguous()

    def column(self, m: Any, j: int) -> Any:
        return m[:, j].contiguous()

    def item(self, x: Any) -> int:
        return int(x.item())

    def view_interface(self, x: Any) -> Any:
        """A ``__cuda_array_interface__`` array as a tensor on its own device, zero copy.

        torch.as_tensor(x, device="cuda") would copy an array of another device than the
        current one: the interface names no device, so it is asked of the driver."""
        ptr = x.__cuda_array_interface__["data"][0]
        if not ptr:
            return self.torch.as_tensor(x)  # no elements, nothing to copy
        device = pointer_device(ptr)
        t = self.torch.as_tensor(x, device=f"cuda:{device}")
        if t.data_ptr() != ptr:
            raise ValueError(f"torch copied the {type(x).__name__} array instead of viewing it; pass a torch tensor")
        return t


class CuPy(Adapter):
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy

    def owns(self, x: Any) -> bool:
        return isinstance(x, self.cupy.ndarray)

    def describe(self, x: Any) -> Tuple[int, Tuple[int, ...], str, int, bool]:
        return x.data.ptr, tuple(x.shape), short_dtype(x.dtype.name), x.device.id, bool(x.flags.c_contiguous)

    def stream(self, device: int) -> int:
        with self.cupy.cuda.Device(device):
            return self.cupy.cuda.get_current_stream().ptr

    def address(self, x: Any) -> int:
        return x.data.ptr

    def empty(self, shape: Tuple[int, ...], dtype: str, device: int) -> Any:
        if dtype == "bf16":
            raise TypeError("CuPy has no bfloat16")
        with self.cupy.cuda.Device(device):
            return self.cupy.empty(shape, dtype=NUMPY_NAMES[dtype])

    def cast(self, x: Any, dtype: str) -> Any:
        with x.device:
            return self.cupy.ascontiguousarray(x.astype(NUMPY_NAMES[dtype]))

    def copy(self, x: Any) -> Any:
        with x.device:
            return self.cupy.array(x, order="C", copy=True)

    def stack_pairs(self, a: Any, b: Any) -> Any:
        with a.device:
            return self.cupy.ascontiguousarray(self.cupy.stack((a, b), axis=-1))

    def column(self, m: Any, j: int) -> Any:
        with m.device:
            return self.cupy.ascontiguousarray(m[:, j])

    def item(self, x: Any) -> int:
        return int(x.get().reshape(-1)[0])


def _load(cls: Callable[[], Adapter]) -> Optional[Adapter]:
    try:
        return cls()
    except ImportError:
        return None


_ADAPTERS: Optional[list] = None


def adapters() -> list:
    """The adapters of the frameworks installed here, CuPy first."""
    global _ADAPTERS
    if _ADAPTERS is None:
        _ADAPTERS = [a for a in (_load(CuPy), _load(Torch)) if a is not None]
    return _ADAPTERS


class Foreign:
    """An array of a framework without an adapter, viewed as a helper framework's array, and how
    to hand results back in its own framework."""

    def __init__(self, x: Any) -> None:
        self.module = type(x).__module__.split(".")[0]
        helpers = adapters()
        if not helpers:
            raise TypeError(
                f"{type(x).__name__} arrays are used through CuPy or torch, and neither is installed"
            )
        self.helper = helpers[0]
        self.original = x

    def view(self, x: Any) -> Any:
        """x as the helper's array, zero copy (DLPack orders it after its producer's work)."""
        if hasattr(x, "__dlpack__"):
            if self.helper.name == "cupy":
                return self.helper.cupy.from_dlpack(x)
            return self.helper.torch.from_dlpack(x)
        if hasattr(x, "__cuda_array_interface__"):
            if self.helper.name == "cupy":
                return self.helper.cupy.asarray(x)  # CuPy asks the driver for the pointer's device
            return self.helper.view_interface(x)
        raise TypeError(
            f"{type(x).__name__} is not a CUDA array: it offers neither __dlpack__ nor __cuda_array_interface__"
        )

    def back(self, y: Any) -> Any:
        """A result in the original array's framework."""
        if self.module == "jax" or self.module == "jaxlib":
            import jax.dlpack

            return jax.dlpack.from_dlpack(y)
        if self.module == "numba":
            import numba.cuda

            return numba.cuda.as_cuda_array(y)
        return y


def adapter_of(x: Any) -> Optional[Adapter]:
    """The adapter of x's framework, or None when x belongs to another framework."""
    for a in adapters():
        if a.owns(x):
            return a
    return None


# DLPack device types whose memory the kernels can use: kDLCUDA and kDLCUDAManaged.
DLPACK_CUDA = (2, 13)


def dlpack_device_type(x: Any) -> Optional[int]:
    """The DLPack device type x says it is on (kDLCPU = 1, kDLCUDA = 2, ...), or None."""
    device = getattr(x, "__dlpack_device__", None)
    return int(device()[0]) if device is not None else None


def is_cuda_array(x: Any) -> bool:
    """Whether x is an array of an installed framework or offers one of the interchange protocols
    for CUDA memory. A ``__dlpack__`` array on another device (NumPy's, on the host) is not."""
    if adapter_of(x) is not None or hasattr(x, "__cuda_array_interface__"):
        return True
    if not hasattr(x, "__dlpack__"):
        return False
    kind = dlpack_device_type(x)
    return kind is None or kind in DLPACK_CUDA


def shape_of(x: Any) -> Optional[Tuple[int, ...]]:
    """x's shape as the array itself tells it (no device work), or None where it does not."""
    shape = getattr(x, "shape", None)
    if shape is None:
        interface = getattr(x, "__cuda_array_interface__", None)
        shape = interface.get("shape") if isinstance(interface, dict) else None
    try:
        return tuple(int(d) for d in shape) if shape is not None else None
    except TypeError:
        return None


def elements(shape: Tuple[int, ...]) -> int:
    return math.prod(shape)
