"""The report's Mutation score section: the committed results of the mutation profile (mutation/results.json),
shown and never counted in Table 3 or the verdict (like the recorded full transcript set).

Per module: the mutants killed (timeouts apart), survived and left out, the score, and the survivors by verdict
(killed by a test added since, equivalent, open, none); then every survivor with its verdict and reason (those of
an unfinished session too, marked so; a 'killed' one says whether `confirm` found it held), and the modules of
spec/ and delta/ the profile has not run. Each module's row names the commit it ran at. The stated samples
(mutation.sample) have rows of their own: per module and overall, the estimate with its 95% interval, the mutants
drawn and the population they were drawn from; never mixed with the complete runs' scores.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import delta_suite

MUTATION_HEADER = ["module", "tests", "mutants judged", "killed", "timeouts", "survived", "score",
                   "score without equivalent",
                   "survivors: killed since / equivalent / open / no verdict", "incompetent", "filtered out",
                   "ran at"]
SURVIVOR_HEADER = ["module", "line", "operator", "source", "mutant", "verdict", "reason"]
SAMPLE_HEADER = ["sample", "module", "drawn of population", "judged", "killed", "of them by the kill tier",
                 "survived", "score", "95% interval", "survivors: killed since / equivalent / open / no verdict",
                 "ran at"]
TITLE = "Mutation score of spec/ and delta/ (a committed results file: shown, not counted in Table 3)"


NOT_IN_A_CHECKOUT = ("the mutation profile and its results (mutation/results.json) are kept in the suite's "
                     "repository, not installed: run the report from a checkout to show them")


def mutation_profile(checkout: str | None = None) -> ModuleType | None:
    """The repository's mutation profile (`mutation/`), or None outside a checkout. It serves the repository's own
    development and is not installed, so it is loaded from the checkout's folder by its own name, whatever the
    import path (a console script's holds no checkout)."""
    root = checkout if checkout is not None else delta_suite.CHECKOUT
    if root is None or not (Path(root) / "mutation" / "__init__.py").is_file():
        return None
    if "mutation" not in sys.modules:
        init = Path(root) / "mutation" / "__init__.py"
        spec = importlib.util.spec_from_file_location("mutation", init, submodule_search_locations=[str(init.parent)])
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        sys.modules["mutation"] = module
        spec.loader.exec_module(module)
    # the profile's modules import one another by the name `mutation`, found through the package's own path
    import mutation.results  # noqa: F401  (a repository-only package: loaded from the checkout above)
    import mutation.verdicts  # noqa: F401

    return sys.modules["mutation"]


def mutation_summary() -> dict | None:
    """The summary of the committed results with their verdicts, or None when there is no usable results file
    (the section then says why); outside a checkout, the reason it is not shown."""
    profile = mutation_profile()
    if profile is None:
        return {"error": NOT_IN_A_CHECKOUT}
    results, verdict_file = profile.results, profile.verdicts
    try:
        data = results.read_results(results.RESULTS_FILE)
        verdicts = verdict_file.read_verdicts()
    except (ValueError, verdict_file.VerdictFileError) as exc:
        return {"error": str(exc)}
    if not data["modules"]:
        return None
    out = results.summary(data, verdicts)
    confirmed = results.confirmations_by_survivor(data)
    out["survivor_list"] = [{"module": m, "finished": finished,
                             **results.judged_survivors({"module": m, "survivors": [s]}, verdicts, confirmed)[0]}
                            for m, s, finished in results.all_survivors(data)]
    return out


def _mutated_line(diff: str) -> str:
    profile = mutation_profile()
    return profile.verdicts.mutated_line(diff) if profile is not None else ""


def _percent(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}%"


def mutation_rows(s: dict) -> list[list[str]]:
    """One row per module run (MUTATION_HEADER)."""
    rows = []
    for r in s.get("modules", []):
        c, v = r["counts"], r["survivors"]
        judged = c["killed"] + c["timeout"] + c["survived"]
        rows.append([r["module"], str(r["tests"]), f"{judged:,}", f"{c['killed']:,}", f"{c['timeout']:,}",
                     f"{c['survived']:,}", _percent(r["score"]), _percent(r["score_without_equivalent"]),
                     f"{v['killed']} / {v['equivalent']} / {v['open']} / {v['none']}", f"{c['incompetent']:,}",
                     f"{c['skipped']:,}", f"{r['commit']} {r['date']}"])
    return rows


def survivor_rows(s: dict) -> list[list[str]]:
    """One row per survivor (SURVIVOR_HEADER): where, the source line and the line the mutant puts there (two mutants
    of one operator at one place differ only there); a survivor of an unfinished session has its module marked so."""
    return [[x["module"] + ("" if x.get("finished", True) else " (unfinished)")
             + (f" (sample {x['sample']})" if x.get("sample") else ""), str(x["line_number"]),
             x["operator"].removeprefix("core/"), x["line"], _mutated_line(x.get("diff", "")),
             _verdict_cell(x), (x["reason"] + (f" (test: {x['test']})" if x["test"] else "")).strip()]
            for x in s.get("survivor_list", [])]


def _interval_cell(x: dict) -> str:
    if x.get("interval") is None:
        return "n/a"
    lo, hi = x["interval"]
    return "exact" if lo == hi else f"{lo * 100:.1f}% to {hi * 100:.1f}%"


def sample_rows(s: dict) -> list[list[str]]:
    """One row per sampled module, then one per sample overall (SAMPLE_HEADER): estimates with their intervals,
    apart from the complete runs' rows (a module both run and sampled appears in both, never added up)."""
    rows = []
    for sample in s.get("samples", []):
        for r in sample["modules"]:
            v = r["survivors"]
            rows.append([sample["key"], r["module"], f"{r['drawn']:,} of {r['population']:,}", f"{r['judged']:,}",
                         f"{r['killed']:,}", f"{r['kill_tier']['kills']:,}", f"{r['survived']:,}"
                         + (f" (+{r['unfinished']:,} unfinished within {r['budget']:g} s)" if r.get("unfinished")
                            else "") + _settled_note(r),
                         _bounded(r), _interval_cell(r),
                         f"{v['killed']} / {v['equivalent']} / {v['open']} / {v['none']}",
                         f"{r['commit']} {r['date']}"])
        o = sample["overall"]
        rows.append([sample["key"], f"all {len(sample['modules'])} modules sampled: a stratified estimate ("
                     f"{len(sample['not_drawn'])} not drawn yet)", f"{o['judged']:,} of {o['population']:,}",
                     f"{o['judged']:,}", "", "", f"+{o['unfinished']:,} unfinished" if o.get("unfinished") else "",
                     _bounded(o), _interval_cell(o), "", ""])
    return rows


def _settled_note(r: dict) -> str:
    """' (6 unfinished settled by complete run at 14315cb)': how many of the module's unfinished mutants a run of the
    same module source judged (mutation.settle), else ''."""
    s = r.get("settled")
    return f" ({len(s['mutants']):,} unfinished settled by {', '.join(s['by'])})" if s else ""


def _bounded(x: dict) -> str:
    """The score, with '>= ' and 'lower bound' when unfinished mutants count as not killed."""
    return f">= {_percent(x['score'])} (lower bound)" if x.get("lower_bound") else _percent(x["score"])


def _verdict_cell(x: dict) -> str:
    """The verdict; a 'killed' one says whether `python -m mutation confirm` found its test failing on the mutant."""
    if x["verdict"] != "killed":
        return x["verdict"] or "NO VERDICT"
    c = x.get("confirmation")
    if c is None:
        return "killed (not confirmed)"
    return f"killed (confirmed at {c['commit']})" if c["outcome"] == "confirmed" else \
        f"killed (NOT CONFIRMED at {c['commit']}: {c['outcome']})"


def mutation_sentence(s: dict | None) -> str:
    """One line on the whole: score, modules run and not run, survivors without a verdict."""
    if s is None:
        return "No module has been run by the mutation profile (./run mutate): no score."
    if "error" in s:
        return f"The mutation results cannot be shown: {s['error']}"
    t = s["total"]
    unjudged = sum(r["survivors"]["none"] for r in s["modules"])
    return (f"Score {_percent(s['score'])}: {t['killed'] + t['timeout']:,} of "
            f"{t['killed'] + t['timeout'] + t['survived']:,} judged mutants killed over {len(s['modules'])} modules "
            f"run ({_percent(s['score_without_equivalent'])} without the {s['equivalent']} judged equivalent); "
            f"{t['survived']:,} survived, {unjudged} of them without a verdict; not run yet: "
            f"{len(s['not_run'])} modules ({', '.join(s['not_run'][:6])}{', ...' if len(s['not_run']) > 6 else ''})"
            + (f"; of the {s['killed_claims']} survivors judged killed by a test added since, "
               f"{s['killed_confirmed']} were confirmed (the test fails on the mutant and passes without it:"
               f" python -m mutation confirm)" if s.get("killed_claims") else "")
            + "".join(f"; {p['module']} unfinished, {p['finished']} mutants kept ({p.get('judged', 0)} judged:"
                      f" {p.get('killed', 0)} killed, {p.get('survived', 0)} survived,"
                      f" {p.get('without_verdict', 0)} of them without a verdict; the others filtered out)"
                      for p in s.get("partial", []))
            + "".join(f"; a stated sample ({p['key']}) estimates {_bounded(p['overall'])}"
                      f" ({_interval_cell(p['overall'])}, 95%) from {p['overall']['judged']:,} mutants judged of a"
                      f" population of {p['overall']['population']:,} in {len(p['modules'])} modules"
                      + (f" ({p['overall']['settled']:,} of the mutants it left unfinished judged by a run of the"
                         " same module source)" if p["overall"].get("settled") else "") + ", shown apart"
                      for p in s.get("samples", []))
            + ".")
