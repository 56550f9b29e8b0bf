"""Issue 13: the claim registries live in the package; every entry has a check or a recorded reason."""
import pathlib
import subprocess
import sys

import pytest

from theory import claims, coverage

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAPERS = ("bantzis2025", "kou2023", "wang2024", "zhu2022")


def test_packaged_registries_load_with_their_bibliographic_entries():
    files = claims.sources()
    assert [pathlib.Path(f).parent.name for f in files[:4]] == list(PAPERS)
    for pid in PAPERS:
        p = claims.papers()[pid]
        assert p.authors and p.title and p.venue and p.year and (p.arxiv or p.doi or p.url), pid
        assert str(p.year) in p.citation() and p.title in p.citation()


def test_every_entry_is_complete():
    for c in claims.catalog().values():
        for f in ("title", "kind", "where", "statement", "hypotheses", "measures"):
            assert getattr(c, f).strip(), (c.id, f)
        assert c.checkable == "fully" or c.why, c.id


def test_every_entry_has_a_check_or_a_reason_and_every_check_a_registry():
    assert coverage.problems(coverage.paper_check_dirs(ROOT / "checks")) == []


def test_coverage_flags_an_entry_without_check_and_an_unknown_id(tmp_path):
    some = next(iter(claims.catalog()))
    (tmp_path / "test_x.py").write_text(f"IDS = ['{some}', 'kou2023/lem-' + '0']\nBAD = 'zzzz2026/lem-1'\n")
    probs = coverage.problems([tmp_path])
    assert any(p.startswith("zzzz2026/lem-1: named by") for p in probs)
    assert sum("no check names it" in p for p in probs) == sum(
        1 for c in claims.catalog().values() if c.id != some and not (c.checkable == "no" and c.why))


def test_no_project_file_needs_the_folder_beside_the_repository():
    """A clone has nothing beside it: no tracked file may point at the team's notes folder."""
    needle = "../" + "shared"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    names = tracked.stdout.split() if tracked.returncode == 0 else [
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    hits = [n for n in names if (ROOT / n).is_file() and needle in (ROOT / n).read_text(errors="replace")]
    assert hits == []


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "theory", *args], capture_output=True, text=True, timeout=120,
                          cwd=kw.get("cwd", ROOT))


@pytest.mark.e2e
def test_claims_command_lists_coverage_and_prints_one_entry():
    r = _cli("claims", "--missing")
    assert r.returncode == 0, r.stdout + r.stderr
    for pid in PAPERS:
        assert f"{pid}: " in r.stdout
    cid = "kou2023/lem-5.2"
    r = _cli("claims", cid)
    assert r.returncode == 0 and r.stdout.startswith(cid) and "where:" in r.stdout and "statement:" in r.stdout
    assert "checks/kou2023/" in r.stdout
    r = _cli("claims", "kou2023/lem-" + "99")
    assert r.returncode == 2 and "unknown claim ID" in r.stdout


@pytest.mark.parametrize("bad,msg", [
    ('[paper]\nid = "Smith"\n', "paper id 'Smith'"),
    ('[paper]\nid = "smith2026"\nauthors = ["A"]\ntitle = "T"\nvenue = "V"\nyear = 2026\n', "no [[claim]]"),
    ('[paper\n', "not valid TOML"),
])
def test_bad_registries_are_named(tmp_path, bad, msg):
    f = tmp_path / "claims.toml"
    f.write_text(bad)
    with pytest.raises(claims.RegistryError, match=msg.replace("[", r"\[")):
        claims.parse(f)
