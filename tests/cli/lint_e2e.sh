#!/usr/bin/env bash
# End-to-end tests of `oomlens lint`: the real binary on the fixture scripts.
set -u
fixtures=${1:?usage: lint_e2e.sh FIXTURES_DIR}
source "$(dirname "$0")/e2e_lib.sh"

s=$fixtures/scripts
cp "$s/empty_cache_in_loop.py" "$tmp/train.py"

run lint --help
check "lint --help documents exit status" eval '[ $status = 0 ] && has "$out" "Exit status"'
run --help
check "top-level help lists lint" eval 'has "$out" "lint"'
run lint
check "no path: exit 2" eval '[ $status = 2 ]'
run lint --bogus "$tmp/train.py"
check "unknown option: exit 2, named" eval '[ $status = 2 ] && has "$err" "--bogus"'
run lint --format yaml "$tmp/train.py"
check "bad format: exit 2" eval '[ $status = 2 ] && has "$err" "yaml"'
ln -s loop-b "$tmp/loop-a" && ln -s loop-a "$tmp/loop-b"
run lint "$tmp/loop-a"
check "symlink loop: exit 2, the real reason" eval '[ $status = 2 ] && has "$err" "loop-a: Too many levels of symbolic links"'
run lint "$tmp/missing.py"
check "missing file: exit 2, named with reason" eval '[ $status = 2 ] && has "$err" "missing.py" && has "$err" "No such file"'

run lint "$tmp/train.py"
check "finding: exit 1, file:line:col: CODE message" eval '[ $status = 1 ] && [ "$out" = "$tmp/train.py:11:5: OOM301 [*] \`torch.cuda.empty_cache()\` runs on every iteration of the \`for\` loop at line 7" ]'
run lint "$s/empty_cache_not_in_loop.py"
check "clean file: exit 0, no output" eval '[ $status = 0 ] && [ -z "$out" ]'
run lint "$s/empty_cache_periodic.py"
check "periodic flush reported (hint)" eval '[ $status = 1 ] && has "$out" ":5:9: OOM301" && has "$out" "periodically"'
run lint --format json "$s/empty_cache_periodic.py" "$tmp/train.py"
check "json: severities, fix null for periodic, safe edits otherwise" eval '[ $status = 1 ] && python3 -c "
import json,sys
d=json.loads(sys.argv[1])[\"diagnostics\"]
assert [x[\"severity\"] for x in d]==[\"hint\",\"warning\"], d
assert d[0][\"fix\"] is None and d[1][\"fix\"][\"safety\"]==\"safe\"
e=d[1][\"fix\"][\"edits\"][0]; assert set(e)=={\"begin\",\"end\",\"replacement\"}
assert {\"file\",\"line\",\"column\",\"code\",\"name\",\"message\"} <= set(d[1])
" "$out"'

mkdir -p "$tmp/dir/sub" "$tmp/dir/.hidden"
cp "$s/empty_cache_through_function.py" "$tmp/dir/sub/a.py"
cp "$s/empty_cache_in_loop.py" "$tmp/dir/.hidden/b.py"
echo 'torch.cuda.empty_cache()' >"$tmp/dir/notes.txt"
run lint "$tmp/dir"
check "directory walked for *.py, hidden dirs skipped" eval '[ $status = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && has "$out" "sub/a.py:5:5: OOM301"'

run lint --diff "$tmp/train.py"
check "--diff: exit 1, unified diff" eval '[ $status = 1 ] && has "$out" "--- $tmp/train.py" && has "$out" "-    torch.cuda.empty_cache()  # free memory" && has "$out" "@@ -8,"'
check "--diff leaves the file unchanged" cmp -s "$tmp/train.py" "$s/empty_cache_in_loop.py"
run lint --diff "$s/empty_cache_not_in_loop.py"
check "--diff on a clean file: exit 0, empty" eval '[ $status = 0 ] && [ -z "$out" ]'

for f in "$s"/*.py; do
  case $f in *fixed.py) continue ;; esac
  name=$(basename "$f" .py)
  cp "$f" "$tmp/$name.py"
  "$oomlens" lint --fix "$tmp/$name.py" >/dev/null 2>&1
  check "--fix $name equals $name.fixed.py" cmp -s "$tmp/$name.py" "$s/$name.fixed.py"
  "$oomlens" lint --fix "$tmp/$name.py" >/dev/null 2>&1
  check "--fix twice $name changes nothing" cmp -s "$tmp/$name.py" "$s/$name.fixed.py"
  check "fixed $name compiles" python3 -m py_compile "$tmp/$name.py"
  # NAME.unsafe-fixed.py: what --fix --unsafe-fixes makes of it.
  [ -f "$s/$name.unsafe-fixed.py" ] || continue
  cp "$f" "$tmp/$name.py"
  "$oomlens" lint --fix --unsafe-fixes "$tmp/$name.py" >/dev/null 2>&1
  check "--fix --unsafe-fixes $name equals $name.unsafe-fixed.py" cmp -s "$tmp/$name.py" "$s/$name.unsafe-fixed.py"
  "$oomlens" lint --fix --unsafe-fixes "$tmp/$name.py" >/dev/null 2>&1
  check "--unsafe-fixes twice $name changes nothing" cmp -s "$tmp/$name.py" "$s/$name.unsafe-fixed.py"
  check "unsafe-fixed $name compiles" python3 -m py_compile "$tmp/$name.py"
done
cp "$s/empty_cache_in_loop.py" "$tmp/fixme.py"
run lint --fix "$tmp/fixme.py"
check "--fix: everything fixed gives exit 0" eval '[ $status = 0 ]'
cp "$s/empty_cache_periodic.py" "$tmp/periodic.py"
run lint --fix "$tmp/periodic.py"
check "--fix leaves the periodic flush, exit 1" eval '[ $status = 1 ] && cmp -s "$tmp/periodic.py" "$s/empty_cache_periodic.py"'

printf 'import torch\nfor x in y:\n    torch.cuda.empty_cache()\n    def (:\n' >"$tmp/broken.py"
cp "$tmp/broken.py" "$tmp/broken.orig"
run lint --fix "$tmp/broken.py"
check "syntax error: reported, no edit" eval '[ $status = 1 ] && has "$out" "SyntaxError" && cmp -s "$tmp/broken.py" "$tmp/broken.orig"'

run lint --format sarif "$tmp/train.py" "$s/alloc_conf_too_late.py"
check "sarif: results with rule ids, byte regions and fixes" eval '[ $status = 1 ] && python3 -c "
import json,sys
d=json.loads(sys.argv[1]); run=d[\"runs\"][0]
assert d[\"version\"]==\"2.1.0\" and run[\"columnKind\"]==\"unicodeCodePoints\"
ids=[r[\"ruleId\"] for r in run[\"results\"]]; assert ids[0]==\"OOM301\" and \"OOM302\" in ids, ids
r=run[\"results\"][0]; rules=run[\"tool\"][\"driver\"][\"rules\"]
assert rules[r[\"ruleIndex\"]][\"id\"]==\"OOM301\"
assert r[\"fixes\"][0][\"artifactChanges\"][0][\"replacements\"][0][\"deletedRegion\"][\"byteLength\"]>0
assert r[\"properties\"][\"fixSafety\"]==\"safe\"
" "$out"'
run lint --format sarif "$fixtures/projects/class_helpers" "$fixtures/projects/training_repo"
check "project sarif: other files' places as related locations, linked from the message" eval '[ $status = 1 ] && python3 -c "
import json, os, re, sys
d = json.loads(sys.argv[1]); results = d[\"runs\"][0][\"results\"]
assert d[\"version\"] == \"2.1.0\"
seen = 0
for r in results:
    uri = r[\"locations\"][0][\"physicalLocation\"][\"artifactLocation\"][\"uri\"]
    related = r.get(\"relatedLocations\", [])
    ids = [x[\"id\"] for x in related]
    assert all(isinstance(i, int) and i >= 0 for i in ids) and len(set(ids)) == len(ids), ids
    for x in related:
        loc = x[\"physicalLocation\"]; other = loc[\"artifactLocation\"][\"uri\"]
        project = lambda path: path.split(\"/projects/\")[1].split(\"/\")[0]
        assert os.path.isfile(other) and project(other) == project(uri), (uri, other)
        assert loc[\"region\"][\"startLine\"] >= 1 and loc[\"region\"][\"startColumn\"] >= 1, loc
        assert x[\"message\"][\"text\"], x
    links = [int(i) for i in re.findall(r\"(?<!\\\\)\\]\\((\\d+)\\)\", r[\"message\"][\"text\"])]
    assert links and all(i in ids for i in links), (r[\"message\"][\"text\"], ids)
    seen += 1
assert seen == 8, seen
" "$out"'
run lint "$s/alloc_conf_too_late.py"
check "unsafe fix hidden without --unsafe-fixes" eval '[ $status = 1 ] && ! has "$out" "[*]" && has "$err" "--unsafe-fixes"'
cp "$s/alloc_conf_too_late.py" "$tmp/late.py"
run lint --diff --unsafe-fixes "$tmp/late.py"
check "--diff --unsafe-fixes shows the move as a pure insertion and deletion" eval '[ $status = 1 ] && has "$out" "+os.environ[" && has "$out" "-os.environ[" && ! has "$out" "-import torch"'
check "--diff wrote nothing" cmp -s "$tmp/late.py" "$s/alloc_conf_too_late.py"

# Standard input, as editors and pre-commit hooks use it (ruff's --stdin-filename).
out=$("$oomlens" lint --stdin-filename train.py - <"$s/empty_cache_in_loop.py" 2>/dev/null); status=$?
check "stdin: named by --stdin-filename, exit 1" eval '[ $status = 1 ] && has "$out" "train.py:11:5: OOM301 [*]"'
"$oomlens" lint --fix --stdin-filename train.py - <"$s/empty_cache_in_loop.py" >"$tmp/stdin-fixed.py" 2>/dev/null
check "stdin --fix: the fixed text on stdout" cmp -s "$tmp/stdin-fixed.py" "$s/empty_cache_in_loop.fixed.py"
out=$("$oomlens" lint --stdin-filename run.sh - <<<'export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true' 2>/dev/null); status=$?
check "stdin: a .sh name is read as a shell script" eval '[ $status = 1 ] && has "$out" "run.sh:1:32: OOM303"'
run lint - "$tmp/train.py"
check "stdin mixed with paths: exit 2, said why" eval '[ $status = 2 ] && has "$err" "standard input"'

# A file's kind from its name, extension or first lines; never Python by default.
c=$fixtures/config
run lint "$c/Dockerfile" "$c/job.sbatch"
check "Dockerfile and .sbatch: OOM303 on their settings, no E999" eval '[ $status = 1 ] && ! has "$out" "E999" && has "$out" "Dockerfile:8:" && has "$out" "job.sbatch:4:" && has "$out" "job.sbatch:8:"'
printf 'torch.cuda.empty_cache()\n' >"$tmp/notes.txt"
run lint "$tmp/notes.txt"
check "a file of no kind read: one note naming it and the kinds read, exit 2" eval '[ $status = 2 ] && [ -z "$out" ] && [ "$(wc -l <<<"$err")" = 1 ] && has "$err" "notes.txt: not checked" && has "$err" "Dockerfiles"'
run lint "$tmp/notes.txt" "$tmp/train.py"
check "a note beside a checked file: the exit status comes from the checked file" eval '[ $status = 1 ] && has "$err" "notes.txt: not checked" && has "$out" "train.py:11:5: OOM301"'
printf '#!/usr/bin/env bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true\npython train.py\n' >"$tmp/launch"
run lint "$tmp/launch"
check "a shell shebang makes a shell script" eval '[ $status = 1 ] && has "$out" "launch:2:32: OOM303"'
# Notebooks: the code cells as one script, positions per cell, fixes into the cells only.
n=$fixtures/notebooks
run lint "$n/train.ipynb"
check "notebook: cell N, line L in text" eval '[ $status = 1 ] && has "$out" "train.ipynb: cell 3, line 5, column 5: OOM301 [*]" && has "$out" "loop at cell 3, line 1"'
run lint --format json "$n/train.ipynb"
check "notebook json: the cell index, the line in the cell" eval '[ $status = 1 ] && python3 -c "
import json,sys
d=json.loads(sys.argv[1])[\"diagnostics\"]
assert len(d)==1 and d[0][\"cell_index\"]==2 and d[0][\"line\"]==5 and d[0][\"column\"]==5, d
" "$out"'
cp "$n/train.ipynb" "$tmp/train.ipynb"
"$oomlens" lint --fix "$tmp/train.ipynb" >/dev/null 2>&1
check "notebook --fix rewrites the changed cell only: outputs and metadata byte for byte" cmp -s "$tmp/train.ipynb" "$n/train.fixed.ipynb"
check "notebook --fix leaves valid JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/train.ipynb"
"$oomlens" lint --fix "$tmp/train.ipynb" >/dev/null 2>&1
check "notebook --fix twice changes nothing" cmp -s "$tmp/train.ipynb" "$n/train.fixed.ipynb"
run lint --format sarif "$n/train.ipynb"
check "notebook sarif: the cell in properties, no file region or byte fix" eval '[ $status = 1 ] && python3 -c "
import json,sys
r=json.loads(sys.argv[1])[\"runs\"][0][\"results\"][0]
loc=r[\"locations\"][0]
assert loc[\"properties\"]=={\"cellIndex\": 2, \"cellLine\": 5, \"cellColumn\": 5}, loc
assert \"region\" not in loc[\"physicalLocation\"] and \"fixes\" not in r, r
" "$out"'
printf '{"cells": [' >"$tmp/broken.ipynb"
run lint "$tmp/broken.ipynb"
check "a notebook that is not JSON: exit 2, named with the reason" eval '[ $status = 2 ] && has "$err" "broken.ipynb: not a Jupyter notebook"'
mkdir -p "$tmp/deploy"
cp "$c/k8s-job.yaml" "$c/Dockerfile" "$n/train.ipynb" "$tmp/deploy/"
cp "$tmp/notes.txt" "$tmp/deploy/"
run lint "$tmp/deploy"
check "a walk reads Dockerfiles, YAML and notebooks, skips other files without a note" eval '[ $status = 1 ] && has "$out" "deploy/Dockerfile:8:" && has "$out" "deploy/k8s-job.yaml:18:" && has "$out" "deploy/train.ipynb: cell 3" && ! has "$err" "note:"'
cp "$c/Dockerfile" "$tmp/Dockerfile"
"$oomlens" lint --fix --unsafe-fixes "$tmp/Dockerfile" >/dev/null 2>&1
check "--fix --unsafe-fixes on a Dockerfile: the = becomes :" eval 'grep -qx "ENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512" "$tmp/Dockerfile"'
out=$("$oomlens" lint --fix --stdin-filename notes.txt - <"$tmp/notes.txt" 2>/dev/null); status=$?
check "stdin --fix of no kind read: the text back unchanged, exit 2" eval '[ $status = 2 ] && [ "$out" = "torch.cuda.empty_cache()" ]'

echo "lint e2e: $pass passed, $fail failed"
[ "$fail" = 0 ]
