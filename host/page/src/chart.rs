//! Tokens per request as a small SVG chart: one bar per request, its height the prompt's
//! tokens, with a line where a compaction happened between two requests.

use std::fmt::Write;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 160.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 20.0;

/// One request: its log sequence number and its prompt's tokens.
pub struct Request {
    pub seq: u64,
    pub tokens: u32,
}

/// `compactions_after[i]` is how many requests came before the i-th compaction.
pub fn tokens_per_request(requests: &[Request], compactions_after: &[usize]) -> String {
    let mut svg = String::new();
    let max = requests.iter().map(|r| r.tokens).max().unwrap_or(0).max(1);
    let n = requests.len().max(1) as f64;
    let plot_w = WIDTH - LEFT - 8.0;
    let plot_h = HEIGHT - BOTTOM - 8.0;
    let step = plot_w / n;
    let bar = (step * 0.8).max(1.0);
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="tokens per request"><line class="axis" x1="{LEFT}" y1="8" x2="{LEFT}" y2="{y0}"/><line class="axis" x1="{LEFT}" y1="{y0}" x2="{x1}" y2="{y0}"/><text x="{lx}" y="16" text-anchor="end">{max}</text><text x="{lx}" y="{y0}" text-anchor="end">0</text>"#,
        y0 = 8.0 + plot_h,
        x1 = WIDTH - 8.0,
        lx = LEFT - 6.0,
    );
    for (i, r) in requests.iter().enumerate() {
        let h = plot_h * f64::from(r.tokens) / f64::from(max);
        let _ = write!(
            svg,
            r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{bar:.1}" height="{h:.1}"><title>request {n} (#{seq}): {tokens} tokens</title></rect>"#,
            x = LEFT + step * i as f64 + (step - bar) / 2.0,
            y = 8.0 + plot_h - h,
            n = i + 1,
            seq = r.seq,
            tokens = r.tokens,
        );
    }
    for (i, &after) in compactions_after.iter().enumerate() {
        let x = LEFT + step * after as f64;
        let _ =
            write!(svg, r#"<line class="compaction" x1="{x:.1}" y1="8" x2="{x:.1}" y2="{y0}"><title>compaction {}</title></line>"#, i + 1, y0 = 8.0 + plot_h);
    }
    let _ = write!(
        svg,
        r#"<text x="{LEFT}" y="{y}">request 1</text><text x="{x}" y="{y}" text-anchor="end">{last}</text></svg>"#,
        y = HEIGHT - 4.0,
        x = WIDTH - 8.0,
        last = requests.len()
    );
    svg
}
