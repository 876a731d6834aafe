# Sourced by the examples: sets `workmem` to the binary they run, $WORKMEM where it is set, else
# workmem on PATH, else this checkout's, built now.
workmem=${WORKMEM:-}
if [ -z "$workmem" ]; then
  if command -v workmem > /dev/null; then
    workmem=workmem
  else
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    cargo build -q --manifest-path "$root/Cargo.toml" -p workmem
    workmem=${CARGO_TARGET_DIR:-$root/target}/debug/workmem
  fi
fi
