//! The one check every test of growth makes: work at 8n against work at n. Linear work is 8
//! times as much, quadratic 64 times. Where the work can be counted (steps taken, items
//! visited), [`steps`] compares counts, which no machine's load moves. Where it cannot, [`time`]
//! compares the fastest of five timings of each and allows up to 24 times, three linear's and
//! well under a quadratic's 64: at 4 times the input, a 2-core CI machine under load once
//! measured linear work at 10.5 times, and each copy of this check that compared n with 4n had
//! to be loosened after such a run (quiet runs here measure 8.0-9.9x at 8n).

use std::time::{Duration, Instant};

/// The most 8n may cost against n by the clock: three linear's, under a quadratic's 64.
pub const TIME_RATIO: f64 = 24.0;

/// Timings shorter than this are taken as this: a run of microseconds is mostly noise.
const FLOOR: Duration = Duration::from_micros(50);

/// Checks that `count(8n)` (steps, visits) is at most 8 times `count(n)`, give or take 8.
pub fn steps(what: &str, n: usize, count: impl Fn(usize) -> usize) {
    let (small, large) = (count(n), count(8 * n));
    eprintln!("{what}: {small} steps at {n}, {large} at {}", 8 * n);
    assert!(small > 0, "{what}: no steps counted at {n}: the count measures nothing");
    assert!(large <= 8 * small + 8, "{what} grows faster than linearly: {large} steps at {} against {small} at {n}", 8 * n);
}

/// Checks that `run` on what `prepare(8n)` makes takes under [`TIME_RATIO`] times what it takes
/// on `prepare(n)`'s: the fastest of five runs of each, each on a fresh input (`prepare` is not
/// timed).
pub fn time<T>(what: &str, n: usize, prepare: impl Fn(usize) -> T, run: impl Fn(T)) {
    let fastest = |size: usize| {
        (0..5)
            .map(|_| {
                let input = prepare(size);
                let started = Instant::now();
                run(input);
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
            .max(FLOOR)
    };
    let (small, large) = (fastest(n), fastest(8 * n));
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    eprintln!("{what}: {small:?} at {n}, {large:?} at {} ({ratio:.1}x)", 8 * n);
    assert!(ratio < TIME_RATIO, "{what} grows faster than linearly: {ratio:.1}x the time for 8x the input ({small:?} at {n}, {large:?} at {})", 8 * n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_work_passes_and_quadratic_work_fails() {
        steps("linear", 100, |n| 3 * n);
        let quadratic = std::panic::catch_unwind(|| steps("quadratic", 100, |n| n * n));
        assert!(quadratic.is_err(), "n² steps pass as linear");
        let nothing = std::panic::catch_unwind(|| steps("nothing", 100, |_| 0));
        assert!(nothing.is_err(), "a count of nothing passes");
        let spin = |n: usize| {
            let mut x = 0u64;
            for i in 0..n * n {
                x = std::hint::black_box(x.wrapping_add(i as u64));
            }
        };
        let slow = std::panic::catch_unwind(|| time("quadratic", 300, |n| n, spin));
        assert!(slow.is_err(), "n² work passes the clock");
        time(
            "linear",
            20_000,
            |n| n,
            |n| {
                let mut x = 0u64;
                for i in 0..n {
                    x = std::hint::black_box(x.wrapping_add(i as u64));
                }
            },
        );
    }
}
