//! The message log (messages.jsonl), append-only, and the view folded from it (view.json
//! keeps where the fold got to).

use super::{KEEP_VIEW_EVERY, MESSAGES, SessionDir, VIEW};
use crate::confine::Access;
use crate::error::{Error, Result};
use crate::fsio;
use crate::messages::{self, Entry, LogRecord, Usage, View};
use crate::session::Locked;
use crate::session::store::{Durability, SessionLog};
use serde::{Deserialize, Serialize};

/// view.json: the view derived from the log up to `offset` bytes (through record `seq`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Checkpoint {
    seq: u64,
    offset: u64,
    view: View,
    /// The last record that rewrote the view rather than add to it (a compaction), or where
    /// the view was last read back from view.json or the log: what a view built on from an
    /// earlier one must not come before ([`SessionLog::view_after`]).
    #[serde(default)]
    rewritten: u64,
}

impl SessionLog for SessionDir {
    fn records(&self) -> Result<Vec<LogRecord>> {
        self.read_jsonl(MESSAGES)
    }

    fn view_after(&self, seq: u64) -> Result<Option<(View, u64)>> {
        let kept = self.folded()?;
        let gained = (kept.rewritten <= seq && seq <= kept.seq).then(|| {
            let from = kept.view.entries.partition_point(|(s, _)| *s <= seq);
            (View { entries: kept.view.entries[from..].to_vec(), last_compaction: kept.view.last_compaction.clone() }, kept.seq)
        });
        self.hold(kept);
        Ok(gained)
    }

    /// Kept in view.json, derived from the log up to a byte offset, so that building a
    /// request reads the kept view and the log's tail, not the whole log.
    fn view_to(&self) -> Result<(View, u64)> {
        let kept = self.folded()?;
        let view = (kept.view.clone(), kept.seq);
        self.hold(kept);
        Ok(view)
    }

    fn release_view(&self) {
        *self.kept_view() = None;
    }

    fn next_seq(&self) -> Result<u64> {
        let file = self.files().open(MESSAGES, Access::Read).map_err(self.err())?;
        self.last_record::<LogRecord>(MESSAGES, &file)?.map_or(Ok(1), |r| self.after(r.seq))
    }

    fn append_all(&self, _: &Locked, entries: Vec<(Entry, Option<Usage>)>, durability: Durability) -> Result<Vec<LogRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let path = self.path(MESSAGES);
        let mut file = self.files().open(MESSAGES, Access::Append).map_err(self.err())?;
        let tail = fsio::tail(&file).map_err(Error::io(&path))?;
        // A record a crash cut short was never written: the next starts a line of its own.
        fsio::drop_torn(&file, &tail).map_err(Error::io(&path))?;
        let mut seq = self.parse_last::<LogRecord>(MESSAGES, tail.last)?.map_or(Ok(1), |r| self.after(r.seq))?;
        let at = crate::now();
        let (mut records, mut lines) = (Vec::with_capacity(entries.len()), Vec::new());
        for (entry, usage) in entries {
            if !records.is_empty() {
                seq = self.after(seq)?;
            }
            let record = LogRecord { seq, at: at.clone(), entry, usage };
            serde_json::to_writer(&mut lines, &record).expect("a log record serializes");
            lines.push(b'\n');
            records.push(record);
        }
        match durability {
            Durability::Synced => fsio::append(&mut file, &lines),
            Durability::Deferred => fsio::append_unsynced(&mut file, &lines),
        }
        .map_err(Error::io(&path))?;
        Ok(records)
    }

    fn sync_log(&self) -> Result<()> {
        // A sync through any handle on the file makes every write to it durable.
        let file = match self.files().open(MESSAGES, Access::Read) {
            Err(e) if e.is_not_found() => return Ok(()),
            other => other.map_err(self.err())?,
        };
        file.sync_data().map_err(Error::io(self.path(MESSAGES)))
    }
}

impl SessionDir {
    /// Keeps `kept` for the next read of the view, unless a later one is kept already.
    pub(super) fn hold(&self, kept: Checkpoint) {
        let mut held = self.kept_view();
        if held.as_ref().is_none_or(|h| h.offset <= kept.offset) {
            *held = Some(kept);
        }
    }

    /// The view folded up to the log's end, from the one this handle holds, else view.json's.
    pub(super) fn folded(&self) -> Result<Checkpoint> {
        let log = self.path(MESSAGES);
        let held = self.kept_view().take();
        // A view not held since is not known to have only gained ([`SessionLog::view_after`]).
        let unheld = held.is_none();
        let kept: Option<Checkpoint> = held.or_else(|| self.read_json(VIEW).ok());
        let file = self.files().open(MESSAGES, Access::Read).map_err(self.err())?;
        let lines_from = |offset| fsio::lines_from(&file, offset).map_err(Error::io(&log));
        // A kept view ends where a record ends, within the log.
        let (mut kept, tail) = match kept.map(|k| Ok::<_, Error>((lines_from(k.offset)?, k))).transpose()? {
            Some((Some(tail), k)) => (k, tail),
            _ => (Checkpoint::default(), lines_from(0)?.unwrap_or_default()),
        };
        let (mut folded, mut compacted, mut expanded) = (0, false, false);
        // The whole log, read only when a read kept by reference is folded in.
        let mut all: Option<Vec<LogRecord>> = None;
        for line in tail.split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
            let mut record: LogRecord = serde_json::from_slice(line).map_err(|source| Error::Corrupt { path: log.clone(), source })?;
            // A kept view from another log (a session copied over) does not continue this one.
            if folded == 0 && kept.offset > 0 && Some(record.seq) != kept.seq.checked_add(1) {
                self.files().remove(VIEW).map_err(self.err())?;
                self.release_view();
                return self.folded();
            }
            kept.seq = record.seq;
            if matches!(record.entry, Entry::Compaction(_)) {
                compacted = true;
                kept.rewritten = record.seq;
            }
            if let Entry::Message(m) = &mut record.entry
                && m.reads.is_some()
            {
                let records = match &mut all {
                    Some(records) => records,
                    none => none.insert(self.records()?),
                };
                messages::expand_read(m, records, record.seq);
                expanded = true;
            }
            kept.view.push(record);
            folded += 1;
        }
        kept.offset += tail.len() as u64;
        // Kept after a compaction (the view just shrank), after a read kept by reference was
        // read back (so the log is read whole once for it), and every so many records.
        if compacted || expanded || folded >= KEEP_VIEW_EVERY {
            // Derived data: a failed write only means the next reader folds more.
            let _ = self.write_json(VIEW, &kept);
        }
        if unheld {
            kept.rewritten = kept.seq;
        }
        Ok(kept)
    }

    /// The number after `seq` in the log; a log whose last number is the largest there is
    /// (a record written by hand) takes no more entries, and says so rather than wrapping.
    pub(super) fn after(&self, seq: u64) -> Result<u64> {
        seq.checked_add(1).ok_or_else(|| Error::Corrupt {
            path: self.path(MESSAGES),
            source: serde::de::Error::custom(format!("its last record's seq is {seq}, after which there is no number")),
        })
    }
}
