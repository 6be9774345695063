//! Fetched pages cached by URL: in memory for the process, and on disk (one JSON file per
//! URL, named by its sha256, written atomically through papayu-fs) for `ttl` when the frontend
//! gives a directory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};

use super::{Extracted, now_ms};

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    url: String,
    fetched_unix_ms: u64,
    page: Extracted,
}

/// The page cache of a [`super::Researcher`].
#[derive(Debug)]
pub(super) struct PageCache {
    dir: Option<Utf8PathBuf>,
    ttl: Duration,
    memory: Mutex<HashMap<String, (u64, Extracted)>>,
}

impl PageCache {
    pub(super) fn new(dir: Option<Utf8PathBuf>, ttl: Duration) -> Self {
        Self {
            dir,
            ttl,
            memory: Mutex::new(HashMap::new()),
        }
    }

    fn fresh(&self, fetched_unix_ms: u64) -> bool {
        now_ms().saturating_sub(fetched_unix_ms) < self.ttl.as_millis() as u64
    }

    fn file(&self, url: &str) -> Option<Utf8PathBuf> {
        let name = papayu_protocol::sha256_hex(url.as_bytes());
        self.dir.as_ref().map(|d| d.join(format!("{name}.json")))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Extracted)>> {
        self.memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached page of `url`, if it is fresh.
    pub(super) fn get(&self, url: &str) -> Option<Extracted> {
        if let Some((at, page)) = self.lock().get(url)
            && self.fresh(*at)
        {
            return Some(page.clone());
        }
        let text = fs_err::read_to_string(self.file(url)?).ok()?;
        let entry: Entry = serde_json::from_str(&text).ok()?;
        if entry.url != url || !self.fresh(entry.fetched_unix_ms) {
            return None;
        }
        self.lock()
            .insert(url.to_owned(), (entry.fetched_unix_ms, entry.page.clone()));
        Some(entry.page)
    }

    /// Remember `page` as the content of `url`.
    pub(super) fn put(&self, url: &str, page: &Extracted) {
        let at = now_ms();
        self.lock().insert(url.to_owned(), (at, page.clone()));
        let Some(file) = self.file(url) else {
            return;
        };
        let entry = Entry {
            url: url.to_owned(),
            fetched_unix_ms: at,
            page: page.clone(),
        };
        let written = serde_json::to_vec(&entry)
            .map_err(|e| e.to_string())
            .and_then(|bytes| papayu_fs::write_atomic(&file, &bytes).map_err(|e| e.to_string()));
        if let Err(e) = written {
            tracing::debug!(%file, error = %e, "the page cache could not be written");
        }
    }
}
