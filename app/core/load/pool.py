"""The worker processes a large parse or scan runs in; a pool that fails says so and the caller
does the rest in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TypeVar

from app.core.processes import process_context, real_stderr

_T = TypeVar("_T")


class PoolFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def answered(
    workers: int,
    fn: Callable[..., _T],
    calls: list[tuple[object, ...]],
    here: Callable[[int], _T],
    failed: Callable[[str], None],
) -> Iterator[tuple[int, _T]]:
    """(call index, fn(*call)) for every call, as the worker processes finish. When the pool cannot
    start or breaks, the calls it did not answer are made here (`here(index)`) and `failed` is told
    why: a slower load, never a failed one."""
    done: set[int] = set()
    try:
        for index, answer in pool_map(workers, fn, calls):
            done.add(index)
            yield index, answer
    except PoolFailed as failure:
        failed(failure.reason)
        for index in range(len(calls)):
            if index not in done:
                yield index, here(index)


def pool_map(
    workers: int, fn: Callable[..., _T], calls: list[tuple[object, ...]]
) -> Iterator[tuple[int, _T]]:
    """(call index, fn(*call)) as the worker processes finish; PoolFailed if the pool cannot do
    it."""
    try:
        with real_stderr():
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=process_context())
            futures: dict[Future[_T], int] = {
                pool.submit(fn, *call): i for i, call in enumerate(calls)
            }
    except Exception as exc:  # noqa: BLE001 - whatever stops the pool, the serial parse still works
        raise PoolFailed(f"{type(exc).__name__}: {exc}") from exc
    with pool:
        try:
            for future in as_completed(futures):
                answer = future.result()
                yield futures[future], answer
        except Exception as exc:  # noqa: BLE001 - parse_chunk never raises: this is the pool
            for future in futures:
                future.cancel()
            raise PoolFailed(f"{type(exc).__name__}: {exc}") from exc
