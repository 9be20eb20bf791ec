"""Issue 26, item 5: the README's set-up leaves a ``fastchat`` on PATH, and the hint for the ``embedded`` extra
names a command that works from a clone (fastchat is not published as a package).

The README's first set-up command is run by a real shell with a stand-in for the venv (so nothing is
installed), and the hint is checked for the two ways fastchat runs: from its source tree, and installed
(not editable) from a clone, where pip recorded the clone's directory in ``direct_url.json``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fastchat_tui.install import install_command

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def setup_commands() -> list[str]:
    """The shell commands of the README's "Set up" section, in order."""
    section = README.read_text(encoding="utf-8").split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_the_readme_keeps_two_setup_commands_that_install_and_test():
    install, tests = setup_commands()
    assert "pip install '.[embedded]'" in install and install.rstrip().endswith("fastchat")
    assert "pip install -e '.[test]'" in tests and "pytest" in tests


def test_the_first_setup_command_leaves_fastchat_on_path(tmp_path: Path):
    """Run by a shell, the first command's last word ``fastchat`` is found on PATH, and so it is for the next
    command typed in that shell. ``python3 -m venv`` is a stand-in that makes a venv whose ``pip install``
    puts a ``fastchat`` in its ``bin`` (nothing is downloaded); ``activate`` is the shell's to source."""
    install, _ = setup_commands()
    clone, shim, venv = tmp_path / "clone", tmp_path / "shim", tmp_path / "venv-template"
    for directory in (clone, shim, venv / "bin"):
        directory.mkdir(parents=True)
    scripts = {
        shim / "python3": f'#!/bin/sh\n[ "$1 $2" = "-m venv" ] && cp -r {venv} "$3"\n',
        venv / "bin" / "activate": 'PATH="$PWD/.venv/bin:$PATH"\nexport PATH\n',
        venv / "bin" / "pip": '#!/bin/sh\necho "$*" > "$(dirname "$0")/../installed"\n'
                              'printf "#!/bin/sh\\necho fastchat ran\\n" > "$(dirname "$0")/fastchat"\n'
                              'chmod +x "$(dirname "$0")/fastchat"\n',
    }
    for path, text in scripts.items():
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
    env = {"PATH": f"{shim}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(["sh", "-c", f"{install}\ncommand -v fastchat"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["fastchat ran", str(clone / ".venv" / "bin" / "fastchat")]
    assert (clone / ".venv" / "installed").read_text() == "install .[embedded]\n"


def test_the_hint_names_this_interpreter_and_this_checkout():
    hint = install_command("embedded")
    assert hint == f"`{sys.executable} -m pip install '{ROOT}[embedded]'`"
    assert "fastchat-tui[embedded]" not in hint


def test_an_install_from_a_clone_names_the_clone(tmp_path: Path):
    """Installed (not editable) from a clone: the package sits in site-packages, and pip's direct_url.json
    names the directory it was installed from."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "src" / "fastchat_tui", site / "fastchat_tui")
    clone = tmp_path / "my clone"
    clone.mkdir()
    (clone / "pyproject.toml").write_text('[project]\nname = "fastchat-tui"\n', encoding="utf-8")
    info = site / "fastchat_tui-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fastchat-tui\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "direct_url.json").write_text(json.dumps({"url": clone.as_uri(), "dir_info": {}}), encoding="utf-8")
    script = "from fastchat_tui.install import install_command; print(install_command('embedded'))"
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"`{sys.executable} -m pip install '{clone}[embedded]'`"
    shutil.rmtree(clone)  # the clone is gone: the hint says where to run it instead
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == f"`{sys.executable} -m pip install '.[embedded]'` in your fastchat clone"
