"""`load_tokenizer`: re-hashing, computed margin and bound, special strings, config-only tokens, corrupt files."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path

import pytest
from delta_suite.frozen.cache import tokenizers_dir
from delta_suite.frozen.errors import (
    CorruptTokenizerFile,
    DigestMismatch,
    InstalledFileChanged,
    NotProvisioned,
    UnknownTokenizer,
)
from delta_suite.frozen.loader import (
    ParameterMismatch,
    build,
    byte_decoder,
    byte_level_bytes,
    compute_bound,
    compute_margin,
    load_tokenizer,
    load_tokenizer_file,
    loaded_pre_tokenizer,
    reference_pre_tokenizer,
    token_byte_length,
)
from delta_suite.frozen.registry import lookup
from tokenizers import Tokenizer, models, pre_tokenizers

from properties.conftest import PROVISIONED
from properties.synthetic import base_config, write

# (name, normalizer kind, special-token strings in the loaded configuration, margin, bound)
EXPECTED = [
    ("qwen3_8b", "nfc", 26, 20, 128),
    ("llama_3_1_8b", "none", 256, 30, 128),
    ("gpt_oss_120b", "none", 21, 19, 128),
    ("deepseek_v3", "empty_sequence", 818, 23, 128),
    ("deepseek_v4_flash", "empty_sequence", 1283, 36, 128),
    ("olmo_3_7b", "none", 22, 19, 128),  # provisioned without a config: the strings come from tokenizer.json alone
    ("ministral_3_8b", "none", 1000, 18, 76),
    ("nemotron_3_nano_4b", "none", 1000, 18, 76),  # ministral's vocabulary; six of its added tokens non-special
]


@pytest.mark.parametrize(("name", "normalizer", "specials", "margin", "bound"), EXPECTED)
def test_provisioned_tokenizers_load_with_computed_parameters(name, normalizer, specials, margin, bound) -> None:
    assert name in PROVISIONED, f"{name} must be provisioned from the mirror"
    tok = load_tokenizer(name, fresh=True)
    assert tok.normalizer == normalizer
    assert len(tok.special_strings) == specials
    # computed from the files, independently of the registry, and equal to the registry's facts
    raw = json.loads(tok.tokenizer.to_str())
    assert loaded_pre_tokenizer(tok.tokenizer) == raw["pre_tokenizer"]  # the cheap read is the whole file's section
    assert compute_margin(tok.special_strings) == max(8, max(len(s) for s in tok.special_strings)) == margin
    assert compute_bound(raw, raw["added_tokens"]) == bound
    assert (tok.margin, tok.bound) == (lookup(name).margin, lookup(name).bound)
    assert tok.sha256 in (lookup(name).files["tokenizer.json"].sha256,
                          getattr(lookup(name).known_siblings.get("tokenizer.json"), "sha256", None))


@pytest.mark.parametrize("vocab", [
    {"abcde": 0, "中中": 1, "ab": 2},  # two CJK characters outside the byte alphabet: 6 bytes beat 5 characters
    {"abcdefghijklm": 0, "中中": 1},  # the long entry wins, the scan stops before the short ones
    {"ĠĠĠ": 0, "Ġ中": 1},  # byte alphabet (3 bytes) against UTF-8 (5 bytes) at the same character length
    {},
])
def test_bound_is_the_longest_decoded_entry(vocab: dict) -> None:
    """The bound reads the entries longest first and stops early: the same maximum as reading every entry."""
    decoder = byte_decoder()
    full = max([token_byte_length(t, decoder) for t in vocab] + [len(b"<s>")])
    assert compute_bound({"model": {"vocab": vocab}}, [{"content": "<s>"}]) == full


def test_byte_level_bytes_reads_each_character_through_the_byte_decoder() -> None:
    """Strings of up to two characters over the byte alphabet and characters outside it (space, "中", U+0400; "a"
    is inside): the bytes are the decoder's byte per character, in order, and a
    string with a character outside the alphabet has none. Plants it failed on: the foreign-character check left
    out (a space came back as b" "); the translation table built from the encoder side (bytes read as characters)."""
    decoder = byte_decoder()
    chars = [*decoder, " ", "中", "\u0400", "a"]
    strings = [""] + chars + [a + b for a in chars[::7] for b in chars[::5]]
    for s in strings:
        want = bytes(decoder[ch] for ch in s) if all(ch in decoder for ch in s) else None
        assert byte_level_bytes(s) == want, s


def test_registry_disagreement_is_refused() -> None:
    """A row whose margin differs from what the files give must not load silently."""
    row = lookup("qwen3")
    cfg = base_config()
    with pytest.raises(ParameterMismatch, match="computed margin 8 and bound"):
        build("synthetic", json.dumps(cfg).encode(), None, provenance="file", row=replace(row, margin=99))


def test_config_only_tokens_join_the_loaded_configuration(tmp_path: Path) -> None:
    """Tokens declared only in tokenizer_config.json (as Qwen3.5 does) are added with their declared IDs."""
    cfg = base_config()
    tok_config = {"added_tokens_decoder": {
        "258": {"content": "<|end|>", "special": True, "lstrip": False, "rstrip": False, "normalized": False,
                "single_word": False},
        "259": {"content": "<|audio_start|>", "special": True, "lstrip": False, "rstrip": False,
                "normalized": False, "single_word": False},
    }}
    path, cfg_path = write(tmp_path, cfg, tok_config)
    tok = load_tokenizer_file(path, cfg_path)
    assert "<|audio_start|>" in tok.special_strings and len(tok.special_strings) == 2
    assert tok.margin == len("<|audio_start|>")
    assert tok.tokenizer.encode("a<|audio_start|>b", add_special_tokens=False).ids[1] == 259


def test_config_only_token_with_a_wrong_id_is_refused(tmp_path: Path) -> None:
    tok_config = {"added_tokens_decoder": {"400": {"content": "<x>", "special": True}}}
    path, cfg_path = write(tmp_path, base_config(), tok_config)
    with pytest.raises(CorruptTokenizerFile, match="declared as ID 400 but loads as 259"):
        load_tokenizer_file(path, cfg_path)


def test_a_deferred_reference_is_built_once_on_first_use_and_a_failing_build_raises_there(tmp_path: Path) -> None:
    """With `defer`, loading reads the facts without building the reference object; the first `.tokenizer` builds
    it (once: a copy made by `dataclasses.replace` shares it), and a build that fails raises its loader error at
    that use and again at the next. A registry row loads deferred, and its object encodes like an eager load."""
    path, cfg_path = write(tmp_path, base_config(), {"added_tokens_decoder": {
        "258": {"content": "<|end|>", "special": True}}})
    tok = build("t", path.read_bytes(), cfg_path.read_bytes(), provenance="file", defer=True)
    assert not tok.reference.is_built and tok.special_strings == ("<|end|>",)
    copy = replace(tok, margin=9)
    assert tok.tokenizer is copy.tokenizer and tok.reference.is_built
    assert tok.tokenizer.token_to_id("<|end|>") == 258
    wrong = build("t", path.read_bytes(), json.dumps({"added_tokens_decoder": {"400": {"content": "<x>"}}}).encode(),
                  provenance="file", defer=True)
    for _ in range(2):
        with pytest.raises(CorruptTokenizerFile, match="declared as ID 400 but loads as 259"):
            _ = wrong.tokenizer
    if not PROVISIONED:
        pytest.skip("no tokenizer provisioned")
    row = load_tokenizer(PROVISIONED[0], fresh=True)
    assert not row.reference.is_built
    eager = Tokenizer.from_file(str(tokenizers_dir() / row.name / "tokenizer.json"))
    text = "Hello, wörld!\n  12345 ünïcödé"
    assert row.tokenizer.encode(text).ids == eager.encode(text).ids


@pytest.mark.parametrize("damage", ["truncate", "not_json", "not_object", "no_model"])
def test_corrupt_files_are_clear_errors(tmp_path: Path, damage: str) -> None:
    data = json.dumps(base_config()).encode()
    bad = {
        "truncate": data[: len(data) // 2],
        "not_json": b"\x00\x01 not json",
        "not_object": b"[1, 2, 3]",
        "no_model": json.dumps({"version": "1.0"}).encode(),
    }[damage]
    path = tmp_path / "tokenizer.json"
    path.write_bytes(bad)
    with pytest.raises(CorruptTokenizerFile):
        load_tokenizer_file(path)


def test_unknown_and_unprovisioned_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownTokenizer):
        load_tokenizer("no-such-model")
    with pytest.raises(NotProvisioned, match="corpora tokenizers pull glm5.2"):
        load_tokenizer("glm5.2", root=tmp_path)


def test_a_changed_installed_file_names_the_remedy_across_processes() -> None:
    """The loader's refusal of a changed file is a DigestMismatch naming the re-install command, also when it
    crosses a process boundary (a pool worker's error is pickled)."""
    exc = InstalledFileChanged("/cache/tokenizers/qwen3_8b/tokenizer.json", "a" * 64, "b" * 64, "qwen3")
    assert isinstance(exc, DigestMismatch) and exc.exit_code == 2
    assert str(exc).endswith("it changed since install; re-install it: corpora tokenizers pull qwen3 --force")
    again = pickle.loads(pickle.dumps(exc))
    assert str(again) == str(exc) and again.remedy == exc.remedy


def test_the_reference_pre_tokenizer_equals_the_whole_objects_without_building_it(tmp_path: Path) -> None:
    """`reference_pre_tokenizer` reads the section as the reference library reads it, without building the whole
    object: equal to `loaded_pre_tokenizer(tok.tokenizer)` on every provisioned tokenizer, and on a file whose
    section the library completes with its defaults (so not the file's raw section); None without a section."""
    for name in PROVISIONED:
        tok = load_tokenizer(name, fresh=True)
        cheap = reference_pre_tokenizer(tok)
        assert not tok.reference.is_built, name
        assert cheap == loaded_pre_tokenizer(tok.tokenizer) == reference_pre_tokenizer(tok), name
    cfg = base_config()
    cfg["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}  # use_regex: default
    path, _ = write(tmp_path, cfg)
    short = build("short", path.read_bytes(), None, provenance="file", defer=True)
    cheap = reference_pre_tokenizer(short)
    assert cheap != cfg["pre_tokenizer"] and cheap == loaded_pre_tokenizer(short.tokenizer), cheap
    cfg["pre_tokenizer"] = None
    path, _ = write(tmp_path, cfg)
    assert reference_pre_tokenizer(build("none", path.read_bytes(), None, provenance="file", defer=True)) is None


def test_loaded_pre_tokenizer_is_none_without_one_and_follows_a_change() -> None:
    """`loaded_pre_tokenizer` reads the loaded object, not a copy of the file: None for a tokenizer without a
    pre-tokenizer, and the new section after one is set."""
    tokenizer = Tokenizer(models.BPE())
    assert loaded_pre_tokenizer(tokenizer) is None
    tokenizer.pre_tokenizer = pre_tokenizers.Digits(individual_digits=True)
    assert loaded_pre_tokenizer(tokenizer) == json.loads(tokenizer.to_str())["pre_tokenizer"]
    assert loaded_pre_tokenizer(tokenizer)["individual_digits"] is True
