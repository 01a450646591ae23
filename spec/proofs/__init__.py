"""Machine-checked proofs of the transition set against every split pattern, and the proof-obligation table.

`alphabet` partitions the code points into abstract symbols by engine membership in every atom of a pattern;
`regex` parses the patterns into ASTs over those atoms; `z3_encoding` and `prove` decide the obligations with
z3 and confirm counterexamples with the reference; `depth` says how deep each counterexample reaches on the
provisioned tokenizers of its pattern (split pieces, byte-level units or reference IDs) and searches for one that
changes the IDs; `bounded` is the independent engine-level enumeration;
`obligations` lists the premises of the cut and repair propositions and reads their status off the ledgers.
`python -m delta_suite.spec.proofs` prints the per-pattern summary.
"""
