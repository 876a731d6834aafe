from pathlib import Path

import pytest

from workmem import Engine

TESTS = Path(__file__).resolve().parents[3] / "tests"


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()


@pytest.fixture(scope="session", autouse=True)
def tiktoken_offline() -> None:
    """The encodings tiktoken would fetch, read from cargo's copy (tests/python/tiktoken_offline.py)."""
    import sys

    sys.path.insert(0, str(TESTS / "python"))
    import tiktoken_offline

    tiktoken_offline.install()
