#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/check-refs.py <repo> <doc...> (run by scripts/check-host.sh, the
# Makefile's targets in $UE_TARGETS): every `make <target>` a document
# names is a target, and every repository path it names in backquotes (or
# a markdown link) exists. One TAP line per document and kind.
import glob, os, re, sys

repo, files = sys.argv[1], sys.argv[2:]
targets = set(os.environ["UE_TARGETS"].split())
# Top-level entries of the repository that a documented path may start with.
tops = {e for e in os.listdir(repo) if not e.startswith(".") and e != "build"}

span = re.compile(r"``(.+?)``|`([^`\n]+)`")
link = re.compile(r"\]\(([^)\s]+)\)")
# make [VAR=value ...] target (options such as -C end the match)
make = re.compile(r"(?:^|[\s;&|(])make((?:\s+[A-Za-z_][A-Za-z0-9_]*=\S*)*)\s+([a-z][a-z0-9-]*)\b(?![=/.])")
prompt = re.compile(r"^\s*(?:[$#]\s+)?(?:sudo\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*make\s")

for path in files:
    rel = os.path.relpath(path, repo)
    text = open(path, encoding="utf-8").read()
    # Code: backquoted spans and lines that are make command lines.
    code = [a or b for a, b in span.findall(text)]
    code += [l for l in text.splitlines() if prompt.match(l)]

    named, bad = set(), set()
    for c in code:
        for m in make.finditer(c):
            named.add(m.group(2))
            if m.group(2) not in targets:
                bad.add(m.group(2))
    if bad:
        print(f"not ok - refs: {rel} names make targets that do not exist: {' '.join(sorted(bad))}")
    else:
        print(f"ok - refs: {rel}: the {len(named)} make targets it names exist")

    paths, missing = set(), set()
    for c in code:
        c = c.strip().rstrip(".,:;")
        if " " in c or any(ch in c for ch in "<>${}="):
            continue
        first = c.split("/", 1)[0]
        if "/" not in c or first not in tops:
            continue
        paths.add(c)
        if not glob.glob(os.path.join(repo, c)):
            missing.add(c)
    if path.endswith(".md"):
        for target in link.findall(text):
            if re.match(r"^[a-z]+:|^#", target):
                continue
            target = target.split("#", 1)[0]
            paths.add(target)
            if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                missing.add(target)
    if missing:
        print(f"not ok - refs: {rel} names paths that do not exist: {' '.join(sorted(missing))}")
    else:
        print(f"ok - refs: {rel}: the {len(paths)} repository paths it names exist")

# The layout table of Documentation/development.rst names every top-level
# entry of the repository (the files git tracks, dotfiles aside); a named
# entry that does not exist is caught above like any path.
layout = os.path.join(repo, "Documentation", "development.rst")
if os.path.abspath(layout) in {os.path.abspath(f) for f in files}:
    import fnmatch, subprocess
    try:
        tracked = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True,
                                 text=True, check=True).stdout.split()
        entries = {t.split("/", 1)[0] + ("/" if "/" in t else "") for t in tracked}
    except (OSError, subprocess.CalledProcessError):
        entries = {e + ("/" if os.path.isdir(os.path.join(repo, e)) else "")
                   for e in tops}
    entries = {e for e in entries if not e.startswith(".")}
    text = open(layout, encoding="utf-8").read()
    named = {a or b for a, b in span.findall(text)}
    absent = sorted(e for e in entries
                    if not any(fnmatch.fnmatch(e, n) or fnmatch.fnmatch(e.rstrip("/"), n)
                               for n in named))
    if absent:
        print(f"not ok - refs: Documentation/development.rst's layout lacks top-level entries: {' '.join(absent)}")
    else:
        print(f"ok - refs: Documentation/development.rst's layout names the {len(entries)} top-level entries")
