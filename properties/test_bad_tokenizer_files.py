"""Malformed and degenerate tokenizer files through the commands that take a tokenizer: a cause in words, never a
traceback, never exit 1.

Propositions:
- every edit of a valid file (the byte-level `properties.synthetic.base_config`, the whole-word
  `properties.whole_word_files.small_config`) that drops or empties a field, puts a value of the wrong JSON type
  there, adds an empty, whitespace or over-long added token, duplicates an ID, names an ID past the vocabulary, adds
  a merge of unknown tokens, or nests a section absurdly deep is either refused with its cause in words (exit 2, or
  3 for the environment) by `admission_cli` and by `fuzz --tokenizer`, or admitted and fuzzed clean (exit 0);
- an added token with empty content is ignored, as the reference ignores it: the file encodes as the file without
  it, and no special string, margin or bound counts it;
- a file that gives the built-in samples no IDs, or unknown tokens only (an empty vocabulary), is refused as
  vacuous: a comparison of empty against empty is no evidence;
- a Split regex with a construct the proofs do not model is refused naming that construct, whether the stage is
  Isolated or Removed and inverted (a Removed+inverted stage is not "not proved to tile every text" when the cause
  is the construct).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.user_files import resolve_tokenizer
from delta_suite.frozen.user_table import USER_TABLE_ENV
from delta_suite.fuzz import cli as fuzz_cli
from delta_suite.spec import admission_cli
from delta_suite.spec.admission import admission_of, admit
from delta_suite.spec.proofs.derive import UNSUPPORTED
from delta_suite.spec.refusals import MESSAGES
from delta_suite.spec.vacuity import PROBE_TEXTS
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from properties.synthetic import base_config
from properties.whole_word_files import small_config

ROOT = Path(__file__).resolve().parents[1]
BASES: dict[str, Callable[[], dict]] = {"byte_level": base_config, "whole_word": small_config}
LEAVES = ("vocab", "merges")  # sections edited as a whole, never entry by entry (256 entries each)
ODD_VALUES = (None, 0, -1, 1.5, True, "", "x", [], {}, [1], {"type": 7}, [[]])
ADDED_CONTENTS = ("", " ", "\t", "\n\n", "\u3000", "x", "<|end|>", "<s>", "a" * 300)
NESTED_SECTIONS = ("pre_tokenizer", "normalizer", "truncation")
MAX_PATH = 6  # edits reach this deep into a file's sections
ODD_IDS = (0, 1, 258, 259, 260, 10_000, 2**31, 2**32 + 5, -1)
_NAMES = itertools.count()


@contextlib.contextmanager
def own_user_table() -> Iterator[None]:
    """The user table as it was before: the names a case registers do not outlive it (an admitted file named here
    must never reach the per-tokenizer tests of this worker)."""
    before = os.environ.get(USER_TABLE_ENV)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(USER_TABLE_ENV, None)
        else:
            os.environ[USER_TABLE_ENV] = before


def paths(node: object, prefix: tuple = ()) -> list[tuple]:
    """Every path of at most `MAX_PATH` keys to a dict value or list item of `node`, not descending into the
    vocabulary and merges."""
    out: list[tuple] = []
    if len(prefix) >= MAX_PATH:
        return out
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        if key not in LEAVES:
            out += paths(value, (*prefix, key))
    return out


def _parent(cfg: dict, path: tuple) -> object:
    node: object = cfg
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    return node


def set_at(cfg: dict, path: tuple, value: object) -> None:
    """Replace the value at `path` (a dict key or a list index) with `value`."""
    _parent(cfg, path)[path[-1]] = value  # type: ignore[index]


def drop_at(cfg: dict, path: tuple) -> None:
    """Remove the dict key or list item at `path`."""
    del _parent(cfg, path)[path[-1]]  # type: ignore[attr-defined]


def empty_of(value: object) -> object:
    """The empty value of `value`'s JSON type (None for a number or boolean)."""
    return type(value)() if isinstance(value, (dict, list, str)) else None


def vocab_of(cfg: dict) -> dict:
    """The model's vocabulary, made a dict when an earlier edit changed it."""
    model = cfg.setdefault("model", {}) if isinstance(cfg.get("model"), dict) else {}
    if not isinstance(model.get("vocab"), dict):
        model["vocab"] = {}
    return model["vocab"]


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, dict, tuple[str, int] | None]:
    """A valid file with one to three edits, words naming them, and optionally a section to nest (section, depth)
    when the file is written (`write_case`: deeper than `json.dumps` itself can write)."""
    base = draw(st.sampled_from(sorted(BASES)))
    cfg = BASES[base]()
    said = [base]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("drop", "empty", "wrong_type", "added_token", "duplicate_id", "id_past_vocab",
                                     "unknown_merge", "vacuous")))
        where = paths(cfg)
        if kind in ("drop", "empty", "wrong_type") and where:
            path = draw(st.sampled_from(where))
            if kind == "drop":
                drop_at(cfg, path)
            else:
                set_at(cfg, path, empty_of(_parent(cfg, path)[path[-1]]) if kind == "empty"  # type: ignore[index]
                       else draw(st.sampled_from(ODD_VALUES)))
            said.append(f"{kind} {'/'.join(map(str, path))}")
        elif kind == "added_token":
            token = {"id": draw(st.sampled_from(ODD_IDS)), "content": draw(st.sampled_from(ADDED_CONTENTS)),
                     "single_word": False, "lstrip": False, "rstrip": False, "normalized": draw(st.booleans()),
                     "special": draw(st.booleans())}
            if not isinstance(cfg.get("added_tokens"), list):
                cfg["added_tokens"] = []
            cfg["added_tokens"].append(token)
            said.append(f"added token {token['content'][:8]!r} id {token['id']}")
        elif kind in ("duplicate_id", "id_past_vocab"):
            vocab = vocab_of(cfg)
            token = draw(st.sampled_from(sorted(vocab) or ["zz"]))
            vocab[token] = (draw(st.sampled_from(sorted(set(vocab.values()) or {0}))) if kind == "duplicate_id"
                            else draw(st.sampled_from(ODD_IDS[5:])))
            said.append(f"{kind} {token!r} -> {vocab[token]}")
        elif kind == "unknown_merge":
            model = cfg.get("model")
            if isinstance(model, dict):
                model["merges"] = [*(model.get("merges") or []), draw(st.sampled_from(
                    (["zz", "qq"], ["t", "qq"], "a b c", ["a"], "zz qq", [1, 2])))]
            said.append("unknown merge")
        elif kind == "vacuous":
            model = cfg.get("model")
            if isinstance(model, dict):
                model["vocab"], model["merges"] = {}, []
            said.append("empty vocabulary and merges")
    nesting = None
    if draw(st.integers(0, 5)) == 0:
        nesting = (draw(st.sampled_from(NESTED_SECTIONS)), draw(st.sampled_from((3, 60, 3000))))
        said.append(f"{nesting[0]} nested {nesting[1]} deep")
    return "; ".join(said), cfg, nesting


def nested(value: object, section: str, depth: int) -> str:
    """`value` as JSON inside `depth` Sequence stages of `section`, written without recursion."""
    key = "pretokenizers" if section == "pre_tokenizer" else "normalizers"
    return f'{{"type": "Sequence", "{key}": [' * depth + json.dumps(value, ensure_ascii=False) + "]}" * depth


def write_case(folder: Path, cfg: dict, nesting: tuple[str, int] | None = None) -> Path:
    """`cfg` as folder/tokenizer.json (any JSON value may be written), with the section `nesting` names nested."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    text = json.dumps(cfg, ensure_ascii=False)
    if nesting is not None:
        section, depth = nesting
        rest = json.dumps({k: v for k, v in cfg.items() if k != section}, ensure_ascii=False)[1:]
        text = f'{{"{section}": {nested(cfg.get(section), section, depth)}' + (", " if rest != "}" else "") + rest
    path.write_text(text, encoding="utf-8")
    return path


def run_main(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    """Exit status and output (stdout, then stderr) of an in-process command; an exception escaping is a
    failure of the exit-code contract, reported with the command line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: a usage error
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # noqa: BLE001 - the contract: nothing escapes a command
            raise AssertionError(f"{argv}: {type(exc).__name__} escaped: {exc}"[:2000]) from exc
    return code, out.getvalue() + err.getvalue()


def admission_then_fuzz(path: Path, name: str, out: Path) -> tuple[int, str, int, str]:
    """Exit status and output of `admission_cli PATH` and of `fuzz --tokenizer PATH --examples 8`."""
    with own_user_table():
        code, said = run_main(admission_cli.main, [str(path), "--name", name])
    with own_user_table():
        fuzzed, fuzz_said = run_main(fuzz_cli.main, ["--tokenizer", str(path), "--name", name, "--examples", "8",
                                                     "--out", str(out), "--seed", "1"])
    return code, said, fuzzed, fuzz_said


def assert_contract(label: str, code: int, said: str, fuzzed: int, fuzz_said: str) -> None:
    """Admitted and fuzzed clean (0, 0), or refused by both with the cause in words (2, or 3 for I/O)."""
    assert "Traceback" not in said + fuzz_said, (label, said, fuzz_said)
    assert code in (0, 2, 3), (label, code, said)
    if code == 0:
        assert fuzzed == 0, (label, fuzzed, fuzz_said[-2000:])
        return
    assert fuzzed in (2, 3), (label, fuzzed, fuzz_said[-2000:])
    words = said.strip().splitlines()[-1]
    assert "[code " in words or words.startswith("error: "), (label, words)
    assert "refused: " not in words, (label, words)  # a code without words


@given(edits())
def test_every_edit_of_a_valid_file_is_refused_in_words_or_runs_clean(
        edit: tuple[str, dict, tuple[str, int] | None]) -> None:
    label, cfg, nesting = edit
    with tempfile.TemporaryDirectory() as tmp:
        name = f"bad-{next(_NAMES)}"
        path = write_case(Path(tmp) / name, cfg, nesting)
        assert_contract(label, *admission_then_fuzz(path, name, Path(tmp) / "out"))


def empty_added_token(base: str) -> dict:
    """The valid `base` file with one more added token whose content is empty."""
    cfg = BASES[base]()
    next_id = max(cfg["model"]["vocab"].values()) + 2
    cfg["added_tokens"].append({"id": next_id, "content": "", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": False, "special": True})
    return cfg


@pytest.mark.parametrize("base", sorted(BASES))
def test_an_empty_added_token_is_ignored_as_the_reference_ignores_it(base: str, tmp_path: Path) -> None:
    """The reference leaves an empty added token out (it never matches and takes no ID), so the file encodes as
    the file without it; the loader leaves it out of the special strings, and the file is fuzzed clean."""
    cfg = empty_added_token(base)
    with_it = Tokenizer.from_str(json.dumps(cfg))
    without = Tokenizer.from_str(json.dumps(BASES[base]()))
    assert with_it.get_added_tokens_decoder().keys() == without.get_added_tokens_decoder().keys()
    for text in (*SAMPLES, "", " ", "a  b"):
        assert with_it.encode(text).ids == without.encode(text).ids
    path = write_case(tmp_path / "empty-added", cfg)
    with own_user_table():
        tok = resolve_tokenizer(str(path), f"empty-added-{base}")
        assert "" not in tok.special_strings
        assert all(t.get("content") for t in tok.admission_inputs.added_tokens)
    assert_contract("empty added token", *admission_then_fuzz(path, f"empty-added-{base}", tmp_path / "f"))


VACUOUS = {
    "empty_vocabulary": lambda cfg: cfg["model"].update(vocab={}, merges=[]),
    "unknown_tokens_only": lambda cfg: cfg["model"].update(vocab={"<unk>": 0}, merges=[], unk_token="<unk>",
                                                           byte_fallback=False),
}


@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("kind", sorted(VACUOUS))
def test_a_vacuous_file_is_refused_as_vacuous(kind: str, base: str, tmp_path: Path) -> None:
    """A file that gives the built-in samples no IDs, or the unknown token only, is refused by name: its
    comparisons would be empty against empty."""
    cfg = BASES[base]()
    VACUOUS[kind](cfg)
    cfg["added_tokens"] = [t for t in cfg["added_tokens"] if t["content"] in cfg["model"]["vocab"]]
    path = write_case(tmp_path / kind, cfg)
    code, said, fuzzed, fuzz_said = admission_then_fuzz(path, f"{kind}-{base}", tmp_path / "f")
    assert code == 2 and "vacuous_tokenizer" in said, said
    assert fuzzed == 2 and "vacuous_tokenizer" in fuzz_said, fuzz_said[-2000:]
    assert "vacuous_tokenizer" in MESSAGES


# --- a construct the proofs do not model, in either stage form ---------------------------------------------------

TAIL = r"|\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"  # with it, each regex below tiles every text
CONSTRUCT_REGEXES = {
    "lookbehind": r"(?<=\p{L})\p{N}+" + TAIL,
    "anchor": r"^\p{L}+" + TAIL,
    "word_boundary": r"\b\p{L}+" + TAIL,
    "backreference": r"(['\"])\p{L}+\1" + TAIL,
    "lazy_quantifier": r"\p{L}+?" + TAIL,
    "possessive_quantifier": r"\p{L}++" + TAIL,
    "capturing_group": r"(\p{L})+" + TAIL,
    "named_group": r"(?<w>\p{L}+)" + TAIL,
    "atomic_group": r"(?>\p{L}+)" + TAIL,
    "inline_flag": r"(?x:\p{L}+)" + TAIL,
    "dot": r"." + TAIL,
    "class_escape": r"\w+" + TAIL,
    "nested_bracket": r"[[a-z]]+" + TAIL,
}
FORMS = {"isolated": ("Isolated", False), "removed_inverted": ("Removed", True)}


def split_config(regex: str, form: str) -> dict:
    """The byte-level base with its one Split stage over `regex` in `form` (`FORMS`)."""
    cfg = base_config()
    behavior, invert = FORMS[form]
    cfg["pre_tokenizer"]["pretokenizers"][0] = {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior,
                                                "invert": invert}
    return cfg


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("construct", sorted(CONSTRUCT_REGEXES))
def test_a_construct_is_named_in_either_stage_form(construct: str, form: str) -> None:
    """The refusal names the construct, as `split_pattern_unsupported:<construct>`, for an Isolated stage and for
    a Removed and inverted one alike."""
    cfg = split_config(CONSTRUCT_REGEXES[construct], form)
    decided = admit(cfg, cfg["added_tokens"])
    assert decided.reason == f"{UNSUPPORTED}:{construct}", decided.reason


def test_the_construct_is_named_by_the_command(tmp_path: Path) -> None:
    """End to end: a Removed+inverted stage over a tiling regex with a capturing group is refused by
    admission_cli naming the capturing group, as an Isolated one is."""
    for form in sorted(FORMS):
        path = write_case(tmp_path / form, split_config(CONSTRUCT_REGEXES["capturing_group"], form))
        with own_user_table():
            tok = resolve_tokenizer(str(path), f"capture-{form}")
            assert admission_of(tok).reason == f"{UNSUPPORTED}:capturing_group"


# --- end to end, in a subprocess -------------------------------------------------------------------------------

SUBPROCESS_CASES = {
    "empty_added_token": lambda: empty_added_token("byte_level"),
    "empty_vocabulary": lambda: {**base_config(), "added_tokens": [],
                                 "model": {**base_config()["model"], "vocab": {}, "merges": []}},
    "model_is_a_list": lambda: {**base_config(), "model": []},
    "unknown_token_not_in_vocabulary": lambda: unknown_token_missing(),
}


def unknown_token_missing() -> dict:
    """The valid whole-word file naming an unknown token its vocabulary lacks, without byte fallback: the reference
    loads it, then raises on the first character outside the vocabulary."""
    cfg = small_config()
    cfg["model"].update(unk_token="<missing>", byte_fallback=False)
    return cfg


def test_tokens_sharing_an_id_are_refused_in_a_whole_word_file(tmp_path: Path) -> None:
    """A whole-word vocabulary where a second token takes the unknown token's ID is refused by name (the reference
    reads the ID back as the unknown token, and the fuzz found differences on it), and its words name both
    tokens."""
    cfg = small_config()
    cfg["model"]["vocab"]["\n"] = cfg["model"]["vocab"]["<unk>"]
    path = write_case(tmp_path / "shared-id", cfg)
    code, said, fuzzed, fuzz_said = admission_then_fuzz(path, "shared-id", tmp_path / "f")
    assert (code, fuzzed) == (2, 2) and "vocabulary_duplicate_id:0: '<unk>', '\\n'" in said, said


def command_lines(path: Path, out: Path) -> dict[str, list[str]]:
    """Every command that takes a tokenizer, on `path`."""
    corpus = out / "docs.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(SAMPLES)))
    return {
        "admission": ["delta_suite.spec.admission_cli", str(path)],
        "fuzz": ["delta_suite.fuzz.cli", "--tokenizer", str(path), "--budget", "3s", "--out", str(out / "f")],
        "compare": ["delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer", str(path),
                    "--out", str(out / "c")],
        "kill_matrix": ["delta_suite.controls.kill_matrix", "--tokenizer", str(path), "--stop", "50",
                        "--ledger", str(out / "km.jsonl")],
        "smoke": ["delta_suite.corpora.cli", "smoke", "--tokenizer", str(path), "--out", str(out / "s")],
    }


@pytest.mark.parametrize("case", sorted(SUBPROCESS_CASES))
def test_every_command_keeps_the_exit_contract_end_to_end(case: str, tmp_path: Path) -> None:
    """Each command, as a user runs it: a refused file is exit 2 with words and no traceback; an admitted one runs
    clean."""
    path = write_case(tmp_path / case, SUBPROCESS_CASES[case]())
    env = {**os.environ, USER_TABLE_ENV: "{}"}
    codes, said = {}, {}
    for command, argv in command_lines(path, tmp_path / "out").items():
        got = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, cwd=ROOT, env=env,
                             timeout=300)
        assert "Traceback" not in got.stderr, (case, command, got.stderr[-2000:])
        codes[command], said[command] = got.returncode, got.stdout + got.stderr
    expected = dict.fromkeys(codes, 0 if case == "empty_added_token" else 2)  # 2: refused, or not loadable
    if case == "empty_vocabulary":  # smoke checks the reference against itself on any loadable file, refused or not
        expected["smoke"] = 0
        assert "refused:vacuous_tokenizer" in said["smoke"], said["smoke"][-2000:]
    assert codes == expected, (case, codes)


def test_the_vacuity_probe_is_the_built_in_samples() -> None:
    """Admission probes with the built-in samples (kept in `spec.vacuity`, below the corpora floor)."""
    assert PROBE_TEXTS == SAMPLES
