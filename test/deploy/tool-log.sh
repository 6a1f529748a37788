# shellcheck shell=bash
# Sourced by the deploy tier's tool scripts (build-langhost.sh, python-venv.sh): log lines on stderr
# (stdout carries only their result line) tagged with TOOL_TAG, and a fatal error that says what to do.
say() { printf '[%s] %s\n' "$TOOL_TAG" "$*" >&2; }
fail() { # what-failed what-to-do
  say "ERROR: $1"
  say "What to do: $2"
  exit 1
}
