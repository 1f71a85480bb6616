# shellcheck shell=bash
# Shared by the bench/ scripts (sourced; bash).

# find_python MINOR: the newest CPython 3.MINOR.N release build under
# pyenv's versions ($(pyenv root), $PYENV_ROOT, ~/.pyenv), as the path of
# its python3.MINOR; status 1 when there is none.
find_python() {
	local root candidate patch best="" best_patch=-1
	for root in "$(pyenv root 2>/dev/null)" "${PYENV_ROOT:-}" "$HOME/.pyenv"; do
		if [ -z "$root" ] || [ ! -d "$root/versions" ]; then continue; fi
		for candidate in "$root"/versions/3."$1".*/bin/python3."$1"; do
			[ -x "$candidate" ] || continue
			patch=${candidate#"$root"/versions/3."$1".}
			patch=${patch%%/*}
			# release builds only (no 3.12.0rc1, no 3.12-dev)
			[[ $patch =~ ^[0-9]+$ ]] || continue
			if [ "$patch" -gt "$best_patch" ]; then
				best=$candidate
				best_patch=$patch
			fi
		done
		[ -n "$best" ] && break
	done
	[ -n "$best" ] || return 1
	printf '%s\n' "$best"
}
