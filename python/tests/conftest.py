"""Shared fixtures: where the repository is, and the real agon binary."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def agon_binary() -> str:
    """The agon binary: $AGON_BIN, else target/release/agon (CI builds it
    with `cargo test --release` first), else target/quick/agon, else one
    built now with `cargo build --profile quick`."""
    given = os.environ.get("AGON_BIN")
    if given:
        if not os.access(given, os.X_OK):
            pytest.fail(f"AGON_BIN={given} is not an executable file")
        return given
    for profile in ("release", "quick"):
        candidate = REPOSITORY / "target" / profile / "agon"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    subprocess.run(
        ["cargo", "build", "--profile", "quick", "--bin", "agon"],
        cwd=REPOSITORY,
        check=True,
    )
    return str(REPOSITORY / "target" / "quick" / "agon")


@pytest.fixture(scope="session")
def scripted_engine() -> list:
    """The misbehaving stand-in engine of the Rust tests, as a command."""
    return ["python3", str(REPOSITORY / "tests" / "engines" / "scripted.py")]


@pytest.fixture(scope="session")
def fake_engine() -> list:
    """The driver's own stand-in engine (tests/fake_engine.py), as a command."""
    return [sys.executable, str(Path(__file__).with_name("fake_engine.py"))]
