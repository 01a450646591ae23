"""The pytest suite: property, exhaustive and unit tests of the propositions and the implementation."""
