"""The standing mutation score of `spec/` and `delta/`: a maintained mutation tool (cosmic-ray) run per module with
the tests selected for that module, every surviving mutant given a verdict (killed by a new test, equivalent with
the reason, or open), and the score written to a results file the report shows.

An opt-in profile (`./run mutate`): it does not fit the CI budget. See mutation/cli.py.
"""
