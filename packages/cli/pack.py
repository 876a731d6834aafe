"""Packs the `workmem` binary for the package registries' own clients (`make dist`), so that the
CLI (the proxy, the servers) installs without a Rust toolchain or a clone:

- a wheel, `workmem_cli-<version>-py3-none-<platform>.whl`, whose only content is the binary,
  installed as a script (as ruff and uv ship theirs): `pip install workmem-cli`, then `workmem`;
- two npm packages in the optional-dependency pattern (as esbuild and biome ship theirs):
  `@workmem/cli-<os>-<cpu>`, the binary with `os` and `cpu` set so that npm installs it only on
  its platform, and `@workmem/cli`, whose `workmem` command runs it: `npx @workmem/cli`.

Only the platform this runs on is packed, from the binary given: nothing is cross-compiled.

    python pack.py <binary> <version> <out-dir>
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DESCRIPTION = "The workmem CLI (the proxy, the HTTP and MCP servers, sessions, boards, documents) as one binary"
LICENSE = "Apache-2.0"
REPOSITORY = "https://github.com/workmem/workmem"

# Node's names for this machine, and the wheel's platform tag's CPU.
NODE_CPU = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}
WHEEL_CPU = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "arm64"}


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__.rsplit("\n\n", 1)[1].strip())
    binary, version, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    if not binary.is_file():
        sys.exit(f"{binary}: no such binary (build it first: `make dist` builds it with `cargo build --profile distribution -p workmem`)")
    machine = platform.machine()
    if sys.platform != "linux" or machine not in NODE_CPU:
        sys.exit(f"packing the CLI is set up for Linux on x86_64 or aarch64, not {sys.platform} on {machine}")
    out.mkdir(parents=True, exist_ok=True)
    wheel = write_wheel(binary, version, f"manylinux_{glibc_needed(binary)}_{WHEEL_CPU[machine]}", out)
    npm = pack_npm(binary, version, "linux", NODE_CPU[machine], out)
    for artifact in [wheel, *npm]:
        print(f"{artifact.name}: {artifact.stat().st_size:,} bytes")


def glibc_needed(binary: Path) -> str:
    """The manylinux tag's glibc: the newest symbol version the binary links against (PEP 600),
    read from its dynamic symbols, so the wheel claims no more than it runs on."""
    symbols = subprocess.run(["objdump", "-T", str(binary)], check=True, capture_output=True, text=True).stdout
    versions = {tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", symbols)}
    if not versions:
        sys.exit(f"{binary}: no glibc symbol versions found; a static binary would want a musllinux or a plain linux tag")
    major, minor = max(versions)[:2]
    return f"{major}_{minor}"


def write_wheel(binary: Path, version: str, tag: str, out: Path) -> Path:
    """A wheel by the spec (PEP 427, 491): the binary in `<name>.data/scripts/`, which pip puts on
    the environment's PATH as is, with METADATA, WHEEL and RECORD."""
    name = "workmem_cli"
    data, dist_info = f"{name}-{version}.data", f"{name}-{version}.dist-info"
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: workmem-cli\nVersion: {version}\nSummary: {DESCRIPTION}\n"
        f"License: {LICENSE}\nProject-URL: Source, {REPOSITORY}\nRequires-Python: >=3.7\n"
    )
    wheel_file = f"Wheel-Version: 1.0\nGenerator: workmem pack.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    files = [
        (f"{data}/scripts/workmem", binary.read_bytes(), 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel_file.encode(), 0o644),
    ]
    record = io.StringIO()
    for path, content, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        record.write(f"{path},sha256={digest},{len(content)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    files.append((f"{dist_info}/RECORD", record.getvalue().encode(), 0o644))
    wheel = out / f"{name}-{version}-py3-none-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content, mode in files:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return wheel


def pack_npm(binary: Path, version: str, os_name: str, cpu: str, out: Path) -> list[Path]:
    """The platform package (the binary) and the package users install (the command that runs
    it), each as `npm pack` makes it."""
    common = {"version": version, "description": DESCRIPTION, "license": LICENSE,
              "repository": {"type": "git", "url": f"git+{REPOSITORY}.git"}}
    platform_name = f"@workmem/cli-{os_name}-{cpu}"
    with tempfile.TemporaryDirectory() as tmp:
        platform_dir, main_dir = Path(tmp) / "platform", Path(tmp) / "main"
        (platform_dir / "bin").mkdir(parents=True)
        shutil.copyfile(binary, platform_dir / "bin" / "workmem")
        os.chmod(platform_dir / "bin" / "workmem", 0o755)
        write_json(platform_dir / "package.json", {
            "name": platform_name, **common, "os": [os_name], "cpu": [cpu], "files": ["bin/workmem"],
            "preferUnplugged": True,
        })
        (main_dir / "bin").mkdir(parents=True)
        shutil.copyfile(HERE / "workmem.js", main_dir / "bin" / "workmem.js")
        write_json(main_dir / "package.json", {
            "name": "@workmem/cli", **common, "type": "module", "bin": {"workmem": "bin/workmem.js"},
            "files": ["bin/workmem.js"], "engines": {"node": ">=18"},
            # Every platform packed is listed; npm installs the one whose os and cpu match.
            "optionalDependencies": {platform_name: version},
        })
        return [npm_pack(platform_dir, out), npm_pack(main_dir, out)]


def npm_pack(package: Path, out: Path) -> Path:
    made = subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(out.resolve())],
                          cwd=package, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return out / made


def write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


if __name__ == "__main__":
    main()
