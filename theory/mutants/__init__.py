"""Mutation audit of the paper checks (issue 15): small plausible mistakes in ``theory/``, each run against the
checks that use the mutated function; a mutant is *caught* when one of those checks fails.

- :mod:`.ops` — the mutation operators (a constant ×2, a dropped √ or divisor, an exponent + 1, an off-by-one,
  a flipped sign) and the mutants of one source file, found with :mod:`ast`;
- :mod:`.targets` — which check files exercise a function (by name, through the paper modules that call it);
- :mod:`.audit` — applying one mutant in a scratch copy of the repository, running its checks, the catch table.

``python -m theory mutate`` runs it (see ``--help``).
"""
