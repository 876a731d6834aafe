//! meta.json: a session's format marker, identity, times and counters, and what it
//! remembers of keyed updates and its memory's chain.

use super::Commit;
use serde::{Deserialize, Serialize};

/// What meta.json's `format` says of a session directory this version reads.
pub const FORMAT: &str = "workmem-session/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    /// [`FORMAT`]: a directory is a session because it says so, not because it holds a
    /// file named meta.json.
    #[serde(default)]
    pub format: String,
    pub id: String,
    pub cwd: String,
    pub created_at: String,
    pub updated_at: String,
    pub updates: u64,
    pub workmem_version: String,
    /// Requests an agent has sent to its LLM in this session.
    #[serde(default)]
    pub rounds: u64,
    /// The round in which working memory last changed.
    #[serde(default)]
    pub memory_updated_round: u64,
    /// What the provider's prompt-token count last differed from ours by; added to ours.
    #[serde(default)]
    pub token_correction: i64,
    /// Random at creation: tells this session from a later one made with its ID in its
    /// folder, so a grant for it opens nothing else (empty in sessions made before it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The latest updates made with an idempotency key (at most [`MAX_REQUESTS`]): a
    /// request retried with one of them gets that update back instead of a second one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<KeyedUpdate>,
    /// The copy of the working memory requests carry, and the changes since it that the
    /// history shows (the model's own memory tool calls); see [`MemoryChain`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_chain: Option<MemoryChain>,
    /// Set on a session `workmem proxy` keeps for a client: see [`Proxied`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxied: Option<Proxied>,
}

impl Meta {
    /// A new session's meta: session `id` of working directory `cwd`, its memory the empty
    /// one shown as `overview` (the engine's template), a fresh uid.
    pub(crate) fn new(id: String, cwd: &std::path::Path, overview: &str) -> crate::Result<Self> {
        let now = crate::now();
        Ok(Meta {
            format: FORMAT.into(),
            id,
            cwd: cwd.display().to_string(),
            created_at: now.clone(),
            updated_at: now,
            updates: 0,
            workmem_version: env!("CARGO_PKG_VERSION").into(),
            rounds: 0,
            memory_updated_round: 0,
            token_correction: 0,
            uid: super::random_uid()?,
            requests: Vec::new(),
            memory_chain: Some(MemoryChain::at(overview)),
            proxied: None,
        })
    }

    /// Counts `commit` as the one committed update that meta carries (the update count, when
    /// the memory last changed, and its idempotency key among the latest): every store's rule.
    /// False where meta counted it already (a commit finished twice).
    pub fn count(&mut self, commit: &Commit) -> bool {
        if self.updates == u64::from(commit.seq) {
            return false;
        }
        self.updated_at = crate::now();
        self.updates = commit.seq.into();
        self.memory_updated_round = self.rounds;
        if let Some((key, digest)) = &commit.request {
            self.requests.push(KeyedUpdate { key: key.clone(), digest: digest.clone(), seq: commit.seq });
            let over = self.requests.len().saturating_sub(MAX_REQUESTS);
            self.requests.drain(..over);
        }
        true
    }
}

/// What `workmem proxy` knows of the client whose requests a session logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proxied {
    /// The client's protocol: `chat` (Chat Completions), `messages` (Anthropic Messages) or
    /// `responses` (the Responses API).
    pub protocol: String,
    /// The client's own name for its session (an `X-Workmem-Session` header, or the session
    /// id the protocol carries), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session this one branched from: the client sent a history that did not extend it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_of: Option<String>,
    /// Why it branched: `edited` (the client's history no longer held that session's),
    /// `retried` (a request resent after its answer was lost), `chained` (a Responses request
    /// chained to an earlier answer) or `credentials` (the client's name for its session was
    /// that session's, made under other credentials: a rotated key, or a guess; its memory
    /// stays with the credentials that made it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branched: Option<String>,
    /// Whose session it is: a keyed hash of the credentials its first request carried (see
    /// [`Sessions::secret`]). Only requests that carry the same credentials continue it; a
    /// session made before callers were recorded is continued by none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
}

/// The working memory as requests carry it in their prefix, and the memory the history leads
/// it to. The model's own memory tool calls stay in the history, so after one a request can
/// carry the memory as it was (which the provider has cached) and let the history show what
/// changed, instead of rewriting the prefix at every update (issue 24: an update every few
/// requests made the whole history a cache miss each time). Any other change (an update from
/// outside the loop, an edit by hand) leaves `overview.md` at a text the chain does not lead
/// to, and requests carry the memory as it is; so does a compaction that replaces one of
/// those calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryChain {
    /// The text requests carry.
    pub shown: String,
    /// The digest of `overview.md` after the last change the history shows.
    pub to: String,
}

impl MemoryChain {
    pub fn digest(text: &str) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A chain that shows `memory` as it is.
    pub fn at(memory: &str) -> MemoryChain {
        MemoryChain { shown: memory.to_string(), to: Self::digest(memory) }
    }

    /// The chain after a change the history shows, from `before` to `after`.
    pub fn extended(chain: Option<&MemoryChain>, before: &str, after: &str) -> MemoryChain {
        match chain {
            Some(c) if c.to == Self::digest(before) => MemoryChain { shown: c.shown.clone(), to: Self::digest(after) },
            // Requests showed `before` (the chain no longer led to it).
            _ => MemoryChain { shown: before.to_string(), to: Self::digest(after) },
        }
    }

    /// What a request's prefix carries when `overview.md` holds `live`.
    pub fn shown<'a>(chain: Option<&'a MemoryChain>, live: &'a str) -> &'a str {
        match chain {
            Some(c) if c.to == Self::digest(live) => &c.shown,
            _ => live,
        }
    }
}

/// Updates remembered by their idempotency key, the latest.
pub const MAX_REQUESTS: usize = 64;

/// An update made with an idempotency key: the key, the digest of the request, its seq.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyedUpdate {
    pub key: String,
    pub digest: String,
    pub seq: u32,
}
