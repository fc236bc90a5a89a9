"""Type checkers see the package as it is installed: mypy --strict and pyright (strict) pass on
the package and on a script that calls every method (typing_checks/correct_use.py), and report every
mistake of a second script (typing_checks/deliberate_mistakes.py, lines marked `# ERRO`).

pyright comes from npm (`npm install pyright`); its path is `$PYRIGHT` or `pyright` on PATH.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import carapi

TIPAGEM = Path(__file__).resolve().parent / "typing_checks"
PACOTE = Path(carapi.__file__).resolve().parent
CACHE_MYPY = str(Path(tempfile.gettempdir()) / "carapi-mypy-cache")


def _mypy(*args):
    pytest.importorskip("mypy", reason="mypy not installed (pip install mypy pandas-stubs)")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", CACHE_MYPY, "--python-executable", sys.executable, *args],
        cwd=TIPAGEM, capture_output=True, text=True, timeout=600,
    )
    return r.returncode, r.stdout + r.stderr


def _pyright(*args):
    exe = os.environ.get("PYRIGHT") or shutil.which("pyright")
    if not exe:
        pytest.skip("pyright not found: npm install pyright, then set PYRIGHT or PATH")
    r = subprocess.run(
        [exe, "-p", str(TIPAGEM / "pyrightconfig.json"), "--pythonpath", sys.executable, *args],
        cwd=TIPAGEM, capture_output=True, text=True, timeout=600,
    )
    return r.returncode, r.stdout + r.stderr


def _linhas_marcadas():
    texto = (TIPAGEM / "deliberate_mistakes.py").read_text(encoding="utf-8").splitlines()
    return {n for n, linha in enumerate(texto, 1) if linha.rstrip().endswith("# ERRO")}


def test_the_installed_package_passes_mypy_strict():
    codigo, saida = _mypy("-p", "carapi")
    assert codigo == 0, saida


def test_the_installed_package_passes_pyright_strict():
    codigo, saida = _pyright(str(PACOTE))
    assert codigo == 0 and "0 errors" in saida, saida


def test_a_script_calling_every_method_type_checks_clean():
    codigo, saida = _mypy("correct_use.py")
    assert codigo == 0, saida
    codigo, saida = _pyright("correct_use.py")
    assert codigo == 0 and "0 errors" in saida, saida


def test_every_deliberate_mistake_is_reported_by_mypy():
    codigo, saida = _mypy("deliberate_mistakes.py")
    assert codigo == 1
    achadas = {int(n) for n in re.findall(r"^deliberate_mistakes\.py:(\d+): error", saida, re.M)}
    assert achadas == _linhas_marcadas(), saida


def test_every_deliberate_mistake_is_reported_by_pyright():
    codigo, saida = _pyright("deliberate_mistakes.py")
    assert codigo == 1
    achadas = {int(n) for n in re.findall(r"deliberate_mistakes\.py:(\d+):\d+ - error", saida)}
    assert achadas == _linhas_marcadas(), saida


def test_async_client_is_a_real_class_not_a_module_getattr():
    assert isinstance(carapi.AsyncClient, type)
    assert "__getattr__" not in vars(carapi)
