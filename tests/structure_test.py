#!/usr/bin/env python3
"""The project's structure, checked in CI (ctest -R structure):

1. tools/check_layers.py passes on the tree, and fails, naming the file and line, on a copy of the
   tree with an upward include planted in runner/core (so the check cannot pass vacuously).
2. Every rule code a comment, experiment, test or document cites (S2, E3, H6, M1, ... and the
   claims C1-C18) is defined in docs/: a table row `| CODE |` of docs/semantics.md or a claim
   heading of docs/results.md.
3. Every document cited by name (a file name ending in .md) is a file of the repository.

Usage: structure_test.py SOURCE_ROOT
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1]).resolve()
failures = []


def fail(message):
    failures.append(message)
    print("FAIL", message)


def layers():
    script = ROOT / "tools/check_layers.py"
    ok = subprocess.run([sys.executable, script, ROOT], capture_output=True, text=True)
    if ok.returncode != 0:
        fail("check_layers on the tree:\n" + ok.stdout + ok.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp)
        for part in ("runner", "ops"):
            shutil.copytree(ROOT / part, copy / part)
        planted = copy / "runner/core/stats.cpp"
        lines = planted.read_text().splitlines()
        lines.insert(1, '#include "runner/report/console.hpp"')
        planted.write_text("\n".join(lines) + "\n")
        bad = subprocess.run([sys.executable, script, copy], capture_output=True, text=True)
        want = ('runner/core/stats.cpp:2: error: runner/core includes "runner/report/console.hpp" of runner/report, '
                'a layer above it')
        if bad.returncode != 1 or want not in bad.stdout:
            fail(f"check_layers did not catch the planted include (exit {bad.returncode}):\n{bad.stdout}{bad.stderr}")
        else:
            print("ok: check_layers fails on a planted upward include:", bad.stdout.splitlines()[0][:100], "...")


# The files whose text may cite rules and documents.
def cited_files():
    for folder in ("runner", "ops", "tests", "bench", "experiments", "docs", "tools", "schemas", ".ci"):
        for f in sorted((ROOT / folder).rglob("*")):
            if not f.is_file() or "tests/fuzz/corpus" in f.as_posix():
                continue
            if f.suffix in (".cpp", ".hpp", ".cu", ".cuh", ".yaml", ".md", ".py", ".sh", ".json", ".txt", "") or \
                    f.name == "run":
                yield f
    yield ROOT / "README.md"
    yield ROOT / "CMakeLists.txt"


RULE_PREFIXES = ("S", "E", "H", "I", "A", "G", "L", "M", "C")
# A code: one of the prefixes and a number, not part of a longer word (H200, sm_90, C1 in "C1
# control" as a Unicode category is excluded by context below).
CODE = re.compile(r"(?<![A-Za-z0-9_./-])([SEHIAGLMC])([0-9]{1,2})(?![0-9A-Za-z_])")
NOT_RULES = [
    re.compile(r"control characters|U\+00[89]"),  # Unicode's C1 controls (U+0080-U+009F)
    re.compile(r"\bL[12] cache"),
]


def defined_codes():
    codes = set()
    for line in (ROOT / "docs/semantics.md").read_text().splitlines():
        m = re.match(r"^\| ([A-Z]+[0-9]+) \|", line)
        if m:
            codes.add(m.group(1))
    results = ROOT / "docs/results.md"
    if results.exists():
        for line in results.read_text().splitlines():
            for m in re.finditer(r"^#+ (C[0-9]+)\b", line):
                codes.add(m.group(1))
    return codes


def rule_codes():
    codes = defined_codes()
    if len(codes) < 30:
        fail(f"docs define only {len(codes)} rule codes: {sorted(codes)}")
    checked = 0
    for f in cited_files():
        text = f.read_text(errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in NOT_RULES):
                continue
            for m in CODE.finditer(line):
                code = m.group(1) + m.group(2)
                # a bare capital and number in YAML data or code (a variable `S2`, a shape) is
                # not a citation; citations stand in comments, prose and strings with a rule's
                # context, which all of these files use around them
                checked += 1
                if code not in codes:
                    fail(f"{f.relative_to(ROOT)}:{n}: cites {code}, which no document in docs/ defines: {line.strip()[:120]}")
    print(f"ok: {checked} rule-code citations checked against {len(codes)} codes defined in docs/")


def documents():
    known = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.md") if ".git" not in p.parts and "build" not in p.parts[0]}
    names = {pathlib.PurePosixPath(k).name for k in known}
    checked = 0
    for f in cited_files():
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            for m in re.finditer(r"([A-Za-z0-9_./-]+\.md)\b", line):
                cited = m.group(1).lstrip("./")
                checked += 1
                if cited in known or cited.split("/")[-1] in names and "/" not in cited:
                    continue
                if (f.parent / m.group(1)).resolve().relative_to(ROOT).as_posix() in known if \
                        (f.parent / m.group(1)).resolve().is_relative_to(ROOT) else False:
                    continue
                fail(f"{f.relative_to(ROOT)}:{n}: cites {m.group(1)}, which is not in the repository")
    print(f"ok: {checked} document citations resolve")


layers()
rule_codes()
documents()
if failures:
    print(f"structure: {len(failures)} failure(s)")
    sys.exit(1)
print("structure: all checks passed")
