"""Print, per pattern family, the abstract alphabet, the proved pairs, the confirmed counterexamples and the
solver time (`python -m spec.proofs [--bounded] [FAMILY...]`)."""

from __future__ import annotations

import argparse
import sys

from spec.patterns import RECONSTRUCTED, SPLIT_PATTERNS, TOTAL_STAGES
from spec.proofs.alphabet import family_alphabet
from spec.proofs.bounded import bounded_check, default_lengths
from spec.proofs.pieces import family_pieces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.proofs", description=__doc__)
    parser.add_argument("families", nargs="*", help=f"pattern families (default: all of {', '.join(SPLIT_PATTERNS)})")
    parser.add_argument("--bounded", action="store_true", help="also run the default bounded enumeration")
    args = parser.parse_args(argv)
    unknown = [f for f in args.families if f not in SPLIT_PATTERNS]
    if unknown:
        parser.error(f"unknown pattern family: {', '.join(unknown)}")
    # heavy optional: z3, loaded only once the arguments parse
    from spec.proofs.coverage import family_coverage
    from spec.proofs.prove import prove_family

    failed = False
    for family in args.families or list(SPLIT_PATTERNS):
        proof = prove_family(family)
        s = proof.summary()
        origin = f" (reconstruction: {RECONSTRUCTED[family]})" if family in RECONSTRUCTED else " (confirmed: file)"
        print(f"{family}{origin}: {s['symbols']} symbols, {s['stages']} stage(s), "
              f"{s['obligations_proved']}/{s['obligations_total']} obligations proved, solver {s['solver_seconds']}s")
        print(f"  accepted pairs proved (separating stage): {s['accepted_pairs_proved']}")
        print(f"  accepted pairs FAILED: {s['accepted_pairs_failed']}")
        print(f"  excluded but sound for this pattern: {s['excluded_sound_conservative']}")
        for label, cx in s["counterexamples"].items():
            print(f"  {label}: {' '.join(cx['codepoints'])} cut {cx['cut']} ({cx['obligation']}, stage "
                  f"{cx['stage']}): {cx['pieces_whole']} vs {cx['pieces_split']}")
        if s["unresolved_exclusions"]:
            print(f"  excluded pairs with neither proof nor confirmed counterexample: {s['unresolved_exclusions']}")
        failed |= bool(s["accepted_pairs_failed"] or s["unresolved_exclusions"])
        for cov in family_coverage(family):
            claimed = SPLIT_PATTERNS[family][cov.stage] in TOTAL_STAGES
            verdict = "total (matches tile every text)" if cov.total else (
                "matches the empty string" if cov.empty_match else f"not total: {cov.witness!r} starts no match")
            print(f"  coverage of stage {cov.stage}: {verdict}; may run Removed + inverted: {claimed}")
            failed |= cov.total != claimed
        if args.bounded:
            alphabet = family_alphabet(family)
            for r in bounded_check(family_pieces(family), alphabet, *default_lengths(alphabet, False)):
                print(f"  bounded [{r.label}] {len(r.representatives)} symbols to length {r.max_length}: "
                      f"{r.enumerated} strings, {r.transitions} cuts, {len(r.differences)} differences, "
                      f"{r.seconds:.1f}s")
                failed |= bool(r.differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
