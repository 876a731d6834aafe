//! Tokens per request as a PNG: one panel per trajectory (the longest four), one line per
//! policy, the window's 75% as a grey line.

use crate::{Policy, Run};
use anyhow::Result;
use std::path::Path;

const W: usize = 1200;
const PANEL_H: usize = 260;
const MARGIN: usize = 20;

/// Line colours of the policies drawn (the legend in docs/performance.md); the others are left out, so
/// that the lines can be told apart.
fn colour(p: Policy) -> Option<[u8; 3]> {
    match p {
        Policy::Full => Some([200, 30, 30]),
        Policy::Fallback => Some([230, 150, 0]),
        Policy::Mask => Some([40, 120, 220]),
        Policy::MaskBatched => Some([120, 60, 200]),
        Policy::Workmem => Some([20, 150, 60]),
        _ => None,
    }
}

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Self {
        Canvas { w, h, px: vec![255; w * h * 3] }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let i = (y as usize * self.w + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    /// A line two pixels thick.
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3]) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).max(1);
        for s in 0..=steps {
            let x = x0 + (x1 - x0) * s / steps;
            let y = y0 + (y1 - y0) * s / steps;
            self.set(x, y, c);
            self.set(x, y + 1, c);
        }
    }

    fn png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.w as u32, self.h as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::High);
        encoder.write_header()?.write_image_data(&self.px)?;
        Ok(out)
    }
}

pub fn tokens_per_turn(path: &Path, files: &[String], policies: &[Policy], runs: &[Vec<Run>], window: u32) -> Result<()> {
    let mut longest: Vec<usize> = (0..files.len()).collect();
    longest.sort_by_key(|&f| std::cmp::Reverse(runs.first().map_or(0, |r| r[f].tokens.len())));
    longest.truncate(4);
    let mut canvas = Canvas::new(W, PANEL_H * longest.len().max(1));
    for (panel, &f) in longest.iter().enumerate() {
        let top = (panel * PANEL_H + MARGIN) as i64;
        let (left, right, bottom) = (MARGIN as i64 * 2, (W - MARGIN) as i64, ((panel + 1) * PANEL_H - MARGIN) as i64);
        let turns = runs.iter().map(|r| r[f].tokens.len()).max().unwrap_or(1).max(2);
        let ymax = runs.iter().flat_map(|r| r[f].tokens.iter().copied()).max().unwrap_or(1).max(window) as i64;
        let y = |t: i64| bottom - (bottom - top) * t / ymax;
        let x = |i: usize| left + (right - left) * i as i64 / (turns as i64 - 1);
        canvas.line((left, bottom), (right, bottom), [0, 0, 0]);
        canvas.line((left, top), (left, bottom), [0, 0, 0]);
        let threshold = y(i64::from(window / 4 * 3));
        canvas.line((left, threshold), (right, threshold), [170, 170, 170]);
        for (k, p) in policies.iter().enumerate() {
            let Some(colour) = colour(*p) else { continue };
            let tokens = &runs[k][f].tokens;
            for i in 1..tokens.len() {
                canvas.line((x(i - 1), y(i64::from(tokens[i - 1]))), (x(i), y(i64::from(tokens[i]))), colour);
            }
        }
    }
    std::fs::write(path, canvas.png()?)?;
    let names: Vec<&str> = longest.iter().map(|&f| files[f].as_str()).collect();
    eprintln!("{}: tokens per request of {} (top to bottom)", path.display(), names.join(", "));
    Ok(())
}
