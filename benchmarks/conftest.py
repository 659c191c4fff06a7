"""pytest-benchmark setup for the benchmarks: torch gets numpy's BLAS thread count (see
workloads.configure_threads), reported in the header."""
import pytest

from . import workloads


def pytest_report_header(config):
    info = workloads.configure_threads()
    return (
        f"benchmarks: numpy BLAS threads {info['numpy_blas_threads']} "
        f"(from {info['numpy_blas_threads_from']}), torch threads set to {info['torch_threads']} "
        f"(default {info['torch_threads_default']}), {info['cpu_count']} CPUs"
    )


@pytest.fixture(scope="session", autouse=True)
def _same_threads_for_torch_and_numpy():
    workloads.configure_threads()
