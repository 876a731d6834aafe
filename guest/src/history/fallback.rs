//! The fallback (spec 003 §3): compaction the host runs by itself when a request passes its
//! threshold, down to its goal, clipping unseen outputs when nothing else is left.

use super::*;

/// What the fallback of spec 003 §3 works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// Tokens of the whole request, `view` included.
    pub used: u32,
    /// The request must come under this; compacting goes on to `goal`, lower, so that the
    /// next compaction is far off and the request stays append-only until then.
    pub threshold: u32,
    pub goal: u32,
    pub keep_recent: u32,
    pub archive_to: String,
    pub archive_lines: u32,
    pub never_compact: Vec<String>,
    pub keep: Vec<u64>,
}

/// Offloaded in place by the fallback, a message keeps as much of its beginning and end as
/// the goal leaves room for: what the next step most likely needs (the first lines of a log,
/// the error at its end) stays in the request, the rest a `read_history` away. Issue 24's
/// outputs larger than the compaction goal were offloaded whole, and the actions after them
/// lost what they needed. These are messages the model has seen: each keeps half its share at
/// `estimate`'s two bytes a token (giving them their whole share cost the 40 trajectories 2%
/// more for 0.6 points of recall).
pub(super) fn keep_ends(step: &mut Compaction, before: &[Entry], outside: u32, goal: u32) {
    let now = outside + step.view.iter().map(|e| e.tokens).sum::<u32>();
    let Ok(count) = u32::try_from(step.replacements.len()) else { return };
    let share = u64::from(goal.saturating_sub(now) / count.max(1));
    for rep in &mut step.replacements {
        let Some(original) = before.iter().find(|e| Some(&e.seq) == rep.replaces.first()) else { continue };
        let half = usize::try_from(share).unwrap_or(usize::MAX).saturating_sub(rep.message.content.len() + 64) / 2;
        if half >= MIN_END
            && let Some(clipped) = with_ends(&rep.message.content, &original.message.content, half)
        {
            rep.message.content = clipped;
        }
    }
    recount(step, before);
}

/// The fewest bytes of each end a clipped message keeps.
pub(super) const MIN_END: usize = 256;

/// `placeholder`, then `text`'s first and last `half` bytes (on character boundaries) with a
/// line saying how many bytes are left out between them: none when that is no shorter than
/// `text`.
pub(super) fn with_ends(placeholder: &str, text: &str, half: usize) -> Option<String> {
    let (head, tail) = (text.floor_char_boundary(half), text.ceil_char_boundary(text.len().saturating_sub(half)));
    if tail <= head {
        return None;
    }
    let clipped = format!("{placeholder}\n{}{}{}{}{}", &text[..head], LEFT_OUT.0, tail - head, LEFT_OUT.1, &text[tail..]);
    (clipped.len() < text.len()).then_some(clipped)
}

/// The view's entries and tokens after `step`'s replacements were rewritten in place.
pub(super) fn recount(step: &mut Compaction, before: &[Entry]) {
    for e in &mut step.view {
        if let Some(rep) = step.replacements.iter().find(|r| r.replaces.first() == Some(&e.seq)) {
            let original = before.iter().find(|o| o.seq == e.seq);
            e.tokens = replacement_tokens(original, &rep.message.content);
            e.message = rep.message.clone();
        }
    }
    step.tokens_after = step.view.iter().map(|e| e.tokens).sum();
}

/// The most tokens each of `sizes` may keep for all of them to fit in `room`: those under it
/// stay whole and share nothing of theirs; the rest split what is left alike.
pub(super) fn level(sizes: &[u32], room: u32) -> u32 {
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    let mut left = room;
    for (k, &s) in sorted.iter().enumerate() {
        let n = u32::try_from(sorted.len() - k).unwrap_or(u32::MAX);
        if s.saturating_mul(n) > left {
            return left / n;
        }
        left -= s;
    }
    u32::MAX
}

/// The last step of the fallback, when what the model has seen is compacted and the request
/// is still over the threshold: the messages it has not seen (the outputs it asked for, a
/// user's message), which did not all fit whole under the threshold, share the room left under
/// the goal. Those that fit their share stay whole; the others keep their two ends, as much as
/// their share holds at their own bytes a token, with how many bytes are left out and the
/// `read_history` that reads them. Under the goal, not the threshold: the next request, which
/// adds to this one, then need not compact again at once (given the room under the threshold,
/// the net fired again on the next request and the 40 trajectories cost more for less recall:
/// issue 24). None that would not shrink.
pub(super) fn clip_unseen(current: &[Entry], r: &Request, outside: u32, goal: u32) -> Option<Compaction> {
    let names = tool_names(current);
    let unseen = offloadable(current, unseen_from(current)..current.len(), r, &names);
    let sizes: Vec<u32> = unseen.iter().map(|run| current[run[0]].tokens).collect();
    let fixed = outside + current.iter().map(|e| e.tokens).sum::<u32>() - sizes.iter().sum::<u32>();
    let level = level(&sizes, goal.saturating_sub(fixed));
    let mut clipped: HashMap<usize, String> = HashMap::new();
    for run in &unseen {
        let e = &current[run[0]];
        if e.tokens <= level {
            continue;
        }
        let text = &e.message.content;
        let placeholder = placeholder_for(current, run[0], names.get(e.message.tool_call_id.as_str()).copied().unwrap_or("a tool"));
        // The placeholder and the line between the ends count as `estimate` does; the ends at
        // the message's own rate, as `replacement_tokens` counts them.
        let ends = level.saturating_sub(estimate_bytes(placeholder.len() + 64));
        let bytes = u64::from(ends) * text.len() as u64 / u64::from(e.tokens.max(1));
        let half = (usize::try_from(bytes).unwrap_or(usize::MAX) / 2).max(MIN_END);
        if let Some(c) = with_ends(&placeholder, text, half) {
            clipped.insert(run[0], c);
        }
    }
    let picked: Vec<Vec<usize>> = unseen.into_iter().filter(|run| clipped.contains_key(&run[0])).collect();
    if picked.is_empty() {
        return None;
    }
    let mut step = build(current, r, &picked, &names, None);
    for (rep, run) in step.replacements.iter_mut().zip(&picked) {
        rep.message.content = clipped.remove(&run[0]).unwrap_or_default();
    }
    recount(&mut step, current);
    Some(step)
}

/// The fallback: `None` while `used` is under the threshold; otherwise one compaction, by
/// archive (no model call), of old tool outputs first, then all old history, and when the
/// kept groups alone are still too large, of the largest contents among them, offloaded in
/// place (each call keeps its result), down to the goal. What the model has not seen yet is
/// never replaced by any of these: it is sent whole while the request fits under the
/// threshold, and clipped to its ends in the room under the goal when it does not
/// ([`clip_unseen`]). It may leave the request over the threshold only when what
/// remains cannot be compacted (the task, the memory tools' outputs, replacements).
pub fn fallback(view: &[Entry], f: &Fallback) -> Option<Compaction> {
    if f.used < f.threshold {
        return None;
    }
    let outside = f.used.saturating_sub(view.iter().map(|e| e.tokens).sum());
    let request = |target| Request {
        target,
        strategy: Strategy::Archive,
        keep_recent: f.keep_recent,
        archive_to: f.archive_to.clone(),
        archive_lines: f.archive_lines,
        never_compact: f.never_compact.clone(),
        min_free: 0,
        summary: None,
        keep: f.keep.clone(),
    };
    let mut done: Option<Compaction> = None;
    let mut current = view.to_vec();
    for step in 0..4 {
        let now = outside + current.iter().map(|e| e.tokens).sum::<u32>();
        if now <= f.goal || (step == 3 && now <= f.threshold) {
            break;
        }
        let mut r = request(if step == 1 { Target::All } else { Target::Tools });
        if step >= 2 {
            r.keep_recent = 0;
        }
        r.archive_lines += done.as_ref().map_or(0, |d| u32::try_from(d.archive.lines().count()).unwrap_or(0));
        let names = tool_names(&current);
        let made = match step {
            0 | 1 => Some(pick(&current, &r, &names)).filter(|p| !p.is_empty()).map(|picked| build(&current, &r, &picked, &names, None)),
            // The largest of what the model has seen, offloaded in place, keeping its ends.
            2 => {
                let mut picked = offloadable(&current, 0..unseen_from(&current), &r, &names);
                picked.sort_by_key(|run| std::cmp::Reverse(current[run[0]].tokens));
                let mut excess = now - f.goal;
                picked.retain(|run| {
                    let keep = excess > 0;
                    excess = excess.saturating_sub(current[run[0]].tokens);
                    keep
                });
                picked.sort_unstable();
                (!picked.is_empty()).then(|| {
                    let mut step = build(&current, &r, &picked, &names, None);
                    keep_ends(&mut step, &current, outside, f.goal);
                    step
                })
            }
            _ => clip_unseen(&current, &r, outside, f.goal),
        };
        let Some(step) = made else { continue };
        if step.tokens_after >= step.tokens_before || check(&current, &step.view, r.keep_recent, &r.keep).is_err() {
            continue;
        }
        current = step.view.clone();
        done = Some(match done {
            None => step,
            Some(mut d) => {
                d.replacements.extend(step.replacements);
                d.archive.push_str(&step.archive);
                d.messages += step.messages;
                d.view = step.view;
                d.tokens_after = step.tokens_after;
                d
            }
        });
    }
    if let Some(d) = &mut done {
        let archived_to = (!d.archive.is_empty()).then_some(f.archive_to.as_str());
        d.notice = notice(&d.replacements, d.messages, archived_to, d.tokens_before, d.tokens_after, true);
    }
    done
}
