"""Build hook: the wheel carries the prebuilt kernel only where it runs, and is tagged
for that platform (docs/compiled.md, "Which wheel").

Everything else about the package is in pyproject.toml. The prebuilt step kernel
(``flexmbs/engine/prebuilt/``) is machine code for one platform, so a wheel that
carries it cannot claim ``py3-none-any``:

- built on a platform a shipped build runs on (:data:`WHEEL_PLATFORMS`; today x86_64
  Linux with glibc), the wheel carries that platform's builds (and a manifest listing
  only them) and is tagged ``py3-none-<platform>``: any Python 3, no Python ABI (the
  code is called through ctypes and references only C and maths library functions);
- built anywhere else, it carries no prebuilt kernel, and is ``py3-none-any``: numba
  compiles the kernels there, as it would have anyway.
"""

from __future__ import annotations

import json
import platform
import struct
import sysconfig
from pathlib import Path

#: The prebuilt kernel's folder, in the sources and in the build's tree.
PREBUILT = Path("flexmbs", "engine", "prebuilt")
MANIFEST = "manifest.json"

#: LLVM's triple of a shipped build → the wheel platform tag of the hosts it runs on.
#: x86_64 Linux: the code imports atan2, memset, rint and sincos, which every glibc
#: since 2.17 (manylinux2014) defines, and links with llvmlite, itself manylinux2014.
WHEEL_PLATFORMS = {"x86_64-unknown-linux-gnu": "manylinux2014_x86_64"}

#: (sysconfig's platform, C library) of a build host → the triple its builds have.
HOST_TRIPLES = {("linux-x86_64", "glibc"): "x86_64-unknown-linux-gnu"}


def host_triple() -> str | None:
    """The triple of the builds that run where this wheel is built, or None."""
    if struct.calcsize("P") != 8:  # a 32-bit interpreter on a 64-bit system
        return None
    return HOST_TRIPLES.get((sysconfig.get_platform(), platform.libc_ver()[0]))


def carried_builds(manifest: dict, triple: str | None) -> list[dict]:
    """The builds of ``manifest`` a wheel built on a host of ``triple`` carries."""
    if triple not in WHEEL_PLATFORMS:
        return []
    return [build for build in manifest.get("builds", []) if build.get("triple") == triple]


def _manifest() -> dict:
    try:
        return json.loads((Path(__file__).resolve().parent / PREBUILT / MANIFEST).read_text())
    except (OSError, ValueError):
        return {"builds": []}


def carries_prebuilt() -> bool:
    """Whether a wheel built here carries a prebuilt kernel."""
    return bool(carried_builds(_manifest(), host_triple()))


def main() -> None:
    """setup() with the commands above (setuptools is imported here only, so that the
    tests can read this file's functions without it)."""
    from setuptools import Distribution, setup
    from setuptools.command.bdist_wheel import bdist_wheel
    from setuptools.command.build_py import build_py

    class BuildPy(build_py):
        """Keeps only the prebuilt builds this platform runs, and a manifest of them; none
        (not even the manifest) elsewhere."""

        def run(self):
            super().run()
            folder = Path(self.build_lib, PREBUILT)
            if not folder.is_dir():
                return
            manifest = _manifest()
            kept = carried_builds(manifest, host_triple())
            wanted = {build["file"] for build in kept}
            for path in folder.iterdir():
                if path.name != MANIFEST and path.name not in wanted:
                    path.unlink()
            if kept:
                carried = {**manifest, "builds": kept}
                (folder / MANIFEST).write_text(
                    json.dumps(carried, indent=1, sort_keys=True) + "\n")
            else:
                (folder / MANIFEST).unlink(missing_ok=True)

    class PlatformDistribution(Distribution):
        """Machine code aboard: installed as platform code (the wheel's root is platlib)."""

        def has_ext_modules(self):
            return carries_prebuilt()

    class BdistWheel(bdist_wheel):
        """``py3-none-<platform>`` when the wheel carries a prebuilt kernel, else
        ``py3-none-any``."""

        def get_tag(self):
            if not carries_prebuilt():
                return super().get_tag()
            return "py3", "none", WHEEL_PLATFORMS[host_triple()]

    setup(distclass=PlatformDistribution,
          cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})


if __name__ == "__main__":
    main()
