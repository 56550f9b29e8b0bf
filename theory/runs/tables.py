"""The seeds × checks table of a sweep (issue 15) as CSV (long: one line per seed and check) and markdown
(wide: one row per check, one column per seed), written beside the sweep page."""
from __future__ import annotations

import csv
import io

from .sweep import Analysis

CSV_COLUMNS = ("seed", "test", "claims", "outcome", "verdicts", "figure_kind", "figure", "figure_text")


def csv_text(a: Analysis) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for row in a.table:
        for s in a.seeds:
            c = row["cells"].get(s)
            if c is None:
                continue
            f = c["figure"]
            w.writerow([s, row["test"], " ".join(row["claims"]), c["outcome"], " ".join(c["verdicts"]),
                        f.kind if f else "", "" if f is None or f.value is None else repr(f.value), f.text if f else ""])
    return buf.getvalue()


def cell_text(c: dict | None) -> str:
    if c is None:
        return "—"
    f = c["figure"]
    return c["outcome"] + (f" · {f.text}" if f is not None else "")


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def markdown(a: Analysis) -> str:
    from ..analysis.tightness import AXES

    out = [f"# Seed sweep: {len(a.seeds)} seeds ({', '.join(map(str, a.seeds))})", ""]
    out.append("False alarms: " + a.alarms.text(a.failed))
    out.append("")
    out.append(f"Claims whose verdict is not the same at every seed: {len(a.unstable)}")
    out += [f"- `{c.claim}`: {c.counts}" for c in a.unstable] + [""]
    out += ["## Verdict per claim", "", "| claim | verdicts across seeds |", "| --- | --- |"]
    out += [f"| `{c.claim}` | {_md(c.counts)} |" for c in a.unstable + [c for c in a.claims if c.stable]]
    out += ["", "## Seeds × checks", "",
            "Each cell: the test's outcome · its headline tightness figure ("
            + "; ".join(f"{k}: {v}" for k, v in AXES.items()) + ").", ""]
    out.append("| check | claims | " + " | ".join(f"seed {s}" for s in a.seeds) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in a.seeds) + " |")
    for row in a.table:
        out.append(f"| `{_md(row['test'])}` | {_md(' '.join(row['claims']))} | "
                   + " | ".join(_md(cell_text(row["cells"].get(s))) for s in a.seeds) + " |")
    return "\n".join(out) + "\n"
