"""The compiled component is kept for the next process: a second process loads it from the cache
and works; an artifact wasmtime refuses is compiled afresh and replaced; caching can be off."""

import os
import subprocess
import sys
from pathlib import Path

from workmem import Engine, _compiled


def _artifacts(directory: Path) -> list:
    return sorted(p.name for p in directory.glob("engine-py-*.cwasm"))


def test_a_second_process_loads_the_component_compiled(tmp_path: Path) -> None:
    first = Engine(compile_cache=tmp_path)
    assert not first.from_cache
    assert len(_artifacts(tmp_path)) == 1
    assert (tmp_path.stat().st_mode & 0o777) == 0o700, "an artifact is native code: the directory is private"
    script = ("import sys, workmem; e = workmem.Engine(compile_cache=sys.argv[1]); m = e.new_memory(); "
              "m.apply('KEY_LEARNINGS:\\n  ADD:\\n    - because it was cached: it loads\\n', workmem.now()); "
              "print(e.from_cache, 'KL-1' in m.render())")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.split() == ["True", "True"], out.stderr
    assert len(_artifacts(tmp_path)) == 1, "the same component keeps one artifact"


def test_an_artifact_wasmtime_refuses_is_compiled_again_and_replaced(tmp_path: Path) -> None:
    Engine(compile_cache=tmp_path)
    (artifact,) = tmp_path.glob("engine-py-*.cwasm")
    artifact.write_bytes(b"not a compiled component")
    again = Engine(compile_cache=tmp_path)
    assert not again.from_cache
    assert again.new_memory().render().startswith("#")
    assert Engine(compile_cache=tmp_path).from_cache, "the refused artifact was replaced"
    assert not list(tmp_path.glob(".*tmp-*")), "no temporary file is left"


def test_the_key_is_the_components_bytes_and_wasmtimes_library(tmp_path: Path, monkeypatch) -> None:
    assert _compiled._key(b"one component") != _compiled._key(b"another component")
    assert _compiled._key(b"one component") == _compiled._key(b"one component")
    before = _compiled._key(b"one component")
    other = tmp_path / "_libwasmtime.so"
    other.write_bytes(b"another wasmtime")
    monkeypatch.setattr(_compiled.ffi, "filename", other)
    assert _compiled._key(b"one component") != before, "another wasmtime library compiles it afresh"


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("WORKMEM_CACHE_DIR", str(tmp_path))
    assert not Engine(compile_cache=False).from_cache
    assert not list(tmp_path.iterdir())
    assert _compiled.cache_dir() == tmp_path


def test_an_artifact_others_could_write_is_never_loaded(tmp_path: Path) -> None:
    Engine(compile_cache=tmp_path)
    (artifact,) = tmp_path.glob("engine-py-*.cwasm")
    artifact.chmod(0o666)
    assert not Engine(compile_cache=tmp_path).from_cache, "a world-writable artifact is compiled over"
    assert Engine(compile_cache=tmp_path).from_cache, "and replaced by a private one"
    elsewhere = tmp_path / "elsewhere.cwasm"
    artifact.rename(elsewhere)
    artifact.symlink_to(elsewhere)
    assert not Engine(compile_cache=tmp_path).from_cache, "a symlink is never followed"
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert not Engine(compile_cache=shared).from_cache
    assert not list(shared.iterdir()), "nothing is kept in a directory others may write"


def test_a_damaged_artifact_is_compiled_over_not_run(tmp_path: Path) -> None:
    Engine(compile_cache=tmp_path)
    (artifact,) = tmp_path.glob("engine-py-*.cwasm")
    good = artifact.read_bytes()
    # In wasmtime's header (counts and offsets it trusts) and in the code: before the digest
    # each would crash the process that loads it (SIGSEGV).
    for at in (64, len(good) // 2, len(good) - 1):
        damaged = bytearray(good)
        damaged[at] ^= 0x5A
        artifact.write_bytes(bytes(damaged))
        script = "import sys, workmem; e = workmem.Engine(compile_cache=sys.argv[1]); print(e.from_cache, e.new_memory().render()[:1])"
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=os.environ)
        assert out.returncode == 0 and out.stdout.split() == ["False", "#"], (at, out.returncode, out.stderr[-500:])
        assert artifact.read_bytes() == good, f"the artifact damaged at byte {at} is replaced"


def test_names_someone_else_made_first_are_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    from workmem import _default_component

    name = f"engine-py-{_compiled._key(_default_component().read_bytes())}.cwasm"
    for n in range(3):
        (cache / f".{name}.tmp-{os.getpid()}-{n}").symlink_to(victim)
    (cache / name).symlink_to(victim)
    assert not Engine(compile_cache=cache).from_cache
    assert victim.read_bytes() == b"keep", "no link was written through"
    assert (cache / name).is_file() and not (cache / name).is_symlink(), "the link itself is replaced"
    assert Engine(compile_cache=cache).from_cache
    linked = tmp_path / "linked"
    linked.symlink_to(cache)
    assert not Engine(compile_cache=linked).from_cache, "a cache directory that is a symlink is not used"
