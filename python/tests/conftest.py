"""GPU tests are skipped where no CUDA device is, and fail instead under GPU_SCAN_REQUIRE_DEVICE=1."""

import os

import pytest

import gpu_scan


def _gpu_missing():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device"
    return None


def pytest_collection_modifyitems(config, items):
    why = _gpu_missing()
    if why is None:
        return
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=why))


def pytest_sessionstart():
    why = _gpu_missing()
    if why is not None and os.environ.get("GPU_SCAN_REQUIRE_DEVICE") == "1":
        raise pytest.UsageError(f"GPU_SCAN_REQUIRE_DEVICE=1 but {why}")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and torch")
    assert gpu_scan.__name__ == "gpu_scan"
