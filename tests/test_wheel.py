"""The built wheel stands on its own: it holds every data file the code reads, and the main
job runs from an installation of it, from a directory outside the repository.

The wheel is built from a copy of the working tree (``pip wheel`` builds in place and would
leave ``build/`` behind, whose stale files end up in later wheels) and installed into a fresh
virtual environment that sees this environment's site-packages through a ``.pth`` file for
the dependencies only; the editable install's import hook is not loaded there, so
``optimizer`` can only come from the wheel.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds, installs and runs a wheel: 4-8 s on 2 cores

ROOT = Path(__file__).resolve().parents[1]
# Not part of the wheel's sources; copying them would only slow the build down.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
)


def _run(
    args: list[str | Path], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _clean_env(home: Path) -> dict[str, str]:
    """No variable that could point the program back at the repository or a user's store."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PROCURE_CATALOGS", "PROCURE_DATA_DIR", "PROCURE_SERVER")
    }
    env.update(HOME=str(home), PROCURE_DATA_DIR=str(home / "store"), PIP_NO_INDEX="1")
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_NOT_SOURCES)
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",  # offline: this environment's setuptools builds it
            "--wheel-dir",
            work / "dist",
            source,
        ],
        cwd=work,
        env=_clean_env(work),
    )
    assert done.returncode == 0, done.stderr
    (built,) = (work / "dist").glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with only the wheel installed in it; returns its bin/."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        cwd=env_dir,
        env=_clean_env(env_dir),
    ).stdout.strip()
    ours = {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}
    (Path(purelib) / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    done = _run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", wheel],
        cwd=env_dir,
        env=_clean_env(env_dir),
    )
    assert done.returncode == 0, done.stderr
    return env_dir / "bin"


def _repo_files(folder: str, pattern: str) -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / folder).glob(pattern)}


def test_the_wheel_holds_every_data_file_the_code_reads(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = {
        "optimizer/py.typed",
        "optimizer/performance/fabrics.csv",
        "optimizer/performance/data/published-runs.json",
        "optimizer/catalogs/README.md",
    }
    expected |= {f"optimizer/{name}" for name in _repo_files("catalogs", "*/*.csv")}
    assert len(expected) >= 4 + 3 * 6  # three bundled catalogs of six tables each
    assert expected - names == set()


def test_the_package_comes_from_the_wheel_not_the_repository(
    installed: Path, tmp_path: Path
) -> None:
    done = _run(
        [installed / "python", "-c", "import optimizer; print(optimizer.__file__)"],
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.parent)


def test_the_main_job_runs_from_the_installed_wheel_outside_the_repository(
    installed: Path, tmp_path: Path
) -> None:
    """The README's main job, from a directory that has nothing of the repository."""
    done = _run(
        [
            installed / "procure",
            "optimize",
            "--catalog",
            "infiniband-ndr",
            "--workload",
            "llama3-70b",
            "--target-hours",
            "720",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert '"designs"' in done.stdout and "infiniband" in done.stdout.lower()


def test_the_published_runs_load_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    code = "from optimizer.performance.validation import calibration_cases as c; print(len(c()))"
    done = _run([installed / "python", "-c", code], cwd=tmp_path, env=_clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0
