#!/usr/bin/env bash
# Print the path of a Python 3.12 or newer for the book's environment: from PATH first
# (python3.12, python3.13, python3), then from pyenv's installs. Exit 1, saying what to install, if none.
ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; }
for name in python3.12 python3.13 python3; do
  path=$(command -v "$name" 2>/dev/null) || continue
  if ok "$path"; then echo "$path"; exit 0; fi
done
root=${PYENV_ROOT:-$HOME/.pyenv}
command -v pyenv >/dev/null 2>&1 && root=$(pyenv root)
for dir in "$root"/versions/3.12* "$root"/versions/3.13*; do
  if [ -x "$dir/bin/python" ] && ok "$dir/bin/python"; then echo "$dir/bin/python"; exit 0; fi
done
echo "The book needs Python 3.12 or newer (jax 0.12 does), and none was found on PATH or under pyenv ($root/versions)." >&2
echo "Install one (apt-get install python3.12 python3.12-venv, or pyenv install 3.12), or run make PYTHON=/path/to/python3.12." >&2
exit 1
