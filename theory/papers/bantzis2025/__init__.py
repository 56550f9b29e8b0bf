"""Bantzis, Simon & Jacot (2025), "Saddle-to-saddle dynamics in deep ReLU networks: low-rank bias
in the first saddle escape" — localized loss, escape speeds and the paper's constructions.

Modules: ``localized`` (L0, sphere geometry, Def. 2.1), ``opt_speed`` (OPT-SPEED solver),
``extend`` (Prop. 3.2/A.3 construction), ``ratios`` (RATIOS), ``bounds`` (the printed and
corrected formulas and bounds), ``example1`` (Example 1 / Eq. 6, exact), ``escape`` (escape
directions and the norm law of Prop. 2.2), ``saddle_training`` (Figure 1 experiment).
"""
