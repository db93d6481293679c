#!/usr/bin/env bash
# Checks that the tracked C++ files follow .clang-format, without changing any file:
#   scripts/check-format.sh [clang-format binary]     (default: $CLANG_FORMAT, else clang-format)
# The files are exactly those git tracks with a C++ extension (git ls-files), so a build tree, a
# vendored copy or an untracked scratch file is never checked. Prints each file that would change
# (clang-format --dry-run --Werror shows the first differences) and exits 1 if there is any;
# exits 2 when git or clang-format is missing. Run by the ctest "format.check" (label "format":
# ctest -L format). To format the tree: git ls-files -z -- '*.hpp' ... | xargs -0 clang-format -i.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${1:-${CLANG_FORMAT:-clang-format}}
if ! command -v "$cf" > /dev/null; then
  echo "check-format: '$cf' not found (install clang-format, or pass its path)" >&2
  exit 2
fi
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "check-format: $(pwd) is not a git work tree (the file list comes from git ls-files)" >&2
  exit 2
fi
mapfile -d '' files < <(git ls-files -z -- '*.hpp' '*.h' '*.cpp' '*.cc' '*.cu' '*.cuh')
if [[ ${#files[@]} -eq 0 ]]; then
  echo "check-format: git ls-files lists no C++ file" >&2
  exit 2
fi
bad=0
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue  # deleted in the work tree, not yet committed
  if ! "$cf" --style=file --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "check-format: $f is not formatted ($cf --style=file -i $f)"
    bad=$((bad + 1))
  fi
done
echo "check-format: ${#files[@]} tracked C++ files, $bad not formatted ($("$cf" --version | head -n 1))"
[[ $bad -eq 0 ]]
