#!/usr/bin/env python3
"""The JSON Schemas, with an independent validator (jsonschema). The experiment schema against the loader:
- the schema is a valid draft 2020-12 schema;
- every experiment under experiments/ validates and names the schema in its modeline;
- every bad experiment under tests/bad/ is judged as its first line says: '# schema: reject'
  (the loader rejects it for its shape, so the schema must too) or '# schema: accept' (the
  problem is one only the loader can see: names, sizes, values);
- the schema's op kinds, kernels and checks are exactly those `streamlab list` prints.
The results schema against `streamlab run --json` of every experiment (host backend) and the
device-timed golden file of the report tests; and every --trace output is Chrome trace JSON.
usage: schema_test.py SOURCE_DIR STREAMLAB_BINARY"""
import json
import pathlib
import re
import subprocess
import sys

import jsonschema
import yaml

root = pathlib.Path(sys.argv[1])
binary = sys.argv[2]
schema = json.loads((root / "schemas/experiment.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failures = []


def expanded_nodes(node, sizes, open_nodes):
    """Nodes of a composed YAML document with its aliases expanded (None: an alias inside the node
    it names). A JSON Schema validator walks the expanded document: never hand it a cycle, or one
    that aliases make larger than streamlab's own limit."""
    key = id(node)
    if key in open_nodes:
        return None
    if key in sizes:
        return sizes[key]
    open_nodes.add(key)
    total = 1
    children = node.value if isinstance(node, yaml.SequenceNode) else \
        [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
    for child in children:
        n = expanded_nodes(child, sizes, open_nodes)
        if n is None:
            return None
        total += n
    open_nodes.discard(key)
    sizes[key] = total
    return total


def schema_errors(path):
    try:
        text = path.read_text()
        if any(ord(c) < 0x20 and c not in "\t\n\r" for c in text):
            return ["control characters: not YAML"]
        composed = yaml.compose(text)
        size = expanded_nodes(composed, {}, set()) if composed is not None else 0
        if size is None or size > 1_000_000:
            return ["aliases make the document infinite, or larger than a million nodes"]
        document = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"not YAML: {e}".splitlines()[0]]
    except RecursionError:
        return ["not YAML that a parser accepts: nested too deeply"]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


experiments = sorted(p for p in (root / "experiments").rglob("*.yaml") if not p.name.endswith(".rubric.yaml")) + \
    sorted((root / "tests/data").glob("*.yaml"))
for path in experiments:
    errors = schema_errors(path)
    if errors:
        failures.append(f"{path}: rejected by the schema: {errors[0]}")
    if "yaml-language-server: $schema=" not in path.read_text().splitlines()[0]:
        failures.append(f"{path}: first line is not a yaml-language-server $schema modeline")

bad = sorted((root / "tests/bad").glob("*.yaml"))
for path in bad:
    marker = re.match(r"# schema: (reject|accept)", path.read_text())
    if not marker:
        failures.append(f"{path}: first line must be '# schema: reject' or '# schema: accept'")
        continue
    rejected = bool(schema_errors(path))
    if rejected != (marker.group(1) == "reject"):
        failures.append(f"{path}: marked '{marker.group(1)}' but the schema {'rejects' if rejected else 'accepts'} it")

# The analyzer's corpus: schema-valid experiments (they are wrong only in their ordering).
analyzed = sorted((root / "tests/analyze").glob("*.yaml"))
for path in analyzed:
    errors = schema_errors(path)
    if errors:
        failures.append(f"{path}: rejected by the schema: {errors[0]}")

listing = subprocess.run([binary, "list"], capture_output=True, text=True, check=True).stdout
sections = dict(re.findall(r"^(\w+)[^\n]*\n((?:  .*\n|\n(?!\w))*)", listing, re.M))
listed_ops = set(re.findall(r"^  (\w+)\s", sections["ops"], re.M))
listed_kernels = set(re.findall(r"^  (\w+)\n", sections["kernels"], re.M))
listed_checks = set(re.findall(r"^  (\w+)\s", sections["checks"], re.M))
schema_ops = {next(iter(branch["required"])) for branch in schema["$defs"]["op"]["oneOf"]} - {"loop"}  # loop: a construct, not an op
schema_kernels = set(schema["$defs"]["launch"]["properties"]["kernel"]["anyOf"][0]["enum"])  # or a user kernel's name
schema_checks = {next(iter(branch["required"])) for branch in schema["$defs"]["check"]["oneOf"]}
listed_codes = set(re.findall(r"^  ([\w-]+)\s", sections["diagnostics"], re.M))
schema_codes = set(schema["$defs"]["allow"]["items"]["enum"])
for what, listed, described in [("ops", listed_ops, schema_ops), ("kernels", listed_kernels, schema_kernels),
                                ("checks", listed_checks, schema_checks), ("diagnostics", listed_codes, schema_codes)]:
    if listed != described:
        failures.append(f"{what}: streamlab list has {sorted(listed)}, the schema {sorted(described)}")

# Each kernel's arguments in the schema are exactly the parameters `streamlab list` prints.
listed_params = {}
for block in re.split(r"^  (?=\w)", sections["kernels"], flags=re.M)[1:]:
    lines = block.splitlines()
    listed_params[lines[0].strip()] = {m.group(1) for m in (re.match(r"^      (\w+)\s", l) for l in lines[1:]) if m}
defs = schema["$defs"]
for kernel, params in listed_params.items():
    branches = [b["then"]["properties"]["args"] for b in defs["launch"]["allOf"]
                if kernel in (b["if"]["properties"]["kernel"].get("enum") or [b["if"]["properties"]["kernel"].get("const")])]
    if len(branches) != 1:
        failures.append(f"kernel {kernel}: {len(branches)} argument schemas, expected 1")
        continue
    args = defs[branches[0]["$ref"].split("/")[-1]] if "$ref" in branches[0] else branches[0]
    if set(args.get("properties", {})) != params:
        failures.append(f"kernel {kernel}: streamlab list has args {sorted(params)}, the schema {sorted(args.get('properties', {}))}")

import tempfile

results_validator = jsonschema.Draft202012Validator(json.loads((root / "schemas/results.schema.json").read_text()))
jsonschema.Draft202012Validator.check_schema(results_validator.schema)
results = [("tests/golden/reports.json", json.loads((root / "tests/golden/reports.json").read_text()))]
autograder_outputs = []  # (experiment, its --json, {gradescope, junit, tap: text})
sweeps = []  # (experiment, its sweep --json)
with tempfile.TemporaryDirectory() as tmp:
    for path in experiments:
        out, trace = pathlib.Path(tmp) / "r.json", pathlib.Path(tmp) / "t.json"
        grades = {kind: pathlib.Path(tmp) / f"grade.{kind}" for kind in ("gradescope", "junit", "tap")}
        document = yaml.safe_load(path.read_text())
        shrink = ["--set", "N=64"] if "N" in (document.get("params") or {}) else []
        # A sweep runs whole as a sweep (its own schema), then at its first point as one run with
        # every report (a trace or an autograder file reports one run, so a sweep refuses them).
        pin = []
        if "sweep" in document:
            run = subprocess.run([binary, "run", str(path), "--backend", "host", *shrink, "--repeat", "2",
                                  "--json", str(out)], capture_output=True, text=True)
            if run.returncode not in (0, 1, 4):
                failures.append(f"{path}: streamlab run (sweep) exited {run.returncode}: {run.stderr.strip()}")
            else:
                sweeps.append((path, json.loads(out.read_text())))
            for name, values in document["sweep"]["params"].items():
                pin += ["--set", f"{name}={values[0]}"]
        run = subprocess.run([binary, "run", str(path), "--backend", "host", *shrink, *pin, "--repeat", "2",
                              "--json", str(out), "--trace", str(trace),
                              *[a for kind, f in grades.items() for a in (f"--{kind}", str(f))]],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1, 4):
            failures.append(f"{path}: streamlab run --json exited {run.returncode}: {run.stderr.strip()}")
            continue
        document = json.loads(out.read_text())
        # The exit code and the JSON tell one verdict: 0 passed, 1 failed, 4 incomplete (null).
        if document.get("passed") != {0: True, 1: False, 4: None}[run.returncode]:
            failures.append(f"{path}: exit {run.returncode} but \"passed\": {document.get('passed')}")
        results.append((f"--json of {path}", document))
        autograder_outputs.append((path, document, {kind: f.read_text() for kind, f in grades.items()}))
        events = json.loads(trace.read_text()).get("traceEvents")
        if not isinstance(events, list) or not all({"ph", "pid", "tid", "name"} <= e.keys() for e in events):
            failures.append(f"{path}: --trace is not Chrome trace event JSON")
for name, document in results:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in results_validator.iter_errors(document)]
    if errors:
        failures.append(f"{name}: rejected by the results schema: {errors[0]}")

# A sweep's --json: its schema (each point's results by the results schema inside), one point per
# combination of the axes' values, each point's params those of its results.
sweep_schema = json.loads((root / "schemas/sweep.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(sweep_schema)
import warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)  # RefResolver: all Debian 12's jsonschema has
sweep_validator = jsonschema.Draft202012Validator(sweep_schema, resolver=jsonschema.RefResolver.from_schema(
    sweep_schema, store={results_validator.schema["$id"]: results_validator.schema}))
if not sweeps:
    failures.append("no experiment under experiments/ has a sweep: section")
for path, document in sweeps:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in sweep_validator.iter_errors(document)]
    for i, point in enumerate(document.get("points", [])):
        errors += [f"points/{i}/results/{'/'.join(map(str, e.absolute_path))}: {e.message}"
                   for e in results_validator.iter_errors(point.get("results"))]
        if any(point["results"]["provenance"]["experiment"]["params"].get(k) != v for k, v in point["params"].items()):
            errors.append(f"points/{i}: params {point['params']} are not those its results ran with")
    count = 1
    for axis in document.get("axes", []):
        count *= len(axis["values"])
    if len(document.get("points", [])) != count:
        errors.append(f"{len(document.get('points', []))} points for axes of {count} combinations")
    if errors:
        failures.append(f"sweep --json of {path}: {errors[0]}")

# grade: the lab's rubric against its own schema; each lab submission graded on the host backend,
# its --json against the grade schema (with the results schema inside) and its --gradescope,
# --junit and --tap as above; and the grade holds together (every item once, the score its sum).
import warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)
schemas = {name: json.loads((root / f"schemas/{name}.schema.json").read_text())
           for name in ("experiment", "results", "rubric", "grade")}
store = {s["$id"]: s for s in schemas.values()}


def validator(name):
    resolver = jsonschema.RefResolver.from_schema(schemas[name], store=store)
    return jsonschema.Draft202012Validator(schemas[name], resolver=resolver)


rubrics = sorted((root / "experiments").rglob("*.rubric.yaml"))
if not rubrics:
    failures.append("no rubric under experiments/")
for rubric in rubrics:
    errors = [e.message for e in validator("rubric").iter_errors(yaml.safe_load(rubric.read_text()))]
    if errors:
        failures.append(f"{rubric}: rejected by the rubric schema: {errors[0]}")
lab = root / "experiments/labs/overlap"
submissions = [lab / "solution.yaml", lab / "starter.yaml"] + sorted((root / "tests/labs/overlap").glob("*.yaml"))
with tempfile.TemporaryDirectory() as tmp:
    for submission in submissions:
        files = {kind: pathlib.Path(tmp) / f"g.{kind}" for kind in ("json", "gradescope", "junit", "tap")}
        run = subprocess.run([binary, "grade", str(submission), "--rubric", str(lab / "overlap.rubric.yaml"),
                              "--backend", "host", "--set", "N=65536",
                              *[a for k, f in files.items() for a in (f"--{k}", str(f))]],
                             capture_output=True, text=True)
        if run.returncode not in (1, 4):
            failures.append(f"{submission}: grade exited {run.returncode}: {run.stderr.strip()[:300]}")
            continue
        grade = json.loads(files["json"].read_text())
        errors = [e.message for e in validator("grade").iter_errors(grade)]
        if errors:
            failures.append(f"{submission}: grade --json rejected by its schema: {errors[0]}")
        if abs(sum(i["score"] for i in grade["items"]) - grade["score"]) > 1e-9 or grade["max_score"] != 100:
            failures.append(f"{submission}: the grade's score {grade['score']} of {grade['max_score']} is not its items' sum of 100")
        autograder_outputs.append((submission, {"score": {"items": grade["items"], "score": grade["score"]}},
                                   {k: files[k].read_text() for k in ("gradescope", "junit", "tap")}))

# The autograder outputs of every experiment: Gradescope's against a JSON Schema written from its
# specification, JUnit XML against a JUnit XSD (xmllint), TAP by its grammar; each with one test
# per check and expectation and the same score as the JSON. Both schemas must reject what breaks
# them, or they would prove nothing.
gradescope_validator = jsonschema.Draft202012Validator(json.loads((root / "schemas/gradescope.schema.json").read_text()))
jsonschema.Draft202012Validator.check_schema(gradescope_validator.schema)
junit_xsd = root / "schemas/junit.xsd"


def junit_errors(text):
    with tempfile.NamedTemporaryFile("w", suffix=".xml") as f:
        f.write(text)
        f.flush()
        run = subprocess.run(["xmllint", "--noout", "--schema", str(junit_xsd), f.name], capture_output=True, text=True)
        return "" if run.returncode == 0 else run.stderr.strip()


tap_line = re.compile(r"^(ok|not ok) (\d+) - [^#\n]*( # SKIP .*)?$")
for path, document, texts in autograder_outputs:
    items = document["score"]["items"]
    gradescope = json.loads(texts["gradescope"])
    errors = [e.message for e in gradescope_validator.iter_errors(gradescope)]
    if errors:
        failures.append(f"{path}: --gradescope rejected by its schema: {errors[0]}")
    if len(gradescope["tests"]) != len(items) or abs(gradescope["score"] - document["score"]["score"]) > 1e-9:
        failures.append(f"{path}: --gradescope has {len(gradescope['tests'])} tests scoring {gradescope['score']}, the JSON {len(items)} items scoring {document['score']['score']}")
    problem = junit_errors(texts["junit"])
    if problem:
        failures.append(f"{path}: --junit rejected by the JUnit XSD: {problem}")
    if texts["junit"].count("<testcase ") != len(items):
        failures.append(f"{path}: --junit has {texts['junit'].count('<testcase ')} test cases, the JSON {len(items)} items")
    lines = texts["tap"].splitlines()
    tests = [l for l in lines if l.startswith(("ok ", "not ok "))]
    if lines[:2] != ["TAP version 14", f"1..{len(items)}"] or len(tests) != len(items) or \
            not all(tap_line.match(l) and int(tap_line.match(l).group(2)) == n + 1 for n, l in enumerate(tests)):
        failures.append(f"{path}: --tap is not a TAP 14 stream of {len(items)} tests: {lines[:4]}")
if not autograder_outputs:
    failures.append("no autograder outputs were checked")
broken_gradescope = {"score": "full", "tests": [{"name": "x", "status": "passed?"}]}
if gradescope_validator.is_valid(broken_gradescope):
    failures.append("the Gradescope schema accepts a string score and an unknown status")
if not junit_errors('<testsuites><testsuite tests="many"><testcase/></testsuite></testsuites>'):
    failures.append("the JUnit XSD accepts a suite without a name, a count that is no number and a nameless case")

# check --format json of every experiment, the analyzer's corpus and a bad file, against its schema;
# exit code 2 exactly when there are errors.
check_validator = jsonschema.Draft202012Validator(json.loads((root / "schemas/check.schema.json").read_text()))
jsonschema.Draft202012Validator.check_schema(check_validator.schema)
checked = experiments + analyzed + [root / "tests/bad/02_unknown_op.yaml"]
for path in checked:
    run = subprocess.run([binary, "check", "--format", "json", str(path)], capture_output=True, text=True)
    try:
        document = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        failures.append(f"{path}: check --format json is not JSON ({e}): {run.stdout[:200]!r}")
        continue
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in check_validator.iter_errors(document)]
    if errors:
        failures.append(f"{path}: rejected by the check schema: {errors[0]}")
    if run.returncode != (2 if document.get("errors") else 0):
        failures.append(f"{path}: check --format json exited {run.returncode} with {document.get('errors')} errors")

# Device profiles: every built-in one against its schema, which must reject a broken one.
profile_validator = jsonschema.Draft202012Validator(json.loads((root / "schemas/profile.schema.json").read_text()))
jsonschema.Draft202012Validator.check_schema(profile_validator.schema)
profiles = sorted((root / "runner/predict/profiles").glob("*.json"))
for path in profiles:
    errors = [e.message for e in profile_validator.iter_errors(json.loads(path.read_text()))]
    if errors:
        failures.append(f"{path}: rejected by the profile schema: {errors[0]}")
if not profiles or profile_validator.is_valid({"version": 1, "sms": -1}):
    failures.append("no built-in profile, or the profile schema accepts a broken one")

for f in failures:
    print("FAIL", f)
# compare: its --json against its schema, and its exit code the CI contract: B a recording's
# samples 20% slower -> 1 (regressed), the recording against itself -> 0, a file that is not
# results -> 2 with the file named.
compare_schema = json.loads((root / "schemas/compare.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(compare_schema)
compare_validator = jsonschema.Draft202012Validator(compare_schema)
recorded = root / "tests/golden/h200/graph_fork_join.json"
with tempfile.TemporaryDirectory() as tmp:
    slower = json.loads(recorded.read_text())
    for key in ("host_ms", "device_ms"):
        slower["spans"]["samples"][key] = [v * 1.2 for v in slower["spans"]["samples"][key]]
    slower_path = pathlib.Path(tmp) / "slower.json"
    slower_path.write_text(json.dumps(slower))
    for b, code in ((recorded, 0), (slower_path, 1), (root / "schemas/compare.schema.json", 2)):
        run = subprocess.run([binary, "compare", str(recorded), str(b), "--json", "-"], capture_output=True, text=True)
        if run.returncode != code:
            failures.append(f"compare {b.name}: exit {run.returncode}, expected {code}: {run.stderr.strip()[:300]}")
        elif code != 2:
            document = json.loads(run.stdout)
            errors = [e.message for e in compare_validator.iter_errors(document)]
            if errors:
                failures.append(f"compare --json of {b.name}: rejected by its schema: {errors[0]}")
            if document["regressed"] != (code == 1):
                failures.append(f"compare {b.name}: \"regressed\": {document['regressed']} but exit {code}")
        elif not run.stderr.startswith(f"{root / 'schemas/compare.schema.json'}: error: not a results file"):
            failures.append(f"compare of a schema file: {run.stderr.strip()[:300]}")

print(f"schema: {len(experiments)} experiments, {len(bad)} bad files, "
      f"{len(schema_ops)} ops, {len(schema_kernels)} kernels, {len(schema_checks)} checks")
print(f"results: {len(results)} documents; check --format json: {len(checked)} documents; analyzer corpus: {len(analyzed)} files")
print(f"{len(experiments) + len(bad) + 4 + 2 * len(results) - 1 + len(checked) + len(analyzed) - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
