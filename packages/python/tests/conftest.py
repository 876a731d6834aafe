from pathlib import Path

import pytest

from workmem import Engine

TESTS = Path(__file__).resolve().parents[3] / "tests"


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()
