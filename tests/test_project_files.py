"""Issue 23, files in: which files of a project fastchat reads (``project_files``), on real trees in tmp dirs with
``.gitignore`` files at several levels, ``.git/info/exclude``, binary files and symlinks out of the root."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fastchat_tui.inputs import InputError, InputText
from fastchat_tui.project_files import Limits, WalkTooLong, expand, ignored, inside, looks_binary, walk

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    tree(root, {
        ".gitignore": "*.log\nbuild/\n/secret.txt\n!keep.log\n",
        ".git/info/exclude": "local-notes.md\n",
        ".git/config": "[core]\n",
        "app.py": "print('hi')\n",
        "debug.log": "noise\n",
        "keep.log": "kept\n",
        "secret.txt": "top only\n",
        "local-notes.md": "mine\n",
        "build/out.js": "x\n",
        "src/main.py": "main\n",
        "src/secret.txt": "not anchored at root\n",
        "src/.gitignore": "generated/\n*.tmp\n!important.tmp\n",
        "src/generated/a.py": "gen\n",
        "src/cache.tmp": "tmp\n",
        "src/important.tmp": "re-included\n",
        "src/pkg/mod.py": "mod\n",
        "docs/guide.md": "# guide\n",
        "docs/logo.png": PNG,
    })
    return root


def rel(root: Path, paths: object) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]  # type: ignore[attr-defined]


def test_walk_honours_nested_gitignores_info_exclude_and_never_lists_git(project: Path):
    assert rel(project, walk(project)) == [
        ".gitignore", "app.py", "docs/guide.md", "docs/logo.png", "keep.log",
        "src/.gitignore", "src/important.tmp", "src/main.py", "src/pkg/mod.py", "src/secret.txt",
    ]
    assert rel(project, walk(project, Path("src"))) == [
        "src/.gitignore", "src/important.tmp", "src/main.py", "src/pkg/mod.py", "src/secret.txt"]


def test_walk_agrees_with_git_itself(project: Path):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("local-notes.md\n")
    listed = subprocess.run(["git", "-C", str(project), "ls-files", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout.split()
    assert rel(project, walk(project)) == sorted(listed, key=lambda p: p.split("/"))


def test_ignored_answers_for_single_paths(project: Path):
    assert ignored(project, Path("debug.log")) and not ignored(project, Path("keep.log"))
    assert ignored(project, project / "build" / "out.js")  # under an ignored directory
    assert ignored(project, Path("src/generated/a.py")) and ignored(project, Path("src/cache.tmp"))
    assert not ignored(project, Path("src/important.tmp"))
    assert ignored(project, Path("secret.txt")) and not ignored(project, Path("src/secret.txt"))
    assert ignored(project, Path(".git/config")) and ignored(project, Path("local-notes.md"))
    assert not ignored(project, Path("/etc/passwd"))  # not the project's


def test_a_walk_does_not_follow_symlinks_out_of_the_root(project: Path, tmp_path: Path):
    outside = tree(tmp_path / "elsewhere", {"id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n", "d/x.py": "x\n"})
    os.symlink(outside / "id_rsa", project / "key-link")
    os.symlink(outside / "d", project / "dir-link")
    os.symlink(project / "app.py", project / "app-link.py")  # inside: listed
    os.symlink(project / "src", project / "src-link")  # a directory inside: walked where it is, once
    os.symlink(project / "missing", project / "dangling")
    files = rel(project, walk(project))
    assert "app-link.py" in files
    assert not {"key-link", "dir-link/x.py", "src-link/main.py", "dangling"} & set(files)
    assert not inside(project, project / "key-link") and inside(project, project / "app-link.py")
    got = expand(["."], project)
    names = [a.name for a in got.attachments]
    assert [a.text for a in got.attachments].count("print('hi')\n") == 1  # app-link.py is app.py: read once
    assert not {"key-link", "dir-link/x.py", "src-link/main.py"} & set(names)
    assert any("2 symlinks pointing outside" in note and "dir-link" in note for note in got.notes)


def test_walk_is_bounded(tmp_path: Path):
    tree(tmp_path, {f"f{i}.txt": "x" for i in range(12)})
    assert len(list(walk(tmp_path, limit=12))) == 12
    with pytest.raises(WalkTooLong, match="more than 11 files"):
        list(walk(tmp_path, limit=11))


@pytest.mark.parametrize(("data", "binary"), [
    (b"plain text\n", False), (b"", False), ("héllo ✓".encode(), False),
    (PNG, True), (b"abc\x00def", True), (b"\xff\xfe" + "hi".encode("utf-16-le"), False),
    (b"caf\xe9 latin-1", True), ("é".encode() * 512 + b"\xc3", False),  # a character cut at the sniff's end
])
def test_looks_binary(data: bytes, binary: bool):
    assert looks_binary(data) is binary


def test_expand_files_directories_and_globs_with_notes(project: Path):
    got = expand(["app.py", "docs", "src/**/*.py", "nothing/*.md"], project)
    assert [a.name for a in got.attachments] == ["app.py", "docs/guide.md", "src/main.py", "src/pkg/mod.py"]
    assert got.attachments[0].text == "print('hi')\n" and got.attachments[0].language == "python"
    assert "skipped 1 binary file: docs/logo.png" in got.notes
    assert "nothing/*.md matched nothing" in got.notes
    everything = expand(["."], project)
    assert "src/generated/a.py" not in [a.name for a in everything.attachments]
    assert any(n.startswith("skipped 6 paths ignored by .gitignore: ") for n in everything.notes), everything.notes


def test_an_explicitly_named_ignored_file_is_read(project: Path):
    got = expand(["debug.log", "src/generated/a.py", "app.py", "./app.py"], project)
    assert [a.name for a in got.attachments] == ["debug.log", "src/generated/a.py", "app.py"]
    assert got.notes == []


def test_an_explicitly_named_binary_file_or_a_missing_path_is_an_error(project: Path):
    with pytest.raises(InputError, match=r"docs/logo\.png is a PNG image, not text"):
        expand(["docs/logo.png"], project)
    with pytest.raises(InputError, match=r"nope\.py: no such file or directory"):
        expand(["nope.py"], project)


def test_a_late_nul_byte_in_a_walked_file_skips_it_as_binary(tmp_path: Path):
    tree(tmp_path, {"a.txt": "ok\n", "b.dat": b"x" * 5000 + b"\x00"})
    got = expand(["."], tmp_path)
    assert [a.name for a in got.attachments] == ["a.txt"]
    assert got.notes == ["skipped 1 binary file: b.dat"]


def test_limits_per_file_total_and_count_each_name_the_limit(tmp_path: Path):
    tree(tmp_path, {"a.txt": "a" * 600, "b.txt": "b" * 600, "c.txt": "c" * 10})
    with pytest.raises(InputError, match=r"a\.txt is larger than the input limit.*max_input_bytes"):
        expand(["a.txt"], tmp_path, limits=Limits(file_bytes=500, total_bytes=10_000))
    with pytest.raises(InputError, match=r"add up to more than the input limit of 1,000 bytes \(at b.txt\)"):
        expand(["."], tmp_path, limits=Limits(file_bytes=800, total_bytes=1000))
    with pytest.raises(InputError, match=r"more than 2 files to attach.*max_attached_files = 8"):
        expand(["."], tmp_path, limits=Limits(files=2))
    assert len(expand(["."], tmp_path, limits=Limits(files=3)).attachments) == 3


def test_stdin_is_read_once_beside_files(project: Path):
    calls: list[int] = []

    def read_stdin() -> InputText:
        calls.append(1)
        return InputText("piped\n", 6)

    got = expand(["-", "app.py", "-"], project, read_stdin=read_stdin)
    assert [a.name for a in got.attachments] == ["stdin", "app.py"] and calls == [1]


def test_a_directory_outside_the_root_is_walked_with_its_own_ignores(project: Path, tmp_path: Path):
    other = tree(tmp_path / "other", {".gitignore": "*.gen\n", "x.py": "x\n", "y.gen": "y\n"})
    got = expand([str(other)], project)
    assert [a.name for a in got.attachments] == [str(other / ".gitignore"), str(other / "x.py")]


def test_a_walk_from_a_subdirectory_keeps_the_rules_above_it(project: Path):
    (project / "src" / "pkg" / "mod.log").write_text("root's *.log\n")
    (project / "src" / "pkg" / "x.tmp").write_text("src's *.tmp\n")
    assert rel(project, walk(project, Path("src/pkg"))) == ["src/pkg/mod.py"]
